"""Stage 4, render: ``Graph`` + ``Records`` → one lazy ``NoteSpec`` per note; pure but templates.

:mod:`.layout` (the vault path of every note) and :mod:`.filenames` (portable names) →
:mod:`.specs` (the Jinja environment with overrides, note keys, ``vault_specs``) →
``vaultsync.renderers`` (one context builder per kind) and ``vaultsync.templates`` →
:mod:`.yamlfm` (the front-matter writer).  Reads only the template files.
"""

"""Stage 4, render: ``Graph`` + ``Records`` → one lazy ``NoteSpec`` per note; pure but templates.

:mod:`.layout` (the vault path of every note) and :mod:`.filenames` (portable names) →
:mod:`.specs` (the Jinja environment with overrides, note keys, ``vault_specs``) →
``vaultsync.renderers`` (one context builder per kind) and ``vaultsync.templates`` →
:mod:`.yamlfm` (the front-matter writer).  Reads only the template files.
"""

RENDER_FORMAT = 2
"""The format of the notes this version renders, recorded in the manifest: 2 since typed
properties (times in Obsidian's Date & time form, numbers bare, relations as links).  A sync
that finds an older format in the manifest rewrites the notes in one commit labelled
``vaultsync: render format N``."""

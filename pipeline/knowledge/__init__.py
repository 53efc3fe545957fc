"""The knowledge model of the vault : ideas, lifecycle, semantic relations, claims.

Stages: :mod:`~vaultsync.knowledge.idea` parses one note (pure), :mod:`~vaultsync.knowledge.model`
resolves links over the vault and derives ideas (pure), :mod:`~vaultsync.knowledge.scan` is the
only I/O (walk, cache), :mod:`~vaultsync.knowledge.queries` answers questions (pure),
:mod:`~vaultsync.knowledge.views` formats them and :mod:`~vaultsync.cli.knowledge` is the
``vaultsync query`` group.
"""

"""The knowledge model of the vault (seed 004): ideas, lifecycle, semantic relations, claims.

Stages: :mod:`~pipeline.knowledge.idea` parses one note (pure), :mod:`~pipeline.knowledge.model`
resolves links over the vault and derives ideas (pure), :mod:`~pipeline.knowledge.scan` is the
only I/O (walk, cache), :mod:`~pipeline.knowledge.queries` answers questions (pure),
:mod:`~pipeline.knowledge.views` formats them and :mod:`~pipeline.knowledge.cli` is the
``vaultsync query`` group.
"""

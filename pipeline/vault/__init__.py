"""Stages 5-6, vault: note specs → files → manifest → one git commit; the vault's only writer.

:mod:`.plan` (pure: specs + manifest + disk + git ownership → one action per path),
:mod:`.manifest` (pure: the engine's records in ``.vaultsync/``), :mod:`.write` (atomic,
symlink-safe writes through directory descriptors), :mod:`.vcs` and :mod:`.packfile` (git:
blobs, one commit, the index), :mod:`.gitindex` (index entries with stat data, version-guarded),
:mod:`.decide` (read the control files and the disk, plan, render: reads only), :mod:`.apply`
(the write steps in order, each with its crash window), :mod:`.report` (what a sync did),
:mod:`.sync` (the entry points), :mod:`.quick` (the no-op answer from stat data alone).
"""

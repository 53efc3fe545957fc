"""Git housekeeping: the vault's loose objects packed once they pile up; through ``git``.

Why: every sync that changes something commits a new manifest, a line per note, and libgit2
stores each as a loose object, the whole file deflated (8.5 MB at 100,000 notes, 0.25 MB at
2,800).  Nothing runs ``git gc`` in a vault only vaultsync commits to, and git's own
``gc --auto`` counts loose objects, not their size, so they would pile up for good.  Packed
together, each manifest is a delta of the one before, under a kilobyte when a sync changed
one note.  So once the loose objects pass :data:`PACK_AT_KIB`, a sync packs them with git's
own tool, as ``git gc --auto`` would: ``git repack -d -l --geometric=2`` packs every loose
object and rolls small packs together so their number grows with the log of the history,
never rewriting the big packs.  Git's repack is safe to interrupt and to run beside other git
commands (new objects stay loose; a loose object is removed only once a pack holds it).

Only in the vault's own repository (``<vault>/.git``, made by vaultsync or given to it whole):
a larger repository the vault lives in is its owner's to maintain.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultsync.core import progress
from vaultsync.vault.gitcli import PRIVATE_UMASK, run_git
from vaultsync.vault.vcs import VaultRepo

PACK_AT_KIB = 64 * 1024
"""The most KiB of loose objects a sync leaves: about eight manifests at 100,000 notes, so
one sync in eight packs there (about 3 s); one in 250 at 2,800 notes."""


def pack_loose_objects(vault: Path, *, at_kib: int | None = None) -> int:
    """Pack the loose objects of the vault's own repository when they take ``at_kib`` or more.

    ``at_kib``: :data:`PACK_AT_KIB` when ``None``.  Returns the KiB of loose objects packed
    (0: none, too few, or not the vault's own repository).  Raises ``GitFailed`` (no ``git``
    program, git refused) and ``VaultWriteError`` (the repository does not open).
    """
    repo = VaultRepo.open(vault, create=False)
    objects = repo.objects_dir() if repo is not None and repo.private else None
    if objects is None:
        return 0
    loose = loose_bytes(objects) // 1024
    if loose == 0 or loose < (PACK_AT_KIB if at_kib is None else at_kib):
        return 0
    progress.phase("pack git objects")
    # no timeout: a killed repack would leave its pack-objects child running
    run_git(vault, "repack", "-d", "-l", "-q", "--geometric=2", timeout=None, umask=PRIVATE_UMASK)
    return loose


def loose_bytes(objects: Path) -> int:
    """The bytes of the loose objects under ``objects`` (``.git/objects``): a look per folder.

    Git keeps each in a folder named by its id's first two hex digits; the rest (``pack``,
    ``info``) is not loose.  Counted here rather than by ``git count-objects``: after every
    commit, a process costs more than the 256 looks.
    """
    total = 0
    with os.scandir(objects) as folders:
        for folder in folders:
            if len(folder.name) != 2 or not folder.is_dir(follow_symlinks=False):
                continue
            with os.scandir(folder.path) as files:
                total += sum(
                    entry.stat(follow_symlinks=False).st_size
                    for entry in files
                    if entry.is_file(follow_symlinks=False)
                )
    return total

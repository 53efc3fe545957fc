"""Git housekeeping: the vault's loose objects packed once they pile up, in the background.

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

The sync does not wait for it (at 100,000 notes it took 3 to 20 s, one sync in eight): as
``git gc --auto`` detaches, :func:`start_packing` starts ``python -P -m
vaultsync.vault.housekeeping VAULT`` detached (``core.background``), one at a time
(``.vaultsync/git-pack.lock``), and the job keeps its outcome in ``.vaultsync/git-pack.json``
and its stderr in ``.vaultsync/git-pack.log``: the next sync and ``status`` say when it failed
(:func:`packing_failure`).

Only in the vault's own repository (``<vault>/.git``, made by vaultsync or given to it whole):
a larger repository the vault lives in is its owner's to maintain.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from vaultsync.core import progress
from vaultsync.core.background import JobFailure, JobFiles, finish, job_failure, spawn
from vaultsync.core.errors import VaultsyncError
from vaultsync.core.fsio import LockTimeout, file_lock
from vaultsync.vault.manifest import CONTROL_DIR

# git's modules (``gitcli``, ``vcs``) are imported where they run: ``status`` reads the
# packing's outcome (:func:`packing_failure`) without them.

PACK_AT_KIB = 64 * 1024
"""The most KiB of loose objects a sync leaves: about eight manifests at 100,000 notes, so
one sync in eight packs there (about 3 s); one in 250 at 2,800 notes."""


def pack_loose_objects(vault: Path, *, at_kib: int | None = None) -> int:
    """Pack the loose objects of the vault's own repository when they take ``at_kib`` or more.

    ``at_kib``: :data:`PACK_AT_KIB` when ``None``.  Returns the KiB of loose objects packed
    (0: none, too few, or not the vault's own repository).  Raises ``GitFailed`` (no ``git``
    program, git refused) and ``VaultWriteError`` (the repository does not open).
    """
    from vaultsync.vault.gitcli import PRIVATE_UMASK, run_git  # noqa: PLC0415 - see the imports

    loose = _loose_to_pack(vault, at_kib)
    if loose == 0:
        return 0
    progress.phase("pack git objects")
    # no timeout: a killed repack would leave its pack-objects child running
    run_git(vault, "repack", "-d", "-l", "-q", "--geometric=2", timeout=None, umask=PRIVATE_UMASK)
    return loose


def start_packing(vault: Path, *, at_kib: int | None = None) -> bool:
    """Pack as :func:`pack_loose_objects` does, in a detached process; whether one was started.

    None starts when there is too little to pack, the repository is not the vault's own, or
    another packer runs; one that cannot start is recorded as failed.  Raises
    ``VaultWriteError`` (the repository does not open).
    """
    if _loose_to_pack(vault, at_kib) == 0:
        return False
    try:
        with file_lock(_lock(vault), timeout=0.0):
            pass
    except (LockTimeout, OSError):
        return False  # one is running (or the control folder cannot hold the lock)
    return spawn(pack_job(vault), __name__, os.fspath(vault.absolute()))


def packing_failure(vault: Path) -> JobFailure | None:
    """How the last background packing failed; ``None``: it succeeded, runs or never ran."""
    return job_failure(pack_job(vault))


def pack_job(vault: Path) -> JobFiles:
    """Where the background packing keeps its outcome and its stderr (the control folder)."""
    control = vault / CONTROL_DIR
    return JobFiles(status=control / "git-pack.json", log=control / "git-pack.log")


def _lock(vault: Path) -> Path:
    return vault / CONTROL_DIR / "git-pack.lock"


def _loose_to_pack(vault: Path, at_kib: int | None) -> int:
    """The KiB of loose objects of the vault's own repository, when ``at_kib`` or more; else 0."""
    from vaultsync.vault.vcs import VaultRepo  # noqa: PLC0415 - see the imports

    repo = VaultRepo.open(vault, create=False)
    objects = repo.objects_dir() if repo is not None and repo.private else None
    if objects is None:
        return 0
    loose = loose_bytes(objects) // 1024
    return 0 if loose == 0 or loose < (PACK_AT_KIB if at_kib is None else at_kib) else loose


def main(argv: list[str]) -> int:
    """Pack the loose objects of the vault ``argv[0]`` (the detached job); its exit status."""
    if len(argv) != 1:
        return 2
    vault = Path(argv[0])
    return finish(pack_job(vault), lambda: _pack(vault))


def _pack(vault: Path) -> tuple[int, str]:
    """Pack whatever is loose, one packer at a time: ``(exit status, last error line)``."""
    from vaultsync.vault.gitcli import GitFailed  # noqa: PLC0415 - see the imports

    try:
        with file_lock(_lock(vault), timeout=0.0):
            pack_loose_objects(vault, at_kib=1)
    except LockTimeout:
        return 0, ""  # another packer runs: it packs these too
    except GitFailed as failed:
        return 1, failed.line
    except VaultsyncError as error:
        return error.exit_code, error.message
    return 0, ""


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

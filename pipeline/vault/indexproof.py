"""Which of the vault's files changed since the last sync, as git's index tells; I/O.

The no-op sync, ``check`` and ``status`` must learn which files changed since the last sync.
The stat cache answers with one ``lstat`` per file from Python (0.33 s at 100,000 notes); git
answers the same question from its index's stat data, in C, in a third of that (what ``git
status`` does).  Git's answer is about its index, not about the stat cache, so it counts only
where the two are proven to agree (:class:`~vaultsync.vault.manifest.IndexProof`):

* a sync, once it has left the index as it stays, refreshes its stat data and lists its
  entries (``git ls-files``), and records, with the index file's stat data and checksum, the
  files of the stat cache the index cannot vouch for ("odd"): an entry that does not hold the
  blob the cache records (an edit kept, a file git does not track), one flagged
  assume-unchanged or skip-worktree, a conflict's stages, and a file changed within
  ``RACY_NS`` of the index's write (git compares whole seconds: an edit of the same size in
  the second its entry was recorded would escape it);
* later, while ``.git/index`` holds the same bytes (before and after git is asked), a file
  ``git diff-files`` does not list holds the bytes its entry names, which are the ones the
  cache records.  The files it lists and the odd ones are checked as before (``vault.quick``):
  git also lists a file whose entry was "smudged" (an index written in the file's own
  timestamp tick) though its bytes are the same.

Only a vault at the top of its own repository (a ``.git`` folder), with git installed, is
answered this way.  Git is run on that repository whatever git's variables name (a hook sets
``GIT_INDEX_FILE`` for another index), and ``git diff-files`` with what could make it trust
anything but the full stat data turned off (a file system monitor, a partial stat check).
Anything else (no git, an error, the index rewritten by a ``git add``) falls back to the stat
cache: slower, never wrong.  The next sync that writes the stat cache proves the index it
leaves again.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Self

from vaultsync.core.fsio import RACY_NS
from vaultsync.vault.gitcli import PRIVATE_UMASK, GitFailed, finish_git, run_git_bytes, start_git
from vaultsync.vault.gitfacts import plain_git_dir
from vaultsync.vault.manifest import IndexProof, StatKey

TIMEOUT_S = 30
"""Seconds git may take to answer before the stat cache does instead."""

_TRUST_STAT_DATA = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.checkStat=default",
    "-c",
    "core.trustctime=true",
)
"""Settings that make git look at every file's full stat data (a user's config may not)."""

_CLEAN_MODES = (b"100644", b"100755")


def index_identity(vault: Path) -> tuple[tuple[int, int, int, int], str] | None:
    """``.git/index``'s stat data and last 20 bytes.

    ``None``: no index of a plain repository (``gitfacts.plain_git_dir``).
    """
    git_dir = vault / ".git"
    if plain_git_dir(git_dir) is None:
        return None
    try:
        fd = os.open(git_dir / "index", os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size < 20:
            return None
        tail = os.pread(fd, 20, found.st_size - 20)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (found.st_size, found.st_mtime_ns, found.st_ino, found.st_ctime_ns), tail.hex()


class _Started:
    """A git command started on the vault's own repository; ended when the block is left."""

    def __init__(self, vault: Path, *args: str, start: bool) -> None:
        self._vault = vault
        self._process: subprocess.Popen[bytes] | None = None
        if start:
            with contextlib.suppress(GitFailed):
                self._process = start_git(vault, *args, umask=PRIVATE_UMASK, own_repository=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
            self._process.communicate()

    def _output(self, command: str) -> bytes | None:
        """What git printed, once it ended; ``None``: not started, or it failed."""
        if self._process is None:
            return None
        try:
            return finish_git(self._process, command, TIMEOUT_S)
        except GitFailed:
            return None


class IndexProver(_Started):
    """A proof under way: git first refreshes the index's stat data, on the other core.

    Files whose stat data moved but not their bytes (a vault copied or restored, notes only
    touched) would be listed by every ``git diff-files`` until something refreshes the index,
    as ``git status`` does; the sync does it while it builds its stat cache, then lists the
    index (:meth:`prove`).  A context manager: leaving it ends git.
    """

    def __init__(self, vault: Path, *, wanted: bool = True) -> None:
        """Start refreshing ``vault``'s index (``wanted``: else nothing is proven)."""
        self._wanted = wanted and index_identity(vault) is not None
        # with the user's own settings: the stat data it refreshes only spare later checks, and
        # an fsmonitor turned off would drop its extension from the index written back
        super().__init__(vault, "update-index", "-q", "--refresh", start=self._wanted)

    def prove(self, entries: Mapping[str, tuple[StatKey, str]]) -> IndexProof | None:
        """:func:`prove_index` of the index once refreshed.

        A locked index is not refreshed, and the files the user changed are left as they are.
        """
        if not self._wanted:
            return None
        self._output("update-index")
        return prove_index(self._vault, entries)


_NO_CHECKSUM = "0" * 40
"""The tail of an index written without its checksum (``index.skipHash``)."""


def _same_index(found: tuple[tuple[int, int, int, int], str] | None, proof: IndexProof) -> bool:
    """Whether the index ``found`` is the one ``proof`` is of.

    The same checksum over the same size is the same bytes, whatever file holds them (``git
    status`` rewrites an index it found unchanged); without a checksum, the very same file.
    """
    if found is None:
        return False
    if proof.tail == _NO_CHECKSUM:
        return found == (proof.index, proof.tail)
    return found[1] == proof.tail and found[0][0] == proof.index[0]


def prove_index(
    vault: Path, entries: Mapping[str, tuple[StatKey, str]], *, odd_at_most: float = 0.25
) -> IndexProof | None:
    """What the index vouches for among the stat cache's ``entries`` (see the module doc).

    Files changed within ``RACY_NS`` of the index's own write are odd too (their stat data
    are checked): git's racy rule reads a file changed in the second the index was written,
    not one changed in the second before, when a sync wrote it and recorded its entry.
    ``None``: nothing, or too little to be worth it (more than ``odd_at_most`` of the files
    odd: a vault whose syncs are not committed).
    """
    before = index_identity(vault)
    if before is None:
        return None
    try:
        listing = run_git_bytes(
            vault, "ls-files", "--stage", "-v", "-z", timeout=TIMEOUT_S, own_repository=True
        )
    except GitFailed:
        return None
    if index_identity(vault) != before:
        return None  # rewritten while git listed it
    staged = _clean_entries(listing.split(b"\0"))
    # git compares whole seconds: a file changed within RACY_NS of the index's write may have
    # been recorded in the very second an edit of the same size went on to change it
    recent = before[0][1] - RACY_NS
    odd = tuple(
        sorted(
            path
            for path, (recorded, blob) in entries.items()
            if staged.get(path) != blob or recorded[1] >= recent
        )
    )
    if len(odd) > odd_at_most * len(entries):
        return None
    return IndexProof(index=before[0], tail=before[1], odd=odd)


def _clean_entries(rows: Iterable[bytes]) -> dict[str, str]:
    """Path → blob of the listed entries that git checks by their stat data.

    Those tagged ``H`` (cached, not assumed unchanged), in a regular file's mode, at stage 0.
    A row is ``H 100644 <40 hex> 0<TAB><path>``: the tag, the mode, the blob, the stage.
    """
    return {
        os.fsdecode(row[52:]): row[9:49].decode("ascii")
        for row in rows
        if row[:2] == b"H " and row[49:52] == b" 0\t" and row[2:8] in _CLEAN_MODES
    }


class DiffFiles(_Started):
    """``git diff-files`` started on the vault's index now, on the other core; read later.

    The no-op sync starts it before it reads the stat cache (0.1 s at 100,000 notes) and asks
    :meth:`changed` once it has the cache's proof.  A context manager: leaving it ends git.
    """

    def __init__(self, vault: Path) -> None:
        """Git started on ``vault``'s index, if it has one."""
        self._before = index_identity(vault)
        start = self._before is not None
        args = ("diff-files", "--name-only", "-z")
        super().__init__(vault, *_TRUST_STAT_DATA, *args, start=start)

    def changed(self, proof: IndexProof, files: Iterable[str]) -> list[str] | None:
        """Those of ``files`` that git lists, while ``proof`` holds.

        ``None``: ask the stat cache (the index is not the one proven, or git did not answer).
        """
        if not _same_index(self._before, proof):
            return None
        listed = self._output("diff-files")
        if listed is None or not _same_index(index_identity(self._vault), proof):
            return None  # git may have read another index
        names = {os.fsdecode(name) for name in listed.split(b"\0") if name}
        return sorted(names.intersection(files)) if names else []

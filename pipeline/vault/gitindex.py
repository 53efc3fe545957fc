"""Index entries with stat data for files this sync wrote, without reading them again; I/O.

``Index.add(path)`` (libgit2's ``git_index_add_bypath``) reads and hashes the file to record
it; for a file this sync just wrote, whose stat data are still those of that write, the blob
is already known.  pygit2's public ``IndexEntry`` carries only path, id and mode, and an entry
added without stat data makes git treat the file as changed (``git diff-files`` lists it and
``git status`` re-hashes it).  pygit2 has no public way to set them, so :class:`_StatEntry`
fills them in on the C structure pygit2 builds, in its private ``IndexEntry._to_c``.

**Version guard.** That method is private, so the trick is used only on the pygit2 versions
whose ``_to_c`` and ``git_index_entry`` declaration were checked to be the ones it relies on
(:data:`VERIFIED`: the sources of 1.15.0, 1.18.0 and 1.21.0 read, the contract test of
``tests/vault/test_gitindex.py`` run on 1.21.0).  Outside that range :func:`add_written` falls back
to the public ``Index.add(path)``: the same index, at the price of reading every file once.
pyproject's bound on pygit2 is the same range (a test compares them), so moving it means
checking this module first.

An edit of the same size within the same timestamp tick as our write would go unseen by git,
exactly as after ``git add`` itself (git's racy-clean window); vaultsync's own stat cache
hashes such files on the next sync (``fsio.RACY_NS``), so the edit is still kept.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pygit2
from pygit2 import IndexEntry
from pygit2.enums import FileMode

VERIFIED = ((1, 15), (1, 22))
"""pygit2 versions ``[low, high)`` on which the private ``IndexEntry._to_c`` was checked."""


def version_key(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a version string (``"1.21.0"`` → ``(1, 21)``; junk → ``(0, 0)``)."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) if found else (0, 0)


def fast_path_supported(version: str) -> bool:
    """Whether stat data may be filled in through pygit2 ``version``'s private ``_to_c``."""
    low, high = VERIFIED
    return low <= version_key(version) < high and callable(getattr(IndexEntry, "_to_c", None))


# pygit2 does not list __version__ among its exports, hence getattr.
FAST = fast_path_supported(str(getattr(pygit2, "__version__", "")))
"""The installed pygit2 takes the fast path (decided once, at import)."""


class _StatEntry(IndexEntry):
    """An index entry with the file's stat data, as ``git add`` records them."""

    def __init__(self, path: str, blob: pygit2.Oid, mode: FileMode, found: os.stat_result) -> None:
        super().__init__(path, blob, mode)
        self.found = found

    def _to_c(self) -> Any:  # pygit2's cffi structure and the path buffer it must outlive
        centry, keep = super()._to_c()  # private: see the version guard above
        found, low = self.found, 0xFFFFFFFF  # the index keeps the low 32 bits, as git does
        centry.ctime.seconds, centry.ctime.nanoseconds = divmod(found.st_ctime_ns, 10**9)
        centry.mtime.seconds, centry.mtime.nanoseconds = divmod(found.st_mtime_ns, 10**9)
        centry.dev, centry.ino = found.st_dev & low, found.st_ino & low
        centry.uid, centry.gid = found.st_uid & low, found.st_gid & low
        centry.file_size = found.st_size & low
        return centry, keep


def add_written(
    index: pygit2.Index,
    path: str,
    blob: pygit2.Oid,
    mode: FileMode,
    found: os.stat_result,
    *,
    fast: bool | None = None,
) -> None:
    """Record a file this sync wrote, still with the stat data ``found`` of that write.

    Fast (``fast``, by default :data:`FAST`): ``found`` filled in, the file not read (its blob
    is ``blob``).  Otherwise ``index.add(path)`` reads and hashes it (``path`` is relative to
    the work tree).
    """
    if FAST if fast is None else fast:
        index.add(_StatEntry(path, blob, mode, found))
    else:
        index.add(path)

"""One unreadable item is skipped, never fatal: the ``Reading`` every per-item reader shares.

An *item* is a store file that holds one note's worth of data, or a file ChatCLI itself drops
when it cannot read it: a session, a skill, a context, a daily note or digest, ``board.json``.
When such a file cannot be read (bad JSON, invalid UTF-8, a FIFO, over the size limit, a
folder that cannot be listed), :class:`Reading` records a :class:`~vaultsync.core.model.Skipped`
and answers the item's *last good* value instead, from ``last_good`` (relative path → the value
the same reader returned the last time the file read well), so its note and its place in the
graph stay as they were.  A sealed item that does not open (no key, ``stores.open_sealed`` off,
wrong key, tampered, moved) is skipped the same way, its line saying what to set.

Pure apart from hashing the bytes of a skipped file (the warning is shown once per content).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from vaultsync.core.errors import SealedStoreError, StoreError
from vaultsync.core.model import Skipped
from vaultsync.core.redact import redact
from vaultsync.extract.jsonio import read_bytes
from vaultsync.extract.memo import Memo, reader_key

T = TypeVar("T")


@dataclass(slots=True)
class Reading:
    """What one ``read_state`` skipped, and the values that read well, by source."""

    state_dir: Path
    last_good: Mapping[str, Any] = field(default_factory=dict)
    good: dict[str, Any] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    memo: Memo | None = None
    """What the last read gave, reused for an unchanged file (:mod:`.memo`); ``None``: read all."""

    def rel(self, path: Path) -> str:
        """``path`` relative to the state directory, POSIX style (absolute when outside it)."""
        if path.is_relative_to(self.state_dir):
            return path.relative_to(self.state_dir).as_posix()
        return path.as_posix()

    def item(self, path: Path, read: Callable[[Path], T | None]) -> T | None:
        """``read(path)``; when it raises ``StoreError``, the item's last good value (or None)."""
        rel = self.rel(path)
        memo = self.memo
        if memo is not None:
            key = reader_key(read, rel)
            hit, kept, stamps = memo.item(key, path, rel)
            if hit:
                self.good[rel] = kept
                return cast("T", kept)
        try:
            value: T | None = read(path)
        except SealedStoreError as err:
            self.skip(rel, err.where, f"{err.what}; {err.hint}", path)
            value = self._last_good_of(rel)
        except StoreError as err:
            self.skip(rel, err.where, err.what, path)
            value = self._last_good_of(rel)
        else:
            if memo is not None and value is not None:
                memo.offer_item(key, stamps, value, rel)
        if value is not None:
            self.good[rel] = value
        return value

    def store(self, rel: str, read: Callable[[], T]) -> T | None:
        """A fixed store's ``read()``; when it is sealed and does not open, its last good value.

        Only a sealed store is skipped here: any other ``StoreError`` of a fixed store still
        stops the read (a malformed memory index is not an item).  What read well is kept as
        its last good value, so a store sealed later keeps its notes.
        """
        try:
            value: T | None = read()
        except SealedStoreError as err:
            self.skip(
                self.rel(Path(err.path)), err.where, f"{err.what}; {err.hint}", Path(err.path)
            )
            value = self._last_good_of(rel)
        if value is not None:
            self.good[rel] = value
        return value

    def _last_good_of(self, rel: str) -> Any:
        """The last good value of a source; the cache keys it by its masked path (core.scrub)."""
        if rel in self.last_good:
            return self.last_good[rel]
        return self.last_good.get(redact(rel))

    def skip(self, rel: str, where: str, what: str, path: Path | None = None) -> None:
        """Record one skipped source (``path`` is hashed when it is a readable file)."""
        digest = "" if path is None else _digest(path)
        self.skipped.append(Skipped(source=rel, where=where, what=what, digest=digest))

    def entries(self, folder: Path) -> list[os.DirEntry[str]] | None:
        """Visible entries of ``folder`` by name; ``[]`` when missing, ``None`` when unreadable.

        An unreadable folder is skipped, and every item last read under it is kept (see
        :meth:`kept_under`).
        """
        try:
            listed = list(os.scandir(folder))
        except FileNotFoundError:
            return []
        except NotADirectoryError:  # a file where the folder was: its items are not gone
            self.skip(self.rel(folder), "", "cannot list the folder: it is a file, not a folder")
            return None
        except OSError as err:
            self.skip(self.rel(folder), "", f"cannot list the folder: {err.strerror or err}")
            return None
        return sorted((e for e in listed if not e.name.startswith(".")), key=lambda e: e.name)

    def kept_under(self, folder: Path) -> list[Any]:
        """The last good values of every item under ``folder`` (it could not be listed)."""
        prefix = self.rel(folder) + "/"
        kept = []
        for rel, value in sorted(self.last_good.items()):
            if rel.startswith(prefix):
                self.good[rel] = value
                kept.append(value)
        return kept


def _digest(path: Path) -> str:
    """SHA-256 of a regular file's bytes; empty when it cannot be read as one."""
    try:
        data = read_bytes(path)
    except StoreError:
        return ""
    return "" if data is None else hashlib.sha256(data).hexdigest()

"""What reading each store file gave last time, reused while the file is unchanged; stats files.

A sync that changed one fact used to read, parse and mask every store file again (7.9 s of a
one-fact sync at 100,000 notes).  A :class:`Memo` holds, by *source key* (the reader and the
file, or the fixed memory store), the file's stat data when it was read and the **masked**
value it gave.  A file whose stat data (size, ``mtime_ns``, inode, ``ctime_ns``; or "missing")
are the same now, and whose change is older than the memo by more than git's racy window
(:func:`vaultsync.core.fsio.is_racy` against the memo file's own mtime), is neither read,
parsed nor masked again: the memo's value takes its place, the very same object when the memo
was loaded earlier in this process.

The contract is that the memo changes nothing: ``read_state_keeping`` with a memo gives
``Records`` equal (``==``) to a full read followed by the mask (``graph.load``).  So:

* only a value that read well is kept: a skipped item (bad JSON, over the size limit, a FIFO)
  is read again every time, with its warning and last good value as before;
* a per-item value (a session, skill, context, daily note, the board) is kept only when masking
  it changes nothing, key included (:meth:`Memo.settle`): the readers sort and deduplicate those
  by their raw text, so a value with a secret or the private name in it is read again every
  time, never compared in its masked form, and the memo never holds it;
* a fixed memory store (facts with their tombstones, topics, projects, episodes) is one value,
  never sorted against another file's, so its masked value is kept, secrets masked;
* a fixed store that holds a secret of its own (one masking finds in its records alone) is
  read again every time, never taken whole from the memo: the set of secrets a read knows must
  be complete, since the same value elsewhere (a session's title) is masked only because it is
  known (``core.scrub.spread``), and the memo keeps no secret value to know it by.  Its records
  without a secret are still the memo's objects, not masked again;
* the memo is discarded whole when vaultsync's code, the secret rules, the size limit, the
  folders read or the private profile name changed (:func:`memo_version`; the name only as a
  salted digest); an unreadable or corrupt memo is an empty one, never an error.

The file itself (``extract-memo.pickle``, 0600 in the 0700 cache folder) is written by
``graph.cache``; it holds masked values only.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from vaultsync.core.fsio import is_racy
from vaultsync.core.pickling import fast_pickle
from vaultsync.core.scrub import Scrubber

__all__ = [
    "MISSING",
    "STORE_KEYS",
    "Memo",
    "Stamp",
    "changed",
    "memo_version",
    "part",
    "reader_key",
    "stamp",
]

T = TypeVar("T")

Stamp = tuple[int, int, int, int] | None
"""``(size, mtime_ns, inode, ctime_ns)`` of a file; ``None`` when it does not exist."""
MISSING: Stamp = None
UNKNOWN: Stamp = (-1, -1, -1, -1)
"""The stamp of a file whose ``stat`` failed (other than missing): never reused, never kept."""


def stamp(path: Path) -> Stamp:
    """The file's stat data; ``None`` when missing; :data:`UNKNOWN` when ``stat`` fails."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return UNKNOWN
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)


def memo_version(code: str, rules: str, limit: int, folders: Iterable[str], name: str) -> str:
    """Everything that decides what reading and masking a file gives, besides the file itself.

    ``name``: the private profile name (``""`` if none), taken in as a digest only.
    """
    named = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    text = "\n".join((code, rules, str(limit), *folders, named))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def reader_key(read: Callable[..., Any], rel: str) -> str:
    """The source key of one per-item file: its part, its reader (with bound arguments), the file.

    The part (before ``|``) names the reader (``contexts-read_context``, ``workspace-session``…):
    each reader's entries live in their own memo file, so a new session does not rewrite the
    contexts'.
    """
    func = getattr(read, "func", read)
    bound = getattr(read, "keywords", None) or {}
    extra = getattr(read, "__defaults__", None) or ()
    name = f"{func.__module__.rsplit('.', 1)[-1]}-{func.__name__.strip('_')}"
    return f"{name}|{func.__module__}.{func.__qualname__}{sorted(bound.items())!r}{extra!r}|{rel}"


@dataclass(slots=True)
class _Fresh:
    """One value read now, raw, with the stat data taken before reading it."""

    stamps: tuple[Stamp, ...]
    value: Any
    clean: bool
    """Kept only when masking changes nothing (a per-item value)."""


@dataclass(slots=True)
class Memo:
    """The values of the last read by source key, and what this read took from it or read anew.

    ``entries``: source key → (stamps, masked value), as loaded.  A per-item source's key is a
    salted digest (:meth:`digest`: the memo names no file in clear), a fixed store's its name
    (``facts``…).  An entry whose file changed within the racy window of the moment its memo
    file was written (``written``) is not trusted.
    """

    entries: Mapping[str, tuple[tuple[Stamp, ...], Any]] = field(default_factory=dict)
    written: Mapping[str, int] = field(default_factory=dict)
    """:func:`part` → the mtime (ns) of the memo file that held its entries."""
    salt: bytes = b""
    """The key of the source keys' digests."""
    kept: dict[str, tuple[tuple[Stamp, ...], Any]] = field(default_factory=dict)
    fresh: dict[str, _Fresh] = field(default_factory=dict)
    same: list[Any] = field(default_factory=list)
    """Records of a store read again that are the last read's objects (already masked)."""
    keys: dict[int, bytes] = field(default_factory=dict)
    """``id`` → :func:`strict_key` of the records of the stores read again (computed once)."""
    proven: dict[str, bytes] = field(default_factory=dict)
    """Each store file (relative path; a fixed store by its main file) whose value this read
    took from the memo, or read from a per-item file changed before git's racy window → its
    proof: the entry's key and the stamps its value goes with.  An entry is replaced only by a
    read that missed it, and a file out of the racy window keeps its bytes while its stamps
    stay, so one proof always names one value."""

    def digest(self, key: str) -> str:
        """A per-item source key as the memo holds it: its part, ``:``, a salted BLAKE2b (hex)."""
        data = key.encode("utf-8", "surrogatepass")
        digest = hashlib.blake2b(data, key=self.salt, digest_size=16).hexdigest()
        return f"{key.partition('|')[0]}:{digest}"

    def lookup(self, key: str, paths: tuple[Path, ...]) -> tuple[bool, Any, tuple[Stamp, ...]]:
        """``(True, value, stamps)`` when ``key`` may be reused, else ``(False, None, stamps)``.

        The stamps are taken now, before any read, so a change during the read shows next time.
        """
        stamps = tuple(stamp(path) for path in paths)
        written = self.written.get(part(key), 0)
        entry = self.entries.get(key)
        if entry is None or entry[0] != stamps or _holds_secret(entry[1]):
            return False, None, stamps
        if any(s is not None and is_racy(max(s[1], s[3]), written) for s in entry[0]):
            return False, None, stamps
        self.kept[key] = entry
        return True, _plain(entry[1]), stamps

    def offer(self, key: str, stamps: tuple[Stamp, ...], value: Any, *, clean: bool) -> None:
        """A value read now (raw); :meth:`settle` keeps it, masked, if it may be kept."""
        if UNKNOWN not in stamps:
            self.fresh[key] = _Fresh(stamps=stamps, value=value, clean=clean)

    def item(self, key: str, path: Path, rel: str = "") -> tuple[bool, Any, tuple[Stamp, ...]]:
        """:meth:`lookup` of a per-item file (``key`` from :func:`reader_key`, digested here).

        A value taken is noted in :attr:`proven` under ``rel`` (when given): ``graph.cache``
        tells the last good values unchanged by it.
        """
        digested = self.digest(key)
        found = self.lookup(digested, (path,))
        if found[0]:
            self._prove(rel, digested, found[2])
        return found

    def _prove(self, rel: str, key: str, stamps: tuple[Stamp, ...]) -> None:
        if rel:
            self.proven[rel] = f"{key}{stamps!r}".encode()

    def _prove_read(self, rel: str, key: str, stamps: tuple[Stamp, ...]) -> None:
        """Prove a value read now by its files' stamps, if they changed before the racy window.

        ``stamps`` were taken before the read.  Out of git's racy window, the bytes stay while
        the stamps do, and a later read gives this very value, from the memo or anew.
        """
        now = time.time_ns()
        recent = any(s is not None and is_racy(max(s[1], s[3]), now) for s in stamps)
        if UNKNOWN not in stamps and not recent:
            self._prove(rel, key, stamps)

    def offer_item(self, key: str, stamps: tuple[Stamp, ...], value: Any, rel: str = "") -> None:
        """:meth:`offer` of a per-item value (kept only when masking changes nothing in it).

        Proven under ``rel`` (when given) by its file's stamps, as :meth:`_prove_read` says.
        """
        digested = self.digest(key)
        self.offer(digested, stamps, value, clean=True)
        self._prove_read(rel, digested, stamps)

    def value(
        self, key: str, paths: tuple[Path, ...], read: Callable[[], T], *, rel: str = ""
    ) -> T:
        """The memo's value of a fixed store, else ``read()`` (kept masked by :meth:`settle`).

        The value is noted in :attr:`proven` under ``rel`` (when given): taken, as
        :meth:`item` does; read, as :meth:`offer_item` does.

        A store read again keeps, of its records, the very objects of the last read that masking
        left unchanged and that are the same as the records read now, by :func:`strict_key`
        (one changed fact: the other 13,499 are the same objects, and are not masked again).
        """
        hit, kept, stamps = self.lookup(key, paths)
        if hit:
            self._prove(rel, key, stamps)
            return cast("T", kept)
        value = read()
        self.offer(key, stamps, value, clean=False)
        self._prove_read(rel, key, stamps)
        entry = self.entries.get(key)
        if isinstance(value, tuple) and entry is not None and isinstance(entry[1], _Store):
            clean = entry[1].clean
            keys = self.keys
            same = []
            for record in value:
                key_of = strict_key(record)
                new = clean.get(key_of, record)
                keys[id(new)] = key_of  # ``new`` lives as long as this memo: its id stays its own
                same.append(new)
            self.same.extend(new for new, old in zip(same, value, strict=True) if new is not old)
            self.fresh[key].value = tuple(same)
            return cast("T", self.fresh[key].value)
        return value

    def reused(self) -> list[Any]:
        """The values taken from the memo by this read (already masked)."""
        return [_plain(value) for _, value in self.kept.values()] + self.same

    def settle(self, mask: Callable[[Any], Any]) -> dict[str, tuple[tuple[Stamp, ...], Any]]:
        """The entries to keep for the next read: those reused, and those read now, masked.

        A per-item value is kept only when masking changes nothing in it.
        """
        entries = dict(self.kept)
        for key, fresh in self.fresh.items():
            masked = mask(fresh.value)
            if fresh.clean:
                if masked == fresh.value:
                    entries[key] = (fresh.stamps, fresh.value)
            elif isinstance(masked, tuple):
                entries[key] = (fresh.stamps, _Store.of(fresh.value, masked, self.keys))
            else:
                entries[key] = (fresh.stamps, masked)
        return dict(sorted(entries.items()))


STORE_KEYS = frozenset(("facts", "topics", "projects", "episodes"))
"""The fixed memory stores' keys (the profile is read every time: its name masks the rest)."""


def part(key: str) -> str:
    """The memo file (part) a key's entry lives in: its fixed store's, or one of its reader's.

    A per-item key (``reader:digest``, :meth:`Memo.digest`) lives in one of its reader's 16
    files, by its digest's first hex digit: a changed context rewrites a sixteenth of the
    contexts' entries (at 100,000 notes all of them were a 40 MB file, rewritten in line).
    """
    if key in STORE_KEYS:
        return key
    reader, _, digest = key.partition(":")
    return f"{reader}-{digest[:1]}"


@fast_pickle
@dataclass(frozen=True, slots=True)
class _Store:
    """A fixed store's masked records, and those masking left unchanged, by :func:`strict_key`."""

    records: tuple[Any, ...]
    clean: dict[bytes, Any]
    secret: bool = False
    """Some record holds a secret of its own: the store is read again each time, so the read
    knows that secret and masks it wherever else it appears."""

    @classmethod
    def of(cls, raw: tuple[Any, ...], masked: tuple[Any, ...], keys: dict[int, bytes]) -> _Store:
        """The masked records of a store; the clean ones indexed for the next read.

        ``keys``: the :func:`strict_key` of records already known, by ``id``.
        """
        clean = {
            keys.get(id(new)) or strict_key(new): new
            for new, old in zip(masked, raw, strict=True)
            if new is old
        }
        changed = [old for new, old in zip(masked, raw, strict=True) if new is not old]
        return cls(records=masked, clean=clean, secret=_reveals_secret(changed))


def _reveals_secret(records: list[Any]) -> bool:
    """Whether masking ``records`` alone finds a secret (one :class:`Scrubber` decides)."""
    if not records:
        return False
    scrubber = Scrubber()
    scrubber(records)
    return bool(scrubber.secrets)


def _holds_secret(value: Any) -> bool:
    """A fixed store's entry whose records hold a secret of their own: never reused whole."""
    return isinstance(value, _Store) and value.secret


def strict_key(record: Any) -> bytes:
    """A digest of a record's ``repr``: equal only for records that render the same.

    ``==`` is too loose to stand in for a record read now: ``0.0 == -0.0``, and two times in
    different zones are equal when they name the same instant.
    """
    data = repr(record).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


def _plain(value: Any) -> Any:
    """A memo value as the records hold it."""
    return value.records if isinstance(value, _Store) else value


def changed(part: Mapping[str, Any], loaded: Mapping[str, Any], fresh: Iterable[str]) -> bool:
    """Whether one part of the memo must be written again (an entry read anew, added or gone)."""
    return part.keys() != loaded.keys() or any(key in part for key in fresh)

r"""Where vaultsync keeps its caches, and the one envelope every cache file is written in.

Each stage owns its caches (the extract memo in ``extract``, the graph and its patch state in
``graph``, the notes' layout and keys in ``render``), all in one folder per state directory
(:func:`cache_dir`), all written through this module: a first line naming the cache, its
version and a digest of everything its contents depend on (the code, the settings that shape
them), then the payload.

A cache is only ever an optimisation: a file that is missing, of another name, version or key,
truncated or unreadable reads as nothing (:func:`read`, :func:`load_pickle`), and the stage
computes from scratch; it is never trusted wrongly, and never an error.  Files are ``0600`` in
a ``0700`` folder, written atomically.

A process that runs sync after sync (``watch``) keeps what it loaded or saved in memory
(:func:`resident`): a stage :func:`hold`\ s the value it wrote or read, and finds it again
(:func:`held`) while the file is that very file — same size, mtime, inode and ctime; every
write replaces the file by a rename, so another process's write is a new inode.  Only the
values of one cache folder are held at a time.  There a stage's :func:`save` is held at once
and written at the next :func:`flush`, once the sync is committed: serialising 100,000 notes'
memos is off the path from a store change to its commit.

A one-shot command that builds every note (a sync, a ``check`` or ``status`` that plans) does
the like within itself (:func:`saved_aside`): once a stage has saved its caches it hands them
over (:func:`hand_over`) to a forked helper that writes them on the other core while the
command goes on; the command waits for its helpers before it returns, so it leaves its caches
written as a plain run does.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.core.environment import read_environment
from vaultsync.core.fsio import atomic_write, open_regular

if TYPE_CHECKING:
    from vaultsync.core.parallel import Background

ENVELOPE = b"vaultsync-cache"

FileKey = tuple[int, int, int, int]
_held: dict[Path, tuple[FileKey | None, bytes, object]] = {}
"""Per file: its key when held (``None``: saved, not written yet), its head, its value."""
_pending: dict[Path, Callable[[], bool]] = {}
"""The writes :func:`save` left for :func:`flush`, in the order they were asked for."""
_resident = 0
_aside: list[Background[bool]] | None = None
"""Inside :func:`saved_aside`: the helpers writing the saves handed over so far."""
_aside_helper = False
HELPER_HEAP_MIB = 512
"""A helper writing the caches is forked only while this process holds less memory than this.

The helper pickles what this process made, and each object it reads is written to (its
reference count): every page holding one is copied.  At 100,000 notes a one-fact sync held
630 MiB when it handed its caches over, and its helper copied 400 more: together over the
1 GiB the processes of a sync may take.  Below this size both stay under it; above it the
caches are written in line (that sync took half a second more, side by side)."""


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """``$VAULTSYNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/vaultsync``, else ``~/.cache/vaultsync``."""
    env = read_environment(environ)
    if chosen := env.cache_dir:
        return Path(chosen).expanduser()
    xdg = env.xdg_cache_home
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "vaultsync"


def cache_dir(state: Path) -> Path:
    """The cache folder of one state directory: ``<root>/state-<digest of its real path>``."""
    real = os.path.realpath(state)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:24]
    return cache_root() / f"state-{digest}"


def envelope(name: str, version: int, key: str) -> bytes:
    """The first line of a cache file: its name, version and the digest of its ``key``."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return b"%s %s %d %s\n" % (ENVELOPE, name.encode(), version, digest.encode())


Payload = bytes | tuple[bytes, ...]
"""A cache's payload: its bytes, or its chunks in order (:func:`two_parts`), written as they are."""


def write(path: Path, head: bytes, payload: Payload, *, durable: bool = True) -> bool:
    """``head`` + ``payload`` to ``path``, atomically (0600); ``False`` when it cannot be."""
    chunks = (head, payload) if isinstance(payload, bytes) else (head, *payload)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(path, chunks, mode=0o600, durable=durable)
    except OSError:
        return False
    return True


def read(path: Path, head: bytes) -> bytes | None:
    """The payload of ``path`` when it begins with ``head``; ``None`` otherwise (never fails)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data[len(head) :] if data.startswith(head) else None


def holds(path: Path, head: bytes) -> bool:
    """Whether ``path`` begins with ``head`` (only those bytes are read).

    A regular file only: never read through a symlink, a FIFO never waited on.
    """
    try:
        handle, _info = open_regular(path)
    except OSError:
        return False
    with handle:
        return handle.read(len(head)) == head


_PART_SIZE = struct.Struct(">Q")


def two_parts(first: bytes, second: bytes) -> tuple[bytes, bytes, bytes]:
    """One payload of two parts, told apart again by :func:`split_parts` (once joined).

    For a cache that writes one part again as it was, or decodes the two apart.  The chunks
    are written one after another (:func:`write`), never joined here.
    """
    return (_PART_SIZE.pack(len(first)), first, second)


def split_parts(data: bytes) -> tuple[bytes, bytes]:
    """The two parts :func:`two_parts` joined.

    Raises:
        ValueError: ``data`` is not two parts (too short for the first one's size, or for it).
    """
    try:
        (size,) = _PART_SIZE.unpack_from(data)
    except struct.error as err:
        raise ValueError("no part size") from err
    end = _PART_SIZE.size + size
    if end > len(data):
        raise ValueError("the first part is cut short")
    return data[_PART_SIZE.size : end], data[end:]


def load_pickle(path: Path, head: bytes) -> object:
    """The object pickled after ``head`` in ``path``; ``None`` when anything is off."""
    import pickle  # noqa: PLC0415 - status reads caches that are not pickles (~7 ms saved)

    payload = read(path, head)
    if payload is None:
        return None
    try:
        return pickle.loads(payload)  # noqa: S301 - our own file, 0600 in a 0700 folder
    except Exception:  # a cache that does not load is no cache
        return None


@contextlib.contextmanager
def resident() -> Iterator[None]:
    """While inside, values held with :func:`hold` are kept in memory for :func:`held`.

    Outside, :func:`hold` keeps nothing: a one-shot command does not keep the state it is done
    with alive (its peak memory is the largest at 100,000 notes).
    """
    global _resident  # noqa: PLW0603 - the process's one policy, set by its resident loop
    _resident += 1
    try:
        yield
    finally:
        _resident -= 1
        if not _resident:
            flush()
            forget()


def is_resident() -> bool:
    """Whether this process keeps values between its runs (inside :func:`resident`)."""
    return _resident > 0


def hold(path: Path, head: bytes, value: object) -> None:
    """Keep ``value`` as what ``path`` holds under ``head``, just written or read (resident only).

    The caller hands it over: nothing may change it afterwards, since :func:`held` gives the
    very object back to the next run.
    """
    if not _resident:
        return
    key = _file_key(path)
    if key is None:
        _held.pop(path, None)
        return
    _keep_one_folder(path.parent)
    _held[path] = (key, head, value)


def save(path: Path, head: bytes, value: object, write: Callable[[], bool]) -> bool:
    """Save ``value`` as what ``path`` holds under ``head``: ``write()`` writes the file.

    A one-shot process writes now (``write()``'s answer), or inside :func:`saved_aside` at its
    stage's :func:`hand_over`.  A resident one holds ``value`` at once, for its next sync, and
    writes at the next :func:`flush`: a process killed before then leaves the earlier file, an
    earlier build's cache, as valid as it was.  The caller hands ``value`` over, as to
    :func:`hold`.
    """
    if not _resident and _aside is None:
        return write()
    _pending.pop(path, None)  # a newer save of the file is written in its own turn
    _keep_one_folder(path.parent)
    if _resident:
        _held[path] = (None, head, value)
    _pending[path] = write
    return True


def later(path: Path, write: Callable[[], bool]) -> bool:
    """``write()`` now, or, inside :func:`saved_aside`, with that run's saves (``True``).

    For a cache whose value is not held (``path`` names it among the saves: one write each).
    """
    if _aside is None:
        return write()
    _pending.pop(path, None)
    _pending[path] = write
    return True


@contextlib.contextmanager
def saved_aside(*, helper: bool = True) -> Iterator[None]:
    """Inside, a one-shot process's :func:`save` and :func:`later` wait for :func:`hand_over`.

    Why: pickling and writing a one-fact sync's caches took 0.9 s of its 10 s at 100,000
    notes, work the other core can do while this one goes on.  ``helper``: whether a forked
    helper may write them (not in a first sync: its heap is at its largest while it renders
    every note, and a helper pickling beside it copied the pages it touched).  On leaving,
    every helper is waited for and whatever is left is written here.  A cache is a hint, so a
    helper killed midway leaves the earlier files, as valid as they were.  A resident process
    keeps its own policy (its saves wait for its :func:`flush`, after the commit).
    """
    global _aside, _aside_helper  # the process's one policy, set by the run it is in
    if _resident or _aside is not None:
        yield
        return
    _aside, _aside_helper = [], helper
    try:
        yield
    finally:
        begun, _aside = _aside, None
        try:
            for writing in begun:
                writing.result()  # waits for the helper (what it could not write stays as was)
            flush()  # any saved since the last hand-over
        finally:
            forget()


def hand_over(items: int) -> None:
    """The saves asked for so far written now: by a forked helper, inside :func:`saved_aside`.

    A stage calls it once its caches are saved, so their values are freed at once, as if
    written in line (held to the end, they raised a one-fact sync's peak by 144 MiB, and a
    sync's after an upgrade by 50).  ``items``: the stage's size; where a fork is not worth
    it, or not allowed, they are written here.  Outside :func:`saved_aside`, nothing waits.
    """
    if _aside is None or not _pending:
        return
    if _aside_helper and _small_enough_to_fork():
        from vaultsync.core.parallel import in_background  # noqa: PLC0415 - forks: when asked

        writing = in_background(_written_all, min_items=items)
        if writing.forked:
            _aside.append(writing)
            forget()  # the helper's now
            return
    flush()


def _small_enough_to_fork() -> bool:
    """Whether this process and a helper copying its pages stay within the memory allowed."""
    from vaultsync.core.process import resident_mib  # noqa: PLC0415 - only when handing over

    held = resident_mib()
    return held is None or held < HELPER_HEAP_MIB


def _written_all() -> bool:
    """:func:`flush`, in a helper: its value says it ran to the end."""
    flush()
    return True


def flush() -> None:
    """Write what :func:`save` left for later, in order; a file not written is not held."""
    while _pending:
        path = next(iter(_pending))
        write = _pending.pop(path)
        found = _held.get(path)
        key = _file_key(path) if _written(write) else None
        if found is not None and found[0] is None:  # still that save's value
            if key is None:
                del _held[path]
            else:
                _held[path] = (key, found[1], found[2])


def _written(write: Callable[[], bool]) -> bool:
    try:
        return write()
    except Exception:  # a cache that cannot be written is no cache: the watcher goes on
        return False


def held(path: Path, head: bytes) -> object | None:
    """The value :func:`hold` or :func:`save` kept for ``path`` under ``head``.

    Held from a file: while the file is still that one.  Saved and not written yet: newer
    than the file, whatever it is.
    """
    found = _held.get(path)
    if found is None or found[1] != head:
        return None
    if found[0] is not None and _file_key(path) != found[0]:
        return None
    return found[2]


def load_held(path: Path, head: bytes, load: Callable[[], object]) -> object:
    """The value held for ``path`` under ``head``, else ``load()``, held unless it is ``None``."""
    found = held(path, head)
    if found is None:
        found = load()
        if found is not None:
            hold(path, head, found)
    return found


def forget() -> None:
    """Drop every held value and every write left for later (as a new process would start)."""
    _held.clear()
    _pending.clear()


def _keep_one_folder(folder: Path) -> None:
    """Let go of the values of every other cache folder (``sync --each`` runs through many)."""
    if any(path.parent != folder for path in _pending):
        flush()
    for other in [other for other in _held if other.parent != folder]:
        del _held[other]


def _file_key(path: Path) -> FileKey | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)

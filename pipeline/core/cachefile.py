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
values of one cache folder are held at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from vaultsync.core.environment import read_environment
from vaultsync.core.fsio import atomic_write

ENVELOPE = b"vaultsync-cache"

FileKey = tuple[int, int, int, int]
_held: dict[Path, tuple[FileKey, bytes, object]] = {}
_resident = 0


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


def write(path: Path, head: bytes, payload: bytes, *, durable: bool = True) -> bool:
    """``head`` + ``payload`` to ``path``, atomically (0600); ``False`` when it cannot be."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(path, head + payload, mode=0o600, durable=durable)
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
    """Whether ``path`` begins with ``head`` (only those bytes are read)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(head)) == head
    except OSError:
        return False


def load_pickle(path: Path, head: bytes) -> object:
    """The object pickled after ``head`` in ``path``; ``None`` when anything is off."""
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
            forget()


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
    for other in [other for other in _held if other.parent != path.parent]:
        del _held[other]  # one cache folder at a time (``sync --each`` runs through many)
    _held[path] = (key, head, value)


def held(path: Path, head: bytes) -> object | None:
    """The value :func:`hold` kept for ``path`` under ``head`` while the file is still that one."""
    found = _held.get(path)
    if found is None or found[1] != head or _file_key(path) != found[0]:
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
    """Drop every held value (as a new process would start)."""
    _held.clear()


def _file_key(path: Path) -> FileKey | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns)

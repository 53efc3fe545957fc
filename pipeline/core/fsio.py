"""File primitives every stage shares: atomic writes, directory fsync, locks, the racy rule; I/O.

One way to do each of these, so every file vaultsync writes gets the same guarantees:

* :func:`atomic_write` / :func:`atomic_file`: a uniquely named temp file in the target's
  folder, written, flushed and fsynced, then renamed over the target and the folder fsynced;
  on any failure the temp file is removed and the target is untouched.
  :func:`atomic_file_named` does the same when the final name is known only once the bytes
  are written (git's packs are named by their content).
* The same through a **directory descriptor** (``…_at``), for callers that never follow a
  symlink (the vault's :class:`vaultsync.vault.write.VaultFS` opens every folder with
  ``O_NOFOLLOW``): :func:`write_temp_at` (an ``O_EXCL | O_NOFOLLOW`` temp file),
  :func:`link_at` (placing that temp under a name only if the name is free),
  :func:`atomic_write_at` (temp, fsync, rename, fsync of the folder) and :func:`discard_at`.
* :func:`fsync_dir`: make the names just placed in a folder durable; :func:`sync_filesystem`
  makes everything written to a file system durable at once (``syncfs``).
* Locks: :func:`open_lock` opens a lock file (``O_NOFOLLOW``, optionally through a directory
  descriptor), :func:`acquire` takes an ``flock`` on it with a timeout, :func:`release` lets
  go; :func:`file_lock` is the three as one context manager.  A blocking ``flock`` queues the
  process in the kernel, so a busy writer cannot starve it the way polling can; it runs in a
  helper thread because ``flock`` cannot time out by itself.
* :func:`read_regular`: a regular file's bytes, a symlink (or a FIFO) never followed.
* :data:`RACY_NS` and :func:`is_racy`: git's racy-timestamp rule.  A file modified within 2 s
  of the moment its stat data were recorded may have changed again without its stat data
  showing it (1-2 s timestamp granularity on some file systems), so only a hash can tell.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    import ctypes

RACY_NS = 2_000_000_000
"""A file whose mtime is this close to the time its stat data were recorded is hashed again."""

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO put where a file was must not wait for a writer (no effect on
# a regular file's reads)
READ_NO_FOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
# Where hard links are refused: FAT, some FUSE and network file systems.
_NO_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP})


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library, loaded on first need (``ctypes`` costs a no-op sync 3 ms to import)."""
    import ctypes  # noqa: PLC0415 - see the docstring

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None


class NotARegularFile(OSError):
    """What :func:`open_regular` found was a folder, a FIFO, a socket or a device."""


def open_regular(path: str | Path, *, dir_fd: int | None = None) -> tuple[BinaryIO, os.stat_result]:
    """The regular file at ``path`` open for reading, and its stat data.

    A symlink is never followed and a FIFO never waited on; anything but a regular file
    raises :class:`NotARegularFile` (its ``strerror`` says what it is), leaving nothing open.
    """
    fd = os.open(path, READ_NO_FOLLOW, dir_fd=dir_fd)
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode):
        return os.fdopen(fd, "rb"), info
    os.close(fd)  # before fdopen, which refuses a folder
    what = "a folder" if stat.S_ISDIR(info.st_mode) else "a FIFO, socket or device"
    raise NotARegularFile(errno.EINVAL, f"{what}, not a file", os.fspath(path))


def read_regular(path: str | Path) -> bytes | None:
    """The bytes of the regular file at ``path``, a symlink not followed; ``None`` otherwise."""
    try:
        handle, _info = open_regular(path)
    except OSError:
        return None
    with handle:
        return handle.read()


def is_racy(mtime_ns: int, recorded_ns: int) -> bool:
    """Whether stat data taken at ``recorded_ns`` cannot prove a file of ``mtime_ns`` unchanged."""
    return mtime_ns >= recorded_ns - RACY_NS


def fsync_dir(folder: Path) -> None:
    """Make the names just placed in ``folder`` durable.

    Raises:
        OSError: the folder cannot be opened or synced.
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_filesystem(fd: int) -> None:
    """Make everything written to the file system holding ``fd`` durable.

    ``syncfs`` where the C library has it (Linux); elsewhere ``os.sync()``, which flushes
    every file system.

    Raises:
        OSError: ``syncfs`` failed.
    """
    syncfs = getattr(_libc(), "syncfs", None)
    if syncfs is None:
        os.sync()
    elif syncfs(fd) != 0:
        import ctypes  # noqa: PLC0415 - loaded by _libc already

        code = ctypes.get_errno()
        raise OSError(code, f"syncfs failed: {os.strerror(code)}")


# -- by path ------------------------------------------------------------------------------------


@contextlib.contextmanager
def atomic_file_named(
    folder: Path,
    *,
    prefix: str,
    mode: int = 0o600,
    durable: bool = True,
    sync_folder: bool = True,
) -> Iterator[tuple[BinaryIO, Callable[[str], None]]]:
    """A temp file in ``folder`` to write, renamed to the name given once written.

    Yields the binary handle and a function to call with the final name (the last call wins).
    ``durable`` fsyncs the file before the rename and, with ``sync_folder``, the folder after
    it (a caller placing several files may fsync the folder once, with :func:`fsync_dir`).

    Raises:
        OSError: the temp file cannot be created, written or renamed; it is removed.
        ValueError: the block ended without naming the file; it is removed.
    """
    import tempfile  # noqa: PLC0415 - only writers need it; a no-op sync never writes

    fd, temp_name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    temp = Path(temp_name)
    final: list[str] = []
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle, final.append
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if not final:
            raise ValueError(f"{temp}: written but never named")
        temp.chmod(mode)
        temp.replace(folder / final[-1])
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    if durable and sync_folder:
        fsync_dir(folder)


@contextlib.contextmanager
def atomic_file(
    target: Path, *, mode: int = 0o600, durable: bool = True, prefix: str | None = None
) -> Iterator[BinaryIO]:
    """A binary handle on a temp file that replaces ``target`` when the block ends without error.

    ``durable`` fsyncs the file before the rename and the folder after it.  ``prefix`` names
    the temp file (default ``.<name>.``, suffix ``.tmp``).

    Raises:
        OSError: the temp file cannot be created, written or renamed; it is removed.
    """
    with atomic_file_named(
        target.parent, prefix=prefix or f".{target.name}.", mode=mode, durable=durable
    ) as (handle, name):
        name(target.name)
        yield handle


def atomic_write(
    target: Path, data: bytes | Sequence[bytes], *, mode: int = 0o600, durable: bool = True
) -> None:
    """Replace ``target`` with ``data`` atomically (see :func:`atomic_file`).

    ``data``: the bytes, or their chunks in order, written one after another: a cache of
    several parts is never joined into one buffer first (at 100,000 notes, writing two 40 MB
    caches joined took 0.33 s of a one-fact sync, and 55 MiB more at its peak; chunks 0.19 s).

    Raises:
        OSError: the file cannot be written; the target is unchanged.
    """
    with atomic_file(target, mode=mode, durable=durable) as handle:
        if isinstance(data, bytes | bytearray | memoryview):
            handle.write(data)
        else:
            handle.writelines(data)


# -- through a directory descriptor (no symlink is ever followed) -------------------------------


def write_temp_at(
    dir_fd: int, data: bytes, *, prefix: str, mode: int = 0o600, durable: bool = False
) -> tuple[str, os.stat_result]:
    """Write ``data`` to a new temp file ``<prefix><12 hex>.tmp`` in the folder ``dir_fd``.

    Created with ``O_EXCL | O_NOFOLLOW`` (never through a symlink, never over a file), given
    exactly ``mode``; ``durable`` fsyncs it.  Returns its name and its stat data.

    Raises:
        OSError: it cannot be created or written; it is removed.
    """
    while True:
        temp = f"{prefix}{os.urandom(6).hex()}.tmp"  # what secrets.token_hex(6) does
        try:
            out = os.open(temp, _NEW, mode, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    try:
        try:
            os.fchmod(out, mode)  # the umask may have narrowed the mode ``open`` gave
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
            if durable:
                os.fsync(out)
            found = os.fstat(out)
        finally:
            os.close(out)
    except BaseException:
        discard_at(dir_fd, temp)
        raise
    return temp, found


def link_at(dir_fd: int, temp: str, name: str) -> bool | None:
    """Give the file ``temp`` the name ``name`` too, only if no file has that name.

    Returns ``True`` (linked), ``False`` (the name is taken) or ``None`` (this file system has
    no hard links: the caller checks the name and renames instead).  ``temp`` keeps its name.

    Raises:
        OSError: the link failed for another reason.
    """
    try:
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as err:
        if err.errno not in _NO_LINKS:
            raise
        return None
    return True


def discard_at(dir_fd: int, name: str) -> None:
    """Remove ``name`` from the folder ``dir_fd`` if it is there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dir_fd)


def atomic_write_at(
    dir_fd: int, name: str, data: bytes, *, prefix: str, mode: int = 0o600, durable: bool = True
) -> os.stat_result:
    """Replace ``name`` in the folder ``dir_fd`` with ``data`` atomically; its stat data.

    A temp file (see :func:`write_temp_at`) renamed over ``name``; ``durable`` fsyncs the file
    before the rename and the folder after it.  The stat data are the written file's, taken
    before the rename (which keeps its size, mtime and inode).

    Raises:
        OSError: the file cannot be written; ``name`` is unchanged and the temp file removed.
    """
    temp, found = write_temp_at(dir_fd, data, prefix=prefix, mode=mode, durable=durable)
    try:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        discard_at(dir_fd, temp)
        raise
    if durable:
        os.fsync(dir_fd)
    return found


# -- locks --------------------------------------------------------------------------------------


class LockTimeout(Exception):
    """The lock was not free within the timeout; callers turn it into their own error."""


def open_lock(
    path: Path | str, *, create: bool = True, mode: int = 0o600, dir_fd: int | None = None
) -> int | None:
    """Open a lock file for :func:`acquire`; ``None`` when it is missing and not ``create``.

    ``path`` is relative to ``dir_fd`` when that is given.  Opened with ``O_NOFOLLOW``: a
    symlink in its place is an error, never followed.  ``create=False`` never creates it: a
    missing one means nobody ever locked there, so there is nothing to wait for.

    Raises:
        OSError: the lock file cannot be opened (other than missing with ``create=False``).
    """
    flags = os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_RDWR | os.O_CREAT if create else os.O_RDONLY)
    try:
        fd = os.open(path, flags, mode, dir_fd=dir_fd)
    except FileNotFoundError:
        if create:
            raise
        return None
    if create:
        with contextlib.suppress(OSError):  # a lock file created by another user stays
            os.fchmod(fd, mode)
    return fd


def acquire(fd: int, *, timeout: float, shared: bool = False) -> None:
    """Take an ``flock`` on ``fd``, waiting at most ``timeout`` seconds (module docstring).

    The helper thread holds a duplicate of ``fd`` (the lock belongs to the shared open file)
    and releases the lock itself if it gets it only after the caller gave up.

    Raises:
        LockTimeout: the lock was not free within ``timeout`` seconds.
        OSError: ``flock`` itself failed.
    """
    operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        pass
    else:
        return
    waiter = _Waiter(os.dup(fd), operation)
    threading.Thread(target=waiter.run, name="vaultsync lock", daemon=True).start()
    if not waiter.wait(timeout):
        raise LockTimeout


def release(fd: int) -> None:
    """Let go of the lock on ``fd`` (if held) and close it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(
    path: Path | str,
    *,
    timeout: float,
    shared: bool = False,
    create: bool = True,
    mode: int = 0o600,
    dir_fd: int | None = None,
) -> Iterator[bool]:
    """Hold an ``flock`` on ``path``; yields ``False`` when there is no lock file to lock.

    :func:`open_lock`, :func:`acquire` and :func:`release` in one.

    Raises:
        LockTimeout: the lock was not free within ``timeout`` seconds.
        OSError: the lock file cannot be opened (other than missing with ``create=False``).
    """
    fd = open_lock(path, create=create, mode=mode, dir_fd=dir_fd)
    if fd is None:
        yield False
        return
    try:
        acquire(fd, timeout=timeout, shared=shared)
        yield True
    finally:
        release(fd)


class _Waiter:
    """A blocking ``flock`` that the thread that asked for it can walk away from."""

    def __init__(self, fd: int, operation: int) -> None:
        self.fd = fd
        self.operation = operation
        self.guard = threading.Lock()
        self.taken = threading.Event()
        self.abandoned = False
        self.error: OSError | None = None

    def run(self) -> None:
        try:
            fcntl.flock(self.fd, self.operation)
        except OSError as err:
            self.error = err
        with self.guard:
            if self.abandoned:
                if self.error is None:
                    fcntl.flock(self.fd, fcntl.LOCK_UN)
                os.close(self.fd)
            else:
                self.taken.set()

    def wait(self, timeout: float) -> bool:
        """Whether the lock was taken within ``timeout``; the duplicate fd is closed either way.

        Raises:
            OSError: ``flock`` itself failed.
        """
        self.taken.wait(timeout)
        with self.guard:
            if not self.taken.is_set():
                self.abandoned = True
                return False
        os.close(self.fd)  # the lock stays: the caller's fd holds the same open file
        if self.error is not None:
            raise self.error
        return True

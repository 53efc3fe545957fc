"""File primitives every stage shares: atomic writes, directory fsync, locks, the racy rule; I/O.

One way to do each of these, so every file vaultsync writes gets the same guarantees:

* :func:`atomic_write` / :func:`atomic_file`: a uniquely named temp file in the target's
  folder, written, flushed and fsynced, then renamed over the target and the folder fsynced;
  on any failure the temp file is removed and the target is untouched.  The vault's own notes
  go through :class:`vaultsync.vault.write.VaultFS`, which does the same through directory
  descriptors that never follow a symlink.
* :func:`fsync_dir`: make the names just placed in a folder durable.
* :func:`file_lock`: an ``flock`` on a lock file, shared or exclusive, with a timeout.  A
  blocking ``flock`` queues the process in the kernel, so a busy writer cannot starve it the
  way polling can; it runs in a helper thread because ``flock`` cannot time out by itself.
* :data:`RACY_NS` and :func:`is_racy`: git's racy-timestamp rule.  A file modified within 2 s
  of the moment its stat data were recorded may have changed again without its stat data
  showing it (1-2 s timestamp granularity on some file systems), so only a hash can tell.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

RACY_NS = 2_000_000_000
"""A file whose mtime is this close to the time its stat data were recorded is hashed again."""


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
    fd, temp_name = tempfile.mkstemp(
        dir=target.parent, prefix=prefix or f".{target.name}.", suffix=".tmp"
    )
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        temp.chmod(mode)
        temp.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    if durable:
        fsync_dir(target.parent)


def atomic_write(target: Path, data: bytes, *, mode: int = 0o600, durable: bool = True) -> None:
    """Replace ``target`` with ``data`` atomically (see :func:`atomic_file`).

    Raises:
        OSError: the file cannot be written; the target is unchanged.
    """
    with atomic_file(target, mode=mode, durable=durable) as handle:
        handle.write(data)


class LockTimeout(Exception):
    """The lock was not free within the timeout; callers turn it into their own error."""


@contextlib.contextmanager
def file_lock(
    path: Path, *, timeout: float, shared: bool = False, create: bool = True, mode: int = 0o600
) -> Iterator[bool]:
    """Hold an ``flock`` on ``path``; yields ``False`` when there is no lock file to lock.

    ``create=False`` never creates the file: a missing one means nobody ever wrote there, so
    there is nothing to wait for (a read-only command must not create it).  The lock file is
    opened with ``O_NOFOLLOW``: a symlink in its place is an error, never followed.

    Raises:
        LockTimeout: the lock was not free within ``timeout`` seconds.
        OSError: the lock file cannot be opened (other than missing with ``create=False``).
    """
    flags = os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_RDWR | os.O_CREAT if create else os.O_RDONLY)
    try:
        fd = os.open(path, flags, mode)
    except FileNotFoundError:
        if create:
            raise
        yield False
        return
    try:
        if create:
            with contextlib.suppress(OSError):  # a lock file created by another user stays
                os.fchmod(fd, mode)
        _acquire(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, timeout)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, operation: int, timeout: float) -> None:
    """Take the lock on ``fd``, waiting at most ``timeout`` seconds (see the module docstring).

    The helper thread holds a duplicate of ``fd`` (the lock belongs to the shared open file)
    and releases the lock itself if it gets it only after the caller gave up.
    """
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

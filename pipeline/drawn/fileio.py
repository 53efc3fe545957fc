"""File primitives of ``links.json``: read, lock, atomic write, quarantine; I/O.

Conventions of the ChatCLI memory stores (chatcli-stores.md §1): files 0600 in a 0750
``memory/`` directory, an exclusive ``flock`` on the sidecar ``<file>.lock`` (0600), writes
through a temp file in the same directory with fsync of the file and the directory, and a
corrupt file moved aside rather than lost.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from vaultsync.core.errors import LinkStoreError, StoreError

FILE_MODE = 0o600
DIR_MODE = 0o750


def read_file(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist.

    Raises:
        StoreError: it is a directory or cannot be read.
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise StoreError(path=str(path), what="expected a file, found a directory") from None
    except OSError as err:
        raise StoreError(path=str(path), what=f"cannot read: {err.strerror or err}") from err


@contextmanager
def locked(lock_path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created 0600, with its directory 0750).

    Raises:
        LinkStoreError: the lock cannot be opened, or is not free within ``timeout`` seconds.
    """
    lock_path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    except OSError as err:
        raise LinkStoreError(f"{lock_path}: cannot open the lock: {err.strerror}") from err
    try:
        with suppress(OSError):  # a lock file created by another user stays as it is
            os.fchmod(fd, FILE_MODE)
        _acquire(fd, lock_path, timeout)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, lock_path: Path, timeout: float) -> None:
    """Take the exclusive lock on ``fd``, waiting at most ``timeout`` seconds.

    A blocking ``flock`` queues this process in the kernel, so a busy writer cannot starve
    it the way polling can; it runs in a helper thread because it cannot time out by itself.
    The helper holds a duplicate of ``fd`` (the lock belongs to the shared open file), and
    releases the lock itself if it gets it only after the caller gave up.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pass
    else:
        return
    waiter = _Waiter(os.dup(fd))
    threading.Thread(target=waiter.run, name="links.json lock", daemon=True).start()
    if not waiter.wait(timeout):
        raise LinkStoreError(
            f"{lock_path}: could not take the lock within {timeout:g} s",
            hint="another vaultsync or ChatCLI process is writing links; retry",
        )


class _Waiter:
    """A blocking ``flock`` that the thread that asked for it can walk away from."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.guard = threading.Lock()
        self.taken = threading.Event()
        self.abandoned = False
        self.error: OSError | None = None

    def run(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
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
            LinkStoreError: ``flock`` itself failed.
        """
        self.taken.wait(timeout)
        with self.guard:
            if not self.taken.is_set():
                self.abandoned = True
                return False
        os.close(self.fd)  # the lock stays: the caller's fd holds the same open file
        if self.error is not None:
            raise LinkStoreError(f"cannot lock: {self.error.strerror}") from self.error
        return True


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (mode 0600): temp file, fsync, rename, fsync directory.

    Raises:
        LinkStoreError: the file cannot be written; the temp file is removed.
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise LinkStoreError(f"{path}: cannot write: {err.strerror}") from err
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), FILE_MODE)
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException as err:
        with suppress(OSError):
            Path(tmp).unlink()
        if isinstance(err, OSError):
            raise LinkStoreError(f"{path}: cannot write: {err.strerror}") from err
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def quarantine(path: Path, now: datetime) -> Path:
    """Move a corrupt file to ``<name>.corrupt-<UTC time>[-N]``, never replacing a file.

    Call it holding the lock.  The bytes are kept as they are.

    Returns:
        The new path of the file.
    """
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    for attempt in range(1000):
        target = path.with_name(f"{path.name}.corrupt-{stamp}" + (f"-{attempt}" if attempt else ""))
        try:
            os.link(path, target)  # unlike a rename, a hard link never replaces a file
        except FileExistsError:
            continue
        except OSError as err:
            if target.exists():
                continue
            try:
                path.rename(target)  # no hard links on this file system; the lock guards it
            except OSError:
                raise LinkStoreError(f"{path}: corrupt, and cannot be moved aside") from err
        else:
            path.unlink()
        fsync_dir(path.parent)
        return target
    raise LinkStoreError(f"{path}: corrupt, and no free quarantine name is left")

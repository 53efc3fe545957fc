"""File primitives of ``links.json``: read, lock, atomic write, quarantine; I/O.

Conventions of the ChatCLI memory stores (store formats §1): files 0600 in a 0750
``memory/`` directory, an exclusive ``flock`` on the sidecar ``<file>.lock`` (0600), writes
through a temp file in the same directory with fsync of the file and the directory, and a
corrupt file moved aside rather than lost.  The lock and the atomic write are
``core.fsio``'s; this module gives them the link store's errors.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from vaultsync.core import fsio
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

    The wait is ``fsio.acquire``'s: queued in the kernel, so a busy writer cannot starve it.

    Raises:
        LinkStoreError: the lock cannot be opened, or is not free within ``timeout`` seconds.
    """
    lock_path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    try:
        fd = fsio.open_lock(lock_path, mode=FILE_MODE)
    except OSError as err:
        raise LinkStoreError(f"{lock_path}: cannot open the lock: {err.strerror}") from err
    assert fd is not None  # noqa: S101 - open_lock creates the file, so never None
    try:
        try:
            fsio.acquire(fd, timeout=timeout)
        except fsio.LockTimeout:
            raise LinkStoreError(
                f"{lock_path}: could not take the lock within {timeout:g} s",
                hint="another vaultsync or ChatCLI process is writing links; retry",
            ) from None
        except OSError as err:
            raise LinkStoreError(f"cannot lock: {err.strerror}") from err
        yield
    finally:
        fsio.release(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (mode 0600): temp file, fsync, rename, fsync directory.

    Raises:
        LinkStoreError: the file cannot be written; the temp file is removed.
    """
    try:
        fsio.atomic_write(path, data, mode=FILE_MODE)
    except OSError as err:
        raise LinkStoreError(f"{path}: cannot write: {err.strerror}") from err


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
        fsio.fsync_dir(path.parent)
        return target
    raise LinkStoreError(f"{path}: corrupt, and no free quarantine name is left")

"""The watcher's own lock: one ``vaultsync watch`` per vault, never in a sync's way.

``.vaultsync/watch.lock`` is held for the watcher's whole life; the sync lock
(``.vaultsync/lock``) only while a sync runs, so a cron ``sync`` or a manual one never waits
behind an idle watcher.  Both are ``flock`` locks (POSIX: Linux and macOS), released by the
kernel when the process dies however it dies.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from vaultsync.core import fsio
from vaultsync.core.errors import VaultWriteError
from vaultsync.vault.manifest import CONTROL_DIR

WATCH_LOCK = f"{CONTROL_DIR}/watch.lock"


class WatcherRunning(VaultWriteError):
    """Another ``vaultsync watch`` already follows this vault."""


@contextlib.contextmanager
def watcher_lock(vault: Path) -> Iterator[None]:
    """Hold the vault's watcher lock, or fail at once when another watcher holds it.

    Raises:
        WatcherRunning: another watcher holds it.
        VaultWriteError: the lock cannot be made or opened.
    """
    fd = _take(vault)
    try:
        yield
    finally:
        fsio.release(fd)


def _take(vault: Path) -> int:
    path = vault / WATCH_LOCK
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = fsio.open_lock(path)
    except OSError as err:
        raise VaultWriteError(f"{path}: cannot open the watcher lock: {err}") from err
    assert fd is not None  # noqa: S101 - open_lock creates it
    try:
        fsio.acquire(fd, timeout=0)
    except (fsio.LockTimeout, OSError):
        os.close(fd)
        raise WatcherRunning(
            f"{vault}: another `vaultsync watch` follows this vault",
            hint="one watcher per vault; stop the other one first",
        ) from None
    return fd

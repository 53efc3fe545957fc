"""What file events say changed in a vault since its stat cache was true, for a resident process.

A sync stats every note it plans for (0.6 s at 100,000 notes), to find the user's edits.  A
resident process (``watch``) hears the vault's file events (``core.fileevents``); a note with
no event since the scan the stat cache records is as that scan found it, and needs no stat.

The link between the two: the stat cache holds the state of a scan that began at a moment, and
is the file a sync of this process wrote (or kept) after that scan.  So:

* :meth:`VaultEvents.began_scan` is told the stat cache read (by its file's stat data) as a
  scan begins, and answers the vault paths changed since that cache's scan began — ``None``
  (stat everything) when the cache is not one this process left, when the events cannot vouch
  for all that time, or when the last scan that looked at every note is older than
  :data:`TRUSTED_S`;
* :meth:`VaultEvents.cache_kept` is told which stat cache a sync left, and ties it to the last
  scan begun.  A sync that wrote more than :data:`MANY_WRITES` files leaves no tie: the
  kernel's queue may have dropped events then (inotify drops them silently past its limit), so
  the next scan stats everything; so does a sync whose write was refused
  (``vault.apply.tie_events``).

A missed event costs no edit: every write checks its file is still as the plan saw it
(``vault.write.VaultFS``), whatever the plan saw it through, and a refused write makes the
next scan look at every note.  :data:`TRUSTED_S` bounds how long a dropped event can hide a
change from the plans otherwise.  Only the process that entered
:func:`watching` for a vault uses its events; every other sync stats every note.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from vaultsync.vault.manifest import StatKey

MANY_WRITES = 1000
"""A sync writing more files than this leaves the next scan to stat every note."""
TRUSTED_S = 600
"""Every note is looked at at least this often (seconds), events or not."""


class Heard(Protocol):
    """File events kept by path (``core.fileevents.Wakeups`` with ``remember``)."""

    def changed_since(self, moment_ns: int) -> frozenset[str] | None: ...  # noqa: D102

    def forget_before(self, moment_ns: int) -> None: ...  # noqa: D102


class VaultEvents:
    """A vault's file events, and the stat cache this process's last scan left."""

    def __init__(self, root: Path, heard: Heard) -> None:
        self.prefix = f"{os.fspath(root.resolve())}{os.sep}"
        """Events name files by absolute resolved paths; the vault's are under this."""
        self.heard = heard
        self._scan_began: int | None = None
        self._kept: tuple[StatKey, int] | None = None
        """The stat cache a sync left (its file's stat data) and when its scan began (ns)."""
        self._full_at: int | None = None
        """When the last scan that looked at every note began (ns)."""

    def began_scan(self, cache: StatKey | None) -> frozenset[str] | None:
        """The vault paths changed since ``cache``'s scan began; ``None``: stat every note."""
        now = time.monotonic_ns()
        self._scan_began = now
        found = self._heard_since(cache, now)
        if found is None:
            self._full_at = now
            return None
        cut = len(self.prefix)
        return frozenset(path[cut:] for path in found if path.startswith(self.prefix))

    def _heard_since(self, cache: StatKey | None, now: int) -> frozenset[str] | None:
        kept, full_at = self._kept, self._full_at
        if cache is None or kept is None or kept[0] != cache or full_at is None:
            return None
        if now - full_at > TRUSTED_S * 1_000_000_000:
            return None
        return self.heard.changed_since(kept[1])

    def cache_kept(self, cache: StatKey | None, *, written: int) -> None:
        """The stat cache a sync left (``None``: none), after writing ``written`` files."""
        began, self._scan_began = self._scan_began, None
        if cache is None or began is None or written > MANY_WRITES:
            self._kept = None
        else:
            self._kept = (cache, began)
            self.heard.forget_before(began)  # only this scan's tie is asked about from now


_following: dict[Path, VaultEvents] = {}


@contextlib.contextmanager
def watching(root: Path, heard: Heard) -> Iterator[VaultEvents]:
    """While inside, syncs of the vault at ``root`` in this process use ``heard``'s events."""
    key = root.resolve()
    events = VaultEvents(root, heard)
    _following[key] = events
    try:
        yield events
    finally:
        _following.pop(key, None)


def events_of(root: Path) -> VaultEvents | None:
    """The events followed for the vault at ``root`` in this process (``None``: none)."""
    if not _following:
        return None
    return _following.get(root.resolve())

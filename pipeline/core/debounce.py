"""When ``vaultsync watch`` syncs: a pure schedule over the stores' fingerprints and a clock.

The watcher looks at the stores every ``poll_s`` seconds (or less often on big stores) and
hands what it saw to
:func:`observe`; :func:`due` says whether the sync is due.  The first sync comes ``first_s``
after the start; after that, a sync comes ``debounce_s`` after the last change seen, and at
most ``max_wait_s`` after the first change of a burst, however busy the stores stay.  A failed
sync is retried after a back-off that doubles up to :data:`MAX_BACKOFF_S`.  Times are
monotonic seconds given by the caller: nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MAX_BACKOFF_S = 300.0
"""The longest wait before retrying a sync that failed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Timings:
    """The watcher's timings, in seconds (saved settings ``watch.*``)."""

    first_s: float = 10.0
    debounce_s: float = 5.0
    max_wait_s: float = 60.0
    poll_s: float = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Schedule:
    """What the watcher knows: the fingerprint last seen, and when the next sync is due."""

    seen: str = ""
    burst_from: float | None = None
    """When the first change not yet synced was seen (``None``: nothing pending)."""
    due_at: float | None = None
    failures: int = 0


def start(now: float, timings: Timings) -> Schedule:
    """The schedule at start: one sync ``first_s`` from now, whatever the stores hold."""
    return Schedule(burst_from=now, due_at=now + timings.first_s)


def observe(
    schedule: Schedule,
    fingerprint: str,
    now: float,
    timings: Timings,
    *,
    changed_at: float | None = None,
    since: float | None = None,
) -> Schedule:
    """The schedule after looking at the stores: a new fingerprint moves the sync back.

    ``changed_at``: when the change was made, if known (the newest file's mtime), so the
    quiet period counts from the write rather than from this look; kept after ``since``, the
    previous look (else within the last ``poll_s``): a clock step or a copied old file cannot
    move the sync far.
    """
    if fingerprint == schedule.seen:
        return schedule
    if not schedule.seen and schedule.due_at is not None:  # the first look, at start
        return replace(schedule, seen=fingerprint)
    earliest = now - timings.poll_s if since is None else since
    when = now if changed_at is None else min(now, max(changed_at, earliest))
    burst_from = when if schedule.burst_from is None else schedule.burst_from
    due_at = min(when + timings.debounce_s, burst_from + timings.max_wait_s)
    if schedule.failures:  # a retry waits out its back-off, changes or not
        due_at = max(due_at, schedule.due_at or due_at)
    return replace(schedule, seen=fingerprint, burst_from=burst_from, due_at=due_at)


def due(schedule: Schedule, now: float) -> bool:
    """Whether the sync should run now."""
    return schedule.due_at is not None and now >= schedule.due_at


def pause(schedule: Schedule, now: float, interval: float) -> float:
    """How long to wait before the next look: ``interval``, or less when the sync is due sooner."""
    if schedule.due_at is None:
        return interval
    return max(0.0, min(interval, schedule.due_at - now))


def synced(schedule: Schedule, fingerprint: str) -> Schedule:
    """After a sync that started with the stores at ``fingerprint``: nothing pending.

    A change made during the sync differs from ``fingerprint``, so the next look schedules
    another sync.
    """
    return Schedule(seen=fingerprint)


def failed(schedule: Schedule, fingerprint: str, now: float, timings: Timings) -> Schedule:
    """After a failed sync: retry after a back-off that doubles with each failure."""
    failures = schedule.failures + 1
    wait = min(max(timings.debounce_s, 1.0) * 2 ** (failures - 1), MAX_BACKOFF_S)
    return Schedule(seen=fingerprint, burst_from=now, due_at=now + wait, failures=failures)

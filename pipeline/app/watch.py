"""``watch``: follow the stores and sync seconds after they change, until stopped.

The stores are polled through their stat data (``vault.quick.sync_inputs``, the same digest
the no-op sync compares), which costs a few thousand ``stat`` calls per look and survives
ChatCLI's write-temp-then-rename by construction; the schedule is :mod:`vaultsync.core.debounce`'s.
File events under the store folders (:mod:`vaultsync.core.fileevents`) make the watcher look
at once rather than at its next poll: on big stores the polls are seconds apart.  They are only
a wake-up (the stat data decide), and where they cannot be had the watcher says so once and
polls as before.
A user edit in the vault never triggers a sync (nor so a rewrite): the vault's file events only
spare each sync a look at the notes no event named (:mod:`vaultsync.vault.vaultevents`), and an
existing search index is refreshed from the vault every ``watch.debounce_s``, so edits are
found at once.
Each sync is :func:`vaultsync.app.sync.sync`, run in this process: the same lock and the same
outcome as a ``sync``.  A sync that fails is reported and retried with back-off.  While the
stores are quiet before a sync is due, the watcher works that sync out read-only
(:func:`vaultsync.app.sync.prepare`); when it falls due with the stores, the vault's records
and its HEAD as they were, the sync only applies that plan, so the commit comes about as long
after the quiet period as writing it takes.  One plan is worked out per change seen, and no
more than :data:`PLANS_PER_BURST` in a burst of changes: stores that keep changing cost the
plans thrown away, not a build per look.  The watcher
is resident (``core.cachefile.resident``): what a sync leaves for the next one (the extract
memo, the graph's patch state, the notes' layout and keys) stays in memory, and the next sync
starts from it instead of loading it again, while the cache files are the ones it wrote.
Those files are written once the sync is committed and said, and no other sync is pending.
Started on a vault in sync, the watcher builds the notes once while nothing is pending
(:func:`vaultsync.app.sync.warm`), so its first sync after a change starts from memory too.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from vaultsync.app.sync import Prepared, SyncOutcome, SyncRequest
from vaultsync.app.workspace import Workspace
from vaultsync.core import cachefile, debounce, process
from vaultsync.core.errors import VaultsyncError
from vaultsync.core.fileevents import Stop, Wakeups

POLL_DUTY = 50
"""The stores are looked at at most every 50 times as long as a look takes (big stores)."""
INDEX_DUTY = 50
"""The search index is refreshed at most every 50 times as long as a refresh takes."""
PLANS_PER_BURST = 2
"""At most this many syncs are worked out ahead between two syncs (see the module doc)."""


Synced = Callable[[SyncOutcome], None]
"""Told each sync's outcome (the adapter prints it)."""
Warn = Callable[[str], None]
"""Told each warning line (a failed sync, a search index not updated)."""


def timings(ws: Workspace) -> debounce.Timings:
    """The watcher's timings from the chosen settings."""
    seconds = ws.settings.seconds
    return debounce.Timings(
        first_s=seconds("watch.first_s"),
        debounce_s=seconds("watch.debounce_s"),
        max_wait_s=seconds("watch.max_wait_s"),
        poll_s=seconds("watch.poll_s"),
    )


class Watcher:
    """Looks at the stores, syncs when due, waits; until ``stop`` is set."""

    def __init__(self, ws: Workspace, *, synced: Synced, warn: Warn) -> None:
        self.ws, self.synced, self.warn = ws, synced, warn
        self.clock = timings(ws)
        self.index = _IndexKeeper(ws.vault, every_s=self.clock.debounce_s, warn=warn)
        self.ahead = _Ahead()
        self.untidy = False
        """A sync left caches to write and a frozen heap (:meth:`tidy`)."""
        self.warm = False
        """What a sync starts from is held in memory (a sync built, or :meth:`warm_up`)."""

    def run(self, stop: Stop) -> None:
        """Watch until ``stop`` is set, keeping the syncs' state in memory between them."""
        with cachefile.resident():
            self._watch(stop)

    def _watch(self, stop: Stop) -> None:
        events = store_events(self.ws).start()
        heard = _VaultHearing(self.ws.vault, self.warn)
        try:
            self._loop(stop, events, heard)
        finally:
            heard.close()
            events.close()

    def _loop(self, stop: Stop, events: Wakeups, heard: _VaultHearing) -> None:
        clock = self.clock
        schedule = debounce.start(time.monotonic(), clock)
        looked: float | None = None
        said = ""
        while not stop.is_set():
            if events.failure != said:
                said = events.failure
                self.warn(f"warning: no file events from the stores ({said}): polling only")
            heard.follow()
            self.index.refresh(time.monotonic())
            began = time.monotonic()
            seen, now = self.fingerprint(), time.monotonic()
            interval = max(clock.poll_s, (now - began) * POLL_DUTY)
            changed_at = _changed_at(self.ws.state, now) if seen != schedule.seen else None
            schedule = debounce.observe(
                schedule, seen, now, clock, changed_at=changed_at, since=looked
            )
            looked = now
            if debounce.due(schedule, time.monotonic()):
                if self.sync_once(seen):
                    schedule = debounce.synced(schedule, seen)
                else:
                    schedule = debounce.failed(schedule, seen, time.monotonic(), clock)
                continue  # a change made meanwhile is seen before tidying up after the sync
            if self.ahead.worth_planning(schedule):
                self.plan_ahead(seen)
                continue  # planning took a while: look again before waiting
            if not self.warm and schedule.due_at is None and not schedule.failures:
                self.warm_up()
                continue  # so did warming up
            if schedule.due_at is None or schedule.failures:
                self.tidy()
            events.sleep(debounce.pause(schedule, time.monotonic(), interval), stop)

    def fingerprint(self) -> str:
        """What a sync's bytes depend on, from stat data (``""``: the stores cannot be read)."""
        from vaultsync.vault.quick import sync_inputs

        ws = self.ws
        try:
            return sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
        except OSError:
            return ""

    def plan_ahead(self, seen: str) -> None:
        """Work out the sync the stores at ``seen`` call for, before it is due (module doc).

        Best effort: a failure leaves no plan, and the sync, working it out itself, reports it.
        """
        from vaultsync.app.sync import prepare

        # The heap the build froze stays frozen until the sync is done (``sync_once``):
        # collecting it now would put a second between this plan and the sync it is for.
        try:
            self.ahead.planned(seen, prepare(self.ws, seen))
        except Exception:  # the sync, working it out itself, meets and says the same failure
            self.ahead.planned(seen, None)

    def warm_up(self) -> None:
        """Build the notes once, read-only, while nothing is pending (``app.sync.warm``).

        Best effort, once: a failure leaves the first sync to load what it needs, and to say
        what fails.
        """
        from vaultsync.app.sync import warm

        self.warm = self.untidy = True  # the build froze its heap: given back when tidying up
        with contextlib.suppress(Exception):  # the sync meets and says the same failure
            warm(self.ws)

    def sync_once(self, seen: str = "") -> bool:
        """One sync, said; what it leaves to write and give back waits for :meth:`tidy`.

        ``seen``: the stores' fingerprint the last look found; the plan worked out ahead for
        other stores is let go of before the sync builds its own.
        """
        try:
            outcome = self._sync(seen)
            if outcome is not None:
                self.warm = self.warm or not outcome.quick  # a sync that built holds its state
                self.synced(outcome)
            return outcome is not None
        finally:
            self.ahead = _Ahead()  # a new burst
            self.untidy = True

    def tidy(self) -> None:
        """Write the caches the last sync saved (``cachefile.save``) and give its heap back.

        Called when no sync is pending (or one waits out a back-off): off the path from a
        store change to its commit, including a change made right after the last commit.
        """
        if self.untidy:
            cachefile.flush()
            process.end_big_run()  # the sync's heap given back
            self.untidy = False

    def _sync(self, seen: str) -> SyncOutcome | None:
        """The sync's outcome; a failure is one warning (and ``None``)."""
        from vaultsync.app.sync import sync

        prepared, self.ahead.prepared = self.ahead.prepared, None
        if prepared is not None and prepared.inputs != seen:
            prepared = None  # not for these stores: not kept alive through the sync's build
        try:
            return sync(self.ws, SyncRequest(), prepared=prepared, inputs=seen)
        except VaultsyncError as error:
            self.warn(f"warning: sync failed, will retry: {error.message}")
        except Exception as error:  # a long-running watcher outlives any one sync
            self.warn(f"warning: sync failed, will retry: {type(error).__name__}: {error}")
        return None


class _Ahead:
    """The sync worked out ahead in this burst of changes, and how many were."""

    def __init__(self) -> None:
        self.prepared: Prepared | None = None
        self.seen = ""
        """The stores' fingerprint the last plan was worked out for (``""``: none yet)."""
        self.plans = 0

    def worth_planning(self, schedule: debounce.Schedule) -> bool:
        """A sync is pending and not due, for stores not planned for yet, within the budget.

        Not after a failure: its retry waits out its back-off, and works the sync out then.
        """
        return (
            schedule.due_at is not None
            and not schedule.failures
            and bool(schedule.seen)
            and schedule.seen != self.seen
            and self.plans < PLANS_PER_BURST
        )

    def planned(self, seen: str, prepared: Prepared | None) -> None:
        """Keep the plan worked out for the stores at ``seen`` (``None``: none came of it)."""
        self.prepared, self.seen, self.plans = prepared, seen, self.plans + 1


class _VaultHearing:
    """The vault's file events, followed once its folder exists (``vault.vaultevents``).

    They spare each sync a ``stat`` of every note it plans for; without them (the system's
    limit of watches reached) every note is looked at, as before, and the watcher says so once.
    """

    def __init__(self, vault: Path, warn: Warn) -> None:
        self.vault, self.warn = vault, warn
        self.events: Wakeups | None = None
        self._following = contextlib.ExitStack()
        self._said = ""

    def follow(self) -> None:
        """Start hearing the vault once it exists; say once why its events stopped, if they did."""
        if self.events is None and self.vault.is_dir():
            from vaultsync.vault.vaultevents import watching

            self.events = vault_events(self.vault).start()
            self._following.enter_context(watching(self.vault, self.events))
        failure = self.events.failure if self.events is not None else ""
        if failure and failure != self._said:
            self.warn(f"warning: no file events from the vault ({failure}): syncs stat every note")
        self._said = failure

    def close(self) -> None:
        self._following.close()
        if self.events is not None:
            self.events.close()


class _IndexKeeper:
    """Keeps an existing search index current with the user's own edits in the vault.

    Every ``every_s`` seconds, a stat walk (``search.index.update_index``; only changed notes
    are read) — the edits are indexed without a sync, and no edit ever triggers a rewrite.
    With the semantic extra, the notes' vectors are then brought up to date by a background
    process (``search.vectors.start_background``; nothing starts when none is missing).
    On a big vault the walks are spaced so they take at most 1/:data:`INDEX_DUTY` of the
    time.  A failure is said once, until it changes.
    """

    def __init__(self, vault: Path, *, every_s: float, warn: Warn) -> None:
        self.vault, self.every_s, self.warn = vault, every_s, warn
        self.next_at = 0.0
        self.said = ""

    def refresh(self, now: float) -> None:
        from vaultsync.search.database import index_path

        if now < self.next_at or not index_path(self.vault).exists():
            return
        from vaultsync.search.index import update_index
        from vaultsync.search.vectors import start_background

        try:
            update_index(self.vault, wait=0.0)
            start_background(self.vault)  # new or changed notes' vectors, with the extra
            problem = ""
        except VaultsyncError as error:
            problem = error.message
        took = time.monotonic() - now
        self.next_at = now + max(self.every_s, took * INDEX_DUTY)
        if problem and problem != self.said:
            self.warn(f"warning: search index not updated: {problem}")
        self.said = problem


def store_events(ws: Workspace) -> Wakeups:
    """File events under the store folders, as a wake-up (not started).

    The state directory is watched with the skill folders outside it; a board kept outside
    it (``CHATCLI_BOARD_PATH``) is not (its folder may be a whole home), and is polled.
    """
    from vaultsync.extract.sources import store_places

    # Events name files by absolute, resolved paths: the folders are compared the same way.
    state = ws.state.resolve()
    places, board = store_places(ws.state, ws.caps.sources)
    folders = [folder.resolve() for folder in places]
    outside = [folder for folder in folders if not folder.is_relative_to(state)]
    prefixes = tuple(f"{os.fspath(folder)}{os.sep}" for folder in folders)
    board_path = os.fspath(board.resolve())

    def relevant(path: str) -> bool:
        return path == board_path or path.startswith(prefixes)

    return Wakeups([state, *outside], relevant)


def vault_events(vault: Path) -> Wakeups:
    """File events of the notes of ``vault``, kept by path (not started).

    Its git repository and vaultsync's own folder are left out: a commit writes dozens of
    files there, and none of them is a note.
    """
    from vaultsync.vault.manifest import CONTROL_DIR

    folder = vault.resolve()
    root = f"{os.fspath(folder)}{os.sep}"
    left_out = tuple(f"{root}{name}" for name in (".git", CONTROL_DIR))
    below = tuple(f"{name}{os.sep}" for name in left_out)

    def relevant(path: str) -> bool:
        return path.startswith(root) and path not in left_out and not path.startswith(below)

    return Wakeups([folder], relevant, remember=True)


def _changed_at(state: Path, now: float) -> float | None:
    """When the newest store file was written, on the monotonic clock (``None``: no file).

    Read only when the fingerprint changed: a second stat walk, rare by construction.
    """
    from vaultsync.extract.sources import source_files

    newest = 0
    for path in source_files(state):
        try:
            newest = max(newest, path.stat().st_mtime_ns)
        except OSError:
            continue
    if not newest:
        return None
    return now - (time.time() - newest / 1e9)

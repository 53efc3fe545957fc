"""``vaultsync watch``: follow the stores and sync seconds after they change, until stopped.

The stores are polled through their stat data (``vault.quick.sync_inputs``, the same digest
the no-op ``sync`` compares), which costs a few thousand ``stat`` calls per look and survives
ChatCLI's write-temp-then-rename by construction; the schedule is :mod:`vaultsync.core.debounce`'s.
The vault itself is not watched for syncs (a user edit never triggers a rewrite); an existing
search index is refreshed from it every ``watch.debounce_s``, so edits are found at once.
Each sync is the ``vaultsync sync`` command itself, run in this process: the same lock, the
same output (one line when something changed, nothing otherwise), the same warnings.  A sync
that fails is one ``warning:`` line and a retry with back-off; SIGINT and SIGTERM stop the
watcher after the current step, with exit 0.
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

import click
from vaultsync.cli import process, stopping
from vaultsync.cli.options import Workspace, state_option, templates_option, vault_option, workspace
from vaultsync.core import debounce
from vaultsync.core.errors import VaultsyncError

OFF_VALUES = frozenset({"0", "false", "no", "off"})
POLL_DUTY = 50
"""The stores are looked at at most every 50 times as long as a look takes (big stores)."""
INDEX_DUTY = 50
"""The search index is refreshed at most every 50 times as long as a refresh takes."""


@click.command()
@state_option
@vault_option
@templates_option
@click.pass_context
def watch(ctx: click.Context, state: str | None, vault: str | None, templates: Path | None) -> None:
    """Keep the vault in sync: a sync seconds after the stores change, until stopped.

    Timings are saved settings (`vaultsync config set watch.debounce_s 5`): the first sync
    `watch.first_s` after the start, then `watch.debounce_s` after the stores go quiet, at most
    `watch.max_wait_s` after the first change.  Quiet like cron: one line per sync that
    changed something.  SIGINT/SIGTERM stop it (exit 0).  CHATCLI_MEMORY_VAULT=false: off.
    """
    from vaultsync.vault.watching import watcher_lock

    if os.environ.get("CHATCLI_MEMORY_VAULT", "").strip().lower() in OFF_VALUES:
        click.echo("automatic sync is off (CHATCLI_MEMORY_VAULT=false); not watching", err=True)
        return
    ws = workspace(state, vault, templates=templates)
    with stopping.stop_on_signals() as stop, watcher_lock(ws.vault):
        _loop(ctx, ws, templates, stop)


def timings(ws: Workspace) -> debounce.Timings:
    """The watcher's timings from the chosen settings."""
    seconds = ws.settings.seconds
    return debounce.Timings(
        first_s=seconds("watch.first_s"),
        debounce_s=seconds("watch.debounce_s"),
        max_wait_s=seconds("watch.max_wait_s"),
        poll_s=seconds("watch.poll_s"),
    )


def _loop(ctx: click.Context, ws: Workspace, templates: Path | None, stop: stopping.Stop) -> None:
    """Look, sync when due, wait; until ``stop`` is set."""
    clock = timings(ws)
    schedule = debounce.start(time.monotonic(), clock)
    index = _IndexKeeper(ws.vault, every_s=clock.debounce_s)
    looked: float | None = None
    while not stop.is_set():
        index.refresh(time.monotonic())
        began = time.monotonic()
        seen, now = _fingerprint(ws), time.monotonic()
        interval = max(clock.poll_s, (now - began) * POLL_DUTY)
        changed_at = _changed_at(ws.state, now) if seen != schedule.seen else None
        schedule = debounce.observe(schedule, seen, now, clock, changed_at=changed_at, since=looked)
        looked = now
        if debounce.due(schedule, time.monotonic()):
            if _sync(ctx, ws, templates):
                schedule = debounce.synced(schedule, seen)
            else:
                schedule = debounce.failed(schedule, seen, time.monotonic(), clock)
        stop.wait(debounce.pause(schedule, time.monotonic(), interval))


class _IndexKeeper:
    """Keeps an existing search index current with the user's own edits in the vault.

    Every ``every_s`` seconds, a stat walk (``search.index.update_index``; only changed notes
    are read) — the edits are indexed without a sync, and no edit ever triggers a rewrite.
    With the semantic extra, the notes' vectors are then brought up to date by a background
    process (``search.vectors.start_background``; nothing starts when none is missing).
    On a big vault the walks are spaced so they take at most 1/:data:`INDEX_DUTY` of the
    time.  A failure is said once, until it changes.
    """

    def __init__(self, vault: Path, *, every_s: float) -> None:
        self.vault, self.every_s = vault, every_s
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
            click.echo(f"warning: search index not updated: {problem}", err=True)
        self.said = problem


def _fingerprint(ws: Workspace) -> str:
    """What a sync's bytes depend on, from stat data (``""`` when the stores cannot be read)."""
    from vaultsync.vault.quick import sync_inputs

    try:
        return sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
    except OSError:
        return ""


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


def _sync(ctx: click.Context, ws: Workspace, templates: Path | None) -> bool:
    """Run ``vaultsync sync`` once; a failure is one warning line (and ``False``)."""
    from vaultsync.cli.vault import sync

    try:
        ctx.invoke(
            sync,
            state=str(ws.state),
            vault=str(ws.vault),
            templates=templates,
            force=False,
            yes=False,
            no_commit=False,
            dry_run=False,
            verbose=False,
            as_json=False,
            paths=(),
        )
    except VaultsyncError as error:
        click.echo(f"warning: sync failed, will retry: {error.message}", err=True)
        return False
    except Exception as error:  # a long-running watcher outlives any one sync
        click.echo(f"warning: sync failed, will retry: {type(error).__name__}: {error}", err=True)
        return False
    finally:
        _after_big_run()
    return True


def _after_big_run() -> None:
    """Undo what a big sync did for a one-shot process (``cli.process.big_run``).

    The sync froze its heap for the collector's sake (faster by far at 100,000 notes) and
    marked the process to leave through ``os._exit``; the watcher lives on, so the frozen
    objects go back to the collector (the sync's graph is garbage now) and it exits normally.
    """
    if not process.leave_fast:
        return
    gc.unfreeze()
    gc.collect()  # now, between syncs, rather than during the next one
    process.leave_fast = False

"""``vaultsync watch``: parse, run :class:`vaultsync.app.watch.Watcher`, print each sync."""

from __future__ import annotations

from pathlib import Path

import click
from vaultsync.cli.options import state_option, templates_option, vault_option, workspace
from vaultsync.core import stopping
from vaultsync.core.environment import read_environment


@click.command()
@state_option
@vault_option
@templates_option
def watch(state: str | None, vault: str | None, templates: Path | None) -> None:
    """Keep the vault in sync: a sync seconds after the stores change, until stopped.

    Timings are saved settings (`vaultsync config set watch.debounce_s 5`): the first sync
    `watch.first_s` after the start, then `watch.debounce_s` after the stores go quiet, at most
    `watch.max_wait_s` after the first change.  Quiet like cron: one line per sync that
    changed something.  SIGINT/SIGTERM stop it (exit 0).  CHATCLI_MEMORY_VAULT=false: off.
    """
    from vaultsync.app.sync import SyncOutcome
    from vaultsync.app.watch import Watcher
    from vaultsync.cli.vault import print_sync, say_warnings
    from vaultsync.vault.watching import watcher_lock

    if read_environment().automatic_sync_off:
        click.echo("automatic sync is off (CHATCLI_MEMORY_VAULT=false); not watching", err=True)
        return
    ws = workspace(state, vault, templates=templates)

    def synced(outcome: SyncOutcome) -> None:
        say_warnings(outcome.warnings)
        print_sync(outcome, as_json=False, verbose=False, quiet=False)
        if outcome.remote is not None and outcome.remote.problem:
            click.echo(f"warning: {outcome.remote.problem}; will try again", err=True)

    watcher = Watcher(ws, synced=synced, warn=lambda line: click.echo(line, err=True))
    with stopping.stop_on_signals() as stop, watcher_lock(ws.vault):
        watcher.run(stop)

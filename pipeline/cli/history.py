"""``vaultsync history``: the commits that hold a secret or private value, and their purge."""

from __future__ import annotations

import json
import sys

import click
from vaultsync.cli.options import json_option, state_option, vault_option, workspace
from vaultsync.core.errors import UsageError
from vaultsync.core.text import plural


@click.command()
@state_option
@vault_option
@click.option("--purge", is_flag=True, help="Rewrite the history without them (keeps a backup).")
@click.option("--yes", is_flag=True, help="With --purge: do not ask.")
@json_option
def history(state: str | None, vault: str | None, purge: bool, yes: bool, as_json: bool) -> None:
    """Find the vault's commits that hold a secret or private value of the stores.

    vaultsync masks them before writing, but a value that became private after an earlier sync
    stays in that sync's commit. `--purge` rewrites the branch (a repository vaultsync owns
    only) with every such value masked, and keeps the old history under refs/vaultsync/backup/.
    """
    from vaultsync.app.history import history as find
    from vaultsync.app.history import purge as rewrite

    ws = workspace(state, vault)
    exposed = find(ws)
    found = exposed.found
    if as_json and not purge:
        data = [
            {"commit": e.commit, "when": e.when.isoformat(), "paths": list(e.paths)} for e in found
        ]
        click.echo(json.dumps({"vault": str(ws.vault), "commits": data}, indent=2))
        return
    if not found:
        click.echo("no commit of the vault's history holds a secret or private value")
        return
    click.echo(f"a secret or private value of the stores is in {plural(len(found), 'commit')}:")
    for e in found:
        click.echo(f"  {e.commit[:10]} {e.when.date().isoformat()}  {', '.join(e.paths[:3])}")
    if not purge:
        click.echo("run `vaultsync history --purge` to rewrite the history without them")
        return
    if not yes and (not sys.stdin.isatty() or not click.confirm("Rewrite the history?", err=True)):
        raise UsageError("nothing rewritten", hint="add --yes to rewrite without asking")
    done = rewrite(ws, exposed)
    click.echo(
        f"rewrote {done.commits} commits ({done.blobs} files masked); the old history is kept "
        f"at {done.backup}"
    )
    click.echo(
        "every other clone of this vault still holds the old commits: clone it again; when "
        f"sure, drop the backup: git update-ref -d {done.backup} && git reflog expire "
        "--expire=now --all && git gc --prune=now"
    )

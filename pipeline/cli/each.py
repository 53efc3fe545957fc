"""``vaultsync sync --each ROOT``: parse, run :mod:`vaultsync.app.each`, print, exit 9 on failure.

Each vault's lines are printed as its sync ends, prefixed with its name; then one closing
line, or with ``--json`` one summary object (schema ``cli.schemas.SYNC_EACH``).  SIGTERM (a
Kubernetes pod stopped, a CronJob's deadline) or SIGINT lets the vault being synced finish,
starts no other, reports the vaults not started and exits 9: the next run syncs them.  A
second signal ends the run at once; the vault then being synced is left as a killed sync
leaves it (its next sync finishes it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from vaultsync.app.each import EachPlan, Outcome, Shard, parse_shard, plan_each, sync_each
from vaultsync.app.sync import SyncRequest
from vaultsync.cli.schemas import SCHEMA_VERSION
from vaultsync.core import stopping
from vaultsync.core.errors import UsageError, VaultsFailed
from vaultsync.core.text import plural
from vaultsync.vault.report import counts_text

STOPPING = "{signal}: stopping once the vault being synced is done (again: stop now)"
"""Said on stderr when the first SIGTERM/SIGINT arrives."""

LISTED_FAILURES = 5
"""Failed vaults named in the closing error line (the rest are counted)."""


@dataclass(frozen=True, slots=True)
class Stopped:
    """A run ended early by a signal: which one, and how many chosen vaults were not started."""

    signal_name: str
    not_started: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """How the run prints: ``--verbose``, ``--quiet``, ``--json``."""

    verbose: bool = False
    quiet: bool = False
    as_json: bool = False


def run_each(
    each: str | None,
    shard: str | None,
    *,
    given: Mapping[str, object],
    paths: tuple[str, ...],
    dry_run: bool,
    no_commit: bool,
    verbose: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """``sync --each ROOT``'s entry from the ``sync`` command: its options checked, then run.

    Raises:
        UsageError: ``--shard`` without ``--each``, or with an option that names one vault.
        VaultsFailed: one or more vaults failed, or a signal stopped the run.
    """
    if each is None:
        raise UsageError("--shard is given only with --each ROOT")
    refused = [flag for flag, value in given.items() if value] + (["PATHS"] if paths else [])
    if refused:
        raise UsageError(
            f"--each syncs every state directory's own vault: {', '.join(refused)} not allowed",
            hint="a vault's saved settings (vaultsync config set) apply with --each",
        )
    plan = plan_each(Path(each).expanduser(), None if shard is None else parse_shard(shard))
    request = SyncRequest(dry_run=dry_run, commit=not no_commit)
    shown = Shown(verbose=verbose, quiet=quiet, as_json=as_json)
    outcomes: list[Outcome] = []
    with stopping.stop_on_signals(second_ends_now=True, say=STOPPING) as stop:
        for outcome in sync_each(plan, request):
            outcomes.append(outcome)
            _say(outcome, shown)
            if stop.is_set():
                break
    stopped = Stopped(stop.signal_name, len(plan.chosen) - len(outcomes)) if stop.is_set() else None
    _summarise(plan, outcomes, stopped, dry_run=dry_run, shown=shown)


def _summarise(
    plan: EachPlan, outcomes: list[Outcome], stopped: Stopped | None, *, dry_run: bool, shown: Shown
) -> None:
    """The closing line or ``--json`` object; exit 9 when a vault failed or a stop left some out."""
    found = len(plan.found)
    if shown.as_json:
        data = summary_json(
            plan.root, plan.shard, found, outcomes, dry_run=dry_run, stopped=stopped
        )
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    elif stopped or (
        not shown.quiet and (shown.verbose or any(o.changed or not o.ok for o in outcomes))
    ):
        click.echo(summary_line(plan.root, plan.shard, found, outcomes, stopped=stopped))
    _raise_failures(outcomes, stopped)


def said(outcome: Outcome) -> tuple[str, ...]:
    """What the text summary says of one vault: what changed, each conflict."""
    report = outcome.synced.report if outcome.synced is not None else None
    if report is None:
        return ()
    waiting = [*report.conflicts, *report.merge_waiting]
    lines = [f"conflict: {c.path} ({c.reason})" for c in waiting]
    if report.changed:
        counts = counts_text(report)
        verb = "would sync" if report.dry_run else "synced"
        commit = f" (commit {report.commit[:10]})" if report.commit else ""
        lines.insert(0, f"{verb}: {counts}{commit}")
    return tuple(lines)


def _say(outcome: Outcome, shown: Shown) -> None:
    """One vault's lines, each prefixed with its name; its stderr and its error on stderr.

    ``--json`` keeps stdout for the summary; ``-q`` keeps only what needs someone.
    """
    for line in outcome.lines:
        click.echo(f"{outcome.name}: {line}", err=True)
    if not outcome.ok:
        click.echo(f"error: {outcome.name}: {outcome.error}", err=True)
    if shown.as_json:
        return
    lines = said(outcome)
    for line in lines:
        if not shown.quiet or line.startswith("conflict:"):
            click.echo(f"{outcome.name}: {line}")
    if shown.verbose and outcome.ok and not lines:
        click.echo(f"{outcome.name}: {'unchanged' if outcome.quick else 'in sync'}")


def summary_line(
    root: Path,
    shard: Shard | None,
    found: int,
    outcomes: list[Outcome],
    *,
    stopped: Stopped | None = None,
) -> str:
    """``sync --each``'s closing line: how many vaults, changed, failed (, not started)."""
    share = f" (shard {shard.index}/{shard.count} of {found:,})" if shard else ""
    changed = sum(o.changed for o in outcomes)
    failed = sum(not o.ok for o in outcomes)
    line = (
        f"{root}: {plural(len(outcomes), 'vault')}{share}: {changed} changed, "
        f"{len(outcomes) - failed} ok, {failed} failed"
    )
    if stopped is not None:
        line += f"; stopped by {stopped.signal_name}, {stopped.not_started} not started"
    return line


def summary_json(
    root: Path,
    shard: Shard | None,
    found: int,
    outcomes: list[Outcome],
    *,
    dry_run: bool,
    stopped: Stopped | None = None,
) -> dict[str, Any]:
    """The summary as plain data (schema: ``cli.schemas.SYNC_EACH``)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "root": str(root),
        "shard": None if shard is None else {"index": shard.index, "count": shard.count},
        "found": found,
        "dry_run": dry_run,
        "synced": sum(o.ok for o in outcomes),
        "changed": sum(o.changed for o in outcomes),
        "failed": sum(not o.ok for o in outcomes),
        "stopped_by": None if stopped is None else stopped.signal_name,
        "not_started": 0 if stopped is None else stopped.not_started,
        "vaults": [_vault_json(o) for o in outcomes],
    }


def _vault_json(o: Outcome) -> dict[str, Any]:
    return {
        "name": o.name,
        "state": o.state,
        "vault": o.vault,
        "ok": o.ok,
        "exit_code": o.exit_code,
        "error": o.error,
        "changed": o.changed,
        "quick": o.quick,
        "commit": o.commit,
        "conflicts": o.conflicts,
    }


def _raise_failures(outcomes: list[Outcome], stopped: Stopped | None = None) -> None:
    failed = [o.name for o in outcomes if not o.ok]
    if stopped is not None:
        vaults = plural(stopped.not_started, "vault")
        raise VaultsFailed(
            f"stopped by {stopped.signal_name}: {vaults} not started, {len(failed)} failed",
            hint="the next run syncs them",
        )
    if not failed:
        return
    named = ", ".join(failed[:LISTED_FAILURES]) + (" …" if len(failed) > LISTED_FAILURES else "")
    raise VaultsFailed(
        f"{len(failed)} of {plural(len(outcomes), 'vault')} failed: {named}",
        hint="each failure is reported above; `vaultsync sync --state ROOT/NAME` retries one",
    )

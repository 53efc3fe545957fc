"""``sync``, ``status``, ``check``, ``resolve``, ``release``, ``path``: parse, call, print.

Each command resolves its workspace, calls its use case in :mod:`vaultsync.app` and prints the
outcome; nothing here decides what happens to the vault.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from vaultsync.cli.options import (
    emit,
    json_option,
    state_option,
    templates_option,
    vault_option,
    workspace,
)
from vaultsync.cli.progress import on_terminal
from vaultsync.cli.schemas import SCHEMA_VERSION
from vaultsync.core import progress
from vaultsync.core.errors import SkippedStores, VaultStale
from vaultsync.core.text import plural

if TYPE_CHECKING:
    from vaultsync.app.remote import RemoteOutcome, RemoteState
    from vaultsync.app.sync import SyncOutcome
    from vaultsync.core.model import Skipped

CHECK_LISTED = 20


def skipped_data(skipped: tuple[Skipped, ...]) -> list[dict[str, str]]:
    """The skipped store files as plain data (``status --json``, ``check --json``)."""
    return [{"source": s.source, "where": s.where, "what": s.what} for s in skipped]


def skipped_text(skipped: tuple[Skipped, ...]) -> str:
    """The skipped store files, one line each (empty when none)."""
    if not skipped:
        return ""
    lines = [f"skipped, could not be read ({len(skipped)}; their notes are kept as they were):"]
    return "\n".join([*lines, *(f"  - {s.line()}" for s in skipped)])


def say_warnings(lines: tuple[str, ...]) -> None:
    """A use case's warnings, on stderr."""
    for line in lines:
        click.echo(line, err=True)


@click.command()
@state_option
@vault_option
@templates_option
@click.option(
    "--force",
    is_flag=True,
    help="Regenerate the named notes (PATHS), or every note of vaultsync's, edited ones included.",
)
@click.option("--yes", is_flag=True, help="With a bare --force: overwrite edited notes unasked.")
@click.option("--no-commit", is_flag=True, help="Write the notes but leave them uncommitted.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("-v", "--verbose", is_flag=True, help="List every path written or removed.")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only what needs you (conflicts, warnings, errors): for cron.",
)
@click.option(
    "--each",
    "each",
    metavar="ROOT",
    help="Sync every ChatCLI state directory under ROOT, each into its own vault.",
)
@click.option("--shard", metavar="K/N", help="With --each: only share K (0-based) of N.")
@click.option(
    "--pull/--no-pull",
    default=None,
    help="Integrate the git remote's new commits first [saved: git.pull].",
)
@click.option(
    "--push/--no-push", default=None, help="Push the sync's commit after it [saved: git.push]."
)
@json_option
@click.argument("paths", nargs=-1)
def sync(
    state: str | None,
    vault: str | None,
    templates: Path | None,
    force: bool,
    yes: bool,
    no_commit: bool,
    dry_run: bool,
    verbose: bool,
    quiet: bool,
    as_json: bool,
    each: str | None,
    shard: str | None,
    pull: bool | None,
    push: bool | None,
    paths: tuple[str, ...],
) -> None:
    """Bring the vault in line with the stores, and commit what changed (one commit).

    Notes you edited are kept and the stores' new data is merged into them, notes you deleted
    stay deleted, files vaultsync did not write are never touched. Prints one line when
    something changed; with -q only what needs you, so cron mails you nothing else.
    `sync --force PATH…` regenerates only those notes; `sync --each ROOT [--shard K/N]` syncs
    every ChatCLI state directory under ROOT into its own vault.
    """
    from vaultsync.app.sync import SyncRequest
    from vaultsync.app.sync import sync as run_sync
    from vaultsync.app.workspace import vault_relative

    if each is not None or shard is not None:
        from vaultsync.cli.each import run_each

        given = {"--state": state, "--vault": vault, "--templates": templates, "--force": force}
        run_each(each, shard, given=given, paths=paths, dry_run=dry_run, no_commit=no_commit,
                 verbose=verbose, quiet=quiet, as_json=as_json)  # fmt: skip
        return
    ws = workspace(state, vault, templates=templates)
    request = SyncRequest(
        force=force,
        paths=tuple(vault_relative(ws.vault, p) for p in paths),
        overwrite_edited=yes,
        commit=not no_commit,
        dry_run=dry_run,
        remember_templates=templates is not None,
        pull=pull,
        push=push,
    )
    with on_terminal():
        outcome = run_sync(ws, request, confirm=_asker())
    say_warnings(outcome.warnings)
    print_sync(outcome, as_json=as_json, verbose=verbose or dry_run, quiet=quiet)
    if outcome.remote is not None:
        from vaultsync.app.remote import raise_problem

        raise_problem(outcome.remote)


def _asker() -> Callable[[str], bool] | None:
    """A yes/no prompt on stderr when a person is at the terminal, else nobody to ask."""
    if not sys.stdin.isatty():
        return None

    def ask(question: str) -> bool:
        with progress.paused():
            return click.confirm(question, default=False, err=True)

    return ask


def print_sync(outcome: SyncOutcome, *, as_json: bool, verbose: bool, quiet: bool) -> None:
    """The sync's outcome: JSON, or its few lines (none when nothing needs saying)."""
    if as_json:
        click.echo(json.dumps(_sync_data(outcome), ensure_ascii=False, indent=2))
        return
    if outcome.report is not None:  # a quick no-op has none, and loads no report code
        from vaultsync.cli.reports import sync_lines

        for line in sync_lines(outcome.report, outcome.vault, verbose=verbose, quiet=quiet):
            click.echo(line)
    if not quiet:
        for line in remote_lines(outcome.remote):
            click.echo(line)


def _sync_data(outcome: SyncOutcome) -> dict[str, object]:
    remote = remote_json(outcome.remote)
    if outcome.report is None:
        quick = {"vault": str(outcome.vault), "changed": False, "quick": True}
        return {"schema_version": SCHEMA_VERSION, **quick, "remote": remote}
    from vaultsync.cli.reports import sync_json

    return {
        **sync_json(outcome.report, outcome.vault),
        "skipped": skipped_data(outcome.skipped),
        "remote": remote,
    }


def remote_json(outcome: RemoteOutcome | None) -> dict[str, object] | None:
    """The pull and push of a sync as plain data (``None``: neither was asked for)."""
    if outcome is None:
        return None
    return {
        "upstream": outcome.upstream,
        "pulled": outcome.pulled,
        "taken": list(outcome.taken),
        "pushed": outcome.pushed,
        "problem": outcome.problem or None,
    }


def remote_lines(outcome: RemoteOutcome | None) -> list[str]:
    """What the pull and push did, a line each (nothing when nothing happened)."""
    if outcome is None:
        return []
    lines = []
    if outcome.pulled:
        lines.append(f"pulled {plural(outcome.pulled, 'commit')} from {outcome.upstream}")
    lines += [f"  took the other device's {path}" for path in outcome.taken]
    if outcome.pushed:
        lines.append(f"pushed to {outcome.upstream}")
    return lines


def sync_command(state: str | None, vault: str | None, templates: Path | None) -> str:
    """The ``vaultsync sync`` that brings this vault in line: the options as given, quoted."""
    words = ["vaultsync", "sync"]
    for option, value in (("--state", state), ("--vault", vault), ("--templates", templates)):
        if value is not None:
            words += [option, shlex.quote(str(value))]
    return " ".join(words)


@click.command()
@state_option
@vault_option
@templates_option
@json_option
def status(state: str | None, vault: str | None, templates: Path | None, as_json: bool) -> None:
    """What the vault keeps for you (edited, deleted), conflicts, and what a sync would change."""
    from vaultsync.app.history import exposure_text
    from vaultsync.app.sync import status as vault_status
    from vaultsync.cli.reports import status_json, status_text
    from vaultsync.vault.hooks import hooks_json, hooks_text

    ws = workspace(state, vault, templates=templates)
    with on_terminal():
        outcome = vault_status(ws)
    say_warnings(outcome.warnings)
    target, skipped, against = outcome.vault, outcome.skipped, outcome.remote
    emit(
        as_json,
        lambda: {
            **status_json(outcome.report, target),
            "skipped": skipped_data(skipped),
            **hooks_json(outcome.hooks),
            "history_exposed": list(outcome.exposed),
            "remote": remote_state_json(against),
            "git_in_progress": outcome.git_busy,
        },
        lambda: "\n".join(
            filter(
                None,
                (
                    status_text(outcome.report, target),
                    skipped_text(skipped),
                    hooks_text(outcome.hooks),
                    exposure_text(outcome.exposed),
                    remote_state_text(against),
                    _embedding_text(outcome.embedding_failed),
                    f"warning: git objects not packed: {outcome.packing_failed}"
                    if outcome.packing_failed
                    else "",
                    f"git: {outcome.git_busy}; vaultsync writes nothing until then"
                    if outcome.git_busy
                    else "",
                ),
            )
        ),
    )


def _embedding_text(failed: str) -> str:
    if not failed:
        return ""
    return (
        f"warning: the semantic index's background job failed ({failed}); "
        "see .vaultsync/search.db.embed.log"
    )


def remote_state_json(state: RemoteState | None) -> dict[str, object] | None:
    """Where the vault stands against its upstream, as plain data (``None``: no upstream)."""
    if state is None:
        return None
    return {
        "upstream": state.upstream,
        "ahead": state.ahead,
        "behind": state.behind,
        "pull_needed": state.pull_needed,
    }


def remote_state_text(state: RemoteState | None) -> str:
    """One line on the upstream (empty: none), as of the last fetch."""
    if state is None:
        return ""
    line = f"remote: {state.upstream}, {state.ahead} ahead, {state.behind} behind"
    return line + (" (a pull is needed: `vaultsync sync --pull`)" if state.pull_needed else "")


@click.command()
@state_option
@vault_option
@templates_option
@click.option("--strict", is_flag=True, help="Exit 4 when a store file was skipped (unreadable).")
@json_option
def check(
    state: str | None, vault: str | None, templates: Path | None, strict: bool, as_json: bool
) -> None:
    """Exit 0 when the vault is exactly what the stores produce, 1 with the differences.

    A merge conflict waiting on `vaultsync resolve`, or store data not yet merged into an
    edited note, is a difference too.
    """
    from vaultsync.app.sync import check as check_vault

    ws = workspace(state, vault, templates=templates)
    with on_terminal():
        outcome = check_vault(ws)
    say_warnings(outcome.warnings)
    target, skipped, differences = outcome.vault, outcome.skipped, outcome.differences
    if as_json:
        data = {
            "schema_version": SCHEMA_VERSION,
            "vault": str(target),
            "in_sync": outcome.in_sync,
            "differences": list(differences),
            "skipped": skipped_data(skipped),
        }
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    elif skipped:
        click.echo(skipped_text(skipped))
    if strict and skipped:
        raise SkippedStores(
            f"{len(skipped)} store files could not be read and were skipped (--strict)",
            hint="fix or remove them; `vaultsync status` lists them",
        )
    if differences:
        _list_differences(differences, as_json=as_json)
        raise VaultStale(
            f"the vault at {target} is stale: {plural(len(differences), 'difference')}",
            hint=_stale_hint(differences, sync_command(state, vault, templates)),
        )
    if not as_json:
        click.echo(f"the vault at {target} is in sync")


def _stale_hint(differences: tuple[str, ...], sync: str) -> str:
    """What brings the vault in line: ``resolve`` for a conflict (a sync cannot), else a sync."""
    conflicted = [line.split(":", 1)[0].removeprefix("conflict ") for line in differences
                  if line.startswith("conflict ")]  # fmt: skip
    if not conflicted:
        return f"run `{sync}`"
    return f"settle {conflicted[0]} with `vaultsync resolve`, then run `{sync}`"


def _list_differences(differences: tuple[str, ...], *, as_json: bool) -> None:
    if as_json:
        return
    for line in differences[:CHECK_LISTED]:
        click.echo(f"  {line}")
    if len(differences) > CHECK_LISTED:
        click.echo(f"  … and {len(differences) - CHECK_LISTED} more")


@click.command()
@state_option
@vault_option
@click.argument("note")
@click.option(
    "--show", "choice", flag_value="show", help="Print the three versions; write nothing."
)
@click.option("--ours", "choice", flag_value="ours", help="Keep your file as it is.")
@click.option("--theirs", "choice", flag_value="theirs", help="Take the stores' version.")
@click.option(
    "--markers", "choice", flag_value="markers", help="Write conflict markers for you to edit."
)
def resolve(state: str | None, vault: str | None, note: str, choice: str | None) -> None:
    """End a merge conflict on NOTE (a vault path): --show, --ours, --theirs or --markers."""
    from vaultsync.app.notes import resolve as settle

    said = settle(_vault(state, vault), note, choice)
    click.echo(said, nl=choice != "show")


@click.command()
@state_option
@vault_option
@click.argument("note")
def release(state: str | None, vault: str | None, note: str) -> None:
    """Make NOTE (a vault path) fully yours: vaultsync never writes or removes it again."""
    from vaultsync.app.notes import release as hand_over

    click.echo(hand_over(_vault(state, vault), note))


@click.command()
@state_option
@vault_option
def path(state: str | None, vault: str | None) -> None:
    """Print the vault folder, to open in Obsidian."""
    click.echo(str(_vault(state, vault)))


def _vault(state: str | None, vault: str | None) -> Path:
    from vaultsync.app.notes import vault_folder

    return vault_folder(state, vault)

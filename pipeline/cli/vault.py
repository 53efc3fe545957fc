"""``vaultsync sync``, ``status``, ``check``, ``path``: the vault kept in line with the stores."""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click
from vaultsync.cli import process
from vaultsync.cli.options import (
    Workspace,
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
from vaultsync.core.errors import SkippedStores, UsageError, VaultStale, VaultsyncError
from vaultsync.core.settings import state_dir, vault_dir
from vaultsync.core.text import plural

if TYPE_CHECKING:
    from vaultsync.core.model import NoteSpec, Skipped
    from vaultsync.vault.moves import Moves
    from vaultsync.vault.report import SyncReport

CHECK_LISTED = 20


@dataclass(frozen=True, slots=True)
class VaultNotes:
    """What a vault command works from: every note, the skipped store files, the user's moves."""

    specs: tuple[NoteSpec, ...]
    skipped: tuple[Skipped, ...]
    moves: Moves


def _vault_specs(
    ws: Workspace, *, repair: bool = False, restored: frozenset[str] | None = frozenset()
) -> VaultNotes:
    """Every note of the vault, to render when the sync needs its bytes, and what was skipped.

    The notes the user moved are found first: their renders, and every link to them, go to
    the paths the user chose; the notes the user deleted are left off ``Home.md``, but for
    those ``restored`` names (``sync --force PATH``; ``None``: a bare ``--force``, every one).
    A skipped store file not warned about before gets one warning line.
    """
    from vaultsync.render.specs import vault_specs_skipped
    from vaultsync.vault.sync import vault_moves

    moves = vault_moves(ws.vault)
    deleted = frozenset() if restored is None else moves.deleted - restored
    specs, skipped = vault_specs_skipped(
        ws.state, ws.caps, ws.templates, repair=repair, chosen=moves.chosen, deleted=deleted
    )
    for source in skipped:
        if source.new:
            click.echo(f"warning: {source.line()}", err=True)
    process.big_run(len(specs))
    return VaultNotes(specs=specs, skipped=skipped, moves=moves)


def skipped_data(skipped: tuple[Skipped, ...]) -> list[dict[str, str]]:
    """The skipped store files as plain data (``status --json``, ``check --json``)."""
    return [{"source": s.source, "where": s.where, "what": s.what} for s in skipped]


def skipped_text(skipped: tuple[Skipped, ...]) -> str:
    """The skipped store files, one line each (empty when none)."""
    if not skipped:
        return ""
    lines = [f"skipped, could not be read ({len(skipped)}; their notes are kept as they were):"]
    return "\n".join([*lines, *(f"  - {s.line()}" for s in skipped)])


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
    paths: tuple[str, ...],
) -> None:
    """Bring the vault in line with the stores, and commit what changed (one commit).

    Notes you edited are kept and the stores' new data is merged into them, notes you deleted
    stay deleted, files vaultsync did not write are never touched. Prints one line when
    something changed; with -q only what needs you, so cron mails you nothing else.
    `sync --force PATH…` regenerates only those notes; `sync --each ROOT [--shard K/N]` syncs
    every ChatCLI state directory under ROOT into its own vault.
    """
    from vaultsync.vault.quick import sync_inputs

    if each is not None or shard is not None:
        from vaultsync.cli.each import run_each

        given = {"--state": state, "--vault": vault, "--templates": templates, "--force": force}
        run_each(each, shard, given=given, paths=paths, dry_run=dry_run, no_commit=no_commit,
                 verbose=verbose, quiet=quiet, as_json=as_json)  # fmt: skip
        return
    if paths and not force:
        raise UsageError("note paths are given only with --force (sync --force PATH…)")
    ws = workspace(state, vault, templates=templates)
    if templates is not None and not dry_run:
        _remember_templates(ws)
    inputs = sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
    if not (force or dry_run) and _nothing_to_do(ws.vault, inputs, as_json=as_json):
        return
    forced = frozenset(vault_relative(ws.vault, p) for p in paths)
    with on_terminal():
        report, skipped = _full_sync(
            ws, inputs, force=force, forced=forced, yes=yes, commit=not no_commit, dry_run=dry_run
        )
    _print_sync(report, ws.vault, skipped, as_json=as_json, verbose=verbose or dry_run, quiet=quiet)
    if not dry_run and report.changed:
        _refresh_search_index(ws.vault)
    if not dry_run:
        _history_check(ws)


def _history_check(ws: Workspace) -> None:
    """After a run that masked a text for the first time, look for it in the vault's history."""
    from vaultsync.graph.cache import take_history_check

    if take_history_check(ws.state) and (text := _exposed_text(_exposed_commits(ws))):
        click.echo(text, err=True)


def _full_sync(
    ws: Workspace,
    inputs: str,
    *,
    force: bool,
    forced: frozenset[str],
    yes: bool,
    commit: bool,
    dry_run: bool,
) -> tuple[SyncReport, tuple[Skipped, ...]]:
    """Build every note (moves followed) and sync; ``forced``: the notes ``--force`` names."""
    from vaultsync.vault.sync import sync_vault

    everything = force and not forced
    notes = _vault_specs(ws, repair=not dry_run, restored=None if everything else forced)
    if everything and not dry_run:
        _confirm_force(ws.vault, notes, yes=yes)
    report = sync_vault(
        ws.vault,
        notes.specs,
        moves=notes.moves,
        keep_gone=bool(notes.skipped),
        force=everything,
        force_paths=forced,
        commit=commit,
        dry_run=dry_run,
        inputs="" if dry_run else inputs,
    )
    return report, notes.skipped


def _nothing_to_do(vault: Path, inputs: str, *, as_json: bool) -> bool:
    """The quick answer (``vault.quick``): nothing changed since the last sync, said in JSON."""
    from vaultsync.vault.quick import unchanged_since_last_sync

    if not unchanged_since_last_sync(vault, inputs):
        return False
    if as_json:
        quick = {"vault": str(vault), "changed": False, "quick": True}
        click.echo(json.dumps({"schema_version": SCHEMA_VERSION, **quick}))
    return True


def _print_sync(
    report: SyncReport,
    target: Path,
    skipped: tuple[Skipped, ...],
    *,
    as_json: bool,
    verbose: bool,
    quiet: bool,
) -> None:
    """The sync's report: JSON, or its few lines (none when nothing needs saying)."""
    from vaultsync.cli.views import sync_json, sync_lines

    if as_json:
        data = {**sync_json(report, target), "skipped": skipped_data(skipped)}
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    for line in sync_lines(report, target, verbose=verbose, quiet=quiet):
        click.echo(line)


def _confirm_force(target: Path, notes: VaultNotes, *, yes: bool) -> None:
    """A bare ``--force`` says how many edited notes it overwrites, and asks (or needs --yes)."""
    from vaultsync.vault.sync import edited_notes

    edited = edited_notes(target, notes.specs, notes.moves)
    if not edited or yes:
        return
    what = f"--force overwrites {plural(len(edited), 'note')} you edited (e.g. {edited[0]})"
    if not sys.stdin.isatty():
        raise UsageError(what, hint="add --yes, or name the notes: sync --force PATH…")
    with progress.paused():
        confirmed = click.confirm(f"{what}. Go on?", default=False, err=True)
    if not confirmed:
        raise UsageError("nothing written (--force not confirmed)")


def sync_command(state: str | None, vault: str | None, templates: Path | None) -> str:
    """The ``vaultsync sync`` that brings this vault in line: the options as given, quoted."""
    words = ["vaultsync", "sync"]
    for option, value in (("--state", state), ("--vault", vault), ("--templates", templates)):
        if value is not None:
            words += [option, shlex.quote(str(value))]
    return " ".join(words)


def vault_relative(vault: Path, given: str) -> str:
    """A note path as given (vault-relative, or a file path under the vault) → vault path."""
    candidate = Path(given)
    if candidate.exists() or candidate.is_absolute():
        try:
            return candidate.absolute().relative_to(vault.absolute()).as_posix()
        except ValueError:
            pass
    return Path(given).as_posix()


def _remember_templates(ws: Workspace) -> None:
    """Save ``--templates`` the first time it is given, so a later plain sync renders alike.

    A saved folder that differs is not replaced: the flag wins for this run, and the
    workspace has said so; ``vaultsync config set render.templates`` changes the saved one.
    """
    from vaultsync.core.config import CONFIG
    from vaultsync.vault.config import save_setting

    if "render.templates" in ws.settings.saved:
        return
    folder = ws.templates
    assert folder is not None  # noqa: S101 - given on the command line
    relative = os.path.relpath(folder, ws.vault.absolute())  # portable to any clone
    save_setting(ws.vault, "render.templates", relative, commit=False)
    click.echo(f"saved render.templates = {relative} in {CONFIG} (a plain sync uses it)", err=True)


def _refresh_search_index(vault: Path) -> None:
    """Keep an existing search index current (and its vectors, in the background)."""
    from vaultsync.search.database import index_path

    if not index_path(vault).exists():
        return
    from vaultsync.search.index import update_index

    try:
        update_index(vault)
    except VaultsyncError as error:  # the vault is synced: a stale index is only a warning
        click.echo(f"warning: search index not updated: {error.message}", err=True)
        return
    from vaultsync.search.vectors import start_background

    start_background(vault)  # the semantic index, when the extra is installed


@click.command()
@state_option
@vault_option
@templates_option
@json_option
def status(state: str | None, vault: str | None, templates: Path | None, as_json: bool) -> None:
    """What the vault keeps for you (edited, deleted), conflicts, and what a sync would change."""
    from vaultsync.cli.views import status_json, status_text
    from vaultsync.vault.hooks import hooks_json, hooks_text
    from vaultsync.vault.sync import vault_status

    ws = workspace(state, vault, templates=templates)
    target = ws.vault
    with on_terminal():
        notes = _vault_specs(ws)
        skipped = notes.skipped
        report = vault_status(target, notes.specs, notes.moves, keep_gone=bool(skipped))
    exposed = _exposed_commits(ws)
    emit(
        as_json,
        lambda: {
            **status_json(report, target),
            "skipped": skipped_data(skipped),
            **hooks_json(target),
            "history_exposed": exposed,
        },
        lambda: "\n".join(
            filter(
                None,
                (
                    status_text(report, target),
                    skipped_text(skipped),
                    hooks_text(target),
                    _exposed_text(exposed),
                ),
            )
        ),
    )


def _exposed_commits(ws: Workspace) -> list[str]:
    """The commits of the vault's history that hold a secret or private value, newest first."""
    from vaultsync.graph.load import exposed
    from vaultsync.vault.history import scan
    from vaultsync.vault.vcs import VaultRepo

    repo = VaultRepo.open(ws.vault, create=False) if ws.vault.is_dir() else None
    if repo is None:
        return []
    return [e.commit for e in scan(repo, exposed(ws.state, ws.caps))]


def _exposed_text(commits: list[str]) -> str:
    if not commits:
        return ""
    named = ", ".join(c[:10] for c in commits[:5]) + (" …" if len(commits) > 5 else "")
    return (
        f"warning: a secret or private value of the stores is in {plural(len(commits), 'commit')} "
        f"of the vault's history ({named}): `vaultsync history` lists them, `--purge` removes them"
    )


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
    from vaultsync.vault.sync import check_vault

    ws = workspace(state, vault, templates=templates)
    target = ws.vault
    with on_terminal():
        notes = _vault_specs(ws)
        skipped = notes.skipped
        differences = check_vault(target, notes.specs, notes.moves, keep_gone=bool(skipped))
    if as_json:
        data = {
            "schema_version": SCHEMA_VERSION,
            "vault": str(target),
            "in_sync": not differences,
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
        for line in differences[:CHECK_LISTED] if not as_json else ():
            click.echo(f"  {line}")
        if len(differences) > CHECK_LISTED and not as_json:
            click.echo(f"  … and {len(differences) - CHECK_LISTED} more")
        raise VaultStale(
            f"the vault at {target} is stale: {plural(len(differences), 'difference')}",
            hint=f"run `{sync_command(state, vault, templates)}`",
        )
    if not as_json:
        click.echo(f"the vault at {target} is in sync")


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
    from vaultsync.vault.resolve import Choice
    from vaultsync.vault.resolve import resolve as settle

    if choice is None:
        raise UsageError("say how: --show, --ours, --theirs or --markers")
    target = vault_dir(vault, state_dir(state))
    click.echo(settle(target, vault_relative(target, note), Choice(choice)), nl=False)
    if choice != "show":
        click.echo()


@click.command()
@state_option
@vault_option
@click.argument("note")
def release(state: str | None, vault: str | None, note: str) -> None:
    """Make NOTE (a vault path) fully yours: vaultsync never writes or removes it again."""
    from vaultsync.vault.resolve import release as hand_over

    target = vault_dir(vault, state_dir(state))
    click.echo(hand_over(target, vault_relative(target, note)))


@click.command()
@state_option
@vault_option
def path(state: str | None, vault: str | None) -> None:
    """Print the vault folder, to open in Obsidian."""
    click.echo(str(vault_dir(vault, state_dir(state))))

"""The ``vaultsync`` command line: thin click commands over ``vaultsync.graph.load``.

Only this module prints errors: a ``VaultsyncError`` becomes one ``error: …`` line on stderr
(and a ``hint:`` line when there is one) and the exit code of its class.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import click
from vaultsync.core.errors import LinkStoreError, UsageError, VaultStale, VaultsyncError
from vaultsync.core.settings import Caps, caps_from_env, state_dir, vault_dir

if TYPE_CHECKING:
    from vaultsync.core.model import Graph, Node, NoteSpec
    from vaultsync.drawn.store import Quarantine
    from vaultsync.vault.report import SyncReport

# Commands import the stages they use when they run: a no-op sync, the most common run,
# needs none of git, Jinja or the graph, and must not pay for importing them.
F = TypeVar("F", bound=Callable[..., Any])
CHECK_LISTED = 20
BIG_RUN_NOTES = 2_000
"""From this many notes on, ``sync``, ``check`` and ``status`` freeze the heap for the collector
and leave through ``os._exit`` (see ``main``); below it neither saves anything worth measuring."""
_one_shot = False
"""Set by ``main``: this process runs one command and ends (``cli`` may also run in-process)."""
_leave_fast = False
"""Set by ``_big_run``: ``main`` leaves through ``os._exit`` (no atexit handlers, no teardown)."""


class _ReportedError(click.ClickException):
    """A ``VaultsyncError`` on its way out: one line, its own exit code."""

    def __init__(self, error: VaultsyncError) -> None:
        super().__init__(error.message)
        self.hint = error.hint

    @classmethod
    def of(cls, error: VaultsyncError) -> _ReportedError:
        """Click reads ``exit_code`` from the class, so each code gets its own subclass."""
        coded: type[_ReportedError] = type(
            f"Reported{error.exit_code}", (cls,), {"exit_code": error.exit_code}
        )
        return coded(error)

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)
        if self.hint:
            click.echo(f"hint: {self.hint}", err=True)


class _Group(click.Group):
    # The knowledge queries and search live in their own packages, imported only when one of
    # their commands runs (or help lists them): a sync must not pay for loading them.
    lazy: ClassVar[dict[str, str]] = {}

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultsyncError as error:
            raise _ReportedError.of(error) from error

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, name = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)


class _TopGroup(_Group):
    lazy: ClassVar[dict[str, str]] = {
        "query": "vaultsync.cli.knowledge:query",
        "search": "vaultsync.cli.search:search",
        "registry": "vaultsync.cli.search:registry",
        "serve": "vaultsync.cli.search:serve",
    }


def state_option(command: F) -> F:
    """``--state DIR``: the ChatCLI state directory (else env, else ``~/.chatcli``)."""
    return click.option(
        "--state",
        "state",
        metavar="DIR",
        help="ChatCLI state directory [env VAULTSYNC_STATE_DIR, CHATCLI_STATE_DIR; ~/.chatcli]",
    )(command)


def json_option(command: F) -> F:
    """``--json``: print plain data instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(command)


def _emit(as_json: bool, data: Callable[[], Any], text: Callable[[], str]) -> None:
    if as_json:
        click.echo(json.dumps(data(), ensure_ascii=False, indent=2))
    else:
        click.echo(text())


def _workspace(state: str | None) -> tuple[Path, Caps]:
    return state_dir(state), caps_from_env()


@click.group(cls=_TopGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vaultsync")
def cli() -> None:
    """ChatCLI memory stores → one knowledge graph → an Obsidian vault kept in sync in git."""


@cli.group(cls=_Group)
def graph() -> None:
    """Build the knowledge graph from the stores and query it."""


@graph.command()
@click.argument("note")
@state_option
@json_option
def neighbors(note: str, state: str | None, as_json: bool) -> None:
    """Show NOTE and what is around it, two hops deep (→ links it writes, ← backlinks).

    NOTE is a node id, a title, an alias, a [[wikilink]], a chunk id, else the best keyword match.
    """
    from vaultsync.cli.views import local_graph_json, local_graph_text
    from vaultsync.graph import load
    from vaultsync.graph.query import find_note, local_graph

    root, caps = _workspace(state)
    current = load.current_graph(root, caps)
    view = local_graph(current, find_note(current, note).id)
    _emit(as_json, lambda: local_graph_json(view), lambda: local_graph_text(view))


@graph.command(name="map")
@state_option
@json_option
def map_command(state: str | None, as_json: bool) -> None:
    """Node counts by kind and the hub notes (documents are never hubs)."""
    from vaultsync.cli.views import map_json, map_text
    from vaultsync.graph import load

    root, caps = _workspace(state)
    current = load.current_graph(root, caps)
    _emit(as_json, lambda: map_json(current), lambda: map_text(current))


@graph.command(name="links")
@click.argument("doc")
@state_option
@json_option
def links_command(doc: str, state: str | None, as_json: bool) -> None:
    """A document's links to and from its context's documents, and its links outside it."""
    from vaultsync.cli.views import document_links_json, document_links_text
    from vaultsync.core.model import Kind
    from vaultsync.graph import load
    from vaultsync.graph.query import document_links, find_note

    root, caps = _workspace(state)
    # graph.json keeps no summaries, so this view builds the graph once and reads both from it.
    _, built = load.build(root, caps)
    node = find_note(built.graph, doc)
    if node.kind is not Kind.DOC:
        raise UsageError(f"{doc!r} names a {node.kind.value} ({node.id}), not a document")
    view = document_links(built.graph, node.id)
    summary = next((d.summary for d in built.documents if d.node_id == node.id), "")
    _emit(
        as_json,
        lambda: document_links_json(view, summary),
        lambda: document_links_text(view, summary),
    )


@graph.command()
@state_option
def export(state: str | None) -> None:
    """Print the graph as graph.json (schema 2) on stdout."""
    from vaultsync.graph import load
    from vaultsync.graph.cache import graph_to_json

    root, caps = _workspace(state)
    sys.stdout.buffer.write(graph_to_json(load.current_graph(root, caps)))


# ---------------------------------------------------------------------------------------------
# The vault (seed 002, "The Obsidian vault")


def vault_option(command: F) -> F:
    """``--vault DIR``: the vault (else env, else ``<state>/vault``)."""
    return click.option(
        "--vault",
        "vault",
        metavar="DIR",
        help="Vault folder [env VAULTSYNC_VAULT_DIR, CHATCLI_MEMORY_VAULT_DIR; <state>/vault]",
    )(command)


def templates_option(command: F) -> F:
    """``--templates DIR``: templates that override the built-in ones by name."""
    return click.option(
        "--templates",
        "templates",
        metavar="DIR",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Folder of Jinja templates overriding the built-in ones (same file names).",
    )(command)


def _vault_specs(
    state: str | None, vault: str | None, templates: Path | None
) -> tuple[Path, tuple[NoteSpec, ...]]:
    from vaultsync.render.specs import vault_specs

    root, caps = _workspace(state)
    target = vault_dir(vault, root)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target}: not a folder (the vault is a folder of notes)")
    specs = vault_specs(root, caps, templates)
    if _one_shot and len(specs) >= BIG_RUN_NOTES:
        _big_run()
    if sys.stderr.isatty():
        specs = with_progress(specs)
    return target, specs


def _big_run() -> None:
    """A one-shot ``sync``/``check``/``status`` of a big graph: freeze the heap, leave fast.

    The records, graph and specs live until the process ends: ``gc.freeze`` keeps the cyclic
    collector from walking them again on each collection rendering triggers (millions of
    objects at 100,000 notes), and tearing that heap down at exit takes up to a second and
    does nothing the kernel does not do anyway.  Only these commands: they hold nothing open
    at exit (every file they write is closed and durable, the search index's connection
    closed), while the others may rely on atexit handlers and sqlite closes.
    """
    global _leave_fast  # noqa: PLW0603 - read by main once the command returns
    gc.freeze()
    _leave_fast = True


def with_progress(specs: tuple[NoteSpec, ...]) -> tuple[NoteSpec, ...]:
    """On a terminal, count rendered notes on stderr; cron and CI stay silent."""
    rendered = [0]
    parent = os.getpid()

    def counted(render: Callable[[], bytes]) -> Callable[[], bytes]:
        def run() -> bytes:
            if os.getpid() != parent:  # a rendering helper (vaultsync.core.parallel) stays quiet
                return render()
            rendered[0] += 1
            if rendered[0] % 250 == 0:
                click.echo(f"\rrendering… {rendered[0]} notes", err=True, nl=False)
            return render()

        return run

    return tuple(replace(spec, render=counted(spec.render)) for spec in specs)


@cli.command()
@state_option
@vault_option
@templates_option
@click.option("--force", is_flag=True, help="Regenerate vaultsync's notes, edited ones included.")
@click.option("--no-commit", is_flag=True, help="Write the notes but leave them uncommitted.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("-v", "--verbose", is_flag=True, help="List every path written or removed.")
def sync(
    state: str | None,
    vault: str | None,
    templates: Path | None,
    force: bool,
    no_commit: bool,
    dry_run: bool,
    verbose: bool,
) -> None:
    """Bring the vault in line with the stores, and commit what changed (one commit).

    Notes you edited are kept, notes you deleted stay deleted, files vaultsync did not write are
    never touched. Quiet unless something is worth saying, so it can run from cron.
    """
    from vaultsync.vault.quick import sync_inputs, unchanged_since_last_sync

    root, caps = _workspace(state)
    inputs = sync_inputs(root, caps, templates)
    if not (force or dry_run) and unchanged_since_last_sync(vault_dir(vault, root), inputs):
        return
    from vaultsync.cli.views import sync_lines
    from vaultsync.vault.sync import sync_vault

    target, specs = _vault_specs(state, vault, templates)
    report: SyncReport = sync_vault(
        target,
        specs,
        force=force,
        commit=not no_commit,
        dry_run=dry_run,
        inputs="" if dry_run else inputs,
    )
    if sys.stderr.isatty():
        click.echo("\r\033[K", err=True, nl=False)
    for line in sync_lines(report, target, verbose=verbose or dry_run):
        click.echo(line)
    if not dry_run and report.changed:
        _refresh_search_index(target)


def _refresh_search_index(vault: Path) -> None:
    """Keep an existing search index current; the first `vaultsync search` builds it."""
    from vaultsync.search.database import index_path

    if not index_path(vault).exists():
        return
    from vaultsync.search.index import update_index

    try:
        update_index(vault)
    except VaultsyncError as error:  # the vault is synced: a stale index is only a warning
        click.echo(f"warning: search index not updated: {error.message}", err=True)


@cli.command()
@state_option
@vault_option
@templates_option
@json_option
def status(state: str | None, vault: str | None, templates: Path | None, as_json: bool) -> None:
    """What the vault keeps for you (edited, deleted), conflicts, and what a sync would change."""
    from vaultsync.cli.views import status_json, status_text
    from vaultsync.vault.sync import vault_status

    target, specs = _vault_specs(state, vault, templates)
    report = vault_status(target, specs)
    _emit(as_json, lambda: status_json(report, target), lambda: status_text(report, target))


@cli.command()
@state_option
@vault_option
@templates_option
def check(state: str | None, vault: str | None, templates: Path | None) -> None:
    """Exit 0 when the vault is exactly what the stores produce, 1 with the differences."""
    from vaultsync.vault.sync import check_vault

    target, specs = _vault_specs(state, vault, templates)
    differences = check_vault(target, specs)
    if differences:
        for line in differences[:CHECK_LISTED]:
            click.echo(f"  {line}")
        if len(differences) > CHECK_LISTED:
            click.echo(f"  … and {len(differences) - CHECK_LISTED} more")
        raise VaultStale(
            f"the vault at {target} is stale: {len(differences)} differences",
            hint="run `vaultsync sync`",
        )
    click.echo(f"the vault at {target} is in sync")


@cli.command()
@state_option
@vault_option
def path(state: str | None, vault: str | None) -> None:
    """Print the vault folder, to open in Obsidian."""
    click.echo(str(vault_dir(vault, state_dir(state))))


# ---------------------------------------------------------------------------------------------
# Explicit links (seed 002, "Explicit links")

ARROWS = ("->", "→")


def split_link_arguments(words: tuple[str, ...]) -> tuple[str, str]:
    """``FROM -> TO`` (words on each side joined) or exactly two quoted references."""
    for index, word in enumerate(words):
        if word in ARROWS:
            source, target = " ".join(words[:index]), " ".join(words[index + 1 :])
            if source and target:
                return source, target
            break
        for arrow in ARROWS:
            if arrow in word and word not in ARROWS:
                left, _, right = word.partition(arrow)
                joined = (*words[:index], left, arrow, right, *words[index + 1 :])
                return split_link_arguments(tuple(w for w in joined if w))
    if len(words) == 2 and not any(w in ARROWS for w in words):
        return words[0], words[1]
    raise UsageError(
        "expected FROM -> TO (or two quoted references)",
        hint='vaultsync link "telemetry security" -> orbital --rel about',
    )


def _linked_pair(state: str | None, words: tuple[str, ...]) -> tuple[Path, Graph, Node, Node]:
    """The state directory, the graph, and the two notes FROM -> TO name (strictly)."""
    from vaultsync.graph import load
    from vaultsync.graph.query import find_note

    root, caps = _workspace(state)
    current = load.current_graph(root, caps)
    source_ref, target_ref = split_link_arguments(words)
    source = find_note(current, source_ref, strict=True)
    target = find_note(current, target_ref, strict=True)
    return root, current, source, target


def _report_quarantine(quarantined: Quarantine | None) -> None:
    if quarantined is not None:
        click.echo(
            f"warning: links.json was corrupt ({quarantined.reason}); "
            f"moved aside to {quarantined.path}, starting a new one",
            err=True,
        )


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True)
@click.option(
    "--rel", default="related", show_default=True, help="Relation name (stored as a slug)."
)
@click.option("--note", default="", help="One line about the link (at most 280 bytes).")
@state_option
def link(words: tuple[str, ...], rel: str, note: str, state: str | None) -> None:
    """Draw a link by hand: FROM -> TO (the arrow may also be →).

    FROM and TO are node ids, fact ids or id prefixes, titles, aliases, [[wikilinks]] or free
    text that names exactly one note; a reference that could mean several notes is refused.
    """
    from vaultsync.drawn.store import LinkStore

    root, _, source, target = _linked_pair(state, words)
    result = LinkStore(root).add(source.id, target.id, rel, note, now=datetime.now(UTC))
    _report_quarantine(result.quarantined)
    drawn = result.link
    verb = {"added": "linked", "updated": "updated the note of", "unchanged": "already linked"}
    click.echo(f"{verb[result.status]}: {source.title} → {target.title} ({drawn.rel})")
    click.echo(f"  {drawn.source} → {drawn.target}" + (f" · {drawn.note}" if drawn.note else ""))


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True)
@click.option("--rel", default=None, help="Only this relation (default: every one you drew).")
@state_option
def unlink(words: tuple[str, ...], rel: str | None, state: str | None) -> None:
    """Remove links you drew between FROM -> TO; links from the data stay (change the data)."""
    from vaultsync.drawn.store import LinkStore

    root, current, source, target = _linked_pair(state, words)
    result = LinkStore(root).remove(source.id, target.id, rel, now=datetime.now(UTC))
    _report_quarantine(result.quarantined)
    for removed in result.removed:
        click.echo(f"unlinked: {source.title} → {target.title} ({removed.rel})")
    if result.removed:
        return
    # Nothing was removed, so the graph read before the removal still holds every link.
    from_data = [
        link
        for link in (*current.links_from(source.id), *current.links_to(source.id))
        if {link.source, link.target} == {source.id, target.id} and link.origin.value != "user"
    ]
    if from_data:
        kinds = "; ".join(
            f"{link.rel} ({link.origin.value}, {link.source} → {link.target})" for link in from_data
        )
        raise LinkStoreError(
            f"no link you drew joins {source.id} and {target.id}; they are linked by the data: "
            f"{kinds}",
            hint="change the data (the tag, the fact's project, the wikilink, the text)",
        )
    raise LinkStoreError(f"no link joins {source.id} and {target.id}")


class _LinksGroup(_Group):
    """``links NOTE`` shows a note's links; ``links export|import|compact`` manage links.json."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@cli.group(cls=_LinksGroup)
def links() -> None:
    """Show a note's links (vaultsync links NOTE), or export, import and compact links.json."""


@links.command(name="show")
@click.argument("note")
@state_option
@json_option
def links_show(note: str, state: str | None, as_json: bool) -> None:
    """The same view as `vaultsync graph neighbors NOTE`."""
    neighbors.callback(note, state, as_json)  # type: ignore[misc]


@links.command(name="export")
@state_option
def links_export(state: str | None) -> None:
    """Print every link you drew as JSON Lines (to carry them to another machine)."""
    from vaultsync.drawn.store import LinkStore

    root, _ = _workspace(state)
    click.echo(LinkStore(root).export_jsonl(), nl=False)


@links.command(name="import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@state_option
def links_import(file: Any, state: str | None) -> None:
    """Merge links from a JSON Lines FILE written by `links export` (- for stdin)."""
    from vaultsync.drawn.store import LinkStore

    root, _ = _workspace(state)
    report = LinkStore(root).import_jsonl(file.read(), now=datetime.now(UTC), source=file.name)
    _report_quarantine(report.quarantined)
    click.echo(
        f"imported: {report.added} added, {report.updated} updated, {report.skipped} skipped"
    )


@links.command(name="compact")
@state_option
def links_compact(state: str | None) -> None:
    """Follow superseded facts, and drop links whose note left the stores over 30 days ago."""
    from vaultsync.drawn.store import LinkStore
    from vaultsync.graph import load

    root, _ = _workspace(state)
    records = load.read_records(root)
    report = LinkStore(root).compact(
        records.facts, load.every_node_id(records), now=datetime.now(UTC)
    )
    _report_quarantine(report.quarantined)
    click.echo(
        f"compacted: {len(report.moved)} moved to newer facts, {len(report.collected)} dropped, "
        f"{len(report.missing)} notes missing (kept for 30 days), "
        f"{report.pruned_tombstones} old removals forgotten"
    )


@cli.group(name="bench")
def bench_group() -> None:
    """Benchmark helpers (the full run is `make bench`)."""


@bench_group.command(name="generate")
@click.option("--notes", type=click.IntRange(min=50), default=2800, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def bench_generate(notes: int, seed: int, directory: Path) -> None:
    """Write a synthetic ChatCLI state directory of about NOTES notes into DIRECTORY."""
    from vaultsync.synthetic import generate_store

    if directory.exists() and any(directory.iterdir()):
        raise UsageError(f"{directory}: not empty (the generator writes a fresh state directory)")
    size = generate_store(directory, notes=notes, seed=seed)
    click.echo(
        f"wrote {directory}: {size.facts} facts, {size.documents} documents in "
        f"{size.contexts} contexts, {size.episodes} episodes, {size.topics} topics"
    )


def main() -> None:
    """Console-script entry point: run one command, flush, exit with its code.

    A big ``sync``/``check``/``status`` (see ``_big_run``) leaves through ``os._exit`` once
    the output is flushed; every other command exits normally, running atexit handlers.
    """
    global _one_shot  # noqa: PLW0603 - set once, by the entry point only
    _one_shot = True
    try:
        cli(prog_name="vaultsync")
        code = 0
    except SystemExit as done:
        code = _exit_code(done.code)
    code = _flushed(code)
    if _leave_fast:
        os._exit(code)
    sys.exit(code)


def _flushed(code: int) -> int:
    """Flush stdout and stderr; a closed pipe (``vaultsync … | head``) turns 0 into 1."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing to tell, and nobody to tell it
            code = code or 1
            _to_devnull(stream)
    return code


def _to_devnull(stream: Any) -> None:
    """Point a stream at ``/dev/null``, so the interpreter's own last flush fails no more."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints it and exits 1
    return 1

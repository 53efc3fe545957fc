"""The ``vaultsync`` command line: thin click commands over ``pipeline.app``.

Only this module prints errors: a ``VaultsyncError`` becomes one ``error: …`` line on stderr
(and a ``hint:`` line when there is one) and the exit code of its class.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from pipeline import app
from pipeline.cache import graph_to_json
from pipeline.errors import UsageError, VaultsyncError
from pipeline.model import Kind
from pipeline.query import document_links, find_note, local_graph
from pipeline.settings import Caps, caps_from_env, state_dir
from pipeline.views import (
    document_links_json,
    document_links_text,
    local_graph_json,
    local_graph_text,
    map_json,
    map_text,
)

F = TypeVar("F", bound=Callable[..., Any])


class _ReportedError(click.ClickException):
    """A ``VaultsyncError`` on its way out: one line, its own exit code."""

    def __init__(self, error: VaultsyncError) -> None:
        super().__init__(error.message)
        self.exit_code = error.exit_code
        self.hint = error.hint

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)
        if self.hint:
            click.echo(f"hint: {self.hint}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultsyncError as error:
            raise _ReportedError(error) from error


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


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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
    root, caps = _workspace(state)
    current = app.current_graph(root, caps)
    view = local_graph(current, find_note(current, note).id)
    _emit(as_json, lambda: local_graph_json(view), lambda: local_graph_text(view))


@graph.command(name="map")
@state_option
@json_option
def map_command(state: str | None, as_json: bool) -> None:
    """Node counts by kind and the hub notes (documents are never hubs)."""
    root, caps = _workspace(state)
    current = app.current_graph(root, caps)
    _emit(as_json, lambda: map_json(current), lambda: map_text(current))


@graph.command(name="links")
@click.argument("doc")
@state_option
@json_option
def links_command(doc: str, state: str | None, as_json: bool) -> None:
    """A document's links to and from its context's documents, and its links outside it."""
    root, caps = _workspace(state)
    current = app.current_graph(root, caps)
    node = find_note(current, doc)
    if node.kind is not Kind.DOC:
        raise UsageError(f"{doc!r} names a {node.kind.value} ({node.id}), not a document")
    view = document_links(current, node.id)
    summary = app.document_summary(root, caps, node.id)
    _emit(
        as_json,
        lambda: document_links_json(view, summary),
        lambda: document_links_text(view, summary),
    )


@graph.command()
@state_option
def export(state: str | None) -> None:
    """Print the graph as graph.json (schema 2) on stdout."""
    root, caps = _workspace(state)
    sys.stdout.buffer.write(graph_to_json(app.current_graph(root, caps)))


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="vaultsync")

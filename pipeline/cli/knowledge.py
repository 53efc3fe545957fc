"""``vaultsync query …``: thin click commands over the knowledge model; the shell.

Contract: each command loads the vault's model (:func:`vaultsync.knowledge.scan.load_model`,
cached, read-only for notes), asks one question of :mod:`vaultsync.knowledge.queries` and prints
the answer as text or, with ``--json``, as JSON.  Bad input raises :mod:`vaultsync.core.errors`
classes (``UsageError`` for an unknown state or edge type, ``NoteReferenceError`` for an
unknown note); the top-level ``vaultsync`` group prints them.  Notes whose front matter could
not be read are named on stderr as warnings.

The vault is ``--vault DIR``, else ``VAULTSYNC_VAULT_DIR``, else ``CHATCLI_MEMORY_VAULT_DIR``,
else ``<state>/vault`` (state: ``--state``, ``VAULTSYNC_STATE_DIR``, ``CHATCLI_STATE_DIR``,
``~/.chatcli``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click
from vaultsync.core.errors import UsageError
from vaultsync.knowledge import queries as q
from vaultsync.knowledge import views as v
from vaultsync.knowledge.lifecycle import State, parse_state
from vaultsync.knowledge.model import KnowledgeModel
from vaultsync.knowledge.relations import LINK, VOCABULARY, relation_type

__all__ = ["query"]

F = TypeVar("F", bound=Callable[..., Any])
_SHOWN_PROBLEMS = 3


def _options(command: F) -> F:
    """``--vault DIR``, ``--state DIR`` and ``--json``, shared by every query."""
    command = click.option("--json", "as_json", is_flag=True, help="Print JSON.")(command)
    command = click.option(
        "--state",
        "state",
        metavar="DIR",
        help="ChatCLI state directory [env VAULTSYNC_STATE_DIR, CHATCLI_STATE_DIR; ~/.chatcli]",
    )(command)
    return click.option(
        "--vault",
        "vault",
        metavar="DIR",
        help="The vault [env VAULTSYNC_VAULT_DIR, CHATCLI_MEMORY_VAULT_DIR; <state>/vault]",
    )(command)


def _model(vault: str | None, state: str | None) -> KnowledgeModel:
    from vaultsync.app.knowledge import model as knowledge_model
    from vaultsync.app.notes import vault_folder

    model = knowledge_model(vault_folder(state, vault))
    problems = list(model.problems())
    for path, problem in problems[:_SHOWN_PROBLEMS]:
        click.echo(f"warning: {path}: {problem}", err=True)
    if len(problems) > _SHOWN_PROBLEMS:
        click.echo(f"warning: … and {len(problems) - _SHOWN_PROBLEMS} more", err=True)
    return model


def _emit(as_json: bool, data: Callable[[], Any], text: Callable[[], str]) -> None:
    if as_json:
        click.echo(json.dumps(data(), ensure_ascii=False, indent=2))
    else:
        click.echo(text())


@click.group(name="query")
def query() -> None:
    """Ask the vault's knowledge model: every note, yours and vaultsync's (read-only).

    An orphan is a note with no incoming edge (no note links to it); a leaf is a note with no
    outgoing edge (it links to no note).  Edges join notes; unresolved links are listed apart.
    """


@query.command()
@_options
def orphans(vault: str | None, state: str | None, as_json: bool) -> None:
    """Notes with no incoming edge: no other note links to them."""
    found = q.orphans(_model(vault, state))
    _emit(
        as_json,
        lambda: [v.idea_json(i) for i in found],
        lambda: v.ideas_text(
            "Orphans — no note links to them", found, "No orphans: every note has a backlink."
        ),
    )


@query.command()
@_options
def leaves(vault: str | None, state: str | None, as_json: bool) -> None:
    """Notes with no outgoing edge: they link to no other note."""
    found = q.leaves(_model(vault, state))
    _emit(
        as_json,
        lambda: [v.idea_json(i) for i in found],
        lambda: v.ideas_text(
            "Leaves — they link to no note", found, "No leaves: every note links somewhere."
        ),
    )


@query.command()
@click.option(
    "--min",
    "minimum",
    type=click.IntRange(min=0),
    default=q.DEFAULT_HUB_DEGREE,
    show_default=True,
    help="Fewest distinct neighbors (either direction) of a hub.",
)
@_options
def hubs(minimum: int, vault: str | None, state: str | None, as_json: bool) -> None:
    """Notes with at least --min distinct neighbors, most connected first."""
    found = q.hubs(_model(vault, state), minimum)
    _emit(
        as_json,
        lambda: [v.idea_json(i) for i in found],
        lambda: v.ideas_text(
            f"Hubs — {minimum} or more neighbors", found, f"No note has {minimum} neighbors."
        ),
    )


@query.command()
@_options
def unsourced(vault: str | None, state: str | None, as_json: bool) -> None:
    """Notes that make claims and cite no source (notes without claims are left out)."""
    found = q.unsourced(_model(vault, state))
    _emit(
        as_json,
        lambda: [v.idea_json(i) for i in found],
        lambda: v.ideas_text(
            "Claims with no source", found, "Every note that makes a claim cites a source."
        ),
    )


@query.command(name="claims-without-sources")
@_options
def claims_without_sources(vault: str | None, state: str | None, as_json: bool) -> None:
    """Every claim that has no source, with its note."""
    pairs = q.claims_without_sources(_model(vault, state))
    _emit(as_json, lambda: v.claims_json(pairs), lambda: v.claims_text(pairs))


@query.command()
@_options
def sources(vault: str | None, state: str | None, as_json: bool) -> None:
    """Every source cited by a claim, with how many notes cite it."""
    counts = q.sources_by_reference_count(_model(vault, state))
    _emit(as_json, lambda: v.sources_json(counts), lambda: v.sources_text(counts))


@query.command(name="state")
@click.argument("lifecycle_state", metavar="STATE")
@_options
def state_command(
    lifecycle_state: str, vault: str | None, state: str | None, as_json: bool
) -> None:
    """Notes in one lifecycle STATE (fleeting, literature, permanent, developing, ...)."""
    wanted = parse_state(lifecycle_state)
    if wanted is None:
        raise UsageError(
            f"unknown state {lifecycle_state!r}",
            hint="one of: " + ", ".join(s.value for s in State),
        )
    found = q.by_state(_model(vault, state), wanted)
    _emit(
        as_json,
        lambda: [v.idea_json(i) for i in found],
        lambda: v.ideas_text(f"{wanted.value.capitalize()} notes", found, f"No {wanted} notes."),
    )


@query.command()
@_options
def maturity(vault: str | None, state: str | None, as_json: bool) -> None:
    """Notes by distinct neighbors: isolated (0), sparse (1-3), connected (4+)."""
    bands = q.by_maturity(_model(vault, state))
    _emit(as_json, lambda: v.maturity_json(bands), lambda: v.maturity_text(bands))


@query.command()
@click.argument("note")
@_options
def contradictions(note: str, vault: str | None, state: str | None, as_json: bool) -> None:
    """What NOTE contradicts and what contradicts it.

    NOTE is a vault path, a [[wikilink]] target, a title or a file name.
    """
    model = _model(vault, state)
    path = q.find_note(model, note)
    edges = q.contradictions(model, path)
    _emit(
        as_json,
        lambda: v.contradictions_json(path, edges),
        lambda: v.contradictions_text(path, edges),
    )


@query.command()
@_options
def questions(vault: str | None, state: str | None, as_json: bool) -> None:
    """Questions (notes raised with question::) that no note supports."""
    found = q.unanswered_questions(_model(vault, state))
    _emit(as_json, lambda: v.questions_json(found), lambda: v.questions_text(found))


@query.command()
@click.option(
    "--type",
    "edge_type",
    required=True,
    metavar="T",
    help="supports, contradicts, expands, inspired-by, question, example, implements, link, "
    "or a vaultsync relation (in project, mentions, ...).",
)
@_options
def edges(edge_type: str, vault: str | None, state: str | None, as_json: bool) -> None:
    """Every edge of one type, as FROM → TO."""
    model = _model(vault, state)
    kind = relation_type(edge_type)
    known = {*VOCABULARY, LINK, *model.by_type}
    if kind not in known:
        raise UsageError(
            f"unknown edge type {edge_type!r}",
            hint="types in this vault: " + ", ".join(sorted(model.by_type) or ["none"]),
        )
    found = q.edges_of_type(model, kind)
    _emit(
        as_json,
        lambda: [v.edge_json(e) for e in found],
        lambda: v.edges_text(kind, found),
    )


@query.command()
@_options
def unresolved(vault: str | None, state: str | None, as_json: bool) -> None:
    """Links that reach no file (they make no edge), with note and line."""
    found = q.unresolved_links(_model(vault, state))
    _emit(as_json, lambda: v.unresolved_json(found), lambda: v.unresolved_text(found))


@query.command()
@click.argument("note")
@_options
def transitions(note: str, vault: str | None, state: str | None, as_json: bool) -> None:
    """NOTE's lifecycle state and the states it may move to next.

    NOTE is a vault path, a [[wikilink]] target, a title or a file name.
    """
    model = _model(vault, state)
    idea, allowed = q.transitions(model, q.find_note(model, note))
    _emit(
        as_json,
        lambda: v.transitions_json(idea, allowed),
        lambda: v.transitions_text(idea, allowed),
    )

"""Board card node → ``card.md.j2`` context: description, notes and column history; pure.

``## History`` lists the card's moves between columns, oldest first, as ChatCLI's board shows
them: when (a move whose time is Go's zero time has none), from, to, and who moved it.  Times
in the body read ``2026-10-15 08:00``; ``created`` and ``updated`` stay typed properties.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo
from typing import TypedDict

from vaultsync.core.model import Card, CardMove, Node
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    one_line,
    prepare_text,
    reading_time,
)

TEMPLATE = "card.md.j2"


class CardNoteItem(TypedDict):
    """A comment on the card."""

    author: str
    at: str
    text: str


class CardMoveItem(TypedDict):
    """A move between columns."""

    at: str
    """``""`` when the store has no time for it."""
    from_column: str
    to_column: str
    by: str


class CardContext(NoteContext):
    """A work-board card."""

    column: str
    description: str
    notes: list[CardNoteItem]
    history: list[CardMoveItem]


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The description and every note's text."""
    card = inputs.records.get(node.id, Card)
    return (card.description, *(n.text for n in card.notes)) if card is not None else ()


def context(node: Node, inputs: RenderInputs) -> CardContext:
    """Front matter: column, assignee, created, updated."""
    card = inputs.records.get(node.id, Card)
    if card is None:
        return CardContext(
            **base_context(node, inputs), column="", description="", notes=[], history=[]
        )
    base = base_context(
        node,
        inputs,
        [
            ("column", card.column),
            ("assignee", card.assignee),
            ("created", card.created_at),
            ("updated", card.updated_at),
        ],
    )
    notes = [
        CardNoteItem(
            author=one_line(note.author) or "unknown",
            at=reading_time(note.at, inputs.zone),
            text=prepare_text(note.text, node.id, inputs),
        )
        for note in card.notes
    ]
    return CardContext(
        **base,
        column=card.column,
        description=prepare_text(card.description, node.id, inputs),
        notes=notes,
        history=[_move(move, inputs.zone) for move in card.history],
    )


def _move(move: CardMove, zone: tzinfo) -> CardMoveItem:
    return CardMoveItem(
        at=reading_time(move.at, zone),
        from_column=one_line(move.from_column) or "?",
        to_column=one_line(move.to_column) or "?",
        by=one_line(move.by),
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

"""Journal note (daily note, weekly or monthly digest) → ``journal.md.j2`` context; pure.

The full text is kept, with wikilinks rewritten and secrets masked.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from vaultsync.core.model import JournalNote, Node
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    leading_h1,
    prepare_text,
)

TEMPLATE = "journal.md.j2"


class JournalContext(NoteContext):
    """A daily note or digest: ``period`` is ``daily``, ``weekly`` or ``monthly``."""

    period: str
    label: str
    text: str


def period_start(label: str) -> str | None:
    """``2026-10-24`` as is, ``2026-W43`` → its Monday, ``2026-10`` → its first day."""
    try:
        if "W" in label:
            year, _, week = label.partition("-W")
            return date.fromisocalendar(int(year), int(week), 1).isoformat()
        if len(label) == len("2026-10"):
            return date.fromisoformat(f"{label}-01").isoformat()
        return date.fromisoformat(label).isoformat()
    except ValueError:
        return None


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The note's full text."""
    note = inputs.records.get(node.id, JournalNote)
    return (note.text,) if note is not None else ()


def context(node: Node, inputs: RenderInputs) -> JournalContext:
    """Front matter: date (the day, or the first day of the week or month), period, source.

    A text that starts with an H1 gives the note its heading (one H1 per note).
    """
    note = inputs.records.get(node.id, JournalNote)
    period, _, label = node.id.partition(":")[2].partition(":")
    if note is None:
        return JournalContext(**base_context(node, inputs), period=period, label=label, text="")
    base = base_context(
        node,
        inputs,
        [("date", period_start(note.label)), ("period", note.period), ("source", note.source_path)],
    )
    text = prepare_text(note.text, node.id, inputs)
    own = leading_h1(text)
    if own is not None:
        base["title"], text = own
    return JournalContext(**base, period=note.period, label=note.label, text=text)


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

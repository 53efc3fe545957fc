"""Journal note (daily note, weekly or monthly digest) → ``journal.md.j2`` context; pure.

The full text is kept, with wikilinks rewritten and secrets masked.
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import JournalNote, Node
from vaultsync.renderers.base import NoteContext, Renderer, RenderInputs, base_context, prepare_text

TEMPLATE = "journal.md.j2"


class JournalContext(NoteContext):
    """A daily note or digest: ``period`` is ``daily``, ``weekly`` or ``monthly``."""

    period: str
    label: str
    text: str


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The note's full text."""
    note = inputs.records.get(node.id, JournalNote)
    return (note.text,) if note is not None else ()


def context(node: Node, inputs: RenderInputs) -> JournalContext:
    """Front matter: period, source (the store file it comes from)."""
    note = inputs.records.get(node.id, JournalNote)
    period, _, label = node.id.partition(":")[2].partition(":")
    if note is None:
        return JournalContext(**base_context(node, inputs), period=period, label=label, text="")
    base = base_context(node, inputs, [("period", note.period), ("source", note.source_path)])
    return JournalContext(
        **base, period=note.period, label=note.label, text=prepare_text(note.text, node.id, inputs)
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

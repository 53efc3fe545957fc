"""Fact node → ``fact.md.j2`` context: the fact's text and its metadata; pure."""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Fact, Node
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    prepare_text,
    relation_property,
)

TEMPLATE = "fact.md.j2"


class FactContext(NoteContext):
    """A fact: ``content`` with wikilinks rewritten and secrets masked."""

    content: str


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The fact's content (its wikilinks are rewritten)."""
    fact = inputs.records.get(node.id, Fact)
    return (fact.content,) if fact is not None else ()


def context(node: Node, inputs: RenderInputs) -> FactContext:
    """The fact's context; unset confidence (0) is left out, others are numbers (``0.7``).

    Front matter: category, confidence, provenance, project (a link to the project note),
    source project (the path as stored), created, last accessed.
    """
    fact = inputs.records.get(node.id, Fact)
    if fact is None:
        return FactContext(**base_context(node, inputs), content="")
    base = base_context(
        node,
        inputs,
        [
            ("category", fact.category),
            ("confidence", round(fact.confidence, 4) if fact.confidence else None),
            ("provenance", fact.provenance),
            ("project", relation_property(node.id, inputs, "in_project")),
            ("source_project", fact.source_project),
            ("created", fact.created_at),
            ("last_accessed", fact.last_accessed),
        ],
    )
    return FactContext(**base, content=prepare_text(fact.content, node.id, inputs))


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

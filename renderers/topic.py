"""Topic node → ``topic.md.j2`` context: the rolling summary and the related facts; pure.

A related fact is listed once, under "Related facts": its ``about`` link is left out of
``## Links`` (unless drawn by hand, which carries the person's note).
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Node, Topic
from vaultsync.renderers.base import (
    LinkItem,
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    prepare_text,
    sorted_notes,
)

TEMPLATE = "topic.md.j2"


class TopicContext(NoteContext):
    """A topic: its summary and links to its related facts (those in the graph)."""

    summary: str
    related_facts: list[LinkItem]


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The topic's summary."""
    topic = inputs.records.get(node.id, Topic)
    return (topic.summary,) if topic is not None else ()


def related_fact_ids(node: Node, inputs: RenderInputs) -> tuple[str, ...]:
    """Node ids of the topic's related facts (they also enter the note's key)."""
    topic = inputs.records.get(node.id, Topic)
    return tuple(f"fact:{fact_id}" for fact_id in topic.related_fact_ids) if topic else ()


def context(node: Node, inputs: RenderInputs) -> TopicContext:
    """Front matter: mentions, first seen, last seen."""
    topic = inputs.records.get(node.id, Topic)
    if topic is None:
        return TopicContext(**base_context(node, inputs), summary="", related_facts=[])
    base = base_context(
        node,
        inputs,
        [
            ("mentions", topic.mentions),
            ("first_seen", topic.first_seen),
            ("last_seen", topic.last_seen),
        ],
    )
    related = sorted_notes(related_fact_ids(node, inputs), inputs)
    listed = {fact["path"] for fact in related}
    base["links"] = [
        link
        for link in base["links"]
        if link["by_user"] or link["rel"] != "about" or link["path"] not in listed
    ]
    return TopicContext(
        **base,
        summary=prepare_text(topic.summary, node.id, inputs),
        related_facts=related,
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

"""Episode node → ``episode.md.j2`` context: when, summary, outcome and refs; pure.

The body says when as people read it (``2026-09-08 10:30``); the ``date`` and ``time``
properties keep the typed values Dataview reads.
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Episode, Node
from vaultsync.render.yamlfm import property_date
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    one_line,
    prepare_text,
    reading_time,
    relation_property,
)

TEMPLATE = "episode.md.j2"


class EpisodeContext(NoteContext):
    """A dated unit of work."""

    when: str
    summary: str
    outcome: str
    refs: list[str]


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The summary and the outcome."""
    episode = inputs.records.get(node.id, Episode)
    return (episode.summary, episode.outcome) if episode is not None else ()


def context(node: Node, inputs: RenderInputs) -> EpisodeContext:
    """Front matter: date (the day), time, project (a link), project path (as stored), source."""
    episode = inputs.records.get(node.id, Episode)
    if episode is None:
        return EpisodeContext(
            **base_context(node, inputs), when="", summary="", outcome="", refs=[]
        )
    base = base_context(
        node,
        inputs,
        [
            ("date", property_date(episode.date, inputs.zone)),
            ("time", episode.date),
            ("project", relation_property(node.id, inputs, "in_project")),
            ("project_path", episode.project),
            ("source", episode.source),
        ],
    )
    return EpisodeContext(
        **base,
        when=reading_time(episode.date, inputs.zone),
        summary=prepare_text(episode.summary, node.id, inputs),
        outcome=prepare_text(episode.outcome, node.id, inputs),
        refs=[one_line(ref) for ref in episode.refs if ref.strip()],
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

"""Context node (``kbcontext`` or ``context``) → ``context.md.j2``: the folder note; pure.

The folder note shows the description and mode and lists the context's documents that are in
the graph (those past the caps are not notes), found through their ``part_of`` links.  The
store's ``metadata`` map is listed under ``## Metadata``; the repository and commit a knowledge
base was built from (``kb.repo_url``, ``kb.commit``) are also the properties ``repo_url`` and
``commit``, where Obsidian shows a link and a search can find them.
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Context, Kind, Node
from vaultsync.core.redact import redact
from vaultsync.renderers.base import (
    LinkItem,
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    metadata_items,
    one_line,
    prepare_text,
    sorted_notes,
)

TEMPLATE = "context.md.j2"


class ContextContext(NoteContext):
    """A ``/context`` context and its documents."""

    description: str
    mode: str
    documents: list[LinkItem]
    metadata: list[tuple[str, str]]


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The context's description."""
    record = inputs.records.get(node.id, Context)
    return (record.description,) if record is not None else ()


def document_ids(node: Node, inputs: RenderInputs) -> tuple[str, ...]:
    """The documents of the context that are notes (they also enter the note's key)."""
    by_id = inputs.graph.by_id
    return tuple(
        sorted(
            link.source
            for link in inputs.graph.links_to(node.id)
            if link.rel == "part_of"
            and link.source in by_id
            and by_id[link.source].kind is Kind.DOC
        )
    )


def _by_path(items: list[LinkItem]) -> list[LinkItem]:
    return sorted(items, key=lambda item: item["path"])


def context(node: Node, inputs: RenderInputs) -> ContextContext:
    """Front matter: mode, files (the context's file count), repo_url, commit, updated."""
    record = inputs.records.get(node.id, Context)
    documents = _by_path(sorted_notes(document_ids(node, inputs), inputs))
    if record is None:
        return ContextContext(
            **base_context(node, inputs), description="", mode="", documents=documents, metadata=[]
        )
    metadata = dict(record.metadata)
    base = base_context(
        node,
        inputs,
        [
            ("mode", record.mode),
            ("files", len(record.documents)),
            ("repo_url", redact(one_line(metadata.get("kb.repo_url", "")))),
            ("commit", one_line(metadata.get("kb.commit", ""))),
            ("updated", record.updated_at),
        ],
    )
    return ContextContext(
        **base,
        description=prepare_text(record.description, node.id, inputs),
        mode=record.mode,
        documents=documents,
        metadata=metadata_items(record.metadata),
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

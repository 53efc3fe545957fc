"""Session node → ``session.md.j2`` context: title and links only, never a transcript; pure."""

from __future__ import annotations

from vaultsync.core.model import Node, Session
from vaultsync.renderers.base import NoteContext, Renderer, RenderInputs, base_context

TEMPLATE = "session.md.j2"


class SessionContext(NoteContext):
    """A saved conversation: its file name (``name``); the title is the note's heading."""

    name: str


def context(node: Node, inputs: RenderInputs) -> SessionContext:
    """Front matter: modified (the only time the store records for a session)."""
    session = inputs.records.get(node.id, Session)
    name = node.id.partition(":")[2]
    fields = [("modified", session.modified)] if session is not None else []
    return SessionContext(**base_context(node, inputs, fields), name=name)


RENDERER = Renderer(template=TEMPLATE, context=context)

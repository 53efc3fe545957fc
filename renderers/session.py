"""Session node → ``session.md.j2`` context: title and links only, never a transcript; pure.

A session's only time is the one in an autosave's name (``autosave-20261019-154210``), a wall
clock read in ``render.timezone`` and written as ``saved``; a session under any other name has
no time.  Its file's mtime is never used: git does not keep it (see ``extract.workspace``).
"""

from __future__ import annotations

from vaultsync.core.model import Node, Session
from vaultsync.renderers.base import NoteContext, Renderer, RenderInputs, base_context

TEMPLATE = "session.md.j2"


class SessionContext(NoteContext):
    """A saved conversation: its file name (``name``); the title is the note's heading."""

    name: str


def context(node: Node, inputs: RenderInputs) -> SessionContext:
    """Front matter: saved (the time in an autosave's name, in ``render.timezone``)."""
    session = inputs.records.get(node.id, Session)
    name = node.id.partition(":")[2]
    saved = session.saved if session is not None else None
    fields = [("saved", saved.replace(tzinfo=inputs.zone) if saved is not None else None)]
    return SessionContext(**base_context(node, inputs, fields), name=name)


RENDERER = Renderer(template=TEMPLATE, context=context)

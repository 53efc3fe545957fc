"""The vault and its graph for AI assistants, over the Model Context Protocol.

An MCP server on stdio (the official ``mcp`` SDK's ``MCPServer``) with tools to search the
vault, read a note, show a note's links, walk the graph around a note, list the vault's recent
commits and draw or remove a link.  Every tool calls the use case the matching command calls
(:mod:`vaultsync.app`), so it says what the command says; this module only shapes the answers.
What the server returns comes from the vault and the graph, masked before either was written:
it never reads a store's raw text.  The vault is only read; the only writes are ``links.json``
(under its lock) and the index and graph caches.  A ``VaultsyncError`` becomes an MCP tool
error carrying its one-line message; the server goes on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from vaultsync.app.workspace import Workspace
from vaultsync.core.errors import NoteReferenceError, VaultsyncError

if TYPE_CHECKING:
    from vaultsync.app.search import VaultIndex

T = TypeVar("T")

INSTRUCTIONS = (
    "The user's ChatCLI memory as an Obsidian vault: facts, topics, projects, episodes, "
    "journal notes, sessions, skills, board cards and documents, linked in one graph. "
    "Search first, then read notes and walk their neighbors; draw a link only when asked."
)


def _tool_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """A ``VaultsyncError`` in a tool becomes the MCP tool error with its one-line message."""
    from mcp.server.mcpserver.exceptions import ToolError

    return _errors_as(ToolError, fn)


def _resource_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """A ``VaultsyncError`` reading a resource becomes the MCP resource error, one line."""
    from mcp.server.mcpserver.exceptions import ResourceError

    return _errors_as(ResourceError, fn)


def _errors_as(kind: type[Exception], fn: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except VaultsyncError as error:
            hint = f" (hint: {error.hint})" if error.hint else ""
            raise kind(f"{error.message}{hint}") from None

    return run


class VaultTools:
    """The tools' bodies over one workspace, as plain data in and out (testable without MCP)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def _index(self) -> VaultIndex:
        from vaultsync.app.search import VaultIndex

        return VaultIndex(self.ws.vault)

    def search(
        self, query: str, kinds: list[str], folder: str, limit: int, mode: str | None = None
    ) -> dict[str, Any]:
        """The hits for ``query`` (filters and modes as ``vaultsync search``), then linked notes."""
        from vaultsync.app.shapes import result_json

        with self._index() as index:
            result = index.search(query, kinds=tuple(kinds), folder=folder, limit=limit, mode=mode)
        return result_json(query, result)

    def _note_id(self, index: VaultIndex, reference: str) -> str:
        """A note id, vault path, title, alias or ``[[wikilink]]`` → the id the index keeps."""
        from vaultsync.app.links import current_graph, graph_note

        try:
            return index.document(reference)[0].id
        except NoteReferenceError:
            return graph_note(current_graph(self.ws), reference).id

    def read(self, reference: str) -> dict[str, Any]:
        """One note: its registry entry and its text after the front matter."""
        from vaultsync.app.shapes import document_json

        with self._index() as index:
            doc, body = index.document(self._note_id(index, reference))
        return {**document_json(doc), "text": body}

    def links(self, reference: str) -> dict[str, Any]:
        """A note's outgoing links and backlinks, each with the text around it."""
        from vaultsync.app.shapes import document_json

        with self._index() as index:
            seen = index.links(self._note_id(index, reference))

        def side(links: Any) -> list[dict[str, Any]]:
            return [
                {**document_json(n.other), "link_type": n.link_type, "context": n.context}
                for n in links
            ]

        return {
            "note": document_json(seen.document),
            "outlinks": side(seen.outlinks),
            "backlinks": side(seen.backlinks),
        }

    def neighbors(self, reference: str) -> dict[str, Any]:
        """The local graph of a note: its neighbors with relations, then the second hop."""
        from vaultsync.app.links import current_graph
        from vaultsync.app.shapes import local_graph_json
        from vaultsync.graph.query import find_note, local_graph

        graph = current_graph(self.ws)
        return local_graph_json(local_graph(graph, find_note(graph, reference).id))

    def health(self, question: str) -> dict[str, Any]:
        """One of the knowledge model's health queries, as ``vaultsync query … --json``."""
        from vaultsync.app.knowledge import health

        return {"query": question, "answer": health(self.ws, question)}

    def recent(self, limit: int) -> dict[str, Any]:
        """The vault's newest commits (syncs and the user's), each with the notes it changed."""
        from vaultsync.app.history import recent_changes

        return {
            "changes": [
                {
                    "commit": c.commit,
                    "when": c.when,
                    "summary": c.summary,
                    "by": "sync" if c.sync else "user",
                    "paths": list(c.paths),
                    "more_paths": c.more,
                }
                for c in recent_changes(self.ws, limit)
            ]
        }

    def link(self, source: str, target: str, rel: str, note: str) -> dict[str, Any]:
        """Draw a link, with the refusals of ``vaultsync link`` (ambiguity lists candidates)."""
        from vaultsync.app.links import draw_link

        drawn = draw_link(self.ws, source, target, rel, note).result
        return {
            "status": drawn.status,
            "source": drawn.link.source,
            "target": drawn.link.target,
            "rel": drawn.link.rel,
            "note": drawn.link.note,
        }

    def unlink(self, source: str, target: str, rel: str | None) -> dict[str, Any]:
        """Remove links drawn by hand between two notes (links from the data stay)."""
        from vaultsync.app.links import remove_links

        removed = remove_links(self.ws, source, target, rel).result.removed
        return {
            "removed": [{"source": r.source, "target": r.target, "rel": r.rel} for r in removed]
        }


def build_server(ws: Workspace) -> Any:
    """The MCP server with the vault's tools registered."""
    from mcp.server.mcpserver import MCPServer

    tools = VaultTools(ws)
    server = MCPServer(name="vaultsync", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(name="search")
    @_tool_errors
    def search(
        query: str,
        kinds: list[str] | None = None,
        folder: str = "",
        limit: int = 10,
        mode: Literal["text", "semantic", "hybrid"] | None = None,
    ) -> dict[str, Any]:
        """Search the vault: all words required, "a phrase", word*, -word, OR (text mode).

        kinds: only these note kinds (fact, topic, project, episode, note, session, skill,
        card, doc, user…); folder: only under this vault folder; mode: text, semantic (by
        meaning) or hybrid (both; the default when the semantic extra is installed).
        """
        return tools.search(query, kinds or [], folder, limit, mode)

    @server.tool(name="read_note")
    @_tool_errors
    def read_note(note: str) -> dict[str, Any]:
        """Read a note by id (topic:auth), vault path, title, alias or [[wikilink]]."""
        return tools.read(note)

    @server.tool(name="note_links")
    @_tool_errors
    def note_links(note: str) -> dict[str, Any]:
        """A note's outgoing links and backlinks, each with the text around the link."""
        return tools.links(note)

    @server.tool(name="neighbors")
    @_tool_errors
    def neighbors(note: str) -> dict[str, Any]:
        """The local graph of a note, two hops: neighbors with relation and direction."""
        return tools.neighbors(note)

    @server.tool(name="health")
    @_tool_errors
    def health(query: str = "orphans") -> dict[str, Any]:
        """A health query of the knowledge model, as `vaultsync query` answers it.

        query: orphans, leaves, hubs, unsourced, claims-without-sources, sources, maturity,
        questions or unresolved.
        """
        return tools.health(query)

    @server.tool(name="recent_changes")
    @_tool_errors
    def recent_changes(limit: int = 10) -> dict[str, Any]:
        """The vault's newest commits (vaultsync's syncs and your own), with the notes changed."""
        return tools.recent(limit)

    @server.tool(name="link")
    @_tool_errors
    def link(source: str, target: str, rel: str = "related", note: str = "") -> dict[str, Any]:
        """Draw an explicit link source → target; an ambiguous reference lists candidates."""
        return tools.link(source, target, rel, note)

    @server.tool(name="unlink")
    @_tool_errors
    def unlink(source: str, target: str, rel: str | None = None) -> dict[str, Any]:
        """Remove the links you drew between source and target (one relation, or all)."""
        return tools.unlink(source, target, rel)

    @server.resource(
        "vault://note/{+note}",
        name="note",
        description="A note's text: vault://note/ then a vault path or a note id.",
        mime_type="text/markdown",
    )
    @_resource_errors
    def note_resource(note: str) -> str:
        """The text of a note, after its front matter."""
        return str(tools.read(note)["text"])

    return server

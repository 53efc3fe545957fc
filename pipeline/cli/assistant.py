"""``vaultsync mcp``: the vault and its graph for AI assistants, over the Model Context Protocol.

An MCP server on stdio (the official ``mcp`` SDK's ``MCPServer``) with tools to search the
vault, read a note, show a note's links, walk the graph around a note, list the vault's recent
commits and draw or remove a link.  Every answer is built by the code the matching command
uses, so it says what the command says: ``search`` and ``links`` read the search index
(``vaultsync.search``), brought up to date first; ``neighbors`` reads the graph
(``vaultsync.graph.query``); ``recent_changes`` the vault's git log (``vault.vcs``); ``link``
and ``unlink`` go through the link store with the same strict references as ``vaultsync link``.
What the server returns comes from the vault and the graph, masked before either was written:
it never reads a store's raw text.  The vault is only read; the only writes are ``links.json``
(under its lock) and the index and graph caches.  A ``VaultsyncError`` becomes an MCP tool
error carrying its one-line message; the server goes on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import click
from vaultsync.cli.options import Workspace, state_option, vault_option, workspace
from vaultsync.core.errors import ConfigError, NoteReferenceError, UsageError, VaultsyncError

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

    def _reader(self, question: Callable[[Any], T]) -> T:
        from vaultsync.search.index import update_index
        from vaultsync.search.reader import IndexReader, read_repairing

        update_index(self.ws.vault, wait=0.0)
        reader = IndexReader(self.ws.vault)
        try:
            return read_repairing(self.ws.vault, reader, question)
        finally:
            reader.close()

    def _graph(self) -> Any:
        from vaultsync.graph import load

        return load.current_graph(self.ws.state, self.ws.caps)

    def search(
        self, query: str, kinds: list[str], folder: str, limit: int, mode: str | None = None
    ) -> dict[str, Any]:
        """The hits for ``query`` (filters and modes as ``vaultsync search``), then linked notes."""
        from vaultsync.cli.search import result_json
        from vaultsync.search.embed import choose_mode
        from vaultsync.search.model import SearchQuery
        from vaultsync.search.vectors import start_background

        if not query.strip():
            raise UsageError("the query is empty")
        chosen, embedder = choose_mode(mode)
        wanted = SearchQuery(
            text=query,
            kinds=tuple(kinds),
            folder=folder,
            limit=max(1, min(limit, 100)),
            mode=chosen,
        )
        result = self._reader(lambda r: r.search(wanted, embedder))
        if result.notice:
            start_background(self.ws.vault)
        return result_json(query, result)

    def _note_id(self, reference: str) -> str:
        """A note id, vault path, title, alias or ``[[wikilink]]`` → the id the index keeps."""
        from vaultsync.graph.query import find_note

        try:
            doc, _ = self._reader(lambda r: r.document(reference))
            return str(doc.id)
        except NoteReferenceError:
            return find_note(self._graph(), reference, strict=True).id

    def read(self, reference: str) -> dict[str, Any]:
        """One note: its registry entry and its text after the front matter."""
        from vaultsync.cli.search import document_json

        found = self._note_id(reference)
        doc, body = self._reader(lambda r: r.document(found))
        return {**document_json(doc), "text": body}

    def links(self, reference: str) -> dict[str, Any]:
        """A note's outgoing links and backlinks, each with the text around it."""
        from vaultsync.cli.search import document_json

        found = self._note_id(reference)
        seen = self._reader(lambda r: r.links(found))

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
        from vaultsync.cli.views import local_graph_json
        from vaultsync.graph.query import find_note, local_graph

        current = self._graph()
        return local_graph_json(local_graph(current, find_note(current, reference).id))

    def health(self, question: str) -> dict[str, Any]:
        """One of the knowledge model's health queries, as ``vaultsync query … --json``."""
        from vaultsync.knowledge import queries as q
        from vaultsync.knowledge import views as v
        from vaultsync.knowledge.scan import load_model

        def ideas(found: Any) -> list[Any]:
            return [v.idea_json(i) for i in found]

        answers: dict[str, Callable[[Any], Any]] = {
            "orphans": lambda m: ideas(q.orphans(m)),
            "leaves": lambda m: ideas(q.leaves(m)),
            "hubs": lambda m: ideas(q.hubs(m, q.DEFAULT_HUB_DEGREE)),
            "unsourced": lambda m: ideas(q.unsourced(m)),
            "claims-without-sources": lambda m: v.claims_json(q.claims_without_sources(m)),
            "sources": lambda m: v.sources_json(q.sources_by_reference_count(m)),
            "maturity": lambda m: v.maturity_json(q.by_maturity(m)),
            "questions": lambda m: v.questions_json(q.unanswered_questions(m)),
            "unresolved": lambda m: v.unresolved_json(q.unresolved_links(m)),
        }
        if question not in answers:
            raise UsageError(f"unknown health query {question!r}; one of: {', '.join(answers)}")
        model = load_model(self.ws.vault).model
        return {"query": question, "answer": answers[question](model)}

    def recent(self, limit: int) -> dict[str, Any]:
        """The vault's newest commits (syncs and the user's), each with the notes it changed."""
        from vaultsync.vault.vcs import VaultRepo

        repo = VaultRepo.open(self.ws.vault, create=False)
        changes = repo.recent_changes(max(1, min(limit, 100))) if repo is not None else ()
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
                for c in changes
            ]
        }

    def link(self, source: str, target: str, rel: str, note: str) -> dict[str, Any]:
        """Draw a link, with the refusals of ``vaultsync link`` (ambiguity lists candidates)."""
        from vaultsync.drawn.store import LinkStore
        from vaultsync.graph.query import find_note

        current = self._graph()
        start = find_note(current, source, strict=True)
        end = find_note(current, target, strict=True)
        result = LinkStore(self.ws.state).add(start.id, end.id, rel, note, now=datetime.now(UTC))
        drawn = result.link
        return {
            "status": result.status,
            "source": drawn.source,
            "target": drawn.target,
            "rel": drawn.rel,
            "note": drawn.note,
        }

    def unlink(self, source: str, target: str, rel: str | None) -> dict[str, Any]:
        """Remove links drawn by hand between two notes (links from the data stay)."""
        from vaultsync.drawn.store import LinkStore
        from vaultsync.graph.query import find_note

        current = self._graph()
        start = find_note(current, source, strict=True)
        end = find_note(current, target, strict=True)
        result = LinkStore(self.ws.state).remove(start.id, end.id, rel, now=datetime.now(UTC))
        return {
            "removed": [
                {"source": r.source, "target": r.target, "rel": r.rel} for r in result.removed
            ]
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


@click.command(name="mcp")
@state_option
@vault_option
def mcp_command(state: str | None, vault: str | None) -> None:
    """Serve the vault to AI assistants over MCP (stdio): search, read, neighbors, link.

    Configure your MCP client to run `vaultsync mcp` (with --vault/--state as needed).
    Needs the mcp extra: pip install 'vaultsync[mcp]'.
    """
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise ConfigError(
            "vaultsync mcp needs the MCP SDK", hint="pip install 'vaultsync[mcp]'"
        ) from None
    ws = workspace(state, vault)
    if not Path(ws.vault).is_dir():
        raise UsageError(f"{ws.vault}: no vault yet", hint="run `vaultsync sync` first")
    build_server(ws).run("stdio")

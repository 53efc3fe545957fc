"""Search and the registry: one way to ask the vault's search index, for every adapter.

:class:`VaultIndex` is the index of one vault, brought up to date when opened (a stat walk;
only changed notes are read) and rebuilt once when it turns out corrupt or foreign.  The CLI
opens one per command, the MCP server per tool call, the HTTP API once for its lifetime.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from vaultsync.core.errors import UsageError

if TYPE_CHECKING:
    from vaultsync.search.model import Document, IndexReport, NoteLinks, SearchResult
    from vaultsync.search.reader import IndexReader

T = TypeVar("T")

MAX_LIMIT = 100
"""Hits one search returns at most."""


class VaultIndex:
    """The search index of ``vault``, read through one connection."""

    def __init__(self, vault: Path, *, refresh: bool = True, rebuild: bool = False) -> None:
        from vaultsync.search.index import update_index
        from vaultsync.search.reader import IndexReader

        self.vault = vault
        self.report: IndexReport | None = None
        if refresh or rebuild:
            self.report = update_index(vault, rebuild=rebuild, wait=0.0)
        self._reader = IndexReader(vault)

    def __enter__(self) -> VaultIndex:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._reader.close()

    @property
    def stale_because(self) -> str:
        """Why the index could not be brought up to date (empty: it is current)."""
        return self.report.skipped if self.report is not None and self.report.skipped else ""

    def ask(self, question: Callable[[IndexReader], T]) -> T:
        """``question(reader)``, the index rebuilt once if it is corrupt or foreign."""
        from vaultsync.search.reader import read_repairing

        return read_repairing(self.vault, self._reader, question)

    def search(
        self,
        text: str,
        *,
        kinds: tuple[str, ...] = (),
        folder: str = "",
        limit: int = 10,
        mode: str | None = None,
    ) -> SearchResult:
        """The hits for ``text`` best first, then notes linked with them.

        ``mode``: text, semantic, hybrid (``None``: hybrid with the semantic extra, else
        text).  A result whose vectors are still being built starts their background job.

        Raises:
            UsageError: an empty query.
            SemanticUnavailable: a semantic mode without the extra.
        """
        from vaultsync.search.embed import choose_mode
        from vaultsync.search.model import SearchQuery
        from vaultsync.search.vectors import start_background

        if not text.strip():
            raise UsageError("the query is empty")
        chosen, embedder = choose_mode(mode)
        query = SearchQuery(
            text=text, kinds=kinds, folder=folder, limit=max(1, min(limit, MAX_LIMIT)), mode=chosen
        )
        result: SearchResult = self.ask(lambda r: r.search(query, embedder))
        if result.notice:
            start_background(self.vault)
        return result

    def document(self, reference: str) -> tuple[Document, str]:
        """One note by id or vault path, with its text after the front matter."""
        found: tuple[Document, str] = self.ask(lambda r: r.document(reference))
        return found

    def links(self, reference: str) -> NoteLinks:
        """A note's outgoing links and backlinks, each with the text around it."""
        seen: NoteLinks = self.ask(lambda r: r.links(reference))
        return seen

    def documents(
        self, *, kinds: tuple[str, ...] = (), folder: str = "", limit: int = -1, offset: int = 0
    ) -> tuple[tuple[Document, ...], int]:
        """The registry, by path: a page of it and the total."""
        found: tuple[tuple[Document, ...], int] = self.ask(
            lambda r: r.documents(kinds=kinds, folder=folder, limit=limit, offset=offset)
        )
        return found

    def kinds(self) -> frozenset[str]:
        """The note kinds the index holds."""
        found: frozenset[str] = self.ask(lambda r: r.kinds())
        return found


def open_index(vault: Path, *, rebuild: bool = False) -> VaultIndex:
    """The vault's index, brought up to date (``rebuild``: from scratch)."""
    return VaultIndex(vault, rebuild=rebuild)

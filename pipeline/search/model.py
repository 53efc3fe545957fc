"""The values the search stages hand each other and the CLI and API print; no behaviour.

Every collection is a tuple and every value is frozen, so a result read under one index
snapshot can be shared between threads (the API) as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MODES",
    "Direction",
    "Document",
    "Hit",
    "IndexReport",
    "LinkedNote",
    "Mode",
    "NoteLink",
    "NoteLinks",
    "SearchQuery",
    "SearchResult",
]

Direction = Literal["linked_from", "links_to"]
Mode = Literal["text", "semantic", "hybrid"]
"""How to rank: BM25 over words, nearness of meaning (the ``semantic`` extra), or both fused."""
MODES: tuple[Mode, ...] = ("text", "semantic", "hybrid")
"""``linked_from``: a result links to the note; ``links_to``: the note links to a result."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    """One note of the registry (a ``vault_documents`` row, for a vault on disk)."""

    id: str
    """The graph node id of an engine note, else ``vault:<path>`` (see ``registry``)."""
    path: str
    title: str
    kind: str
    """Front matter ``kind`` (``fact``, ``project``, ``doc``…), else ``user``."""
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    content_hash: str
    """SHA-256 (hex) of the file's bytes."""
    size: int
    engine: bool
    """Written by vaultsync (listed in the manifest), not by a person."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchQuery:
    """What to look for: words (see ``query.match_expression``) and filters."""

    text: str
    kinds: tuple[str, ...] = ()
    """Only notes of these kinds (empty: every kind)."""
    folder: str = ""
    """Only notes under this vault folder (empty: the whole vault)."""
    limit: int = 10
    mode: Mode = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """A note that matches, its score (higher is better) and a snippet of its body.

    The score is BM25 in ``text`` mode, the cosine of the best chunk in ``semantic`` mode and
    the fused reciprocal-rank score in ``hybrid`` mode.
    """

    document: Document
    score: float
    snippet: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkedNote:
    """A note next to the top results that is not among them, and why it is shown."""

    document: Document
    direction: Direction
    via: str
    """The path of the result it is linked with (its best-ranked one)."""
    link_type: str

    @property
    def why(self) -> str:
        """``linked from <result path>`` or ``links to <result path>`` (ChatCLI's wording)."""
        return f"{self.direction.replace('_', ' ')} {self.via}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchResult:
    """The hits in rank order, then up to six linked notes."""

    hits: tuple[Hit, ...]
    linked: tuple[LinkedNote, ...]
    mode: Mode = "text"
    notice: str = ""
    """Said beside the hits: the semantic index is incomplete (being built), say."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteLink:
    """One link between two notes, seen from one end (``other`` is the far end)."""

    other: Document
    link_type: str
    context: str
    """About 50 characters of the linking note around the link."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteLinks:
    """A note's outgoing links and its backlinks, one per (far note, link type)."""

    document: Document
    outlinks: tuple[NoteLink, ...]
    backlinks: tuple[NoteLink, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexReport:
    """What one index update did."""

    notes: int
    """Notes in the index afterwards."""
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    rebuilt: bool = False
    """The index was built from scratch (asked for, new, corrupt or of an older schema)."""
    skipped: str = ""
    """Why nothing was done (a sync holds the vault), else ``""``."""
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        """Whether the update changed anything searchable."""
        return bool(self.added or self.updated or self.removed or self.rebuilt)

"""The JSON shapes of the vault API, as pydantic models with bounds; no behaviour.

Every input field is bounded (lengths, counts, integer ranges) so that FastAPI's validation
turns bad input into a 422 JSON answer before any handler runs; strings must encode as UTF-8
(a lone surrogate in JSON is refused, not passed on to SQLite).  Imported only by the API.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from vaultsync.search.model import Document

__all__ = [
    "DocumentDetailOut",
    "DocumentOut",
    "ErrorOut",
    "FieldErrorOut",
    "LinkCreatedOut",
    "LinkIn",
    "LinkOut",
    "LinksOut",
    "SearchIn",
    "SearchItemOut",
]

MAX_QUERY = 1000
MAX_RESULTS = 100
MAX_REF = 2048


def _utf8(text: str) -> str:
    text.encode("utf-8")  # UnicodeEncodeError is a ValueError: pydantic reports it as a 422
    return text


_UTF8 = AfterValidator(_utf8)
QueryText = Annotated[str, Field(min_length=1, max_length=MAX_QUERY), _UTF8]
Ref = Annotated[str, Field(min_length=1, max_length=MAX_REF), _UTF8]
Kind = Annotated[str, Field(min_length=1, max_length=64), _UTF8]
Folder = Annotated[str, Field(max_length=MAX_REF), _UTF8]
Relation = Annotated[str, Field(max_length=64), _UTF8]
NoteText = Annotated[str, Field(max_length=1000), _UTF8]


class DocumentOut(BaseModel):
    """A registry entry (``VaultDocument``; ``doc_type`` is the note's ``kind``)."""

    id: str
    path: str
    title: str
    doc_type: str
    aliases: list[str]
    tags: list[str]
    content_hash: str = Field(description="SHA-256 (hex) of the file's bytes")
    size: int
    engine: bool = Field(description="written by vaultsync (else a note a person wrote)")

    @classmethod
    def of(cls, doc: Document) -> DocumentOut:
        """The JSON shape of a registry entry."""
        return cls(
            id=doc.id,
            path=doc.path,
            title=doc.title,
            doc_type=doc.kind,
            aliases=list(doc.aliases),
            tags=list(doc.tags),
            content_hash=doc.content_hash,
            size=doc.size,
            engine=doc.engine,
        )


class DocumentDetailOut(DocumentOut):
    """A registry entry with the note's text after its front matter, as last indexed."""

    content: str


class SearchIn(BaseModel):
    """``POST /v1/vault/search``; unknown fields (such as ``scope``) are ignored."""

    model_config = ConfigDict(extra="ignore")

    query: QueryText
    doc_types: list[Kind] | None = Field(default=None, max_length=32)
    folder: Folder = ""
    max_results: int = Field(default=10, ge=1, le=MAX_RESULTS)
    mode: Literal["text", "semantic", "hybrid"] | None = Field(
        default=None,
        description="text (BM25), semantic (by meaning) or hybrid (both fused, the default"
        " with the semantic extra installed; else text)",
    )


class SearchItemOut(BaseModel):
    """A hit (``source: vault``) or a note linked with the best hits (``source: linked``)."""

    document: DocumentOut
    score: float = Field(
        description="higher is better: BM25 (text), cosine (semantic) or the fused"
        " reciprocal-rank score (hybrid); 0 for linked notes"
    )
    source: Literal["vault", "linked"]
    snippet: str | None = Field(default=None, description="body text around the hits")
    why: str | None = Field(default=None, description="linked from … / links to …")
    link_type: str | None = None


class LinkOut(BaseModel):
    """One link, from ``from_doc_id`` to ``to_doc_id``; ``document`` is the far end."""

    id: str = Field(description="stable: derived from both ends and the type")
    from_doc_id: str
    to_doc_id: str
    link_type: str = Field(description="wikilink, markdown, embed, or a relation (in_project)")
    context: str = Field(description="about 50 characters around the link")
    document: DocumentOut


class LinksOut(BaseModel):
    """``GET /v1/vault/documents/{id}/links``."""

    outlinks: list[LinkOut]
    backlinks: list[LinkOut]


class LinkIn(BaseModel):
    """``POST /v1/vault/links``: the rules of ``vaultsync link`` (a reference naming one note)."""

    model_config = ConfigDict(populate_by_name=True)

    from_: Ref = Field(alias="from", description="note id, vault path, title, alias…")
    to: Ref
    rel: Relation = "related"
    note: NoteText = ""


class LinkCreatedOut(BaseModel):
    """What ``POST /v1/vault/links`` stored (201 when new, 200 otherwise)."""

    status: Literal["added", "updated", "unchanged"]
    from_doc_id: str
    to_doc_id: str
    rel: str
    note: str


class FieldErrorOut(BaseModel):
    """One invalid input: where (``["query", "limit"]``, ``["body", "to"]``), what, which rule."""

    loc: list[str | int]
    msg: str
    type: str


class ErrorOut(BaseModel):
    """Every error answer, each 4xx and 5xx alike: one line, a machine code, and what helps."""

    detail: str = Field(description="what is wrong, in one line")
    code: str = Field(description="machine-readable: not_found, invalid_request, unauthorized, …")
    hint: str | None = Field(default=None, description="what to do about it")
    candidates: list[str] = Field(
        default_factory=list,
        description="the notes an ambiguous reference could mean, or the valid doc types",
    )
    errors: list[FieldErrorOut] = Field(
        default_factory=list, description="each invalid input field (422), else empty"
    )

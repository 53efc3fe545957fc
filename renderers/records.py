"""Records → ``RecordIndex``: the store record behind each graph node id; pure.

The graph decides ids and titles; every per-kind field a note shows comes from the record,
found here by node id.  The ids are the graph's (``pipeline/graphnodes.py``): ``fact:<id>``,
``topic:<name>``, ``project:<name>``, ``profile:user``, ``episode:<id>``,
``note:<period>:<label>``, ``session:<name>``, ``skill:<name>``, ``card:<id>``,
``kb:<id>``/``ctx:<id>``, ``doc:<context id>:<source>``.  When a store repeats an identity the
first record wins, as in the graph build.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TypeVar

from vaultsync.core.model import (
    Card,
    Context,
    Document,
    Episode,
    Fact,
    JournalNote,
    Profile,
    Project,
    Records,
    Session,
    Skill,
    Topic,
)

__all__ = ["DocumentRecord", "Record", "RecordIndex", "record_digest"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentRecord:
    """A document with the context it belongs to (its note shows the context's name)."""

    context: Context
    document: Document


Record = (
    Fact
    | Topic
    | Project
    | Profile
    | Episode
    | JournalNote
    | Session
    | Skill
    | Card
    | Context
    | DocumentRecord
)
R = TypeVar("R", bound=Record)


def _entries(records: Records) -> Iterator[tuple[str, Record]]:
    for fact in records.facts:
        yield f"fact:{fact.id}", fact
    for topic in records.topics:
        yield f"topic:{topic.name}", topic
    for project in records.projects:
        yield f"project:{project.name}", project
    if records.profile is not None:
        yield "profile:user", records.profile
    for episode in records.episodes:
        yield f"episode:{episode.id}", episode
    for note in records.journal:
        yield f"note:{note.period}:{note.label}", note
    for session in records.sessions:
        yield f"session:{session.name}", session
    for skill in records.skills:
        yield f"skill:{skill.name}", skill
    for card in records.cards:
        yield f"card:{card.id}", card
    for context in records.contexts:
        yield f"{'kb' if context.is_knowledge else 'ctx'}:{context.id}", context
        for document in context.documents:
            yield (
                f"doc:{context.id}:{document.source}",
                DocumentRecord(context=context, document=document),
            )


@dataclass(frozen=True, slots=True)
class RecordIndex:
    """Node id → record, built once per render with :meth:`build`."""

    by_id: Mapping[str, Record]

    @classmethod
    def build(cls, records: Records) -> RecordIndex:
        """Index every record of ``records`` under its node id."""
        table: dict[str, Record] = {}
        for node_id, record in _entries(records):
            table.setdefault(node_id, record)
        return cls(MappingProxyType(table))

    def get(self, node_id: str, kind: type[R]) -> R | None:
        """The record of ``node_id`` if it exists and is a ``kind``."""
        record = self.by_id.get(node_id)
        return record if isinstance(record, kind) else None


def record_digest(record: Record | None, contexts: dict[int, bytes] | None = None) -> bytes:
    """A digest of everything of ``record`` a note can show, cheap even for big documents.

    A context's digest leaves its documents' contents out (its folder note lists them from
    the graph) and a document's digest hashes its content instead of ``repr``-ing it.
    ``contexts``: a memo of the context part by ``id(context)``, for one set of records alive
    while it is used (the documents of a context share it).
    """
    if record is None:
        return b"-"
    if isinstance(record, DocumentRecord):
        digest = hashlib.sha256()
        memo = {} if contexts is None else contexts
        shown = memo.get(id(record.context))
        if shown is None:
            shown = memo[id(record.context)] = repr(replace(record.context, documents=())).encode()
        digest.update(shown)
        digest.update(b"\0" + repr((record.document.source, record.document.type)).encode())
        digest.update(b"\0" + record.document.content.encode("utf-8", "surrogatepass"))
        return digest.digest()
    if isinstance(record, Context):
        summary = replace(record, documents=())
        return f"{summary!r}|{len(record.documents)}".encode("utf-8", "surrogatepass")
    return repr(record).encode("utf-8", "surrogatepass")

"""The incremental graph build: what an earlier build derived, reused by its inputs; pure.

The incremental graph.  A :class:`Memo` hands the build the results of its costly,
per-item steps as the previous build computed them, looked up by their *whole* input, so a
patched build is the full build with some pure calls answered from memory and equals it byte
for byte (``tests/graph/test_graph_patch.py`` checks that for random edit sequences):

- a context's documents (titles, summaries, paths, parsed links), its path index and the
  Markdown links between its documents, by a digest of the context's id, its room under the
  caps and every kept document's source and text;
- the links of a context's documents (wikilinks, Markdown links) and their unresolved
  wikilinks, by the context's key while the graph's tables answer the keys its wikilinks are
  looked up by (ids, case-folded ids, names: ``graph.resolve.lookup_keys``) as they did;
- the wikilink targets written in a note's prose, by the text;
- the mentions found in a note's prose, by the text, while the names that can be mentioned
  (every mention target's title and aliases, in rank order) are the ones the previous build
  had; any change of those names finds every note's mentions again; and the automaton that
  finds them, by those names.

What depends on more than one item — caps, supersession, name resolution, the rule that a
mention is dropped when another link joins the pair, the per-note caps, structural links — is
recomputed by the build from the records every time, so no coupling between items can go
stale.  A note's wikilinks are resolved again each time (dictionary lookups): a new title
captures every link written with it, resolved or not; a document's are when a key they are
looked up by answers otherwise.

:class:`PatchState` is what the next build needs: the memo tables and, to say what changed
(``GraphDelta``), each node's (kind, title, aliases), a digest of its store record and of its
outgoing links, and the name → note table.  It holds only what the masked records gave (the
build runs downstream of ``core.scrub``).  ``graph.cache`` persists it; anything it cannot
prove valid (another code version, caps or secret rules) is not loaded, and a build without
a state is simply a full build.
"""

from __future__ import annotations

import hashlib
import marshal
import operator
from collections.abc import Callable, Container, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from operator import is_
from typing import Any, TypeVar, cast

from vaultsync.core.model import Context, Document, Graph, Link, Node, Records
from vaultsync.graph.documents import DocumentNote, ParsedText, document_node_id
from vaultsync.graph.nodes import context_note
from vaultsync.links.names import normalize_name
from vaultsync.links.wikilinks import parse_wikilinks

T = TypeVar("T")

STATE_VERSION = 7
"""Bumped whenever :class:`PatchState`'s shape or meaning changes."""


@dataclass(frozen=True, slots=True)
class DocumentLinks:
    """The links a context's documents gave, and the graph-wide answers they were made under."""

    answers: tuple[tuple[str | None, ...], ...]
    """What the graph's tables answered for the context's lookups (``Resolver.answers``)."""
    links: tuple[Link, ...]
    unresolved: tuple[tuple[str, str], ...]
    tag: str
    """A digest of ``answers``: the entry's file is named by its key and this."""


@dataclass(slots=True)
class ContextEntry:
    """What the documents of one context gave: notes, path index, Markdown link targets."""

    documents: tuple[DocumentNote, ...]
    index: Any = None
    """The resolver's per-context index (``graph.resolve``), once built."""
    markdown: tuple[tuple[str, ...], ...] | None = None
    """Per document, the notes its Markdown links open, in order, once resolved."""
    lookups: tuple[tuple[str, ...], ...] | None = None
    """The keys the documents' wikilinks are looked up by across the graph, once listed."""
    links: DocumentLinks | None = None
    """The links the documents gave, once made (under the answers it holds)."""
    nodes: tuple[Node, ...] | None = None
    """The documents' notes, once made; kept in memory only, like :attr:`part_of`."""
    part_of: tuple[str, tuple[Link, ...]] | None = None
    """The context's note, and each document's ``part_of`` link to it, once made (the note's
    id is not the key's: a context's mode names it).

    Both are cheaper to make again than to read back, so only a resident process keeps them
    (its next build is handed this very entry): they are not pickled.
    """
    records: tuple[bytes, tuple[tuple[str, bytes], ...]] | None = None
    """Each document's ``(node id, record digest)`` (:func:`record_digests`), once made, under
    a digest of the documents' types (the one field of their records the key does not hold)."""
    sources: tuple[tuple[str, str], tuple[tuple[str, bytes], ...]] | None = None
    """Each document's ``(node id, digest of its outgoing links)``, once made, under the tag
    of :attr:`links` and the context's note (what its ``part_of`` link points to), while no
    drawn link starts at one of the documents (:func:`describe`)."""

    def __getstate__(self) -> tuple[Any, ...]:
        return (
            self.documents, self.index, self.markdown, self.lookups, self.links, self.records,
            self.sources,
        )  # fmt: skip

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        (
            self.documents, self.index, self.markdown, self.lookups, self.links, self.records,
            self.sources,
        ) = state  # fmt: skip
        self.nodes = self.part_of = None


@dataclass(slots=True, kw_only=True)
class PatchState:
    """What a build leaves for the next one to patch from (masked values only)."""

    version: int = STATE_VERSION
    contexts: dict[bytes, ContextEntry] = field(default_factory=dict)
    context_files: tuple[str, ...] = ()
    """The names of the files ``graph.cache`` keeps :attr:`contexts`' entries in
    (:func:`entry_file`)."""
    wikilinks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    mention_names: bytes = b""
    finder: Any = None
    """The mention finder of those names (``graph.mentions.MentionFinder``), built or not."""
    mentions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    normalized: dict[str, str] = field(default_factory=dict)
    project_names: bytes = b""
    session_projects: dict[str, tuple[str, ...]] = field(default_factory=dict)
    nodes: dict[str, tuple[str, str, tuple[str, ...]]] = field(default_factory=dict)
    records: dict[str, bytes] = field(default_factory=dict)
    sources: dict[str, bytes] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    build_id: str = ""
    """Which build this is (:func:`build_identity`): what the notes' key memo was made from."""
    described: dict[str, tuple[tuple[Link, ...], bytes]] = field(default_factory=dict)
    """Each source's links in this build, with their digest: the next build of a resident
    process digests only the sources whose links are not these very objects (a context's
    kept links and part_of links are).  Never written (``graph.cache``)."""
    digested: dict[int, tuple[Any, bytes]] = field(default_factory=dict)
    """Each record this build digested, by ``id()``, with the record and its digest: a
    resident process's next build is handed the very objects of unchanged stores (the
    extract memo) and digests only the others.  Never written (``graph.cache``)."""


class Memo:
    """Answers a build's per-item steps from a previous :class:`PatchState`, and records them.

    ``Memo(None)`` remembers what this build computes and answers nothing from before; the
    tables of :attr:`fresh` keep exactly what this build used, so the state never outgrows
    the stores.
    """

    def __init__(self, previous: PatchState | None) -> None:
        """Patch from ``previous`` (``None``: compute everything)."""
        self._old = previous or PatchState()
        self.fresh = PatchState()
        self._context_keys: dict[str, bytes] = {}

    def documents(
        self, context_id: str, key: bytes, compute: Callable[[], tuple[DocumentNote, ...]]
    ) -> tuple[DocumentNote, ...]:
        """A context's documents under ``key`` (see :func:`context_key`), computed when unknown."""
        entry = self.fresh.contexts.get(key) or self._old.contexts.get(key)
        if entry is None:
            entry = ContextEntry(documents=compute())
        self.fresh.contexts[key] = entry
        self._context_keys[context_id] = key
        return entry.documents

    def context_index(self, context_id: str, compute: Callable[[], Any]) -> Any:
        """The resolver's index of a context's documents, computed when unknown."""
        return self._kept(context_id, "index", compute)

    def markdown_targets(
        self, context_id: str, compute: Callable[[], tuple[tuple[str, ...], ...]]
    ) -> tuple[tuple[str, ...], ...]:
        """Per document of a context, the notes its Markdown links open."""
        return self._kept(context_id, "markdown", compute)

    def _kept(self, context_id: str, name: str, compute: Callable[[], T]) -> T:
        """``compute()``, kept on the context's entry as ``name``: a value of its key alone."""
        entry = self._entry(context_id)
        if entry is None:
            return compute()
        found = getattr(entry, name)
        if found is None:
            found = compute()
            setattr(entry, name, found)
        return cast("T", found)

    def document_links(
        self,
        context_id: str,
        lookups: Callable[[tuple[DocumentNote, ...]], tuple[tuple[str, ...], ...]],
        answers: Callable[[tuple[tuple[str, ...], ...]], tuple[tuple[str | None, ...], ...]],
        compute: Callable[[], tuple[tuple[Link, ...], tuple[tuple[str, str], ...]]],
    ) -> tuple[tuple[Link, ...], tuple[tuple[str, str], ...]]:
        """The links of a context's documents and their unresolved wikilinks.

        Those of the last build while the graph answers its lookups as then (within the
        context, a wikilink resolves by the context's documents alone: the entry's key).
        The entry is replaced, not changed: the last build's state keeps what it made.
        """
        key = self._context_keys.get(context_id)
        if key is None:
            return compute()
        entry = self.fresh.contexts[key]
        if entry.lookups is None:
            entry.lookups = lookups(entry.documents)
        found = answers(entry.lookups)
        if entry.links is None or entry.links.answers != found:
            links, unresolved = compute()
            tag = hashlib.blake2b(repr(found).encode("utf-8", "surrogatepass"), digest_size=8)
            made = DocumentLinks(found, links, unresolved, tag.hexdigest())
            entry = self.fresh.contexts[key] = replace(entry, links=made)
        assert entry.links is not None  # noqa: S101 - made just above when missing
        return entry.links.links, entry.links.unresolved

    def document_nodes(
        self, context_id: str, compute: Callable[[], tuple[Node, ...]]
    ) -> tuple[Node, ...]:
        """The notes of a context's documents."""
        return self._kept(context_id, "nodes", compute)

    def part_of_links(
        self, context_id: str, note: str, compute: Callable[[], tuple[Link, ...]]
    ) -> tuple[Link, ...]:
        """The ``part_of`` links of a context's documents to its note ``note``."""
        entry = self._entry(context_id)
        if entry is None:
            return compute()
        if entry.part_of is None or entry.part_of[0] != note:
            entry.part_of = (note, compute())
        return entry.part_of[1]

    def _entry(self, context_id: str) -> ContextEntry | None:
        key = self._context_keys.get(context_id)
        return None if key is None else self.fresh.contexts[key]

    def entries(self) -> dict[str, ContextEntry]:
        """Each context's entry in this build, by the context's id."""
        return {cid: self.fresh.contexts[key] for cid, key in self._context_keys.items()}

    def wikilink_targets(self, text: str) -> tuple[str, ...]:
        """The non-empty wikilink targets written in ``text``, in order."""
        if "[[" not in text:
            return ()
        found = self._old.wikilinks.get(text)
        if found is None:
            found = tuple(wiki.target for wiki in parse_wikilinks(text) if wiki.target)
        self.fresh.wikilinks[text] = found
        return found

    def normalize(self, name: str) -> str:
        """``links.names.normalize_name(name)``."""
        found = self._old.normalized.get(name)
        if found is None:
            found = normalize_name(name)
        self.fresh.normalized[name] = found
        return found

    def use_project_names(self, names: Iterable[str]) -> None:
        """The project names sessions are matched against, in their order."""
        self.fresh.project_names = _digest(names)

    def session_projects(
        self, words: str, compute: Callable[[], tuple[str, ...]]
    ) -> tuple[str, ...]:
        """The projects a session's normalized name and title name, in project order."""
        found = None
        if self.fresh.project_names == self._old.project_names:
            found = self._old.session_projects.get(words)
        if found is None:
            found = compute()
        self.fresh.session_projects[words] = found
        return found

    def mention_finder(
        self, names: Sequence[tuple[str, str]], make: Callable[[Sequence[tuple[str, str]]], T]
    ) -> T:
        """The finder ``make(names)`` gives for the ``(name, node id)`` pairs, in their order.

        The last build's while the names are the same (its automaton built once, not per sync).
        """
        self.fresh.mention_names = _digest(f"{name}\0{node_id}" for name, node_id in names)
        same = self.fresh.mention_names == self._old.mention_names
        found = self._old.finder if same and self._old.finder is not None else make(names)
        self.fresh.finder = found
        return found

    def mentions(self, text: str, compute: Callable[[], tuple[str, ...]]) -> tuple[str, ...]:
        """The notes ``text`` mentions, in text order (before any per-note rule)."""
        if self.fresh.mention_names == self._old.mention_names:
            found = self._old.mentions.get(text)
            if found is None:
                found = compute()
        else:
            found = compute()
        self.fresh.mentions[text] = found
        return found


def entry_file(key: bytes, entry: ContextEntry) -> str:
    """The name of a context entry's file: its key, and the answers its links were made under.

    So a file's bytes never change once written: an entry whose links are made again is
    another file.
    """
    return key.hex() if entry.links is None else f"{key.hex()}-{entry.links.tag}"


def entry_key(name: str) -> bytes | None:
    """The key of the context entry an :func:`entry_file` name holds (``None``: not one)."""
    try:
        return bytes.fromhex(name.partition("-")[0])
    except ValueError:
        return None


def _digest(parts: Iterable[str]) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        digest.update(f"{part}\0".encode("utf-8", "surrogatepass"))
    return digest.digest()


def parsed_texts(state: PatchState) -> dict[str, ParsedText]:
    """What parsing each document text gave in the build that left ``state``, by text digest."""
    return {
        doc.digest: doc.parsed
        for entry in state.contexts.values()
        for doc in entry.documents
        if doc.digest
    }


def context_key(context_id: str, kept: int, documents: Iterable[tuple[str, str]]) -> bytes:
    """Digest of everything ``context_documents`` reads: the id, the documents it keeps."""
    digest = hashlib.blake2b(f"{context_id}\0{kept}\0".encode("utf-8", "surrogatepass"))
    for source, content in documents:
        encoded = content.encode("utf-8", "surrogatepass")
        digest.update(f"{source}\0{len(encoded)}\0".encode("utf-8", "surrogatepass"))
        digest.update(encoded)
    return digest.digest()


# --- what changed ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Changes:
    """The four sets of ``build.GraphDelta``."""

    nodes: frozenset[str]
    records: frozenset[str]
    sources: frozenset[str]
    names: frozenset[str]


def describe(
    state: PatchState,
    records: Records,
    graph: Graph,
    names: Mapping[str, str],
    documents: Iterable[DocumentNote],
    *,
    previous: PatchState | None = None,
    remember: bool = False,
    entries: Mapping[str, ContextEntry] | None = None,
) -> None:
    """Fill ``state``'s node, record, source and name tables from a finished build.

    ``previous``: the state the build was patched from (the digests it remembered are reused
    for the very same objects); ``remember``: keep the objects digested and their digests for
    the next build of this process (a resident one; 30 MB at 100,000 notes, so not otherwise).
    ``entries``: each context's entry in the build, by the context's id, which keeps its
    documents' record digests (:func:`record_digests`).
    """
    state.nodes = {node.id: _node_value(node) for node in graph.nodes}
    digested = state.digested if remember else None
    state.records = dict(record_digests(records, documents, digested, previous, entries))
    known = previous.described if previous is not None else {}
    kept = document_sources(records, graph.outgoing, entries or {})
    sources: dict[str, bytes] = {}
    for source, links in graph.outgoing.items():
        found = known.get(source)
        if found is None or len(found[0]) != len(links) or not all(map(is_, found[0], links)):
            digest = kept.get(source)
            found = (links, _links_digest(links) if digest is None else digest)
        if remember:
            state.described[source] = found
        sources[source] = found[1]
    state.sources = sources
    state.names = dict(names)


def document_sources(
    records: Records, outgoing: Mapping[str, tuple[Link, ...]], entries: Mapping[str, ContextEntry]
) -> dict[str, bytes]:
    """The outgoing links' digest of each document whose context's entry keeps it.

    A document's outgoing links are the links its entry made (under :attr:`DocumentLinks.tag`),
    its ``part_of`` link to its context's note, and the links drawn from it: the first two are
    the entry's own, so while no drawn link starts at one of its documents the entry keeps
    their digests.  At 100,000 notes, digesting the 71,400 documents' links again took about
    0.1 s of every one-shot sync.
    """
    # as drawn: following a superseded fact moves a link's end to another fact, never a document
    drawn = {link.source for link in records.links}
    found: dict[str, bytes] = {}
    for context in records.contexts:
        entry = entries.get(context.id)
        if entry is None or entry.links is None:
            continue
        if drawn and any(doc.node_id in drawn for doc in entry.documents):
            continue
        made_under = (entry.links.tag, context_note(context))
        if entry.sources is None or entry.sources[0] != made_under:
            pairs = (
                (doc.node_id, _links_digest(outgoing.get(doc.node_id, ())))
                for doc in entry.documents
            )
            entry.sources = (made_under, tuple(pairs))
        found.update(entry.sources[1])
    return found


def changes(old: PatchState, new: PatchState) -> Changes:
    """What differs between two described builds."""
    return Changes(
        nodes=_differ(old.nodes, new.nodes),
        records=_differ(old.records, new.records),
        sources=_differ(old.sources, new.sources),
        names=_differ(old.names, new.names),
    )


def build_identity(state: PatchState, previous: PatchState | None, found: Changes | None) -> str:
    """An id for the build ``state`` describes, so a later stage can tell which one it saw.

    A full build is named by its contents; a patched one by the build it was patched from and
    what changed since (the same id when nothing did).  Two ids are equal only when the builds
    are (a different history gives a different id, which only costs a later stage its memo).
    """
    if previous is None or found is None or not previous.build_id:
        tables = (state.nodes, state.records, state.sources, state.names)
        text = repr([sorted(table.items()) for table in tables])
        return hashlib.sha256(f"full\0{text}".encode()).hexdigest()
    sets = (found.nodes, found.records, found.sources, found.names)
    if not any(sets):
        return previous.build_id
    text = repr([sorted(changed) for changed in sets])
    return hashlib.sha256(f"{previous.build_id}\0{text}".encode()).hexdigest()


def _differ(old: Mapping[str, Hashable], new: Mapping[str, Hashable]) -> frozenset[str]:
    # The keys of the items in one table only: added, removed, or with another value.  The
    # set operation runs in C, a quarter of a loop's time over 100,000 nodes per table.
    return frozenset(key for key, _value in old.items() ^ new.items())


# An enum member's ``_value_`` is its plain attribute: ``.value`` is a property run in Python,
# 220,000 times per build at 100,000 notes.
def _node_value(node: Node) -> tuple[str, str, tuple[str, ...]]:
    return (node.kind._value_, node.title, node.aliases)


_LINK_FIELDS = operator.attrgetter("target", "rel", "origin._value_", "weight", "note")


def _links_digest(links: Iterable[Link]) -> bytes:
    # marshal, version 2: by value only (no shared-object references), and a third faster
    # than repr at 100,000 sources; equal bytes decode to equal fields
    data = marshal.dumps(tuple(map(_LINK_FIELDS, links)), 2)
    return hashlib.blake2b(data, digest_size=16).digest()


def record_digests(
    records: Records,
    documents: Iterable[DocumentNote],
    digested: dict[int, tuple[Any, bytes]] | None = None,
    previous: PatchState | None = None,
    entries: Mapping[str, ContextEntry] | None = None,
) -> Iterator[tuple[str, bytes]]:
    """``(node id, digest of the store record it comes from)`` for every kind of record.

    The digest is of the ``repr`` of the record's fields (nested records by their own
    ``repr``): two equal records give the same digest; two that differ give different ones
    but for ``0.0``/``-0.0``-like cases, where a node is reported changed, costing time only.
    A Markdown document's text stands in by the digest its note already holds
    (``DocumentNote.digest``): three quarters of a 100,000-note store's bytes are document
    texts, and their ``repr`` was most of this function's time.  A context's documents are
    digested once per entry (``entries``, by context id) and types: the entry's key holds
    their sources and texts, so their digests are its own (at 100,000 notes, digesting the
    71,400 documents again took about 0.2 s of every sync).
    """
    documents = tuple(documents)
    text_of = _text_digests(records, documents)
    getters: dict[type, Callable[[Any], Any]] = {}
    known = previous.digested if previous is not None else {}

    def digest_of(node_id: str, record: Any) -> bytes:
        found = known.get(id(record))
        if found is not None and found[0] is record:  # the very object: the same value
            digest = found[1]
        else:
            digest = _record_digest(node_id, record, text_of, getters)
        if digested is not None:
            digested[id(record)] = (record, digest)
        return digest

    for node_id, record in _records_by_node(records):
        yield node_id, digest_of(node_id, record)
    kept = {doc.node_id for doc in documents}
    by_context = entries or {}
    for context in records.contexts:
        yield from _document_digests(context, by_context.get(context.id), kept, digest_of)


_TYPES = operator.attrgetter("type")


def _document_digests(
    context: Context,
    entry: ContextEntry | None,
    kept: Container[str],
    digest_of: Callable[[str, Any], bytes],
) -> Iterable[tuple[str, bytes]]:
    """The record digests of a context's kept documents, from its entry when it holds them.

    Only a context that keeps every document has them kept on its entry: one beyond the caps
    that shares a kept one's source is the record of that note too, and the key does not
    hold it.
    """
    if entry is None or len(entry.documents) != len(context.documents):
        return [
            (node_id, digest_of(node_id, doc))
            for doc in context.documents
            if (node_id := document_node_id(context.id, doc.source)) in kept
        ]
    types = _digest(map(_TYPES, context.documents))
    if entry.records is None or entry.records[0] != types:
        pairs = zip(entry.documents, context.documents, strict=True)
        entry.records = (types, tuple((n.node_id, digest_of(n.node_id, doc)) for n, doc in pairs))
    return entry.records[1]


def _record_digest(
    node_id: str, record: Any, text_of: Mapping[str, str], getters: dict[type, Callable[[Any], Any]]
) -> bytes:
    kind = type(record)
    if kind is Document and (digest := text_of.get(node_id)):
        text = repr(("Document#", record.source, record.type, digest))
    else:
        getter = getters.get(kind)
        if getter is None:
            getter = getters[kind] = operator.attrgetter(*(f.name for f in fields(record)))
        text = repr((kind.__name__, getter(record)))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _text_digests(records: Records, documents: Iterable[DocumentNote]) -> dict[str, str]:
    """Each Markdown document's text digest by its note, in contexts that name each source once.

    Where two documents of a context share a source (one note), either may be the record its
    note is digested from, so their texts are digested in full.
    """
    shared = {
        context.id
        for context in records.contexts
        if len({doc.source for doc in context.documents}) != len(context.documents)
    }
    return {doc.node_id: doc.digest for doc in documents if doc.context_id not in shared}


def _records_by_node(records: Records) -> Iterator[tuple[str, Any]]:
    """Every record but the documents (:func:`_document_digests`), by its note."""
    yield from ((f"project:{p.name}", p) for p in records.projects)
    yield from ((f"fact:{f.id}", f) for f in records.facts)
    yield from ((f"topic:{t.name}", t) for t in records.topics)
    if records.profile is not None:
        yield "profile:user", records.profile
    yield from ((f"episode:{e.id}", e) for e in records.episodes)
    yield from ((f"note:{n.period}:{n.label}", n) for n in records.journal)
    yield from ((f"session:{s.name}", s) for s in records.sessions)
    yield from ((f"skill:{s.name}", s) for s in records.skills)
    yield from ((f"card:{c.id}", c) for c in records.cards)
    for context in records.contexts:
        yield context_note(context), replace(context, documents=())

"""Records → Graph: every item a note, typed directed links, wikilinks and mentions resolved; pure.

Notes and links.  The build runs in a fixed order — nodes, structural links,
document links, wikilinks, mentions, explicit links — and sorts its output, so the graph does
not depend on the order of the stores' records.  Links are unique by (from, to, rel); when two
origins give the same triple the one a person is more likely to care about is kept
(``ORIGIN_RANK``).

:func:`patch_graph` is the same build with its costly per-item steps answered from the last
build's state (``graph.patch``): equal to :func:`build_graph` byte for byte, plus a
``GraphDelta`` of what changed since that build.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from vaultsync.core.model import KIND_PRIORITY, ZERO_TIME, Graph, Kind, Link, Node, Origin, Records
from vaultsync.core.settings import Caps
from vaultsync.drawn.rules import follow_supersession, supersession_map
from vaultsync.graph.documents import DocumentNote, ParsedText, context_documents
from vaultsync.graph.mentions import MentionFinder
from vaultsync.graph.nodes import GraphNodes, build_nodes, context_note, document_node
from vaultsync.graph.patch import (
    Memo,
    PatchState,
    build_identity,
    changes,
    context_key,
    describe,
)
from vaultsync.graph.resolve import Resolver, build_resolver, lookup_keys
from vaultsync.graph.structure import part_of_links, structural_links
from vaultsync.links.mdlinks import DocPathIndex, resolve_document_link

ORIGIN_RANK = {
    Origin.USER: 0,
    Origin.STRUCTURAL: 1,
    Origin.WIKILINK: 2,
    Origin.MARKDOWN: 3,
    Origin.MENTION: 4,
}
LINKS_TO = "links_to"
WIKILINK_WEIGHT = 1.5
MENTION_WEIGHT = 1.0
USER_WEIGHT = 2.0

MENTION_TARGETS = frozenset({Kind.PROJECT, Kind.TOPIC, Kind.SKILL, Kind.KBCONTEXT, Kind.CONTEXT})
MENTION_SOURCES = frozenset(
    {Kind.FACT, Kind.TOPIC, Kind.EPISODE, Kind.PROJECT, Kind.CARD, Kind.NOTE}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphDelta:
    """What differs from the build this one was patched from (ids of graph nodes)."""

    nodes: frozenset[str]
    """Nodes added, removed, or whose Node (kind, title, aliases) changed."""
    records: frozenset[str]
    """Nodes whose store record changed in any field (RecordIndex.by_id)."""
    sources: frozenset[str]
    """Nodes whose outgoing links changed in any field (note included)."""
    names: frozenset[str]
    """Normalized names (``links.names.normalize_name`` of titles and aliases) that were added
    or removed, or now name another note: a wikilink written with one of these may now resolve
    differently."""
    base: str = ""
    """The ``build_id`` of the build this one was patched from: a stage that keeps its own memo
    uses the delta only when its memo was made from that very build."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Build:
    """A built graph with what later stages need beside it: the resolver and the documents."""

    graph: Graph
    resolver: Resolver
    documents: tuple[DocumentNote, ...]
    unresolved: tuple[tuple[str, str], ...]
    """``(source node id, target as written)`` for every wikilink that names no note yet."""
    delta: GraphDelta | None = None
    """What changed since the build this one was patched from; ``None`` for a full build."""
    build_id: str = ""
    """Which build this is (``graph.patch.build_identity``); empty from :func:`build_graph`."""


def build_graph(
    records: Records,
    caps: Caps,
    *,
    fingerprint: str = "",
    known: Mapping[str, ParsedText] | None = None,
) -> Build:
    """Build the knowledge graph from extracted records.

    ``known``: documents' texts parsed by an earlier build (``text_digest`` → ``ParsedText``),
    not parsed again; the graph is the same with or without them.
    """
    return _build(records, caps, fingerprint, known or {}, Memo(None))


def patch_graph(
    records: Records,
    caps: Caps,
    previous: PatchState | None,
    *,
    fingerprint: str = "",
    known: Mapping[str, ParsedText] | None = None,
    remember: bool = False,
) -> tuple[Build, PatchState]:
    """The graph of ``records`` patched from an earlier build's state, and the state to keep.

    Equal to :func:`build_graph` of the same records byte for byte (``graph.patch``); with a
    ``previous`` state the build's ``delta`` says what changed since, else it is ``None``.
    ``previous`` must come from a build with the same caps and code (``graph.cache`` checks).
    ``remember``: the state also keeps, in memory only, what lets this process's next build
    reuse the very objects of this one (a resident process: ``watch``).
    """
    memo = Memo(previous)
    built = _build(records, caps, fingerprint, known or {}, memo)
    state = memo.fresh
    graph, names, documents = built.graph, built.resolver.by_name, built.documents
    describe(
        state,
        records,
        graph,
        names,
        documents,
        previous=previous,
        remember=remember,
        entries=memo.entries(),
    )
    if previous is None:
        state.build_id = build_identity(state, None, None)
        return replace(built, build_id=state.build_id), state
    found = changes(previous, state)
    state.build_id = build_identity(state, previous, found)
    delta = GraphDelta(
        nodes=found.nodes,
        records=found.records,
        sources=found.sources,
        names=found.names,
        base=previous.build_id,
    )
    return replace(built, delta=delta, build_id=state.build_id), state


def _build(
    records: Records,
    caps: Caps,
    fingerprint: str,
    known: Mapping[str, ParsedText],
    memo: Memo,
) -> Build:
    documents = _capped_documents(records, caps, known, memo)
    by_context = _by_context(documents)
    document_nodes = [
        node
        for context_id, docs in by_context.items()
        for node in memo.document_nodes(context_id, functools.partial(_document_nodes, docs))
    ]
    nodes = build_nodes(records, caps, documents, document_nodes=document_nodes)
    resolver = build_resolver(
        nodes.nodes, documents, context_index=memo.context_index, normalize=memo.normalize
    )
    links: dict[tuple[str, str, str], Link] = {}
    _add(links, structural_links(records, nodes, caps, memo))
    _add(links, _part_of_links(records, by_context, memo))
    unresolved: list[tuple[str, str]] = []
    _add(links, _document_links(by_context, caps, resolver, unresolved, memo))
    _add(links, _wikilinks(nodes, resolver, unresolved, memo))
    _add(links, _mentions(nodes, caps, links, memo))
    _add(links, _explicit_links(records, nodes))
    graph = Graph(
        nodes=nodes.nodes,
        links=tuple(sorted(links.values(), key=lambda link: link.key)),
        fingerprint=fingerprint,
    )
    return Build(
        graph=graph,
        resolver=resolver,
        documents=documents,
        unresolved=tuple(sorted(set(unresolved))),
    )


def _capped_documents(
    records: Records, caps: Caps, known: Mapping[str, ParsedText], memo: Memo
) -> tuple[DocumentNote, ...]:
    # Contexts created first keep their documents (Records sorts contexts by creation time).
    documents: list[DocumentNote] = []
    for context in sorted(records.contexts, key=lambda c: (c.created_at or ZERO_TIME, c.id)):
        room = min(caps.docs_per_context, caps.docs_total - len(documents))
        if room <= 0:
            break
        # Keyed by the documents kept, not by the room: a document added to an earlier
        # context shrinks every later one's room without changing what they keep.
        kept = min(room, len(context.documents))
        key = context_key(
            context.id, kept, ((doc.source, doc.content) for doc in context.documents[:kept])
        )
        documents.extend(
            memo.documents(
                context.id, key, functools.partial(context_documents, context, kept, known)
            )
        )
    return tuple(documents)


def _add(links: dict[tuple[str, str, str], Link], new: Iterable[Link]) -> None:
    for link in new:
        if link.source == link.target:
            continue
        key = link.key  # a property: made once per link (300,000 at 100,000 notes)
        kept = links.get(key)
        if kept is None or ORIGIN_RANK[link.origin] < ORIGIN_RANK[kept.origin]:
            links[key] = link


def _by_context(documents: Iterable[DocumentNote]) -> dict[str, tuple[DocumentNote, ...]]:
    """The documents of each context, in order (``_capped_documents`` keeps them together)."""
    grouped: dict[str, list[DocumentNote]] = {}
    for doc in documents:
        grouped.setdefault(doc.context_id, []).append(doc)
    return {context_id: tuple(docs) for context_id, docs in grouped.items()}


def _document_nodes(docs: tuple[DocumentNote, ...]) -> tuple[Node, ...]:
    return tuple(map(document_node, docs))


def _part_of_links(
    records: Records, by_context: Mapping[str, tuple[DocumentNote, ...]], memo: Memo
) -> Iterable[Link]:
    """Every document's link to its context's note (structural: the stores record it)."""
    notes = {context.id: context_note(context) for context in records.contexts}
    for context_id, docs in by_context.items():
        note = notes[context_id]
        compute = functools.partial(part_of_links, note, docs)
        yield from memo.part_of_links(context_id, note, compute)


def _document_links(
    by_context: Mapping[str, tuple[DocumentNote, ...]],
    caps: Caps,
    resolver: Resolver,
    unresolved: list[tuple[str, str]],
    memo: Memo,
) -> Iterable[Link]:
    for context_id, docs in by_context.items():
        compute = functools.partial(_context_links, context_id, docs, caps, resolver, memo)
        links, missing = memo.document_links(context_id, _lookups, resolver.answers, compute)
        unresolved.extend(missing)
        yield from links


def _lookups(documents: Iterable[DocumentNote]) -> tuple[tuple[str, ...], ...]:
    return lookup_keys(written for doc in documents for written in doc.parsed.link_targets)


def _context_links(
    context_id: str, docs: tuple[DocumentNote, ...], caps: Caps, resolver: Resolver, memo: Memo
) -> tuple[tuple[Link, ...], tuple[tuple[str, str], ...]]:
    """The links of one context's documents, and their wikilinks that name no note."""
    links: list[Link] = []
    unresolved: list[tuple[str, str]] = []
    markdown = memo.markdown_targets(context_id, functools.partial(_markdown_targets, docs))
    for doc, opened in zip(docs, markdown, strict=True):
        targets = dict.fromkeys(opened, Origin.MARKDOWN)
        for written in doc.parsed.link_targets:
            target = resolver.resolve_wikilink(written, doc.node_id)
            if target is None:
                unresolved.append((doc.node_id, written))
            elif target != doc.node_id:
                # A wikilink outranks a markdown link to the same document.
                targets[target] = targets.get(target, Origin.WIKILINK)
        links.extend(
            Link(
                source=doc.node_id,
                target=target,
                rel=LINKS_TO,
                origin=origin,
                weight=WIKILINK_WEIGHT,
            )
            for target, origin in list(targets.items())[: caps.links_per_doc]
        )
    return tuple(links), tuple(unresolved)


def _markdown_targets(docs: Sequence[DocumentNote]) -> tuple[tuple[str, ...], ...]:
    """Per document, the other documents of its context its Markdown links open, in order."""
    index = DocPathIndex.build(doc.path for doc in docs)
    node_of = {doc.path: doc.node_id for doc in docs}
    opened: list[tuple[str, ...]] = []
    for doc in docs:
        targets: dict[str, None] = {}
        for dest in doc.parsed.link_dests:
            path = resolve_document_link(dest, doc.path, index)
            if path is not None and node_of[path] != doc.node_id:
                targets.setdefault(node_of[path])
        opened.append(tuple(targets))
    return tuple(opened)


def _wikilinks(
    nodes: GraphNodes, resolver: Resolver, unresolved: list[tuple[str, str]], memo: Memo
) -> Iterable[Link]:
    for node_id, text in nodes.texts:
        for written in memo.wikilink_targets(text):
            target = resolver.resolve_wikilink(written, node_id)
            if target is None:
                unresolved.append((node_id, written))
                continue
            yield Link(
                source=node_id,
                target=target,
                rel=LINKS_TO,
                origin=Origin.WIKILINK,
                weight=WIKILINK_WEIGHT,
            )


def _mentions(
    nodes: GraphNodes, caps: Caps, existing: dict[tuple[str, str, str], Link], memo: Memo
) -> Iterable[Link]:
    names = sorted(
        (
            (name, node.id, KIND_PRIORITY[node.kind])
            for node in nodes.nodes
            if node.kind in MENTION_TARGETS
            for name in (node.title, *node.aliases)
        ),
        key=lambda item: (item[2], item[1], item[0]),
    )
    pairs = [(name, node_id) for name, node_id, _ in names]
    finder = memo.mention_finder(pairs, MentionFinder)
    connected = _connected(existing, nodes, {node_id for _, node_id in pairs})
    by_id = nodes.by_id
    for node_id, text in nodes.texts:
        if by_id[node_id].kind not in MENTION_SOURCES:
            continue
        count = 0
        seen: set[str] = set()
        for target in memo.mentions(text, functools.partial(_found, finder, text)):
            if target == node_id or target in seen or (node_id, target) in connected:
                continue
            seen.add(target)
            yield Link(
                source=node_id,
                target=target,
                rel="mentions",
                origin=Origin.MENTION,
                weight=MENTION_WEIGHT,
            )
            count += 1
            if count >= caps.mentions_per_note:
                break


def _connected(
    existing: Iterable[tuple[str, str, str]], nodes: GraphNodes, targets: set[str]
) -> set[tuple[str, str]]:
    """Both ways of every link between a note that may mention and a note that may be mentioned.

    The only pairs a mention is checked against: building both ways of every link took
    0.25 s at 100,000 notes, most of them documents, which mention nothing.
    """
    sources = {node.id for node in nodes.nodes if node.kind in MENTION_SOURCES}
    connected: set[tuple[str, str]] = set()
    for a, b, _ in existing:
        if (a in sources and b in targets) or (b in sources and a in targets):
            connected.add((a, b))
            connected.add((b, a))
    return connected


def _found(finder: MentionFinder, text: str) -> tuple[str, ...]:
    return tuple(mention.target for mention in finder.find(text))


def _explicit_links(records: Records, nodes: GraphNodes) -> Iterable[Link]:
    for drawn in follow_supersession(records.links, supersession_map(records.facts)):
        if drawn.source in nodes.by_id and drawn.target in nodes.by_id:
            yield Link(
                source=drawn.source,
                target=drawn.target,
                rel=drawn.rel,
                origin=Origin.USER,
                weight=USER_WEIGHT,
                note=drawn.note,
            )

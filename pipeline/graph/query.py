"""Graph + a note reference → the note it names, its local graph, a document's links; pure.

A reference is a node id, a fact id or id prefix, a chunk id (``docs/x.md#0002``), a title or
alias, a ``[[wikilink]]``, else free text.  Queries take the best match; ``strict`` lookups (for
drawing links by hand) refuse a reference that could mean several notes, listing the
candidates, so a link is never drawn to the wrong note.  A ``[[wikilink]]`` reference means
the note that link names when written at the vault root, kind priority included, so strict
lookups refuse it only when notes of one kind share the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from vaultsync.core.errors import NoteReferenceError
from vaultsync.core.model import KIND_PRIORITY, Graph, Kind, Link, Node
from vaultsync.core.redact import redact
from vaultsync.graph.resolve import wikilink_name_key
from vaultsync.links.names import normalize_name
from vaultsync.links.wikilinks import parse_wikilinks

_CHUNK_SUFFIX = re.compile(r"#\d{1,6}$")
_HEX_PREFIX = re.compile(r"[0-9a-f]{4,24}")
SECOND_HOP_LIMIT = 24


@dataclass(frozen=True, slots=True, kw_only=True)
class Relation:
    """One way a neighbour is connected: ``→`` the note links it, ``←`` it links the note."""

    rel: str
    direction: str
    origin: str
    weight: float
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Neighbour:
    """A note next to the subject, with every relation between them."""

    node: Node
    relations: tuple[Relation, ...]

    @property
    def weight(self) -> float:
        """The summed weight of every relation, for ranking."""
        return sum(r.weight for r in self.relations)


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalGraph:
    """A note, its direct neighbours, and the notes two hops away (tags are glue, not listed)."""

    subject: Node
    neighbours: tuple[Neighbour, ...]
    second_hop: tuple[tuple[Node, tuple[str, ...]], ...]
    """``(note, ids of the neighbours it is reached through)``."""
    second_hop_total: int


def find_note(graph: Graph, reference: str, *, strict: bool = False) -> Node:
    """The note a reference names; raises ``NoteReferenceError`` when none (or, strict, several).

    The reference is masked as the stores are (:func:`vaultsync.core.redact.redact`), so a
    title typed with its secret in clear finds its masked note, and no answer echoes it.
    """
    reference = redact(reference)
    ref = reference.strip()
    if ref.startswith(("[[", "![[")) and ref.endswith("]]"):
        return _wikilink_note(graph, reference, strict=strict)
    if not ref:
        raise NoteReferenceError("empty note reference")
    for candidates in _candidates(graph, ref):
        unique = sorted(set(candidates), key=lambda n: (KIND_PRIORITY[n.kind], n.id))
        if len(unique) == 1 or (unique and not strict):
            return unique[0]
        if unique:
            listing = "; ".join(f"{n.id} ({n.kind.value}: {n.title})" for n in unique[:10])
            more = f" and {len(unique) - 10} more" if len(unique) > 10 else ""
            raise NoteReferenceError(
                f"{reference!r} could mean {len(unique)} notes: {listing}{more}",
                hint="name one of them by its id",
                candidates=tuple(n.id for n in unique),
            )
    raise NoteReferenceError(f"no note matches {reference!r}")


def _wikilink_note(graph: Graph, reference: str, *, strict: bool) -> Node:
    """The note ``[[target]]`` names when written at the vault root (ChatCLI's rule).

    As the graph resolves it (:class:`vaultsync.graph.resolve.Resolver`, from a note that is
    no document): the exact node id, the id without regard to case, then a title or alias,
    the more specific kind winning a shared name; a percent-encoded target is tried decoded
    after the literal.  Strict lookups refuse only a name that notes of the *same* kind share.
    Tags are no notes to link, as in the vault (a ``[[tag]]`` stays unresolved there).
    """
    links = parse_wikilinks(reference.strip())
    target = links[0].target if len(links) == 1 else ""
    if not target:
        raise NoteReferenceError(f"{reference!r} is no wikilink to a note")
    for written in dict.fromkeys((target, unquote(target))):
        tied = _wikilink_candidates(graph, written)
        if len(tied) == 1 or (tied and not strict):
            return tied[0]
        if tied:
            listing = "; ".join(f"{n.id} ({n.kind.value}: {n.title})" for n in tied[:10])
            raise NoteReferenceError(
                f"{reference!r} could mean {len(tied)} notes: {listing}",
                hint="name one of them by its id",
                candidates=tuple(n.id for n in tied),
            )
    raise NoteReferenceError(f"no note matches {reference!r}")


def _wikilink_candidates(graph: Graph, target: str) -> list[Node]:
    """The notes that tie for ``[[target]]``: one by id, else the best kind's name matches."""
    exact = graph.by_id.get(target)
    if exact is None:
        folded = target.casefold()
        exact = next((n for n in graph.nodes if n.id.casefold() == folded), None)
    if exact is not None:
        return [exact] if exact.kind is not Kind.TAG else []
    wanted = wikilink_name_key(target)
    if not wanted:
        return []
    named = sorted(_name_matches(graph, wanted), key=lambda n: (KIND_PRIORITY[n.kind], n.id))
    if not named:
        return []
    best = KIND_PRIORITY[named[0].kind]
    return [n for n in named if KIND_PRIORITY[n.kind] == best]


def _candidates(graph: Graph, ref: str) -> Iterable[list[Node]]:
    """Lists of candidates, most exact first; the first non-empty list decides."""
    node = graph.by_id.get(ref)
    yield [node] if node else []
    folded = ref.casefold()
    yield [n for n in graph.nodes if n.id.casefold() == folded]
    wanted = normalize_name(ref)
    yield _name_matches(graph, wanted)
    if _HEX_PREFIX.fullmatch(ref.lower()):
        yield [n for n in graph.nodes if n.id.startswith(f"fact:{ref.lower()}")]
    if "/" in ref or "\\" in ref or "." in ref:
        yield _path_matches(graph, ref)
    yield _keyword_matches(graph, wanted)


def _name_matches(graph: Graph, wanted: str) -> list[Node]:
    """Notes (not tags) whose title or an alias normalizes to ``wanted``."""
    return [
        n
        for n in graph.nodes
        if n.kind is not Kind.TAG and wanted in {normalize_name(t) for t in (n.title, *n.aliases)}
    ]


def _path_matches(graph: Graph, ref: str) -> list[Node]:
    """Documents whose source path ends with ``ref`` (a chunk suffix ``#0002`` ignored)."""
    chunk = "/" + _CHUNK_SUFFIX.sub("", ref).replace("\\", "/").lstrip("/")
    return [n for n in graph.nodes if n.kind is Kind.DOC and ("/" + _doc_source(n)).endswith(chunk)]


def _keyword_matches(graph: Graph, wanted: str) -> list[Node]:
    words = wanted.split()
    if not words:
        return []
    scored = []
    for node in graph.nodes:
        if node.kind is Kind.TAG:
            continue
        haystack = normalize_name(" ".join((node.title, *node.aliases)))
        hits = sum(1 for word in words if word in haystack)
        if hits == len(words):
            scored.append(node)
    return scored


def _doc_source(node: Node) -> str:
    return node.id.split(":", 2)[2].replace("\\", "/")


def local_graph(graph: Graph, node_id: str) -> LocalGraph:
    """A note's neighbours with their relations, then the notes two hops away."""
    subject = graph.by_id[node_id]
    relations: dict[str, list[Relation]] = {}
    for link in graph.links_from(node_id):
        relations.setdefault(link.target, []).append(_relation(link, "→"))
    for link in graph.links_to(node_id):
        relations.setdefault(link.source, []).append(_relation(link, "←"))
    neighbours = sorted(
        (
            Neighbour(node=graph.by_id[other], relations=tuple(rels))
            for other, rels in relations.items()
            if graph.by_id[other].kind is not Kind.TAG
        ),
        key=lambda n: (-n.weight, KIND_PRIORITY[n.node.kind], n.node.title, n.node.id),
    )
    via: dict[str, set[str]] = {}
    for hop in relations:
        for link in (*graph.links_from(hop), *graph.links_to(hop)):
            other = link.target if link.source == hop else link.source
            if (
                other != node_id
                and other not in relations
                and graph.by_id[other].kind is not Kind.TAG
            ):
                via.setdefault(other, set()).add(hop)
    ranked = sorted(via.items(), key=lambda item: (-len(item[1]), item[0]))
    return LocalGraph(
        subject=subject,
        neighbours=tuple(neighbours),
        second_hop=tuple(
            (graph.by_id[other], tuple(sorted(hops))) for other, hops in ranked[:SECOND_HOP_LIMIT]
        ),
        second_hop_total=len(ranked),
    )


def _relation(link: Link, direction: str) -> Relation:
    return Relation(
        rel=link.rel,
        direction=direction,
        origin=link.origin.value,
        weight=link.weight,
        note=link.note,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentLinks:
    """A document's links: to and from documents of its context, and to notes outside it."""

    document: Node
    context: Node | None
    outgoing: tuple[Node, ...]
    incoming: tuple[Node, ...]
    outside: tuple[Node, ...]


def document_links(graph: Graph, node_id: str) -> DocumentLinks:
    """The ``@knowledge links`` view of one document."""
    document = graph.by_id[node_id]
    context = next(
        (graph.by_id[link.target] for link in graph.links_from(node_id) if link.rel == "part_of"),
        None,
    )

    def same_context(other: str) -> bool:
        return other.startswith("doc:") and other.split(":", 2)[1] == node_id.split(":", 2)[1]

    outgoing = [link.target for link in graph.links_from(node_id) if link.rel == "links_to"]
    incoming = [link.source for link in graph.links_to(node_id) if link.rel == "links_to"]
    return DocumentLinks(
        document=document,
        context=context,
        outgoing=tuple(graph.by_id[i] for i in sorted(set(outgoing)) if same_context(i)),
        incoming=tuple(graph.by_id[i] for i in sorted(set(incoming)) if same_context(i)),
        outside=tuple(graph.by_id[i] for i in sorted(set(outgoing)) if not same_context(i)),
    )

"""Parsed notes + the vault's file list → the knowledge model (ideas, edges, adjacency); pure.

Contract: ``KnowledgeModel.build(notes, files)`` resolves every link of every note with
Obsidian's rules (:class:`vaultsync.links.pathresolve.ObsidianIndex`: exact path, same folder,
shortest path; case-insensitive; over *all* vault files, so ``![[img.png]]`` resolves to the
image) and derives one :class:`Idea` per note, keyed by vault path.

* **Edges** join notes only: a link that resolves to an attachment is resolved but no edge; an
  unresolved link is no edge and is listed by :meth:`KnowledgeModel.unresolved`.  Every link a
  note writes is exactly one of resolved or unresolved (:meth:`KnowledgeModel.links`).
* Edge rules are :func:`vaultsync.knowledge.relations.typed_edges`'s: no self-links, ``(type,
  from, to)`` unique, typed beats plain.
* **Maturity signals**: ``in_degree`` / ``out_degree`` count distinct neighbours along incoming
  / outgoing edges, ``degree`` the distinct neighbours either way (a note linked both ways
  counts once; ZettelFlow adds the two), ``has_sources`` whether any claim has a source.
* The model is immutable; a rename is a new build in which the idea has its new key and every
  edge that now resolves to it points there (the parse of an unchanged note is reused).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vaultsync.knowledge.claims import Claim, derive_claims
from vaultsync.knowledge.idea import LinkForm, NoteParse
from vaultsync.knowledge.lifecycle import FALLBACK_STATE, State, parse_state
from vaultsync.knowledge.relations import Edge, typed_edges
from vaultsync.links.pathresolve import ObsidianIndex

__all__ = ["Idea", "KnowledgeModel", "Link", "Maturity", "note_name"]


@dataclass(frozen=True, slots=True)
class Maturity:
    """Raw maturity signals of an idea (the score itself is a later layer)."""

    in_degree: int
    out_degree: int
    degree: int
    has_sources: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Idea:
    """One note of the vault as an idea."""

    path: str
    title: str
    created: str | None
    """The ``created`` (else ``date``) property as written."""
    modified_ns: int | None
    """The file's modification time, nanoseconds since the epoch."""
    state: State
    declared_state: str | None
    """The ``state`` value as written (None when the note declares none)."""
    kind: str | None
    """The engine's note kind for a note vaultsync wrote, None for a note of the user's."""
    relations: tuple[Edge, ...]
    """Outgoing edges."""
    claims: tuple[Claim, ...]
    maturity: Maturity


@dataclass(frozen=True, slots=True)
class Link:
    """One link written in a note, with the file it reaches (None: unresolved)."""

    source: str
    target: str
    path: str | None
    line: int
    form: LinkForm
    rel: str


def note_name(path: str) -> str:
    """A note's file name without ``.md`` (its title when it has no ``title`` property)."""
    name = path.rpartition("/")[2]
    return name[:-3] if name.lower().endswith(".md") else name


_EMPTY: tuple[Edge, ...] = ()


class _Resolver:
    """Obsidian resolution over the vault's files, memoised per (target, folder).

    The index is built on first use: a build whose links are all known from the cache
    never builds it.
    """

    def __init__(self, files: tuple[str, ...]) -> None:
        self._files = files
        self._exact = frozenset(files)
        self._index: ObsidianIndex | None = None
        self._memo: dict[tuple[str, str], str | None] = {}

    def __call__(self, target: str, source: str) -> str | None:
        if not target.strip():
            return source
        # Rule 1 (an exact vault path wins), for the exact case: what vaultsync writes.
        if target[0] not in "./":
            if target[-3:].lower() == ".md":
                if target in self._exact:
                    return target
            elif target + ".md" in self._exact:
                return target + ".md"
        key = (target, source.rpartition("/")[0])
        if key in self._memo:
            return self._memo[key]
        if self._index is None:
            self._index = ObsidianIndex.build(self._files)
        found = self._memo[key] = self._index.resolve(target, source)
        return found


def _claims(
    path: str, parse: NoteParse, found: tuple[str | None, ...], resolver: _Resolver
) -> tuple[Claim, ...]:
    """The claims of one note, its sources resolved as its links were (else afresh)."""
    if not parse.claims and not parse.sources:
        return ()
    own = {link.target: target for link, target in zip(parse.links, found, strict=True)}

    def resolve(target: str) -> str | None:
        return own[target] if target in own else resolver(target, path)

    return derive_claims(parse.claims, parse.sources, note_name(path), resolve)


def _by_target_and_type(
    paths: list[str], outgoing: Mapping[str, tuple[Edge, ...]]
) -> tuple[dict[str, tuple[Edge, ...]], dict[str, tuple[Edge, ...]]]:
    """The edges by target note, and by type (types sorted), each in source order."""
    incoming: dict[str, list[Edge]] = {}
    by_type: dict[str, list[Edge]] = {}
    for path in paths:
        for edge in outgoing[path]:
            incoming.setdefault(edge.target, []).append(edge)
            by_type.setdefault(edge.type, []).append(edge)
    return (
        {target: tuple(edges) for target, edges in incoming.items()},
        {kind: tuple(edges) for kind, edges in sorted(by_type.items())},
    )


def _idea(
    path: str,
    parse: NoteParse,
    *,
    modified_ns: int | None,
    outgoing: tuple[Edge, ...],
    incoming: Mapping[str, tuple[Edge, ...]],
    claims: tuple[Claim, ...],
) -> Idea:
    """One note as an idea, with its maturity signals."""
    out_set = {edge.target for edge in outgoing}
    in_set = {edge.source for edge in incoming.get(path, _EMPTY)}
    return Idea(
        path=path,
        title=parse.title or note_name(path),
        created=parse.created,
        modified_ns=modified_ns,
        state=parse_state(parse.state) or FALLBACK_STATE,
        declared_state=parse.state,
        kind=parse.kind,
        relations=outgoing,
        claims=claims,
        maturity=Maturity(
            in_degree=len(in_set),
            out_degree=len(out_set),
            degree=len(in_set | out_set),
            has_sources=any(claim.sources for claim in claims),
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeModel:
    """Ideas, their edges by type and direction, and every link's resolution."""

    ideas: Mapping[str, Idea]
    """Vault path → idea, sorted by path."""
    notes: Mapping[str, NoteParse]
    resolved: Mapping[str, tuple[str | None, ...]]
    """Vault path → the file each of the note's links reaches, aligned with its ``links``."""
    outgoing: Mapping[str, tuple[Edge, ...]]
    incoming: Mapping[str, tuple[Edge, ...]]
    by_type: Mapping[str, tuple[Edge, ...]]

    @classmethod
    def build(
        cls,
        notes: Mapping[str, NoteParse],
        files: Iterable[str],
        modified_ns: Mapping[str, int] | None = None,
        known: Mapping[str, tuple[str | None, ...]] | None = None,
    ) -> KnowledgeModel:
        """Resolve and derive the model.

        Args:
            notes: vault path → parse, for every Markdown note.
            files: every file of the vault (notes and attachments), vault-relative POSIX.
            modified_ns: vault path → the file's ``st_mtime_ns``, when known.
            known: vault path → the resolution of each of its links from an earlier build
                over the *same file list* (from the cache); notes not in it are resolved.

        Returns:
            The model.
        """
        resolver = _Resolver(tuple(files))
        paths = sorted(notes)
        resolved: dict[str, tuple[str | None, ...]] = {}
        outgoing: dict[str, tuple[Edge, ...]] = {}
        claims: dict[str, tuple[Claim, ...]] = {}
        for path in paths:
            parse = notes[path]
            found = known.get(path) if known is not None else None
            if found is None or len(found) != len(parse.links):
                found = tuple([resolver(link.target, path) for link in parse.links])
            resolved[path] = found
            outgoing[path] = typed_edges(
                path,
                [
                    (link.rel, target)
                    for link, target in zip(parse.links, found, strict=True)
                    if target is not None and target in notes
                ],
            )
            claims[path] = _claims(path, parse, found, resolver)
        incoming, by_type = _by_target_and_type(paths, outgoing)
        times = modified_ns or {}
        ideas = {
            path: _idea(
                path,
                notes[path],
                modified_ns=times.get(path),
                outgoing=outgoing[path],
                incoming=incoming,
                claims=claims[path],
            )
            for path in paths
        }
        return cls(
            ideas=MappingProxyType(ideas),
            notes=MappingProxyType({path: notes[path] for path in paths}),
            resolved=MappingProxyType(resolved),
            outgoing=MappingProxyType(outgoing),
            incoming=MappingProxyType(incoming),
            by_type=MappingProxyType(by_type),
        )

    def links(self, path: str | None = None) -> Iterator[Link]:
        """Every link written in the note at ``path`` (or in every note), resolved or not."""
        for source in (path,) if path is not None else self.ideas:
            parse = self.notes[source]
            for link, found in zip(parse.links, self.resolved[source], strict=True):
                yield Link(source, link.target, found, link.line, link.form, link.rel)

    def unresolved(self) -> Iterator[Link]:
        """The links that reach no file, by note path then line."""
        return (link for link in self.links() if link.path is None)

    def edges_from(self, path: str) -> tuple[Edge, ...]:
        """The outgoing edges of a note."""
        return self.outgoing.get(path, _EMPTY)

    def edges_to(self, path: str) -> tuple[Edge, ...]:
        """The incoming edges of a note."""
        return self.incoming.get(path, _EMPTY)

    def problems(self) -> Iterator[tuple[str, str]]:
        """``(path, message)`` for every note part that could not be read."""
        for path, parse in self.notes.items():
            for problem in parse.problems:
                yield path, problem

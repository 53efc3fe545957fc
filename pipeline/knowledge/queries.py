"""Read-only questions to the knowledge model; pure, no I/O.

Contract: every function reads the model's indexes and returns tuples in a stable order (by
vault path unless said otherwise).  Terminology: an **orphan** has no incoming
edge, a **leaf** no outgoing edge.  ``find_note`` raises :class:`~vaultsync.core.errors.
NoteReferenceError` for a reference that names no note or several.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vaultsync.core.errors import NoteReferenceError
from vaultsync.knowledge.claims import Claim, Source, source_key
from vaultsync.knowledge.lifecycle import State, next_states
from vaultsync.knowledge.model import Idea, KnowledgeModel, Link, note_name
from vaultsync.knowledge.relations import Edge
from vaultsync.links.names import normalize_name
from vaultsync.links.pathresolve import ObsidianIndex
from vaultsync.links.wikilinks import parse_wikilinks

__all__ = [
    "DEFAULT_HUB_DEGREE",
    "MATURITY_BANDS",
    "Question",
    "SourceCount",
    "by_maturity",
    "by_state",
    "claims_without_sources",
    "contradictions",
    "edges_of_type",
    "find_note",
    "hubs",
    "leaves",
    "orphans",
    "sources_by_reference_count",
    "transitions",
    "unanswered_questions",
    "unresolved_links",
    "unsourced",
]

DEFAULT_HUB_DEGREE = 5
"""ZettelFlow's hub threshold: at least five distinct neighbours."""
MATURITY_BANDS = ("isolated", "sparse", "connected")
"""Degree 0, 1-3, more than 3."""


@dataclass(frozen=True, slots=True)
class SourceCount:
    """A source and the number of notes that cite it."""

    source: Source
    count: int


@dataclass(frozen=True, slots=True)
class Question:
    """A note raised as a question and the notes that raise it."""

    path: str
    asked_by: tuple[str, ...]


def orphans(model: KnowledgeModel) -> tuple[Idea, ...]:
    """Ideas with no incoming edge (nothing links to them)."""
    return tuple(idea for path, idea in model.ideas.items() if not model.edges_to(path))


def leaves(model: KnowledgeModel) -> tuple[Idea, ...]:
    """Ideas with no outgoing edge (they link to no note)."""
    return tuple(idea for path, idea in model.ideas.items() if not model.edges_from(path))


def hubs(model: KnowledgeModel, minimum: int = DEFAULT_HUB_DEGREE) -> tuple[Idea, ...]:
    """Ideas with at least ``minimum`` distinct neighbours, most connected first."""
    found = [idea for idea in model.ideas.values() if idea.maturity.degree >= minimum]
    found.sort(key=lambda idea: (-idea.maturity.degree, idea.path))
    return tuple(found)


def by_state(model: KnowledgeModel, state: State) -> tuple[Idea, ...]:
    """Ideas in one lifecycle state."""
    return tuple(idea for idea in model.ideas.values() if idea.state is state)


def by_maturity(model: KnowledgeModel) -> Mapping[str, tuple[Idea, ...]]:
    """Ideas by degree band: ``isolated`` (0), ``sparse`` (1-3), ``connected`` (more)."""
    bands: dict[str, list[Idea]] = {band: [] for band in MATURITY_BANDS}
    for idea in model.ideas.values():
        degree = idea.maturity.degree
        band = "isolated" if degree == 0 else "sparse" if degree <= 3 else "connected"
        bands[band].append(idea)
    return MappingProxyType({band: tuple(ideas) for band, ideas in bands.items()})


def unsourced(model: KnowledgeModel) -> tuple[Idea, ...]:
    """Ideas that make claims and cite no source for any (notes without claims excluded)."""
    return tuple(
        idea for idea in model.ideas.values() if idea.claims and not idea.maturity.has_sources
    )


def claims_without_sources(model: KnowledgeModel) -> tuple[tuple[Idea, Claim], ...]:
    """Every claim without a source, with its idea (claim-granular ``unsourced``)."""
    return tuple(
        (idea, claim) for idea in model.ideas.values() for claim in idea.claims if not claim.sources
    )


def sources_by_reference_count(model: KnowledgeModel) -> tuple[SourceCount, ...]:
    """Each distinct source with the number of notes citing it, most cited first."""
    first: dict[str, Source] = {}
    notes: dict[str, set[str]] = {}
    for idea in model.ideas.values():
        for claim in idea.claims:
            for source in claim.sources:
                key = source_key(source)
                first.setdefault(key, source)
                notes.setdefault(key, set()).add(idea.path)
    ranked = sorted(first, key=lambda key: (-len(notes[key]), key))
    return tuple(SourceCount(first[key], len(notes[key])) for key in ranked)


def edges_of_type(model: KnowledgeModel, kind: str) -> tuple[Edge, ...]:
    """Every edge of one type, by source then target order of the build."""
    return model.by_type.get(kind, ())


def contradictions(model: KnowledgeModel, path: str) -> tuple[Edge, ...]:
    """The ``contradicts`` edges that leave or reach the note (both directions)."""
    out = [edge for edge in model.edges_from(path) if edge.type == "contradicts"]
    into = [edge for edge in model.edges_to(path) if edge.type == "contradicts"]
    return tuple(out + into)


def unanswered_questions(model: KnowledgeModel) -> tuple[Question, ...]:
    """Notes some note raises as a ``question`` that no note ``supports``."""
    askers: dict[str, list[str]] = {}
    for edge in model.by_type.get("question", ()):
        askers.setdefault(edge.target, []).append(edge.source)
    answered = {edge.target for edge in model.by_type.get("supports", ())}
    return tuple(
        Question(path, tuple(sorted(set(askers[path]))))
        for path in sorted(askers)
        if path not in answered
    )


def unresolved_links(model: KnowledgeModel) -> tuple[Link, ...]:
    """Every link that reaches no file, by note path then line."""
    return tuple(model.unresolved())


def transitions(model: KnowledgeModel, path: str) -> tuple[Idea, tuple[State, ...]]:
    """The note's idea and the states its lifecycle may move to next."""
    idea = model.ideas[path]
    return idea, next_states(idea.state)


def find_note(model: KnowledgeModel, reference: str) -> str:
    """The vault path of the note ``reference`` names.

    Tried in order: a vault path (``.md`` optional); a link target as Obsidian resolves it
    from the vault root (``[[…]]`` brackets, heading and label allowed); a title or file name
    compared as :func:`vaultsync.links.names.normalize_name` compares names.

    Raises:
        NoteReferenceError: no note has that name, or several titles share it.
    """
    text = reference.strip()
    links = parse_wikilinks(text) if text.startswith(("[[", "![[")) else ()
    target = links[0].target if links else text
    for candidate in (target, f"{target}.md"):
        if candidate in model.ideas:
            return candidate
    if target:
        found = ObsidianIndex.build(model.ideas).resolve(target, "")
        if found is not None:
            return found
    key = normalize_name(target)
    matches = sorted(
        path
        for path, idea in model.ideas.items()
        if key and (normalize_name(idea.title) == key or normalize_name(note_name(path)) == key)
    )
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
        raise NoteReferenceError(
            f"{reference!r} could mean {len(matches)} notes: {shown}",
            hint="give the vault path of the note",
        )
    raise NoteReferenceError(f"no note named {reference!r} in the vault")

"""Knowledge query results → the text and JSON that ``vaultsync query`` prints; pure.

Contract: each ``*_json`` returns plain data (``json.dumps`` ready, stable key order, vault
paths as ids); each ``*_text`` returns the lines a person reads, with a heading that says what
the list means (an orphan has no incoming edge, a leaf no outgoing edge) and a sentence instead
of an empty list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vaultsync.knowledge.claims import Claim
from vaultsync.knowledge.lifecycle import State, parse_state
from vaultsync.knowledge.model import Idea, Link, note_name
from vaultsync.knowledge.queries import Question, SourceCount
from vaultsync.knowledge.relations import Edge

__all__ = [
    "claims_json",
    "claims_text",
    "contradictions_json",
    "contradictions_text",
    "edge_json",
    "edges_text",
    "idea_json",
    "ideas_text",
    "maturity_json",
    "maturity_text",
    "questions_json",
    "questions_text",
    "sources_json",
    "sources_text",
    "transitions_json",
    "transitions_text",
    "unresolved_json",
    "unresolved_text",
]


def idea_json(idea: Idea) -> dict[str, Any]:
    """One idea's identity, state and maturity signals."""
    return {
        "path": idea.path,
        "title": idea.title,
        "state": idea.state.value,
        "kind": idea.kind,
        "in_degree": idea.maturity.in_degree,
        "out_degree": idea.maturity.out_degree,
        "degree": idea.maturity.degree,
        "has_sources": idea.maturity.has_sources,
    }


def edge_json(edge: Edge) -> dict[str, str]:
    """``{"type", "from", "to"}``."""
    return {"type": edge.type, "from": edge.source, "to": edge.target}


def _idea_line(idea: Idea) -> str:
    signals = idea.maturity
    title = f'  "{idea.title}"' if idea.title != note_name(idea.path) else ""
    return (
        f"  {idea.path}{title}  [{idea.state.value}]  "
        f"in {signals.in_degree} · out {signals.out_degree} · degree {signals.degree}"
    )


def ideas_text(heading: str, ideas: Sequence[Idea], empty: str) -> str:
    """``heading (n):`` then one line per idea, or ``empty`` when there is none."""
    if not ideas:
        return empty
    return "\n".join([f"{heading} ({len(ideas)}):", *(_idea_line(idea) for idea in ideas)])


def claims_json(pairs: Iterable[tuple[Idea, Claim]]) -> list[dict[str, str]]:
    """``[{"path", "title", "claim"}]``."""
    return [{"path": idea.path, "title": idea.title, "claim": claim.text} for idea, claim in pairs]


def claims_text(pairs: Sequence[tuple[Idea, Claim]]) -> str:
    """Each sourceless claim as ``path: claim``."""
    if not pairs:
        return "Every claim cites a source."
    lines = [f"Claims without a source ({len(pairs)}):"]
    lines.extend(f"  {idea.path}: {claim.text}" for idea, claim in pairs)
    return "\n".join(lines)


def sources_json(counts: Iterable[SourceCount]) -> list[dict[str, Any]]:
    """``[{"kind", "ref", "count"}]``, most cited first."""
    return [{"kind": c.source.kind, "ref": c.source.ref, "count": c.count} for c in counts]


def sources_text(counts: Sequence[SourceCount]) -> str:
    """Each source with the number of notes citing it."""
    if not counts:
        return "No note cites a source."
    lines = [f"Sources, most cited first ({len(counts)}):"]
    lines.extend(
        f"  {c.count:>4} note{'s' if c.count != 1 else ' '}  {c.source.ref}"
        + ("" if c.source.kind == "link" else "  (text)")
        for c in counts
    )
    return "\n".join(lines)


def maturity_json(bands: Mapping[str, Sequence[Idea]]) -> dict[str, list[dict[str, Any]]]:
    """``{"isolated": [...], "sparse": [...], "connected": [...]}``."""
    return {band: [idea_json(idea) for idea in ideas] for band, ideas in bands.items()}


def maturity_text(bands: Mapping[str, Sequence[Idea]]) -> str:
    """The count per band, then the ideas of each band."""
    meaning = {"isolated": "no neighbour", "sparse": "1-3 neighbours", "connected": "4 or more"}
    lines = [
        "Maturity by distinct neighbours: "
        + ", ".join(f"{band} {len(ideas)}" for band, ideas in bands.items())
    ]
    for band, ideas in bands.items():
        if ideas:
            lines.append(f"{band.capitalize()} ({meaning[band]}, {len(ideas)}):")
            lines.extend(_idea_line(idea) for idea in ideas)
    return "\n".join(lines)


def contradictions_json(path: str, edges: Iterable[Edge]) -> dict[str, Any]:
    """``{"note", "contradicts": [paths], "contradicted_by": [paths]}``."""
    edges = tuple(edges)
    return {
        "note": path,
        "contradicts": [e.target for e in edges if e.source == path],
        "contradicted_by": [e.source for e in edges if e.target == path],
    }


def contradictions_text(path: str, edges: Sequence[Edge]) -> str:
    """What the note contradicts (→) and what contradicts it (←)."""
    if not edges:
        return f"Nothing contradicts {path}, and it contradicts nothing."
    lines = [f"Contradictions of {path} (→ it contradicts, ← contradicts it):"]
    lines.extend(f"  → {e.target}" if e.source == path else f"  ← {e.source}" for e in edges)
    return "\n".join(lines)


def questions_json(questions: Iterable[Question]) -> list[dict[str, Any]]:
    """``[{"question", "asked_by": [paths]}]``."""
    return [{"question": q.path, "asked_by": list(q.asked_by)} for q in questions]


def questions_text(questions: Sequence[Question]) -> str:
    """Each unanswered question with the notes that raise it."""
    if not questions:
        return "No open question: every question has a note that supports an answer."
    lines = [f"Unanswered questions — no note supports them ({len(questions)}):"]
    lines.extend(f"  {q.path}  (asked by {', '.join(q.asked_by)})" for q in questions)
    return "\n".join(lines)


def edges_text(kind: str, edges: Sequence[Edge]) -> str:
    """Each edge of one type as ``from → to``."""
    if not edges:
        return f"No {kind} edges."
    lines = [f"{kind} edges ({len(edges)}):"]
    lines.extend(f"  {e.source} → {e.target}" for e in edges)
    return "\n".join(lines)


def unresolved_json(links: Iterable[Link]) -> list[dict[str, Any]]:
    """``[{"note", "line", "target", "form", "rel"}]``."""
    return [
        {
            "note": link.source,
            "line": link.line,
            "target": link.target,
            "form": link.form.value,
            "rel": link.rel,
        }
        for link in links
    ]


def unresolved_text(links: Sequence[Link]) -> str:
    """Each unresolved link as ``note:line  target``."""
    if not links:
        return "Every link resolves."
    lines = [f"Unresolved links — no file has that name ({len(links)}):"]
    lines.extend(f"  {k.source}:{k.line}  {k.target}  ({k.form.value})" for k in links)
    return "\n".join(lines)


def transitions_json(idea: Idea, allowed: Sequence[State]) -> dict[str, Any]:
    """``{"note", "state", "declared", "next": [states]}``."""
    return {
        "note": idea.path,
        "state": idea.state.value,
        "declared": idea.declared_state,
        "next": [state.value for state in allowed],
    }


def transitions_text(idea: Idea, allowed: Sequence[State]) -> str:
    """The note's state (and what it declares, when that differs) and the allowed moves."""
    declared = idea.declared_state
    note = ""
    if declared is None:
        note = " (no state declared)"
    elif parse_state(declared) is None:
        note = f" ({declared!r} is not a state)"
    moves = ", ".join(state.value for state in allowed)
    return f"{idea.path}: {idea.state.value}{note}\n  may move to: {moves}"

"""Records → the graph's notes: ids, titles, aliases, tags, and the prose each note holds; pure.

The notes (a table of kinds, ids and aliases) and the caps: the 300 most recent
episodes and 50 sessions become notes.  Not simply the 50 most recent sessions: a
session's only recency is its file's mtime, which git does not keep; so the sessions the user
named come first, then the autosaves by the time in their names (:func:`kept_sessions`).
Titles are short and undecorated so a ``[[link]]`` can name them; a card's column is in its
title (``[doing] …``) and its bare title is its alias.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import PurePosixPath
from types import MappingProxyType

from vaultsync.core.model import Context, Episode, Kind, Node, Records, Session, in_zone
from vaultsync.core.settings import Caps
from vaultsync.core.text import first_line, shorten
from vaultsync.graph.documents import DocumentNote
from vaultsync.links.names import normalize_name
from vaultsync.links.wikilinks import rewrite_wikilinks

TITLE_LIMIT = 80
MACHINE_SESSION_PREFIXES = ("autosave-", "mcp-")
"""Names ChatCLI gives the sessions it saves on its own (``session_manager.go``)."""


@dataclass(frozen=True, kw_only=True)
class GraphNodes:
    """The notes of the graph, sorted by id, with the capped records the links are drawn from."""

    nodes: tuple[Node, ...]
    by_id: MappingProxyType[str, Node]
    texts: tuple[tuple[str, str], ...]
    """``(node id, prose)`` for every note whose text may hold wikilinks and mentions."""
    episodes: tuple[Episode, ...]
    """The episodes kept under the cap, oldest first."""
    sessions: tuple[Session, ...]
    """The sessions kept under the cap, by name."""


def tag_id(label: str) -> str:
    """``tag:<label>``, the label trimmed and lowercased so ``Go`` and ``go`` are one tag."""
    return f"tag:{label.strip().lower()}"


def context_note(context: Context) -> str:
    """The id of a context's note: ``kb:`` for a knowledge base, else ``ctx:``."""
    return f"{'kb' if context.is_knowledge else 'ctx'}:{context.id}"


def prose_title(text: str, fallback: str) -> str:
    """The first line of a text as a title: wikilinks read as their label, shortened."""
    line = first_line(text)
    if "[[" in line:
        line = rewrite_wikilinks(line, lambda link: link.label or link.target or None)
    return shorten(line, TITLE_LIMIT) or fallback


def kept_episodes(records: Records, caps: Caps) -> tuple[Episode, ...]:
    """The ``caps.episodes`` most recent episodes, oldest first."""
    ordered = sorted(records.episodes, key=lambda e: (e.date, e.id))
    return tuple(ordered[-caps.episodes :])


def kept_sessions(records: Records, caps: Caps) -> tuple[Session, ...]:
    """The ``caps.sessions`` sessions that become notes, sorted by name.

    A session file holds no time and its mtime is not used (git does not keep it), so the
    order is the content's: the sessions the user named (ChatCLI never expires those) by
    name, then the machine-made ones (``autosave-``, ``mcp-``), newest autosave first.
    """
    ranked = sorted(records.sessions, key=lambda s: s.name)
    ranked.sort(key=lambda s: s.saved or datetime.min, reverse=True)  # stable: ties keep names
    ranked.sort(key=lambda s: s.name.startswith(MACHINE_SESSION_PREFIXES))
    return tuple(sorted(ranked[: caps.sessions], key=lambda s: s.name))


def build_nodes(
    records: Records,
    caps: Caps,
    documents: tuple[DocumentNote, ...],
    *,
    document_nodes: Iterable[Node] | None = None,
) -> GraphNodes:
    """Every note of the graph, one per store item kept under the caps, plus the tags.

    ``document_nodes``: the documents' notes (:func:`document_node` of each) when the caller
    has them already.
    """
    episodes = kept_episodes(records, caps)
    sessions = kept_sessions(records, caps)
    if document_nodes is None:
        document_nodes = map(document_node, documents)
    nodes: dict[str, Node] = {}
    texts: list[tuple[str, str]] = []
    for node, text in (
        *_memory_nodes(records, episodes),
        *_workspace_nodes(records, sessions, document_nodes),
    ):
        nodes.setdefault(node.id, node)
        if text:
            texts.append((node.id, text))
    ordered = tuple(nodes[key] for key in sorted(nodes))
    return GraphNodes(
        nodes=ordered,
        by_id=MappingProxyType({node.id: node for node in ordered}),
        texts=tuple(sorted(texts)),
        episodes=episodes,
        sessions=sessions,
    )


NodeText = tuple[Node, str]


def _memory_nodes(records: Records, episodes: tuple[Episode, ...]) -> Iterator[NodeText]:
    """Projects, facts, topics, the profile, episodes and journal notes, with their prose."""
    for project in records.projects:
        base = PurePosixPath(project.path.replace("\\", "/")).name if project.path else ""
        aliases = (base,) if base and normalize_name(base) != normalize_name(project.name) else ()
        node = Node(id=f"project:{project.name}", kind=Kind.PROJECT, title=project.name,
                    aliases=aliases)  # fmt: skip
        yield node, project.description
    for fact in records.facts:
        title = prose_title(fact.content, fact.id)
        yield Node(id=f"fact:{fact.id}", kind=Kind.FACT, title=title), fact.content
    for topic in records.topics:
        yield Node(id=f"topic:{topic.name}", kind=Kind.TOPIC, title=topic.name), topic.summary
    if records.profile is not None:
        name = records.profile.display_name
        aliases = () if name == "user" else ("user",)
        yield Node(id="profile:user", kind=Kind.PROFILE, title=name, aliases=aliases), ""
    for episode in episodes:
        title = prose_title(episode.summary, episode.id)
        text = "\n".join(part for part in (episode.summary, episode.outcome) if part)
        yield Node(id=f"episode:{episode.id}", kind=Kind.EPISODE, title=title), text
    for note in records.journal:
        node_id = f"note:{note.period}:{note.label}"
        yield Node(id=node_id, kind=Kind.NOTE, title=note.label), note.text


def document_node(doc: DocumentNote) -> Node:
    """A document's note: its title, and its file name's stem as an alias when they differ."""
    aliases = (doc.stem,) if doc.stem and doc.stem != doc.title else ()
    return Node(id=doc.node_id, kind=Kind.DOC, title=doc.title, aliases=aliases)


def _workspace_nodes(
    records: Records, sessions: tuple[Session, ...], document_nodes: Iterable[Node]
) -> Iterator[NodeText]:
    """Sessions, skills, cards, contexts, their documents, and every tag."""
    for session in sessions:
        title = session.title or session.name
        aliases = (session.name,) if title != session.name else ()
        yield Node(id=f"session:{session.name}", kind=Kind.SESSION, title=title,
                   aliases=aliases), ""  # fmt: skip
    for skill in records.skills:
        yield Node(id=f"skill:{skill.name}", kind=Kind.SKILL, title=skill.name), skill.description
    for card in records.cards:
        text = "\n".join((card.title, card.description, *(n.text for n in card.notes)))
        yield Node(id=f"card:{card.id}", kind=Kind.CARD, title=f"[{card.column}] {card.name}",
                   aliases=(card.name,)), text.strip()  # fmt: skip
    for context in records.contexts:
        kind = Kind.KBCONTEXT if context.is_knowledge else Kind.CONTEXT
        yield Node(id=context_note(context), kind=kind, title=context.name), ""
    for node in document_nodes:
        yield node, ""
    for label in _tag_labels(records):
        if label.strip():
            yield Node(id=tag_id(label), kind=Kind.TAG, title=label.strip().lower()), ""


def _tag_labels(records: Records) -> Iterable[str]:
    for fact in records.facts:
        yield from fact.tags
        if fact.category:
            yield fact.category
    for context in records.contexts:
        yield from context.tags
    for project in records.projects:
        yield from project.technologies
    profile = records.profile
    if profile is not None:
        if not profile.skills_private:
            yield from profile.skills
        if not profile.goals_private:
            yield from profile.goals
    for skill in records.skills:
        yield from skill.triggers
    for card in records.cards:
        if card.assignee:
            yield card.assignee


def day_of(moment: datetime | None, zone: tzinfo) -> str:
    """The calendar day of a timestamp in ``zone`` (``render.timezone``); ``""`` for none.

    One zone for every day boundary: not the offset the store happened to record (a user who
    travelled writes several), never the zone of the process that runs.
    """
    return in_zone(moment, zone).date().isoformat() if moment is not None else ""


def session_day(session: Session) -> str:
    """The day of an autosave's name (already a wall-clock day, read in ``render.timezone``)."""
    return session.saved.date().isoformat() if session.saved is not None else ""

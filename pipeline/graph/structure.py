"""Records → structural links: the relationships the stores already record; pure.

The table of relations (weights unchanged from ChatCLI, so recall ranks as before):
``tagged`` 1, ``category`` 0.5, ``in_project`` 2 (fact, episode) and 1.5 (session), ``about`` 2,
``uses`` 1, ``has`` 1, ``same_day`` 1, ``summarizes`` 1, ``part_of`` 1, ``triggered_by`` 1 and
0.5, ``assigned`` 1.  Two of ChatCLI's known weaknesses are fixed here: a fact or episode in a
*subfolder* of a project belongs to it (not only an exact path), and a session matches a project
by whole words, not by substring (a project ``go`` no longer claims most sessions).

Every day boundary (``same_day``) is counted in one zone, ``render.timezone`` (``caps.zone``,
default UTC): a timestamp is converted to it, and a day ChatCLI wrote as a name (a daily
note's file, an autosave's name) is its local day already.  A session's day comes from its
autosave name only (see ``extract.workspace``): its file's mtime is not in git.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import date, timedelta, tzinfo
from pathlib import PurePosixPath
from typing import Protocol

from vaultsync.core.model import Link, Origin, Records
from vaultsync.core.settings import Caps
from vaultsync.graph.documents import DocumentNote
from vaultsync.graph.nodes import GraphNodes, context_note, day_of, session_day, tag_id
from vaultsync.links.names import normalize_name


def _link(source: str, target: str, rel: str, weight: float) -> Link:
    return Link(source=source, target=target, rel=rel, origin=Origin.STRUCTURAL, weight=weight)


class SessionMemo(Protocol):
    """Remembers which projects a session names (``graph.patch.Memo``)."""

    def use_project_names(self, names: Iterable[str]) -> None:
        """The project names matched, in their order."""

    def session_projects(
        self, words: str, compute: Callable[[], tuple[str, ...]]
    ) -> tuple[str, ...]:
        """The projects ``words`` names, ``compute()`` when not remembered."""
        ...


class _Unremembered:
    def use_project_names(self, names: Iterable[str]) -> None:
        pass

    def session_projects(
        self, words: str, compute: Callable[[], tuple[str, ...]]
    ) -> tuple[str, ...]:
        return compute()


def structural_links(
    records: Records, nodes: GraphNodes, caps: Caps, memo: SessionMemo | None = None
) -> Iterator[Link]:
    """Every structural link whose two ends are notes of the graph."""
    for link in _all(records, nodes, caps, memo or _Unremembered()):
        if link.source in nodes.by_id and link.target in nodes.by_id:
            yield link


def _all(records: Records, nodes: GraphNodes, caps: Caps, memo: SessionMemo) -> Iterator[Link]:
    project_of = _ProjectPaths(records)
    yield from _memory_links(records, project_of)
    zone = caps.zone
    yield from _episode_links(records, nodes, project_of, zone)
    episodes_by_day: dict[str, list[str]] = {}
    for episode in nodes.episodes:
        day = day_of(episode.date, zone)
        episodes_by_day.setdefault(day, []).append(f"episode:{episode.id}")
    yield from _session_links(records, nodes, episodes_by_day, memo)
    yield from _journal_links(records, caps, episodes_by_day)
    yield from _workspace_links(records)


def _memory_links(records: Records, project_of: _ProjectPaths) -> Iterator[Link]:
    """Facts, topics, projects, the profile and contexts: tags, categories, projects, about."""
    yield from _fact_links(records, project_of)
    for context in records.contexts:
        cid = context_note(context)
        for tag in context.tags:
            yield _link(cid, tag_id(tag), "tagged", 1)
    for topic in records.topics:
        for fact_id in topic.related_fact_ids:
            yield _link(f"topic:{topic.name}", f"fact:{fact_id}", "about", 2)
    for project in records.projects:
        for tech in project.technologies:
            yield _link(f"project:{project.name}", tag_id(tech), "uses", 1)
    yield from _profile_links(records)


def _fact_links(records: Records, project_of: _ProjectPaths) -> Iterator[Link]:
    """Each fact's tags, its category and the project its source path lies in."""
    for fact in records.facts:
        fid = f"fact:{fact.id}"
        for tag in fact.tags:
            yield _link(fid, tag_id(tag), "tagged", 1)
        if fact.category:
            yield _link(fid, tag_id(fact.category), "category", 0.5)
        project_id = project_of(fact.source_project)
        if project_id:
            yield _link(fid, project_id, "in_project", 2)


def _profile_links(records: Records) -> Iterator[Link]:
    """The profile's skills and goals, those marked private left out."""
    profile = records.profile
    if profile is None:
        return
    owned = (() if profile.skills_private else profile.skills) + (
        () if profile.goals_private else profile.goals
    )
    for label in owned:
        yield _link("profile:user", tag_id(label), "has", 1)


def _workspace_links(records: Records) -> Iterator[Link]:
    """Skills and their triggers, cards and their assignees (documents: :func:`part_of_links`)."""
    # Sorted in reverse so the first name in sort order wins a normalized-name clash.
    topics = {
        normalize_name(t.name): f"topic:{t.name}"
        for t in sorted(records.topics, key=lambda t: t.name, reverse=True)
    }
    for skill in records.skills:
        for trigger in skill.triggers:
            topic_id = topics.get(normalize_name(trigger))
            if topic_id:
                yield _link(f"skill:{skill.name}", topic_id, "triggered_by", 1)
            yield _link(f"skill:{skill.name}", tag_id(trigger), "triggered_by", 0.5)
    for card in records.cards:
        if card.assignee:
            yield _link(f"card:{card.id}", tag_id(card.assignee), "assigned", 1)


def part_of_links(note: str, documents: Iterable[DocumentNote]) -> tuple[Link, ...]:
    """Each document's ``part_of`` link to its context's note ``note``."""
    return tuple(_link(doc.node_id, note, "part_of", 1) for doc in documents)


class _ProjectPaths:
    """Workspace path → project id: the project whose path is the path or its nearest parent."""

    def __init__(self, records: Records) -> None:
        ordered = sorted(records.projects, key=lambda p: p.name)
        self._by_path = {_clean(p.path): f"project:{p.name}" for p in ordered if p.path}
        self._found: dict[str, str] = {}  # many records share a path: each is looked up once

    def __call__(self, path: str) -> str:
        if not path or not self._by_path:
            return ""
        found = self._found.get(path)
        if found is None:
            found = self._found[path] = self._lookup(path)
        return found

    def _lookup(self, path: str) -> str:
        current = PurePosixPath(_clean(path))
        for candidate in (current, *current.parents):
            found = self._by_path.get(str(candidate))
            if found:
                return found
        return ""


def _clean(path: str) -> str:
    return path.replace("\\", "/").rstrip("/") or "/"


def _episode_links(
    records: Records, nodes: GraphNodes, project_of: _ProjectPaths, zone: tzinfo
) -> Iterator[Link]:
    facts_by_day_project: dict[tuple[str, str], list[str]] = {}
    for fact in records.facts:
        project_id = project_of(fact.source_project)
        if project_id:
            key = (day_of(fact.created_at, zone), project_id)
            facts_by_day_project.setdefault(key, []).append(f"fact:{fact.id}")
    for episode in nodes.episodes:
        eid = f"episode:{episode.id}"
        project_id = project_of(episode.project)
        if not project_id:
            continue
        yield _link(eid, project_id, "in_project", 2)
        for fact_id in facts_by_day_project.get((day_of(episode.date, zone), project_id), ()):
            yield _link(eid, fact_id, "same_day", 1)


def _session_links(
    records: Records,
    nodes: GraphNodes,
    episodes_by_day: dict[str, list[str]],
    memo: SessionMemo,
) -> Iterator[Link]:
    names = [
        (re.compile(rf"(?<![\w]){re.escape(normalize_name(p.name))}(?![\w])"), f"project:{p.name}")
        for p in records.projects
        if len(normalize_name(p.name)) >= 2
    ]
    memo.use_project_names(project_id for _, project_id in names)
    for session in nodes.sessions:
        sid = f"session:{session.name}"
        words = normalize_name(f"{session.name} {session.title}")
        compute = functools.partial(_named_projects, names, words)
        for project_id in memo.session_projects(words, compute):
            yield _link(sid, project_id, "in_project", 1.5)
        for episode_id in episodes_by_day.get(session_day(session), ()):
            yield _link(sid, episode_id, "same_day", 1)


def _named_projects(names: list[tuple[re.Pattern[str], str]], words: str) -> tuple[str, ...]:
    return tuple(project_id for pattern, project_id in names if pattern.search(words))


def _journal_links(
    records: Records, caps: Caps, episodes_by_day: dict[str, list[str]]
) -> Iterator[Link]:
    facts_by_day: dict[str, list[str]] = {}
    zone = caps.zone
    for fact in sorted(records.facts, key=lambda f: (f.created_at is None, f.created_at, f.id)):
        facts_by_day.setdefault(day_of(fact.created_at, zone), []).append(f"fact:{fact.id}")
    labels = {(note.period, note.label) for note in records.journal}
    for period, label in sorted(labels):
        nid = f"note:{period}:{label}"
        if period == "daily":
            same_day = [*episodes_by_day.get(label, ()), *facts_by_day.get(label, ())]
            for target in same_day[: caps.same_day_per_daily]:
                yield _link(nid, target, "same_day", 1)
        elif period == "weekly":
            for day in _week_days(label):
                if ("daily", day) in labels:
                    yield _link(nid, f"note:daily:{day}", "summarizes", 1)
        else:
            for week in sorted(w for p, w in labels if p == "weekly" and _week_month(w) == label):
                yield _link(nid, f"note:weekly:{week}", "summarizes", 1)


def _week_days(label: str) -> Iterable[str]:
    monday = _week_monday(label)
    if monday is None:
        return ()
    return tuple((monday + timedelta(days=offset)).isoformat() for offset in range(7))


def _week_month(label: str) -> str:
    # ChatCLI's rollup files a week under the month it starts in.
    monday = _week_monday(label)
    return monday.strftime("%Y-%m") if monday else ""


def _week_monday(label: str) -> date | None:
    match = re.fullmatch(r"(\d{4})-W(\d{2})", label)
    if not match:
        return None
    try:
        return date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
    except ValueError:
        return None

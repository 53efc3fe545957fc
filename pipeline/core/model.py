"""Every type that crosses a stage boundary: store records, then graph nodes and links; no I/O.

Stage 1 (extract) turns a ChatCLI state directory into ``Records``; stage 2-3 (graph) turns
``Records`` into a ``Graph``; later stages read both.  All values are frozen; collections are
tuples, so a stage can never mutate what an earlier stage produced.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from enum import StrEnum
from types import MappingProxyType
from typing import Literal

from vaultsync.core.pickling import fast_init, fast_pickle
from vaultsync.core.text import shorten

# ---------------------------------------------------------------------------------------------
# Time

ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def in_zone(moment: datetime, zone: tzinfo) -> datetime:
    """``moment`` in ``zone``; in UTC when the zone would leave the years 1-9999.

    ``moment`` must be aware: a naive one would be read in the process's zone.
    """
    try:
        return moment.astimezone(zone)
    except OverflowError:  # 0001-01-01T00:00:01Z west of UTC, 9999-12-31T23:59Z east of it
        return moment.astimezone(UTC)


def format_time(moment: datetime | None, zone: tzinfo = UTC) -> str:
    """RFC 3339 in ``zone`` (see :func:`in_zone`), ``Z`` for a zero offset, whole seconds.

    A fraction is written only when the store recorded one.
    """
    if moment is None:
        return ""
    shown = in_zone(moment, zone)
    text = shown.isoformat(timespec="microseconds" if shown.microsecond else "seconds")
    return text.replace("+00:00", "Z")


# ---------------------------------------------------------------------------------------------
# Store records (stage 1 output)


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """A long-term fact from ``memory/memory_index.json`` (tombstones already applied)."""

    id: str
    content: str
    category: str
    tags: tuple[str, ...] = ()
    created_at: datetime | None = None
    last_accessed: datetime | None = None
    access_count: int = 0
    score: float = 0.0
    source: str = ""
    source_project: str = ""
    confidence: float = 0.0
    provenance: str = ""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Topic:
    """A recurring subject from ``memory/topics.json``."""

    name: str
    mentions: int = 0
    summary: str = ""
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    related_fact_ids: tuple[str, ...] = ()


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Project:
    """A tracked project from ``memory/projects.json`` (name already lowercased)."""

    name: str
    path: str = ""
    description: str = ""
    status: str = ""
    technologies: tuple[str, ...] = ()
    key_files: tuple[str, ...] = ()
    last_active: datetime | None = None
    priority: int = 0
    metadata: tuple[tuple[str, str], ...] = ()
    """The store's ``metadata`` map as ``(key, text)`` pairs, sorted by key."""


ProfileValue = str | tuple[str, ...] | tuple[tuple[str, str], ...]
"""A profile value: a scalar, a list, or ordered ``(key, text)`` pairs (maps, milestones…)."""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileField:
    """One non-empty field of the user profile, in the store's key order."""

    key: str
    value: ProfileValue
    private: bool = False
    """Flagged ``sensitive`` in ``field_meta`` or its key marks it private: never rendered."""
    private_entries: tuple[str, ...] = ()
    """Keys of a map's entries that are private, shown hidden: read with their text, which
    the masking boundary drops (``core.scrub``), so no masked record holds it."""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """The user profile from ``memory/user_profile.json``."""

    name: str = ""
    name_private: bool = False
    fields: tuple[ProfileField, ...] = ()
    skills: tuple[str, ...] = ()
    goals: tuple[str, ...] = ()
    skills_private: bool = False
    goals_private: bool = False
    last_updated: datetime | None = None

    @property
    def display_name(self) -> str:
        """The name shown everywhere; ``user`` when the name is missing or private."""
        return "user" if self.name_private or not self.name else self.name


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Episode:
    """A dated unit of work from ``memory/episodes.json``."""

    id: str
    date: datetime
    project: str = ""
    """A workspace path, as the store records it."""
    summary: str = ""
    outcome: str = ""
    refs: tuple[str, ...] = ()
    source: str = ""
    created_at: datetime | None = None


JournalPeriod = Literal["daily", "weekly", "monthly"]


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class JournalNote:
    """A daily note (``memory/YYYYMM/YYYYMMDD.md``) or a weekly/monthly digest."""

    period: JournalPeriod
    label: str
    """``2026-10-24``, ``2026-W43`` or ``2026-10``."""
    text: str
    source_path: str
    """Relative to the state directory, POSIX separators."""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Session:
    """A saved conversation: its name, title and time only; transcripts are never read."""

    name: str
    title: str = ""
    saved: datetime | None = None
    """When ChatCLI saved it, as the wall-clock time in an ``autosave-YYYYMMDD-HHMMSS`` name
    (naive: ChatCLI's local time, read in the vault's ``render.timezone``); ``None`` for any
    other name.  A session file holds no time, and its mtime is not used: git does not keep
    it, so a clone would render another vault."""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """An installed skill from ``skills/<name>/SKILL.md`` (front matter) or ``skills/<name>.md``."""

    name: str
    description: str = ""
    triggers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    category: str = ""
    source_path: str = ""
    instructions: str = ""
    """The file's body after its front matter: what the skill tells the model to do."""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class CardNote:
    """A comment on a board card."""

    author: str
    text: str
    at: datetime | None = None


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class CardMove:
    """One move of a board card between columns (``history`` in ``board.json``)."""

    from_column: str
    to_column: str
    by: str = ""
    at: datetime | None = None


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Card:
    """A work-board card from ``board.json``; the column is already normalized."""

    id: str
    title: str
    column: str
    description: str = ""
    assignee: str = ""
    notes: tuple[CardNote, ...] = ()
    history: tuple[CardMove, ...] = ()
    """Column moves in the store's order (oldest first as ChatCLI appends them)."""
    created_at: datetime | None = None
    updated_at: datetime | None = None

    @property
    def name(self) -> str:
        """The title, else the description's first line, else ``Untitled card``: never empty."""
        if self.title.strip():
            return self.title.strip()
        lines = (line.strip(" \t#>*-") for line in self.description.splitlines())
        first = next((line for line in lines if line), "")
        return shorten(" ".join(first.split()), CARD_NAME_LIMIT) if first else "Untitled card"


CARD_NAME_LIMIT = 60
"""Characters of a description's first line that name a card without a title."""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    """One file of a context, chunks already folded back into it."""

    source: str
    """The path as the store records it (may hold ``\\`` in scanned Windows contexts)."""
    content: str
    type: str = "Text"


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """A ``/context`` context from ``contexts/<id>.json``."""

    id: str
    name: str
    mode: str
    description: str = ""
    tags: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()
    """The store's ``metadata`` map (``kb.repo_url``, ``kb.commit`` …), sorted by key."""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    documents: tuple[Document, ...] = ()

    @property
    def is_knowledge(self) -> bool:
        """Knowledge-mode contexts are ``kbcontext`` nodes; every other mode is ``context``."""
        return self.mode == "knowledge"


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class ExplicitLink:
    """A link a person drew by hand, from ``memory/links.json`` (ids are node ids)."""

    source: str
    target: str
    rel: str = "related"
    note: str = ""
    created_at: datetime | None = None


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """A store file that could not be read and was skipped (its last good records kept)."""

    source: str
    """The file, relative to the state directory (``sessions/a.json``)."""
    where: str
    """``line:column``, ``byte N`` or a field path; empty when the whole file is unreadable."""
    what: str
    """What is wrong, in one line."""
    digest: str = ""
    """SHA-256 of the bytes read (empty when none could be read): the warning is shown once
    per file and content."""
    new: bool = True
    """Not warned about before (set by the graph layer from what it remembers)."""

    def line(self) -> str:
        """``<source>:<where>: <what>; skipped``, the one warning line."""
        location = f"{self.source}:{self.where}" if self.where else self.source
        return f"{location}: {self.what}; skipped"


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Records:
    """Everything extracted from one state directory: the input of the graph build."""

    facts: tuple[Fact, ...] = ()
    topics: tuple[Topic, ...] = ()
    projects: tuple[Project, ...] = ()
    profile: Profile | None = None
    episodes: tuple[Episode, ...] = ()
    journal: tuple[JournalNote, ...] = ()
    sessions: tuple[Session, ...] = ()
    skills: tuple[Skill, ...] = ()
    cards: tuple[Card, ...] = ()
    contexts: tuple[Context, ...] = ()
    links: tuple[ExplicitLink, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    """Store files skipped because they could not be read, sorted by source."""


# ---------------------------------------------------------------------------------------------
# The graph (stage 2-3 output)


class Kind(StrEnum):
    """The kind of a graph note; the value is the ``kind`` written to graph.json and the vault."""

    FACT = "fact"
    TOPIC = "topic"
    PROJECT = "project"
    PROFILE = "profile"
    EPISODE = "episode"
    NOTE = "note"
    SESSION = "session"
    SKILL = "skill"
    CARD = "card"
    KBCONTEXT = "kbcontext"
    CONTEXT = "context"
    DOC = "doc"
    TAG = "tag"


class Origin(StrEnum):
    """Where a link comes from."""

    STRUCTURAL = "structural"
    WIKILINK = "wikilink"
    MARKDOWN = "markdown"
    MENTION = "mention"
    USER = "user"


# When several notes share a name, the more specific kind wins (wikilinks and name
# resolution); journal notes and sessions share one rank.
KIND_PRIORITY: MappingProxyType[Kind, int] = MappingProxyType(
    {
        Kind.PROJECT: 0,
        Kind.TOPIC: 1,
        Kind.KBCONTEXT: 2,
        Kind.CONTEXT: 2,
        Kind.SKILL: 3,
        Kind.DOC: 4,
        Kind.PROFILE: 5,
        Kind.NOTE: 6,
        Kind.SESSION: 6,
        Kind.CARD: 7,
        Kind.EPISODE: 8,
        Kind.FACT: 9,
        Kind.TAG: 10,
    }
)


@fast_init  # made again by every build: 99,000 at 100,000 notes
@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """A note of the graph."""

    id: str
    kind: Kind
    title: str
    aliases: tuple[str, ...] = ()


@fast_init  # made again by every build: 230,000 at 100,000 notes
@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """A typed, directed link; graph.json writes ``source``/``target`` as ``from``/``to``."""

    source: str
    target: str
    rel: str
    origin: Origin
    weight: float
    note: str = ""
    """Only for links drawn by hand: the person's note on the link."""

    @property
    def key(self) -> tuple[str, str, str]:
        """The sort and identity key: (from, to, rel)."""
        return (self.source, self.target, self.rel)


@dataclass(frozen=True, kw_only=True)
class Graph:
    """Nodes sorted by id and links sorted by (from, to, rel), with lookups built once."""

    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    fingerprint: str = ""
    by_id: MappingProxyType[str, Node] = field(init=False, repr=False, compare=False)
    outgoing: MappingProxyType[str, tuple[Link, ...]] = field(init=False, repr=False, compare=False)
    incoming: MappingProxyType[str, tuple[Link, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        out = _by_source(self.links)
        inc: dict[str, list[Link]] = {}
        for link in self.links:
            found = inc.get(link.target)
            if found is None:
                inc[link.target] = [link]
            else:
                found.append(link)
        object.__setattr__(self, "by_id", MappingProxyType({n.id: n for n in self.nodes}))
        object.__setattr__(self, "outgoing", MappingProxyType(out))
        object.__setattr__(
            self, "incoming", MappingProxyType({k: tuple(v) for k, v in inc.items()})
        )

    def links_from(self, node_id: str) -> tuple[Link, ...]:
        """Outgoing links of a note, sorted by (to, rel)."""
        return self.outgoing.get(node_id, ())

    def links_to(self, node_id: str) -> tuple[Link, ...]:
        """Backlinks of a note, sorted by (from, rel)."""
        return self.incoming.get(node_id, ())


_SOURCE = operator.attrgetter("source")


def _by_source(links: tuple[Link, ...]) -> dict[str, tuple[Link, ...]]:
    """Each source's links, in order: one run each when sorted by source (grouped in C)."""
    runs = [(source, tuple(run)) for source, run in itertools.groupby(links, _SOURCE)]
    out = dict(runs)
    if len(out) == len(runs):
        return out
    grouped: dict[str, list[Link]] = {}  # not sorted by source: a source may have many runs
    for link in links:
        grouped.setdefault(link.source, []).append(link)
    return {source: tuple(found) for source, found in grouped.items()}


# ---------------------------------------------------------------------------------------------
# Rendering → sync (stage 4 output, stage 5-6 input)


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteSpec:
    """A note the vault should hold, rendered only if the sync decides it must be written.

    ``key`` digests everything the note's bytes depend on (its record, its links and their
    targets' paths and titles, the template's source); an unchanged key with an untouched file
    means the note is not even rendered.
    """

    path: str
    """Vault-relative POSIX path, e.g. ``Facts/gotcha/Title (ab12…).md``."""
    node_id: str
    """The graph node it renders; ``""`` for notes that render no single node (``Home.md``)."""
    key: str
    render: Callable[[], bytes] = field(compare=False, repr=False)
    """Pure: returns the note's bytes (UTF-8, ``\\n`` line endings)."""

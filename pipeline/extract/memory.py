"""State dir → facts (tombstones applied), topics, projects, profile, episodes; reads files.

Reads the JSON stores under ``memory/`` (store formats §3 to §8).  Every result is sorted by
an explicit key and holds one record per identity, so it does not depend on the order of the
stores.  Rules the stores leave open, decided here:

* A record whose identity is missing is an error, unless ChatCLI's own derivation can recompute
  it: a fact id from its content, an episode id from its date, project and summary.
* When an identity repeats (hand edits, merges), the most recent copy wins: the newest
  ``created_at`` for facts and episodes, ``last_seen`` for topics, ``last_active`` for projects.
* A corrupt tombstone file is an error, although ChatCLI ignores it: skipping it could bring
  deleted facts back into the vault.
* Profile: only the fields ChatCLI defines are listed; an entry of a map field (``environment``,
  ``preferences``, ``top_commands``) whose key is private is dropped, since one entry cannot be
  hidden on its own.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

from vaultsync.core.model import Episode, Fact, Profile, ProfileField, ProfileValue, Project, Topic
from vaultsync.core.privacy import is_private_key
from vaultsync.extract.jsonio import (
    JSONObject,
    as_object,
    describe,
    fail,
    get_bool,
    get_float,
    get_id,
    get_int,
    get_str,
    get_str_map,
    get_strs,
    get_time,
    join,
    load_json,
    objects,
    parse_time,
    time_key,
    unique_sorted,
    wrong,
)
from vaultsync.extract.sources import EPISODES, INDEX, PROFILE, PROJECTS, TOMBSTONES, TOPICS

STATUS_ALIASES = {
    "active": "active",
    "ativo": "active",
    "paused": "paused",
    "pausado": "paused",
    "completed": "completed",
    "done": "completed",
    "concluído": "completed",
    "concluido": "completed",
}
"""Project status spellings ChatCLI accepts (lowercased) → the normalized status."""

PROFILE_SCALARS = frozenset(
    (
        "name",
        "role",
        "expertise_level",
        "preferred_language",
        "communication_style",
        "company",
        "location",
    )
)
PROFILE_LISTS = frozenset(("certifications", "skills", "goals", "interests", "directives"))
PROFILE_MAPS = frozenset(("environment", "top_commands", "preferences"))
PROFILE_PAIRS = {"milestones": ("date", "text"), "stances": ("position", "reason")}
"""Fields listed as ``(first, second)`` pairs taken from each object of the array."""


# ---------------------------------------------------------------------------------------------
# Facts


def read_facts(state_dir: Path) -> tuple[Fact, ...]:
    """Facts from the index, minus those a later tombstone deleted; sorted by id."""
    path = state_dir / INDEX
    deleted = read_tombstones(state_dir)
    raw = load_json(path)
    if raw is None and path.exists():
        # ChatCLI treats an empty index as corrupt; a crash can leave one.  Reading it as "no
        # facts" would remove every fact note.
        fail(path, "", "empty file (ChatCLI treats an empty memory index as corrupt)")
    facts = []
    for at, obj in objects(raw, path):
        fact = _fact(obj, path, at)
        if fact.id in deleted and time_key(deleted[fact.id]) > time_key(fact.created_at):
            continue
        facts.append(fact)
    return unique_sorted(
        facts,
        key=lambda f: f.id,
        sort_key=lambda f: f.id,
        rank=lambda f: (time_key(f.created_at), time_key(f.last_accessed), f.access_count),
    )


def fact_id(content: str) -> str:
    """ChatCLI's fact id: the first 12 bytes of ``sha256(lower(trim(content)))`` as hex."""
    return hashlib.sha256(content.strip().lower().encode()).digest()[:12].hex()


def _fact(obj: JSONObject, path: Path, at: str) -> Fact:
    content = get_str(obj, "content", path, at)
    ident = get_id(obj, path, at)
    if not ident:
        if not content.strip():
            fail(path, join(at, "id"), "missing, and there is no content to derive it from")
        ident = fact_id(content)
    return Fact(
        id=ident,
        content=content,
        category=get_str(obj, "category", path, at),
        tags=get_strs(obj, "tags", path, at),
        created_at=get_time(obj, "created_at", path, at),
        last_accessed=get_time(obj, "last_accessed", path, at),
        access_count=get_int(obj, "access_count", path, at),
        score=get_float(obj, "score", path, at),
        source=get_str(obj, "source", path, at),
        source_project=get_str(obj, "source_project", path, at),
        confidence=get_float(obj, "confidence", path, at),
        provenance=get_str(obj, "provenance", path, at),
    )


def read_tombstones(state_dir: Path) -> dict[str, datetime | None]:
    """Fact id → ``deleted_at`` (``None`` for Go's zero time)."""
    path = state_dir / TOMBSTONES
    deleted: dict[str, datetime | None] = {}
    for ident, when in as_object(load_json(path), path, "").items():
        if type(when) is not str:
            wrong(path, ident, "an RFC 3339 timestamp string", when)
        deleted[ident] = parse_time(when, path=path, where=ident)
    return deleted


# ---------------------------------------------------------------------------------------------
# Topics, projects, episodes


def read_topics(state_dir: Path) -> tuple[Topic, ...]:
    """Topics sorted by name (case kept: ``Auth`` and ``auth`` are two topics)."""
    path = state_dir / TOPICS
    topics = []
    for at, obj in objects(load_json(path), path):
        name = get_str(obj, "name", path, at)
        if not name:
            fail(path, join(at, "name"), "missing")
        topics.append(
            Topic(
                name=name,
                mentions=get_int(obj, "mentions", path, at),
                summary=get_str(obj, "summary", path, at),
                first_seen=get_time(obj, "first_seen", path, at),
                last_seen=get_time(obj, "last_seen", path, at),
                related_fact_ids=get_strs(obj, "related_fact_ids", path, at),
            )
        )
    return unique_sorted(
        topics,
        key=lambda t: t.name,
        sort_key=lambda t: t.name,
        rank=lambda t: time_key(t.last_seen),
    )


def normalize_status(status: str) -> str:
    """``active``/``paused``/``completed`` for every spelling ChatCLI accepts; else as written."""
    return STATUS_ALIASES.get(status.strip().lower(), status)


def _dedupe_ci(items: tuple[str, ...]) -> tuple[str, ...]:
    """Drop case-insensitive repeats, keeping the first spelling."""
    seen: set[str] = set()
    kept = []
    for item in items:
        folded = item.casefold()
        if folded not in seen:
            seen.add(folded)
            kept.append(item)
    return tuple(kept)


def read_projects(state_dir: Path) -> tuple[Project, ...]:
    """Projects with lowercased names and normalized statuses, sorted by name."""
    path = state_dir / PROJECTS
    projects = []
    for at, obj in objects(load_json(path), path):
        name = get_str(obj, "name", path, at).strip().lower()
        if not name:
            fail(path, join(at, "name"), "missing")
        projects.append(
            Project(
                name=name,
                path=get_str(obj, "path", path, at),
                description=get_str(obj, "description", path, at),
                status=normalize_status(get_str(obj, "status", path, at)),
                technologies=_dedupe_ci(get_strs(obj, "technologies", path, at)),
                key_files=get_strs(obj, "key_files", path, at),
                last_active=get_time(obj, "last_active", path, at),
                priority=get_int(obj, "priority", path, at),
                metadata=get_str_map(obj, "metadata", path, at),
            )
        )
    return unique_sorted(
        projects,
        key=lambda p: p.name,
        sort_key=lambda p: p.name,
        rank=lambda p: time_key(p.last_active),
    )


def episode_id(date_text: str, project: str, summary: str) -> str:
    """ChatCLI's episode id: ``ep_`` + 12 bytes of ``sha256(date|project|lower(summary))``."""
    key = f"{date_text}|{project}|{' '.join(summary.split()).lower()}"
    return "ep_" + hashlib.sha256(key.encode()).digest()[:12].hex()


def read_episodes(state_dir: Path) -> tuple[Episode, ...]:
    """Episodes sorted by (date, id); a missing date falls back to ``created_at``."""
    path = state_dir / EPISODES
    episodes = []
    for at, obj in objects(load_json(path), path):
        created = get_time(obj, "created_at", path, at)
        when = get_time(obj, "date", path, at) or created
        if when is None:
            fail(path, join(at, "date"), "missing (and no created_at to fall back on)")
        project = get_str(obj, "project", path, at)
        summary = get_str(obj, "summary", path, at)
        episodes.append(
            Episode(
                id=get_id(obj, path, at) or episode_id(when.strftime("%Y-%m-%d"), project, summary),
                date=when,
                project=project,
                summary=summary,
                outcome=get_str(obj, "outcome", path, at),
                refs=get_strs(obj, "refs", path, at),
                source=get_str(obj, "source", path, at),
                created_at=created,
            )
        )
    return unique_sorted(
        episodes,
        key=lambda e: e.id,
        sort_key=lambda e: (e.date, e.id),
        rank=lambda e: time_key(e.created_at),
    )


# ---------------------------------------------------------------------------------------------
# Profile


def read_profile(state_dir: Path) -> Profile | None:
    """The user profile, its fields in store order and privacy applied; ``None`` if absent."""
    path = state_dir / PROFILE
    raw = load_json(path)
    if raw is None:
        return None
    obj = as_object(raw, path, "")
    sensitive = _sensitive_fields(obj, path)

    def private(key: str) -> bool:
        return key in sensitive or is_private_key(key)

    fields = []
    for key in obj:
        value = _profile_value(obj, key, path)
        if value:
            hidden = _private_entries(key, value)
            fields.append(
                ProfileField(key=key, value=value, private=private(key), private_entries=hidden)
            )
    return Profile(
        name=get_str(obj, "name", path, ""),
        name_private=private("name"),
        fields=tuple(fields),
        skills=get_strs(obj, "skills", path, ""),
        goals=get_strs(obj, "goals", path, ""),
        skills_private=private("skills"),
        goals_private=private("goals"),
        last_updated=get_time(obj, "last_updated", path, ""),
    )


def _sensitive_fields(profile: JSONObject, path: Path) -> frozenset[str]:
    meta = as_object(profile.get("field_meta"), path, "field_meta")
    flagged = set()
    for key, entry in meta.items():
        at = join("field_meta", key)
        if get_bool(as_object(entry, path, at), "sensitive", path, at):
            flagged.add(key)
    return frozenset(flagged)


def _profile_value(obj: JSONObject, key: str, path: Path) -> ProfileValue | None:
    """The value of one known field, or ``None`` for fields that are not listed."""
    if key in PROFILE_SCALARS:
        return get_str(obj, key, path, "").strip()
    if key in PROFILE_LISTS:
        return get_strs(obj, key, path, "")
    if key in PROFILE_MAPS:
        entries = as_object(obj[key], path, key)
        # A private entry keeps its place and shows as hidden. Its text is read in only for the
        # masking boundary (core.scrub), which learns any secret in it, so that secret is
        # masked wherever else it appears, then drops it: no masked record holds it.
        return tuple(
            (name, _map_text(value, path, join(key, name)))
            for name, value in sorted(entries.items())
        )
    if key in PROFILE_PAIRS:
        first, second = PROFILE_PAIRS[key]
        pairs = (
            (get_str(item, first, path, at), get_str(item, second, path, at))
            for at, item in objects(obj[key], path, key)
        )
        # A milestone needs its text, a stance its position.
        needed = 1 if key == "milestones" else 0
        return tuple(pair for pair in pairs if pair[needed])
    return None


def _private_entries(key: str, value: ProfileValue) -> tuple[str, ...]:
    """The names of a map field's private entries (``preferences.bank_account``)."""
    if key not in PROFILE_MAPS or isinstance(value, str):
        return ()
    return tuple(pair[0] for pair in value if isinstance(pair, tuple) and is_private_key(pair[0]))


def _map_text(value: object, path: Path, where: str) -> str:
    if isinstance(value, list | dict):
        fail(path, where, f"expected a string or a number, got {describe(value)}")
    if isinstance(value, str):
        return value
    return "" if value is None else describe(value)

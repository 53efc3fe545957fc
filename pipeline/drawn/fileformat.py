"""``links.json`` ⇄ values, and the merge of copies of the store; pure.

The format is described in ``drawn.store``; the JSONL export is ``drawn.export``.
Parsing is strict about shape (one ``StoreError`` naming the file and ``line:column`` or the
field path) and lenient about content it can normalise: relations are re-slugged, notes
re-flattened, unknown fields ignored (and not written back).

Merging is what makes concurrent writers safe: ``settle`` takes any number of copies of links
and tombstones and returns the one deterministic result, whatever their order —

* copies of one (from, to, rel) become one link: the latest ``created_at`` (the latest time it
  was drawn), and the note with the latest ``updated_at``;
* a tombstone removes the link when ``created_at <= deleted_at``; a link drawn after the
  removal (``created_at > deleted_at``) stays and the tombstone goes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from vaultsync.core.errors import SealedStoreError, StoreError
from vaultsync.core.model import ZERO_TIME, ExplicitLink, format_time
from vaultsync.drawn.rules import (
    DEFAULT_RELATION,
    clean_text,
    endpoint_problem,
    normalize_note,
    relation_slug,
)
from vaultsync.extract.jsonio import (
    SEALED_HINT,
    SEALED_WHAT,
    describe,
    is_sealed,
    parse_json,
)
from vaultsync.extract.jsonio import parse_time as parse_rfc3339

FORMAT_VERSION = 1
RETENTION = timedelta(days=30)
"""How long a tombstone is kept, and how long a link outlives a note gone from the stores."""

LinkKey = tuple[str, str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredLink:
    """A link as ``links.json`` holds it: ``ExplicitLink`` plus the time its note changed."""

    source: str
    target: str
    rel: str
    note: str
    created_at: datetime
    updated_at: datetime

    @property
    def key(self) -> LinkKey:
        """The identity of the link: (from, to, rel)."""
        return (self.source, self.target, self.rel)

    def public(self) -> ExplicitLink:
        """The link as the rest of the pipeline sees it."""
        return ExplicitLink(
            source=self.source,
            target=self.target,
            rel=self.rel,
            note=self.note,
            created_at=self.created_at,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Tombstone:
    """A removal: it beats every copy of the link drawn at or before ``deleted_at``."""

    source: str
    target: str
    rel: str
    deleted_at: datetime

    @property
    def key(self) -> LinkKey:
        """The identity of the removed link: (from, to, rel)."""
        return (self.source, self.target, self.rel)


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkFile:
    """The whole store, settled: links and tombstones sorted by key, no key twice."""

    links: tuple[StoredLink, ...] = ()
    tombstones: tuple[Tombstone, ...] = ()
    missing_since: tuple[tuple[str, datetime], ...] = ()
    """``(node id, first seen missing)`` for link endpoints gone from the stores, by id."""


class UnsupportedVersionError(StoreError):
    """``links.json`` was written by a newer format: readable by nobody here, but not corrupt."""


class RecordError(Exception):
    """A problem inside one record: where (a field path) and what; callers add the file."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(what)
        self.where = where
        self.what = what


# ---------------------------------------------------------------------------------------------
# Merging


def combine(a: StoredLink, b: StoredLink) -> StoredLink:
    """Two copies of one link → one: latest ``created_at``, note of the latest ``updated_at``."""
    noted = max(a, b, key=lambda link: (link.updated_at, link.note))
    return StoredLink(
        source=a.source,
        target=a.target,
        rel=a.rel,
        note=noted.note,
        created_at=max(a.created_at, b.created_at),
        updated_at=max(a.updated_at, b.updated_at),
    )


def settle(
    links: Iterable[StoredLink],
    tombstones: Iterable[Tombstone],
    missing_since: Iterable[tuple[str, datetime]] = (),
) -> LinkFile:
    """Union of links minus tombstones, one entry per key, sorted; independent of input order."""
    best: dict[LinkKey, StoredLink] = {}
    for link in links:
        held = best.get(link.key)
        best[link.key] = link if held is None else combine(held, link)
    graves: dict[LinkKey, Tombstone] = {}
    for grave in tombstones:
        held_grave = graves.get(grave.key)
        if held_grave is None or grave.deleted_at > held_grave.deleted_at:
            graves[grave.key] = grave
    for key, grave in list(graves.items()):
        alive = best.get(key)
        if alive is None:
            continue
        if alive.created_at <= grave.deleted_at:
            del best[key]
        else:
            del graves[key]
    since: dict[str, datetime] = {}
    for node_id, moment in missing_since:
        since[node_id] = min(moment, since.get(node_id, moment))
    return LinkFile(
        links=tuple(best[key] for key in sorted(best)),
        tombstones=tuple(graves[key] for key in sorted(graves)),
        missing_since=tuple(sorted(since.items())),
    )


def merge(mine: LinkFile, disk: LinkFile) -> LinkFile:
    """A process's copy merged into the file on disk; ``missing_since`` is the disk's alone."""
    return settle(
        (*disk.links, *mine.links), (*disk.tombstones, *mine.tombstones), disk.missing_since
    )


def prune_tombstones(doc: LinkFile, now: datetime) -> LinkFile:
    """``doc`` without the tombstones older than ``RETENTION``."""
    kept = tuple(grave for grave in doc.tombstones if now - grave.deleted_at <= RETENTION)
    if len(kept) == len(doc.tombstones):
        return doc
    return LinkFile(links=doc.links, tombstones=kept, missing_since=doc.missing_since)


# ---------------------------------------------------------------------------------------------
# links.json


def parse_document(data: bytes, path: str) -> LinkFile:
    """The bytes of ``links.json`` → a settled ``LinkFile``; empty or blank bytes are empty.

    Raises:
        SealedStoreError: the file is sealed at rest by ChatCLI.
        UnsupportedVersionError: ``version`` is newer than ``FORMAT_VERSION``.
        StoreError: anything else is wrong (invalid UTF-8, JSON, or shape).
    """
    if is_sealed(data):
        raise SealedStoreError(path=path, what=SEALED_WHAT, hint=SEALED_HINT)
    top = parse_json(data, Path(path))
    if top is None:
        return LinkFile()
    try:
        return _document(top, path)
    except RecordError as bad:
        raise StoreError(path=path, where=bad.where, what=bad.what) from None


def _document(top: object, path: str) -> LinkFile:
    if not isinstance(top, dict):
        raise RecordError("", f"expected an object with version and links, got {describe(top)}")
    version = top.get("version")
    if type(version) is not int:
        raise RecordError(
            "version", f"expected the integer {FORMAT_VERSION}, got {describe(version)}"
        )
    if version > FORMAT_VERSION:
        raise UnsupportedVersionError(
            path=path,
            where="version",
            what=f"format version {version} is newer than this vaultsync reads ({FORMAT_VERSION})",
            hint="upgrade vaultsync",
        )
    if version != FORMAT_VERSION:
        raise RecordError("version", f"expected {FORMAT_VERSION}, got {version}")
    links = [record_link(item, f"links[{i}]") for i, item in enumerate(_array(top, "links", True))]
    graves = [_grave(item, f"tombstones[{i}]") for i, item in enumerate(_array(top, "tombstones"))]
    missing = top.get("missing_since")
    if missing is None:
        missing = {}
    if not isinstance(missing, dict):
        raise RecordError("missing_since", f"expected an object, got {describe(missing)}")
    since = [
        (clean_text(node_id), _when(v, f"missing_since.{node_id}"))
        for node_id, v in missing.items()
    ]
    return settle(links, graves, since)


def _array(obj: dict[str, Any], key: str, required: bool = False) -> list[Any]:
    value = obj.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise RecordError(key, f"expected an array, got {describe(value)}")
    return value


def _fields(item: object, at: str) -> tuple[dict[str, Any], str, str, str]:
    """An object's ``from``, ``to`` and ``rel`` (slugged), checked."""
    if not isinstance(item, dict):
        raise RecordError(at, f"expected an object, got {describe(item)}")
    ends = []
    for key in ("from", "to"):
        value = item.get(key)
        where = f"{at}.{key}" if at else key
        if type(value) is not str:
            raise RecordError(where, f"expected a node id string, got {describe(value)}")
        problem = endpoint_problem(value)
        if problem:
            raise RecordError(where, f"{describe(value)} {problem}")
        ends.append(value)
    if ends[0] == ends[1]:
        raise RecordError(at, f"a link cannot join {describe(ends[0])} to itself")
    rel = _optional_str(item, "rel", at) or DEFAULT_RELATION
    return item, ends[0], ends[1], relation_slug(rel)


def _optional_str(item: dict[str, Any], key: str, at: str) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if type(value) is not str:
        raise RecordError(f"{at}.{key}" if at else key, f"expected a string, got {describe(value)}")
    return clean_text(value)


def _when(value: object, where: str) -> datetime:
    if type(value) is not str:
        raise RecordError(where, f"expected an RFC 3339 timestamp string, got {describe(value)}")
    try:
        moment = parse_rfc3339(value, where=where)
    except StoreError as err:
        raise RecordError(where, err.what) from None
    return moment or ZERO_TIME


def _time_field(item: dict[str, Any], key: str, at: str) -> datetime | None:
    value = item.get(key)
    return None if value is None else _when(value, f"{at}.{key}" if at else key)


def record_link(item: object, at: str) -> StoredLink:
    """One link record (a JSON object) → ``StoredLink``; ``at`` prefixes field paths.

    Raises:
        RecordError: a field is missing or of the wrong type, or an endpoint is not a node id.
    """
    obj, source, target, rel = _fields(item, at)
    created = _time_field(obj, "created_at", at)
    if created is None:
        raise RecordError(f"{at}.created_at" if at else "created_at", "is missing")
    updated = _time_field(obj, "updated_at", at) or created
    return StoredLink(
        source=source,
        target=target,
        rel=rel,
        note=normalize_note(_optional_str(obj, "note", at)),
        created_at=created,
        updated_at=max(created, updated),
    )


def _grave(item: object, at: str) -> Tombstone:
    obj, source, target, rel = _fields(item, at)
    deleted = _time_field(obj, "deleted_at", at)
    if deleted is None:
        raise RecordError(f"{at}.deleted_at", "is missing")
    return Tombstone(source=source, target=target, rel=rel, deleted_at=deleted)


def dump_document(doc: LinkFile) -> bytes:
    """``doc`` as ``links.json`` bytes: sorted keys and records, 2-space indent, final newline."""
    body = {
        "version": FORMAT_VERSION,
        "links": [link_record(link) for link in doc.links],
        "tombstones": [
            {
                "from": grave.source,
                "to": grave.target,
                "rel": grave.rel,
                "deleted_at": format_time(grave.deleted_at),
            }
            for grave in doc.tombstones
        ],
        "missing_since": {node_id: format_time(moment) for node_id, moment in doc.missing_since},
    }
    return (json.dumps(body, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")


def link_record(link: StoredLink) -> dict[str, str]:
    """A link as a JSON object, fields in the order of the export line."""
    return {
        "from": link.source,
        "to": link.target,
        "rel": link.rel,
        "note": link.note,
        "created_at": format_time(link.created_at),
        "updated_at": format_time(link.updated_at),
    }

"""``<state>/memory/links.json``: the links people draw by hand; edge (files, locks).

The pure parts live in ``drawn.rules`` (relations, notes, supersession),
``drawn.fileformat`` (format, merge), ``drawn.export`` (JSONL) and ``drawn.ops``
(the changes); ``drawn.fileio`` holds the file primitives.  This module ties them
together: ``read_links`` is the read-only path of the graph build, ``LinkStore`` runs the write
commands.

The file (``version`` 1, vaultsync's own format)::

    {
      "links": [
        {"created_at": "2026-10-01T10:00:00Z", "from": "fact:0a1b2c3d4e5f60718293a4b5",
         "note": "the TLS section", "rel": "about", "to": "project:orbital",
         "updated_at": "2026-10-01T10:00:00Z"}
      ],
      "missing_since": {"topic:old name": "2026-10-02T08:00:00Z"},
      "tombstones": [
        {"deleted_at": "2026-10-03T09:00:00Z", "from": "topic:a", "rel": "related", "to": "doc:…"}
      ],
      "version": 1
    }

* ``from``/``to`` are graph node ids (``fact:<24 hex>``, ``topic:<name>``, ``project:<name>``,
  ``doc:<ctx>:<path>``, …); a link is identified by (from, to, rel).  ``rel`` is a slug
  (``linkrules.relation_slug``).  ``note`` is one line of at most 280 UTF-8 bytes.
* ``created_at`` is when the link was (last) drawn; ``updated_at`` when its note last changed
  (absent means ``created_at``).  Times are RFC 3339 UTC.
* ``tombstones``: removals, kept 30 days.  A tombstone beats every copy of its link with
  ``created_at <= deleted_at``; a link drawn later wins and the tombstone goes.
* ``missing_since``: link endpoints gone from the stores, and since when (``compact``).
* Written sorted (keys, and records by (from, to, rel)), 2-space indent, UTF-8, final
  newline, mode 0600, so the same store is always the same bytes.  On reading, unknown fields
  are ignored (and dropped on the next write); ``tombstones``/``missing_since`` may be absent;
  an empty file is an empty store.

Every write command takes an exclusive ``flock`` on ``links.json.lock`` (0600; waiting at most
``lock_timeout`` seconds), re-reads the file, merges this process's last copy into it (union
of links minus tombstones: a stale copy cannot bring back a removed link), applies the change,
prunes tombstones older than 30 days and replaces the file atomically (temp file in the same
directory, fsync, ``os.replace``, fsync of the directory).  A corrupt file met by a write is
renamed to ``links.json.corrupt-<UTC time>`` (never overwriting one) and the store starts
empty; the result says where the file went.  ``read_links`` raises instead and never renames.
A sealed file (ChatCLI's at-rest encryption) is read-only: reads raise ``SealedStoreError``,
writes ``LinkStoreError``; so does a file of a newer format version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from vaultsync.core.errors import LinkStoreError, SealedStoreError, StoreError
from vaultsync.core.model import ExplicitLink, Fact
from vaultsync.drawn.export import export_lines, parse_lines
from vaultsync.drawn.fileformat import (
    LinkFile,
    StoredLink,
    UnsupportedVersionError,
    dump_document,
    merge,
    parse_document,
    prune_tombstones,
)
from vaultsync.drawn.fileio import locked, quarantine, read_file, write_atomic
from vaultsync.drawn.ops import (
    AddStatus,
    CompactChanges,
    add_link,
    compact_links,
    import_links,
    remove_links,
)
from vaultsync.drawn.rules import (
    DEFAULT_RELATION,
    endpoint_problem,
    follow_supersession,
    normalize_note,
    relation_slug,
    resolve_chains,
    supersession_map,
)

__all__ = [
    "MAX_LINKS",
    "AddResult",
    "CompactReport",
    "ImportReport",
    "LinkStore",
    "Quarantine",
    "RemoveResult",
    "follow_supersession",
    "links_path",
    "read_links",
    "relation_slug",
    "supersession_map",
]

MAX_LINKS = 10_000
LOCK_TIMEOUT = 10.0

T = TypeVar("T")


def links_path(state_dir: Path) -> Path:
    """Where the store lives: ``<state>/memory/links.json``."""
    return state_dir / "memory" / "links.json"


def read_links(state_dir: Path) -> tuple[ExplicitLink, ...]:
    """The links of the store, sorted by (from, to, rel); a missing file is ``()``.

    Read-only: takes no lock and never renames anything.

    Raises:
        SealedStoreError: the file is sealed at rest.
        StoreError: the file cannot be read or is not a valid store (one line naming the file
            and ``line:column`` or the field).
    """
    path = links_path(state_dir)
    data = read_file(path)
    if data is None:
        return ()
    return tuple(link.public() for link in parse_document(data, str(path)).links)


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True, kw_only=True)
class Quarantine:
    """A corrupt ``links.json`` moved aside by a write command."""

    path: Path
    """Where the corrupt file is now, byte for byte."""
    reason: str
    """Why it could not be read (the ``StoreError`` message)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AddResult:
    """``added`` a new link, ``updated`` the note of an existing one, or ``unchanged``."""

    status: AddStatus
    link: ExplicitLink
    quarantined: Quarantine | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveResult:
    """The links removed (empty when none matched)."""

    removed: tuple[ExplicitLink, ...]
    quarantined: Quarantine | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportReport:
    """Counts of an import: ``added``, ``updated`` (newer note), ``skipped`` (the rest)."""

    added: int
    updated: int
    skipped: int
    quarantined: Quarantine | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactReport:
    """What ``compact`` changed; see ``linkops.CompactChanges`` for the fields."""

    moved: tuple[tuple[ExplicitLink, ExplicitLink | None], ...]
    collected: tuple[ExplicitLink, ...]
    missing: tuple[tuple[str, datetime], ...]
    pruned_tombstones: int
    quarantined: Quarantine | None = None


# ---------------------------------------------------------------------------------------------
# The store


class LinkStore:
    """The write commands on ``<state>/memory/links.json`` (see the module doc).

    An instance remembers the store as it last wrote it and merges that copy into the file on
    every write, as a long-running ChatCLI process does with its facts.

    Args:
        state_dir: the ChatCLI state directory (it must exist; ``memory/`` is created 0750).
        max_links: the cap on the number of links.
        lock_timeout: seconds to wait for the lock before giving up.
    """

    def __init__(
        self, state_dir: Path, *, max_links: int = MAX_LINKS, lock_timeout: float = LOCK_TIMEOUT
    ) -> None:
        self.state_dir = state_dir
        self.path = links_path(state_dir)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.max_links = max_links
        self.lock_timeout = lock_timeout
        self._known: LinkFile | None = None

    def repair(self, now: datetime) -> Quarantine | None:
        """Move a corrupt file aside and start an empty store (what every write does first)."""
        return self._transact(now, lambda doc: (doc, None))[1]

    # -- reading ------------------------------------------------------------------------------

    def links(self) -> tuple[ExplicitLink, ...]:
        """The links on disk now (``read_links``)."""
        return read_links(self.state_dir)

    def export_jsonl(self) -> str:
        """The store as JSONL: ``{"kind":"header","version":1}``, then one link per line.

        Read-only, like ``read_links``: a corrupt file raises ``StoreError``.
        """
        data = read_file(self.path)
        doc = LinkFile() if data is None else parse_document(data, str(self.path))
        return export_lines(doc)

    # -- writing ------------------------------------------------------------------------------

    def add(
        self,
        from_id: str,
        to_id: str,
        rel: str = DEFAULT_RELATION,
        note: str = "",
        *,
        now: datetime,
    ) -> AddResult:
        """Draw a link, or give an existing (from, to, rel) the new note.

        Raises:
            LinkStoreError: an endpoint is not a node id, both are the same note, the store
                is full (``max_links``), sealed, of a newer format, or locked too long.
        """
        when = _utc(now)
        source, target = _endpoint("from", from_id), _endpoint("to", to_id)
        if source == target:
            raise LinkStoreError(f"cannot link {source} to itself")
        link = StoredLink(
            source=source,
            target=target,
            rel=relation_slug(rel),
            note=normalize_note(note),
            created_at=when,
            updated_at=when,
        )

        def change(doc: LinkFile) -> tuple[LinkFile, tuple[AddStatus, ExplicitLink]]:
            new, status = add_link(doc, link, self.max_links)
            stored = next(held for held in new.links if held.key == link.key)
            return new, (status, stored.public())

        (status, stored), quarantined = self._transact(when, change)
        return AddResult(status=status, link=stored, quarantined=quarantined)

    def remove(
        self, from_id: str, to_id: str, rel: str | None = None, *, now: datetime
    ) -> RemoveResult:
        """Remove the link(s) from ``from_id`` to ``to_id``: of relation ``rel``, or all.

        Each removed link leaves a tombstone kept 30 days.
        """
        when = _utc(now)
        source, target = _endpoint("from", from_id), _endpoint("to", to_id)
        slug = None if rel is None else relation_slug(rel)

        def change(doc: LinkFile) -> tuple[LinkFile, tuple[StoredLink, ...]]:
            return remove_links(doc, source, target, slug, when)

        gone, quarantined = self._transact(when, change)
        return RemoveResult(removed=tuple(link.public() for link in gone), quarantined=quarantined)

    def import_jsonl(self, text: str, *, now: datetime, source: str = "<import>") -> ImportReport:
        """Merge an export into the store (union; tombstones respected; the newer note wins).

        Raises:
            LinkStoreError: a malformed line (named by number; nothing is written), or the
                import would pass ``max_links``.
        """
        when = _utc(now)
        incoming = parse_lines(text, source)

        def change(doc: LinkFile) -> tuple[LinkFile, tuple[int, int, int]]:
            new, counts = import_links(doc, incoming, self.max_links)
            return new, (counts.added, counts.updated, counts.skipped)

        (added, updated, skipped), quarantined = self._transact(when, change)
        return ImportReport(added=added, updated=updated, skipped=skipped, quarantined=quarantined)

    def compact(
        self,
        facts: Iterable[Fact],
        present_node_ids: Iterable[str],
        *,
        now: datetime,
        moves: Mapping[str, str] | None = None,
    ) -> CompactReport:
        """Persist supersession moves and collect links to notes gone for over 30 days.

        Args:
            facts: the facts of the store (for ``supersession_map``; each is also present).
            present_node_ids: every node id the stores hold, including notes outside the
                graph's caps.  An endpoint not in it starts (or keeps) its 30-day clock; tags
                and unknown id forms never do.
            now: the time of the compaction.
            moves: extra old fact id → new fact id moves (memory compaction's rewrites);
                supersession wins where both name an id, and chains through both are followed.
        """
        when = _utc(now)
        fact_list = tuple(facts)
        mapping = resolve_chains({**(moves or {}), **supersession_map(fact_list)})
        present = frozenset(present_node_ids) | {f"fact:{fact.id}" for fact in fact_list}

        def change(doc: LinkFile) -> tuple[LinkFile, tuple[CompactChanges, int]]:
            new, changes = compact_links(doc, mapping, present, when)
            pruned = prune_tombstones(new, when)
            return pruned, (changes, len(new.tombstones) - len(pruned.tombstones))

        (changes, dropped), quarantined = self._transact(when, change)
        return CompactReport(
            moved=changes.moved,
            collected=changes.collected,
            missing=changes.missing,
            pruned_tombstones=dropped,
            quarantined=quarantined,
        )

    # -- the transaction ----------------------------------------------------------------------

    def _transact(
        self, now: datetime, change: Callable[[LinkFile], tuple[LinkFile, T]]
    ) -> tuple[T, Quarantine | None]:
        if not self.state_dir.is_dir():
            raise LinkStoreError(f"{self.state_dir}: the state directory does not exist")
        with locked(self.lock_path, self.lock_timeout):
            disk, quarantined = self._load(now)
            base = disk if self._known is None else merge(self._known, disk)
            new, outcome = change(base)
            new = prune_tombstones(new, now)
            if quarantined is not None or new != disk:
                write_atomic(self.path, dump_document(new))
            self._known = new
        return outcome, quarantined

    def _load(self, now: datetime) -> tuple[LinkFile, Quarantine | None]:
        data = read_file(self.path)
        if data is None:
            return LinkFile(), None
        try:
            return parse_document(data, str(self.path)), None
        except SealedStoreError as err:
            raise LinkStoreError(f"{err.message}; it is read-only here", hint=err.hint) from err
        except UnsupportedVersionError as err:
            raise LinkStoreError(f"{err.message}; refusing to write", hint=err.hint) from err
        except StoreError as err:
            moved_to = quarantine(self.path, now)
            self._known = None
            return LinkFile(), Quarantine(path=moved_to, reason=err.message)


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    return now.astimezone(UTC)


def _endpoint(name: str, node_id: str) -> str:
    problem = endpoint_problem(node_id)
    if problem:
        raise LinkStoreError(f"{name} {node_id!r} {problem}")
    return node_id

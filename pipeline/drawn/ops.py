"""The changes the link commands make to a ``LinkFile``: add, remove, import, compact; pure.

Each function takes the settled store (as read from disk under the lock and merged) and the
time, and returns the new store with what happened.  ``vaultsync.drawn.store`` runs them inside a
locked read-merge-write transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from vaultsync.core.errors import LinkStoreError
from vaultsync.core.model import ExplicitLink
from vaultsync.drawn.fileformat import RETENTION, LinkFile, StoredLink, Tombstone, combine, settle
from vaultsync.drawn.rules import follow_node, is_collectable

AddStatus = Literal["added", "updated", "unchanged"]


def add_link(doc: LinkFile, link: StoredLink, cap: int) -> tuple[LinkFile, AddStatus]:
    """Draw ``link``; an existing (from, to, rel) gets the new note instead.

    Drawing a link again after its removal is deliberate: the tombstone goes.

    Raises:
        LinkStoreError: the store already holds ``cap`` links and ``link`` is new.
    """
    links = {held.key: held for held in doc.links}
    held = links.get(link.key)
    if held is not None:
        if held.note == link.note:
            return doc, "unchanged"
        links[link.key] = replace(
            held, note=link.note, updated_at=max(held.updated_at, link.updated_at)
        )
        status: AddStatus = "updated"
    else:
        if len(links) >= cap:
            raise LinkStoreError(
                f"cannot draw another link: the store holds {len(links):,} links, "
                f"the cap is {cap:,}",
                hint="remove links you no longer need first",
            )
        links[link.key] = link
        status = "added"
    graves = (grave for grave in doc.tombstones if grave.key != link.key)
    return settle(links.values(), graves, doc.missing_since), status


def remove_links(
    doc: LinkFile, source: str, target: str, rel: str | None, now: datetime
) -> tuple[LinkFile, tuple[StoredLink, ...]]:
    """Remove the links from ``source`` to ``target`` (of relation ``rel``, or all), tombstoned.

    The tombstone is dated ``now``, or the link's ``created_at`` if the clock is behind it, so
    it always beats the copy it removes.
    """
    gone = tuple(
        link
        for link in doc.links
        if link.source == source and link.target == target and rel in (None, link.rel)
    )
    if not gone:
        return doc, ()
    graves = [_grave(link, now) for link in gone]
    return settle(doc.links, (*doc.tombstones, *graves), doc.missing_since), gone


def _grave(link: StoredLink, now: datetime) -> Tombstone:
    return Tombstone(
        source=link.source,
        target=link.target,
        rel=link.rel,
        deleted_at=max(now, link.created_at, link.updated_at),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportCounts:
    """How the links of an import were taken."""

    added: int = 0
    updated: int = 0
    """Already present; the imported note was newer and replaced it."""
    skipped: int = 0
    """Already present with a note at least as new, or removed here after it was drawn."""


def import_links(
    doc: LinkFile, incoming: Iterable[StoredLink], cap: int
) -> tuple[LinkFile, ImportCounts]:
    """Union ``incoming`` into ``doc``, tombstones respected; the newer note wins.

    Raises:
        LinkStoreError: the import would take the store past ``cap`` links (nothing is taken).
    """
    links = {link.key: link for link in doc.links}
    graves = {grave.key: grave for grave in doc.tombstones}
    added = updated = skipped = 0
    for link in incoming:
        grave = graves.get(link.key)
        if grave is not None and link.created_at <= grave.deleted_at:
            skipped += 1
            continue
        held = links.get(link.key)
        if held is None:
            links[link.key] = link
            added += 1
            continue
        links[link.key] = combine(held, link)
        if links[link.key].note != held.note:
            updated += 1
        else:
            skipped += 1
    if added and len(links) > cap:
        raise LinkStoreError(
            f"import refused: it would take the store to {len(links):,} links, the cap is {cap:,}",
            hint="nothing was imported; remove links first or import fewer",
        )
    counts = ImportCounts(added=added, updated=updated, skipped=skipped)
    return settle(links.values(), graves.values(), doc.missing_since), counts


def _key(link: ExplicitLink) -> tuple[str, str, str]:
    return (link.source, link.target, link.rel)


Moved = tuple[ExplicitLink, ExplicitLink | None]
"""A link moved off a superseded fact: (before, after), ``None`` after when it was dropped."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactChanges:
    """What compaction changed (see ``compact_links``)."""

    moved: tuple[Moved, ...] = ()
    """(link before, link after) for links moved off a superseded fact; ``None`` when the moved
    link is dropped (it became a self-link, or that link was removed after it was drawn)."""
    collected: tuple[ExplicitLink, ...] = ()
    """Links dropped because an endpoint had been gone from the stores for over 30 days."""
    missing: tuple[tuple[str, datetime], ...] = ()
    """Endpoints gone from the stores and since when, now that compaction is done."""


def compact_links(
    doc: LinkFile, mapping: Mapping[str, str], present: frozenset[str], now: datetime
) -> tuple[LinkFile, CompactChanges]:
    """Move links off superseded facts and collect links to notes gone for over ``RETENTION``.

    Args:
        doc: the settled store.
        mapping: old fact id → newest fact id (``supersession_map``, plus any other moves).
        present: every node id the stores hold now, including notes outside the graph caps.
        now: the time of the compaction.

    Returns:
        The new store and the changes.  Every link removed here leaves a tombstone so that a
        process holding an old copy cannot bring it back.
    """
    moved_doc, moved = _move_links(doc, mapping, now)
    since = _missing_since(moved_doc, present, now)
    doomed = {node_id for node_id, first in since.items() if now - first > RETENTION}
    collected = tuple(
        link for link in moved_doc.links if link.source in doomed or link.target in doomed
    )
    result = settle(
        moved_doc.links,
        (*moved_doc.tombstones, *(_grave(link, now) for link in collected)),
        ((node_id, first) for node_id, first in since.items() if node_id not in doomed),
    )
    changes = CompactChanges(
        moved=moved,
        collected=tuple(link.public() for link in collected),
        missing=result.missing_since,
    )
    return result, changes


def _move_links(
    doc: LinkFile, mapping: Mapping[str, str], now: datetime
) -> tuple[LinkFile, tuple[Moved, ...]]:
    """The store with links moved off superseded facts (each old copy tombstoned), and the moves.

    A moved link that became a self-link, or whose new key was removed after it was drawn, is
    reported with ``None`` as its new form.
    """
    graves = list(doc.tombstones)
    moved: list[Moved] = []
    kept: list[StoredLink] = []
    for link in doc.links:
        source, target = follow_node(link.source, mapping), follow_node(link.target, mapping)
        if (source, target) == (link.source, link.target):
            kept.append(link)
            continue
        graves.append(_grave(link, now))
        after = replace(link, source=source, target=target) if source != target else None
        moved.append((link.public(), after.public() if after else None))
        if after is not None:
            kept.append(after)
    moved_doc = settle(kept, graves, doc.missing_since)
    alive = {link.key for link in moved_doc.links}
    return moved_doc, tuple(
        (before, after if after and _key(after) in alive else None) for before, after in moved
    )


def _missing_since(doc: LinkFile, present: frozenset[str], now: datetime) -> dict[str, datetime]:
    """Each collectable endpoint the stores no longer hold, and since when (``now`` if new)."""
    first_missing = dict(doc.missing_since)
    since: dict[str, datetime] = {}
    for link in doc.links:
        for node_id in (link.source, link.target):
            if node_id not in present and is_collectable(node_id):
                since[node_id] = first_missing.get(node_id, now)
    return since

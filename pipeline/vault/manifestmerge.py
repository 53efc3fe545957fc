"""Three manifests → one, for git's merge of ``.vaultsync/manifest.json``; pure.

Two devices that both synced change the manifest's lines near each other, and git's line merge
calls changes that close a conflict although they concern different notes.  The manifest is a
record per vault path, so it merges per path instead (``vaultsync merge-manifest``, the merge
driver :mod:`vaultsync.vault.remote` registers):

* a path changed on one side only takes that side (added, changed or removed);
* a path changed alike on both sides takes that;
* a path changed differently on both sides takes the **common ancestor's** record (none when
  it had none): the next sync then finds the note as an edit made since that record and merges
  the stores' render into it three-way, as for any edit — no record claims bytes that neither
  side's note file is sure to hold;
* ``deleted`` and ``released`` (sets of paths) merge the same way, per path;
* the render format is the higher of the two (a newer vaultsync rewrote the notes).

A manifest that cannot be read on any side gives ``None``: git then reports a conflict and
``vaultsync sync`` rebuilds what it must from git history, as for any unusable manifest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from vaultsync.vault.manifest import Entry, Manifest, dump_manifest, load_manifest

T = TypeVar("T")


def _pick(base: T | None, ours: T | None, theirs: T | None) -> T | None:
    """One path's three-way choice (``None``: absent on that side)."""
    if theirs in (ours, base):
        return ours
    if ours == base:
        return theirs
    return base


def _merge_entries(
    base: Mapping[str, Entry], ours: Mapping[str, Entry], theirs: Mapping[str, Entry]
) -> dict[str, Entry]:
    merged = {}
    for path in sorted({*base, *ours, *theirs}):
        chosen = _pick(base.get(path), ours.get(path), theirs.get(path))
        if chosen is not None:
            merged[path] = chosen
    return merged


def _merge_set(
    base: frozenset[str], ours: frozenset[str], theirs: frozenset[str]
) -> frozenset[str]:
    every = base | ours | theirs
    return frozenset(path for path in every if _pick(path in base, path in ours, path in theirs))


def merge_manifests(base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    """The merged manifest's bytes, or ``None`` when a side cannot be read (a conflict).

    ``base`` is ``None`` when the two histories share no manifest (both sides added one).
    """
    old = load_manifest(base) if base is not None else Manifest()
    mine, other = load_manifest(ours), load_manifest(theirs)
    if old.corrupt or mine.corrupt or other.corrupt:
        return None
    return dump_manifest(
        _merge_entries(old.entries, mine.entries, other.entries),
        _merge_set(old.deleted, mine.deleted, other.deleted),
        _merge_set(old.released, mine.released, other.released),
        render_format=max(mine.render_format, other.render_format),
    )


__all__ = ["merge_manifests"]

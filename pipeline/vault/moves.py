"""Notes the user moved or renamed, and links Obsidian rewrote after a move; reads only.

**Moves** (:func:`find_moves`).  A note vaultsync wrote whose file is gone may have been moved
or renamed by the user (Obsidian's file explorer, ``git mv``): it is looked for among the
vault's notes that vaultsync does not own, by the ``vaultsync_id`` of their front matter, else
by their bytes being exactly the ones vaultsync last wrote, else by git's rename detection (the
id line deleted and the note edited along the move).  Two
candidates: the first by path is the note, the other the user's copy.  A note found is
*followed*: the manifest re-keys its entry to the new path and marks it ``chosen``, the
renders of its node go there from then on (``render.layout`` honours chosen paths), every
link vaultsync writes points there, and the old path is neither re-created nor reported as a
deletion.  A chosen path stays the note's: when the stores would place the note elsewhere
(a title changed), the user's choice wins.  Nothing is searched while every note vaultsync
wrote is where it left it, so a sync that finds no file missing pays nothing here.

**Links rewritten by Obsidian** (:func:`same_but_links`).  With "Automatically update
internal links" on, Obsidian rewrites every link to a moved note, in its shortest form
(``[[Skiff (boat)|skiff]]`` where vaultsync wrote ``[[Projects/skiff|skiff]]``).  A file whose
only differences from what vaultsync last wrote are wikilinks that open the same note is not
an edit: it is vaultsync's to update.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from vaultsync.core.notes import NoteReader, read_front_matter, walk_vault
from vaultsync.links.pathresolve import ObsidianIndex
from vaultsync.links.wikilinks import WikiLink, rewrite_wikilinks
from vaultsync.vault.manifest import Manifest, blob_id

ID_KEY = "vaultsync_id"
_HEAD_BYTES = 4096
"""Enough of a note to hold its front matter's first lines (``vaultsync_id`` comes first)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Moves:
    """What the user moved: found by this run, and chosen by earlier ones."""

    renamed: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Old vault path → new vault path, for the moves found now."""
    chosen: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Node id → the path the user chose for it (recorded and found now)."""
    deleted: frozenset[str] = frozenset()
    """The notes the user deleted, recorded and found now (not moved): ``Home.md`` omits them."""


NO_MOVES = Moves()
Similar = Callable[[list[str]], Mapping[str, str]]
"""Gone paths → where git's rename detection finds them (``VaultRepo.worktree_renames``)."""


def _node_of(head: bytes) -> str:
    """The ``vaultsync_id`` of a note's first bytes, or ``""``."""
    text = head.decode("utf-8", "ignore")
    value = read_front_matter(text).values.get(ID_KEY)
    return value if isinstance(value, str) else ""


def _candidates(vault: Path, owned: Iterable[str]) -> list[tuple[str, bytes]]:
    """The vault's notes vaultsync does not own, with their bytes, by path."""
    taken = set(owned)
    paths = [n.path for n in walk_vault(vault).notes if n.path not in taken]
    with NoteReader(vault) as reader:
        return [(p, data) for p in paths if (data := reader.read(p)) is not None]


def find_moves(vault: Path, manifest: Manifest, *, similar: Similar | None = None) -> Moves:
    """The notes of ``manifest`` the user moved, and the paths chosen before (see module doc).

    ``similar``: git's rename detection (``VaultRepo.worktree_renames``), asked about the
    notes neither their id nor their bytes found, while a note vaultsync does not own is left
    for them: a note deleted, with nowhere it could have gone, asks git nothing (its diff of
    the whole work tree took 6.6 s at 100,000 notes).
    """
    chosen = {e.node: p for p, e in manifest.entries.items() if e.chosen and e.node}
    missing = [] if manifest.lost else _missing(vault, manifest)
    renamed: dict[str, str] = {}
    if missing:
        candidates = _candidates(vault, manifest.entries)
        renamed = _by_id_or_bytes(manifest, missing, candidates)
        left = [p for p in missing if p not in renamed]
        free = {path for path, _ in candidates} - set(renamed.values())
        if similar is not None and left and free:
            _add_similar(renamed, similar(left), free)
    chosen.update({manifest.entries[old].node: new for old, new in renamed.items()})
    deleted = manifest.deleted | {p for p in missing if p not in renamed}
    return Moves(
        renamed=MappingProxyType(renamed), chosen=MappingProxyType(chosen), deleted=deleted
    )


def _add_similar(renamed: dict[str, str], found: Mapping[str, str], free: set[str]) -> None:
    """Add git's renames of the notes still missing, to the ``free`` notes no one else claims.

    Free: notes vaultsync does not own and can write (one in a dot folder, ``.trash`` say, is
    none of them).
    """
    for old, new in found.items():
        if new in free and new not in renamed.values():
            renamed[old] = new


def _by_id_or_bytes(
    manifest: Manifest, missing: list[str], candidates: list[tuple[str, bytes]]
) -> dict[str, str]:
    """Each missing note found among the others by its ``vaultsync_id``, else its bytes."""
    by_node, by_blob = _index(candidates)
    renamed: dict[str, str] = {}
    for old in missing:
        entry = manifest.entries[old]
        hits = by_node.get(entry.node) or by_blob.get(entry.blob) or []
        found = next((p for p in hits if p not in renamed.values()), None)
        if found is not None:
            renamed[old] = found
    return renamed


def _missing(vault: Path, manifest: Manifest) -> list[str]:
    """The paths of the notes vaultsync wrote whose file is gone, sorted.

    One listing per folder, not one ``stat`` per note: at 100,000 notes that is the difference
    between a few hundredths of a second and more than one.
    """
    folders: dict[str, set[str] | None] = {}
    gone = []
    for path, entry in manifest.entries.items():
        folder, _, name = path.rpartition("/")
        if folder not in folders:
            try:
                # names only: one readdir, no stat per entry (what a Path listing would cost)
                folders[folder] = set(os.listdir(vault / folder))  # noqa: PTH208
            except OSError:
                folders[folder] = None
        names = folders[folder]
        if entry.node and (names is None or name not in names):
            gone.append(path)
    return sorted(gone)


def _index(
    candidates: list[tuple[str, bytes]],
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The candidates by ``vaultsync_id`` and by blob id, each list by path."""
    by_node: dict[str, list[str]] = {}
    by_blob: dict[str, list[str]] = {}
    for path, data in candidates:
        if node := _node_of(data[:_HEAD_BYTES]):
            by_node.setdefault(node, []).append(path)
        by_blob.setdefault(blob_id(data), []).append(path)
    return by_node, by_blob


def follow(manifest: Manifest, renamed: Mapping[str, str]) -> Manifest:
    """The manifest with each moved note's entry at its new path, marked ``chosen``."""
    if not renamed:
        return manifest
    entries = dict(manifest.entries)
    for old, new in renamed.items():
        if old in entries:  # else another sync followed it meanwhile
            entries[new] = replace(entries.pop(old), chosen=True)
    return replace(manifest, entries=MappingProxyType(entries))


@dataclass(frozen=True, slots=True)
class LinkTargets:
    """Which note a wikilink target names, in the vault as it is and as vaultsync wrote it."""

    known: Mapping[str, str]
    """Every path vaultsync wrote or follows, without ``.md``, case-folded → node id."""
    index: ObsidianIndex
    nodes: Mapping[str, str]
    """Vault path → node id, for the resolver's answers."""

    @classmethod
    def of(cls, manifest: Manifest, renamed: Mapping[str, str]) -> LinkTargets:
        """From the manifest before the moves were followed, and the moves."""
        nodes = {p: e.node for p, e in manifest.entries.items() if e.node}
        nodes.update({new: manifest.entries[old].node for old, new in renamed.items()})
        known = {p.removesuffix(".md").casefold(): n for p, n in nodes.items()}
        return cls(known=known, index=ObsidianIndex.build(nodes), nodes=nodes)

    def node(self, target: str, source: str) -> str | None:
        """The node ``[[target]]`` in ``source`` opens, if any."""
        found = self.known.get(target.removesuffix(".md").casefold())
        if found is not None:
            return found
        path = self.index.resolve(target, source)
        return self.nodes.get(path) if path is not None else None


def _canonical(text: str, source: str, targets: LinkTargets) -> str:
    def name(link: WikiLink) -> str | None:
        node = targets.node(link.target, source) if link.target else None
        if node is None:
            return None
        bang = "!" if link.embed else ""
        return f"{bang}[[\x00{node}#{link.heading}^{link.block}|{link.label}]]"

    return rewrite_wikilinks(text, name)


def same_but_links(ours: bytes, base: bytes, source: str, targets: LinkTargets) -> bool:
    """Whether ``ours`` differs from ``base`` only by wikilinks that open the same notes."""
    try:
        mine, theirs = ours.decode("utf-8"), base.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if "[[" not in mine:
        return False
    return _canonical(mine, source, targets) == _canonical(theirs, source, targets)

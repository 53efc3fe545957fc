"""Stage 5: specs + manifest + disk state + git ownership → ``Plan``; pure (nothing rendered).

Per path, one action:

* ``create``: no file there (or ``force`` and the user had deleted it);
* ``update``: the file is ours and unedited but its key changed (or ``force``), or ours and edited
  under ``force``; the sync renders it and writes only if the bytes differ;
* ``unchanged``: ours, unedited, same key: **not rendered**, which keeps a no-op sync cheap;
* ``keep-edited``: ours, but its blob is not what we last wrote, and the stores have nothing new
  for it (same key): the user's edit is kept, and the manifest keeps our last blob (the merge
  base) so the file stays "edited" in later syncs;
* ``merge``: ours, edited, and the stores changed it (a new key): the new render is merged into
  the user's file (``vault.merge``, done by ``vault.decide``); a clean merge is written and the
  manifest records the new render as the next base, a conflict leaves the file as it is and
  records the render it could not merge (``Entry.theirs``) until ``vaultsync resolve``;
* ``keep-deleted``: the user deleted one of our notes: not re-created unless ``force``;
* ``remove``: the engine no longer produces it and it is ours and unedited (a note no longer
  produced but edited is kept, even under ``force``);
* ``conflict``: the path is taken by a file the engine never wrote (never touched, even under
  ``force``), by a folder or symlink, lies behind a symlink, or collides with another note by case;
* ``released``: the user took the note over (``vaultsync release``): never written or removed
  again, even under ``force``;
* ``moved``: the stores moved a note the user edited (a card changed column): the new path's
  step is a ``merge`` whose ``source`` is the old path; the old file is removed once the merged
  note is written at the new path (a merge that is not clean writes the new note as rendered
  and leaves the edited file where it was, so no byte is lost; the next sync merges it again,
  into the new note while vaultsync's render there is unedited).

``force`` applies to every path; ``force_paths`` to the named ones only.

**Ownership**: a file is ours-and-unedited when its blob is the manifest's blob for that path or
the last blob a sync commit wrote there (``history``). A missing or corrupt manifest has no
entries, so that sync keeps every existing file unless history proves it is ours, and removes
none (a note no longer produced stays until the next sync); an absent spec path that history
shows we wrote is taken as a user deletion.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING

from vaultsync.core.errors import VaultWriteError
from vaultsync.core.vaultpath import all_safe
from vaultsync.vault.manifest import Entry, Journal, Manifest, StatKey, check_path

if TYPE_CHECKING:  # only annotations: the no-op sync reads the config through VaultFS
    from vaultsync.core.model import NoteSpec


class FileKind(StrEnum):
    """What a path holds on disk."""

    ABSENT = "absent"
    FILE = "file"
    OTHER = "other"
    """A folder, symlink, socket…: never ours."""
    BLOCKED = "blocked"
    """A parent is a symlink or not a folder: the path cannot be reached safely."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileState:
    """One path on disk; ``blob`` is set for files (from the stat cache or by hashing)."""

    kind: FileKind
    blob: str = ""
    stat: StatKey = (0, 0, 0)
    detail: str = ""


ABSENT = FileState(kind=FileKind.ABSENT)
_SET_STATE = tuple(FileState.__dict__[n].__set__ for n in ("kind", "blob", "stat", "detail"))


def file_state(blob: str, key: StatKey) -> FileState:
    """``FileState(kind=FileKind.FILE, blob=blob, stat=key)``, built through its slots.

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``; the scan
    builds one per note (100,000), so this is twice as fast.
    """
    state: FileState = object.__new__(FileState)
    set_kind, set_blob, set_stat, set_detail = _SET_STATE
    set_kind(state, FileKind.FILE)
    set_blob(state, blob)
    set_stat(state, key)
    set_detail(state, "")
    return state


DiskState = Mapping[str, FileState]
Ownership = Mapping[str, str]
"""Path → the last blob a sync commit wrote there (paths whose last sync change removed them are
left out)."""


class Action(StrEnum):
    """What the sync does with one path."""

    CREATE = "create"
    UPDATE = "update"
    UNCHANGED = "unchanged"
    KEEP_EDITED = "keep-edited"
    MERGE = "merge"
    KEEP_DELETED = "keep-deleted"
    REMOVE = "remove"
    CONFLICT = "conflict"
    RELEASED = "released"
    MOVED = "moved"


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One decision; ``prior`` is the entry the manifest keeps if a render step writes nothing."""

    path: str
    action: Action
    spec: NoteSpec | None = None
    state: FileState = ABSENT
    prior: Entry | None = None
    reason: str = ""
    source: str = ""
    """A merge into a note the stores moved: the old path, whose file is "ours"."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """Steps sorted by path, plus the manifest entries of every step that renders nothing."""

    steps: tuple[Step, ...]
    keep: Mapping[str, Entry] = field(default_factory=lambda: MappingProxyType({}))
    deleted: frozenset[str] = frozenset()
    released: frozenset[str] = frozenset()
    chosen: frozenset[str] = frozenset()
    """Paths the user moved a note to (``vault.moves``): their entries stay marked ``chosen``."""
    by_action: Mapping[Action, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        grouped: dict[Action, list[str]] = {action: [] for action in Action}
        for step in self.steps:
            grouped[step.action].append(step.path)
        index = MappingProxyType({a: tuple(paths) for a, paths in grouped.items()})
        object.__setattr__(self, "by_action", index)

    def paths(self, *actions: Action) -> tuple[str, ...]:
        """The paths of the steps with one of ``actions``, sorted."""
        if len(actions) == 1:
            return self.by_action[actions[0]]
        return tuple(sorted(p for a in actions for p in self.by_action[a]))


def _fold(path: str) -> str:
    """NFC then case-folded: equal for names a case-insensitive file system treats as one."""
    if not unicodedata.is_normalized("NFC", path):
        path = unicodedata.normalize("NFC", path)
    return path.casefold()


def _fold_all(paths: list[str]) -> list[str]:
    """``_fold`` of each path, computed on the paths joined by NUL (one call, not 100,000).

    NUL is a starter that composes with nothing, is its own case fold and is no fold of
    anything else, so the joined result splits back into each path's fold.
    """
    if any("\x00" in p for p in paths):
        return [_fold(p) for p in paths]
    folded = _fold("\x00".join(paths)).split("\x00")
    return folded if len(folded) == len(paths) else [_fold(p) for p in paths]


def validate_specs(specs: Sequence[NoteSpec]) -> dict[str, NoteSpec]:
    """Specs by path; raises ``UnsafePathError`` (unsafe path) or ``VaultWriteError`` (twice)."""
    by_path: dict[str, NoteSpec] = {}
    checked = all_safe([spec.path for spec in specs])  # in bulk; one by one only to raise
    for spec in specs:
        if not checked:
            check_path(spec.path)
        if spec.path in by_path:
            raise VaultWriteError(f"{spec.path}: produced twice ({spec.node_id!r})")
        by_path[spec.path] = spec
    return by_path


def collisions(paths: Iterable[str]) -> dict[str, str]:
    """Path → reason, for each path that must not be written.

    A path clobbers an earlier one (code-point order) on a case-insensitive or normalizing file
    system, or needs a folder where another note is a file.
    """
    out: dict[str, str] = {}
    first: dict[str, str] = {}
    ordered = sorted(paths)
    for path, folded in zip(ordered, _fold_all(ordered), strict=True):
        if folded in first:
            out[path] = f"differs only by case from {first[folded]}"
        else:
            first[folded] = path
    folders: set[str] = set()
    for folded in first:
        while (folded := folded.rpartition("/")[0]) and folded not in folders:
            folders.add(folded)
    if folders.isdisjoint(first):  # the usual case: no note where a folder must be
        return out
    for folded, path in sorted(first.items(), key=lambda item: item[1]):
        prefix = folded
        while (prefix := prefix.rpartition("/")[0]) and path not in out:
            other = first.get(prefix)
            if other is not None and other not in out:
                out[path] = f"needs a folder where note {other} is"
    return out


def reconcile(manifest: Manifest, journal: Journal, disk: DiskState) -> Manifest:
    """Adopt what a killed sync did, from its journal.

    A file whose blob is the intended one is ours; an intended removal that happened drops the
    entry. Intents that did not happen change nothing.
    """
    entries = dict(manifest.entries)
    deleted = set(manifest.deleted)
    for path, intent in journal.intents.items():
        state = disk.get(path, ABSENT)
        if intent is None:
            if state.kind is FileKind.ABSENT:
                entries.pop(path, None)
        elif state.kind is FileKind.FILE and state.blob in {intent.blob, intent.wrote}:
            # A merge's intent names its base: the merged file is the user's edit, merged.
            entries[path] = replace(intent, wrote="")
            deleted.discard(path)
    return replace(manifest, entries=MappingProxyType(entries), deleted=frozenset(deleted))


def differs(manifest: Manifest, disk: DiskState) -> bool:
    """Some file's blob is not the manifest's: edited, or the manifest is behind history."""
    return any(
        state.kind is FileKind.FILE
        and (e := manifest.entries.get(p)) is not None
        and e.blob != state.blob
        for p, state in disk.items()
    )


def history_questions(
    spec_paths: Iterable[str], manifest: Manifest, disk: DiskState, *, trust_manifest: bool
) -> frozenset[str]:
    """Paths whose ownership git history must settle; empty in a clean no-op sync.

    ``trust_manifest``: the manifest is the one the last sync commit recorded, so history
    knows nothing more about the paths it lists.
    """
    wanted = frozenset(spec_paths)
    asked: set[str] = set()
    for path, state in disk.items():
        entry = manifest.entries.get(path)
        if state.kind is FileKind.FILE:
            if entry is None or (entry.blob != state.blob and not trust_manifest):
                asked.add(path)
        elif state.kind is FileKind.ABSENT and manifest.lost and entry is None and path in wanted:
            asked.add(path)
    return frozenset(asked)


def _spec_step(
    spec: NoteSpec,
    state: FileState,
    entry: Entry | None,
    ours: str | None,
    *,
    deleted: bool,
    force: bool,
    lost: bool = False,
) -> tuple[Step, Entry | None]:
    """One produced path → its step and the entry the next manifest keeps (if not rendered)."""
    path = spec.path
    if state.kind is FileKind.ABSENT:
        if (entry is not None or deleted or ours is not None) and not force:
            return Step(path=path, action=Action.KEEP_DELETED, spec=spec, state=state), None
        return Step(path=path, action=Action.CREATE, spec=spec, state=state), None
    if state.kind is not FileKind.FILE:
        return Step(
            path=path, action=Action.CONFLICT, spec=spec, state=state, reason=state.detail
        ), (entry if state.kind is FileKind.BLOCKED else None)
    last = entry.blob if entry is not None else ours
    if state.blob in {ours, last}:
        return _ours_step(spec, state, entry, force=force)
    if last is not None:
        return _edited_step(spec, state, entry, last, force=force)
    reason = "a file vaultsync did not write is there"
    if lost:
        reason = "a file is there that vaultsync cannot prove it wrote (no manifest, not in git)"
    return Step(path=path, action=Action.CONFLICT, spec=spec, state=state, reason=reason), None


def _edited_step(
    spec: NoteSpec, state: FileState, entry: Entry | None, last: str, *, force: bool
) -> tuple[Step, Entry | None]:
    """A file of ours the user edited: merge new store data, keep it, or (``force``) update."""
    key, theirs = (entry.key, entry.theirs) if entry is not None else ("", "")
    prior = Entry(node=spec.node_id, key=key, blob=last, theirs=theirs)
    # Without a manifest entry (a lost manifest) nothing says which render the file started
    # from: the edit is kept, never merged.
    action = Action.MERGE if entry is not None and key != spec.key else Action.KEEP_EDITED
    action = Action.UPDATE if force else action
    step = Step(path=spec.path, action=action, spec=spec, state=state, prior=prior)
    return step, None if force else prior


def _ours_step(
    spec: NoteSpec, state: FileState, entry: Entry | None, *, force: bool
) -> tuple[Step, Entry | None]:
    """A file holding what the engine last wrote there: unchanged, or updated."""
    path = spec.path
    if (
        entry is not None
        and entry.blob == state.blob
        and entry.key == spec.key
        and not entry.theirs  # a conflict the user settled by restoring our bytes
        and not force
    ):
        if entry.node != spec.node_id:
            entry = replace(entry, node=spec.node_id)
        return Step(path=path, action=Action.UNCHANGED, spec=spec, state=state), entry
    current = Entry(node=spec.node_id, key=spec.key, blob=state.blob)
    prior = replace(
        current, key=entry.key if entry is not None and entry.blob == state.blob else ""
    )
    return Step(path=path, action=Action.UPDATE, spec=spec, state=state, prior=prior), None


def plan_sync(
    specs: Sequence[NoteSpec],
    manifest: Manifest,
    disk: DiskState,
    history: Ownership,
    *,
    force: bool = False,
    force_paths: frozenset[str] = frozenset(),
    keep_gone: bool = False,
) -> Plan:
    """Decide every path; see the module docstring.

    ``keep_gone``: remove nothing (a store file was skipped: a note its items made may be
    missing from ``specs`` only because of that).

    ``disk`` must cover the spec paths, the manifest's paths and the keys of ``history``.
    """
    by_path = validate_specs(specs)
    clashes = collisions(by_path)
    steps, keep = _produced_steps(
        by_path, manifest, disk, history, clashes, force=force, force_paths=force_paths
    )
    gone = (manifest.entries.keys() | history.keys()) - by_path.keys() - manifest.released
    for path in sorted(gone):
        found = _gone_step(
            path,
            manifest.entries.get(path),
            disk.get(path, ABSENT),
            history,
            lost=manifest.lost or keep_gone,
        )
        if found is not None:
            steps.append(found[0])
            if found[1] is not None:
                keep[path] = found[1]
    steps = _stores_moves(steps, keep) if not force else steps
    steps.sort(key=lambda s: s.path)
    return Plan(
        steps=tuple(steps),
        keep=MappingProxyType(keep),
        deleted=frozenset(s.path for s in steps if s.action is Action.KEEP_DELETED),
        released=manifest.released,
        chosen=frozenset(p for p, e in manifest.entries.items() if e.chosen),
    )


_MOVE_TARGETS = frozenset((Action.CREATE, Action.UNCHANGED, Action.UPDATE))
"""The new path's step a move is merged into: a new note, or one vaultsync wrote there and the
user did not edit — the render a merge left waiting (an editor was saving the file) put there.
So the next sync finishes the merge: one id is never two notes for longer than one sync."""


def _stores_moves(steps: list[Step], keep: dict[str, Entry]) -> list[Step]:
    """Pair each edited note the stores no longer produce with its node's new path.

    An edited copy left over (two edited files of one node, or the note at the new path edited
    too) cannot be merged without losing one edit: it becomes a conflict, so one id is never
    two notes without ``check`` and ``sync`` saying so.
    """
    edited: dict[str, list[Step]] = {}
    for s in steps:
        node = keep[s.path].node if s.path in keep else ""
        if s.action is Action.KEEP_EDITED and s.spec is None and node:
            edited.setdefault(node, []).append(s)
    if not edited:
        return steps
    out: list[Step] = []
    moved: dict[str, str] = {}
    for step in steps:
        target = step.spec is not None and step.action in _MOVE_TARGETS
        olds = edited.get(step.spec.node_id) if target and step.spec else None
        if not olds:
            out.append(step)
            continue
        old = olds[0]
        base = keep[old.path]  # what vaultsync last wrote at the old path: the merge base
        out.append(replace(step, action=Action.MERGE, state=old.state, prior=base, source=old.path))
        moved[old.path] = step.path
    doubled = _doubled(steps, edited, moved)
    return [_moved_or_doubled(s, keep, moved, doubled) for s in out]


def _doubled(
    steps: list[Step], edited: Mapping[str, list[Step]], moved: Mapping[str, str]
) -> dict[str, str]:
    """Edited copies not paired whose node another note holds: path → that note's path."""
    held = {s.spec.node_id: s.path for s in steps if s.spec is not None}
    doubled: dict[str, str] = {}
    for node, olds in edited.items():
        others = [held[node]] if node in held else []
        others += [s.path for s in olds]
        for old in olds:
            other = next((p for p in others if p != old.path), None)
            if old.path not in moved and other is not None:
                doubled[old.path] = other
    return doubled


def _moved_or_doubled(
    step: Step, keep: Mapping[str, Entry], moved: Mapping[str, str], doubled: Mapping[str, str]
) -> Step:
    """The old path's step of a note the stores moved, or of a copy that doubles another."""
    if step.path in moved:
        return replace(step, action=Action.MOVED, prior=keep[step.path])
    if step.path in doubled:
        reason = (
            f"another note holds its id too ({doubled[step.path]}) and both were edited: "
            "merge them into one by hand and delete the other"
        )
        return replace(step, action=Action.CONFLICT, reason=reason)
    return step


_SET_STEP = tuple(
    Step.__dict__[n].__set__
    for n in ("path", "action", "spec", "state", "prior", "reason", "source")
)


def _produced_steps(
    by_path: Mapping[str, NoteSpec],
    manifest: Manifest,
    disk: DiskState,
    history: Ownership,
    clashes: Mapping[str, str],
    *,
    force: bool,
    force_paths: frozenset[str],
) -> tuple[list[Step], dict[str, Entry]]:
    """The step of every path the stores produce, by path, and the entries they keep."""
    steps: list[Step] = []
    keep: dict[str, Entry] = {}
    quick = not force and not clashes and not manifest.released
    for path in sorted(by_path):
        if quick and path not in force_paths:
            entry = _unchanged(by_path[path], manifest.entries.get(path), disk.get(path, ABSENT))
            if entry is not None:
                steps.append(_unchanged_step(by_path[path], disk[path]))
                keep[path] = entry
                continue
        step, kept = _produced_step(
            by_path[path],
            manifest,
            disk,
            history,
            clash=clashes.get(path),
            force=force or path in force_paths,
        )
        steps.append(step)
        if kept is not None:
            keep[path] = kept
    return steps, keep


def _unchanged(spec: NoteSpec, entry: Entry | None, state: FileState) -> Entry | None:
    """The entry kept when ``_produced_step`` would say ``unchanged`` with the same node.

    The usual step of a sync, taken without its three calls (no clash, release or force:
    the caller checks those).
    """
    if (
        entry is not None
        and state.kind is FileKind.FILE
        and state.blob == entry.blob
        and entry.key == spec.key
        and not entry.theirs
        and entry.node == spec.node_id
    ):
        return entry
    return None


def _unchanged_step(spec: NoteSpec, state: FileState) -> Step:
    """``Step(path=spec.path, action=Action.UNCHANGED, spec=spec, state=state)``, built fast.

    Through its slots, as ``file_state`` is: one per unchanged note.
    """
    step: Step = object.__new__(Step)
    set_path, set_action, set_spec, set_state, set_prior, set_reason, set_source = _SET_STEP
    set_path(step, spec.path)
    set_action(step, Action.UNCHANGED)
    set_spec(step, spec)
    set_state(step, state)
    set_prior(step, None)
    set_reason(step, "")
    set_source(step, "")
    return step


def _produced_step(
    spec: NoteSpec,
    manifest: Manifest,
    disk: DiskState,
    history: Ownership,
    *,
    clash: str | None,
    force: bool,
) -> tuple[Step, Entry | None]:
    """A path the stores produce → its step and the entry kept (released, clash, or decided)."""
    path, entry, state = spec.path, manifest.entries.get(spec.path), disk.get(spec.path, ABSENT)
    if path in manifest.released:
        return Step(path=path, action=Action.RELEASED, spec=spec, state=state), None
    if clash is not None:
        return Step(path=path, action=Action.CONFLICT, spec=spec, state=state, reason=clash), entry
    return _spec_step(
        spec,
        state,
        entry,
        history.get(path),
        deleted=path in manifest.deleted,
        force=force,
        lost=manifest.lost,
    )


def _gone_step(
    path: str, entry: Entry | None, state: FileState, history: Ownership, *, lost: bool
) -> tuple[Step, Entry | None] | None:
    """A path of ours the stores no longer produce: removed, kept edited, or left alone.

    With a lost manifest nothing is removed: the file stays, owned again (from history), and
    the next sync, with a sound manifest, removes it.
    """
    last = entry.blob if entry is not None else history[path]
    if state.kind is FileKind.BLOCKED and entry is not None:
        return Step(path=path, action=Action.CONFLICT, state=state, reason=state.detail), entry
    if state.kind is FileKind.FILE and state.blob in {last, history.get(path)}:
        prior = entry if entry is not None else Entry(node="", key="", blob=last)
        if lost:
            return Step(path=path, action=Action.UNCHANGED, state=state), prior
        return Step(path=path, action=Action.REMOVE, state=state, prior=prior), None
    if state.kind is FileKind.FILE:
        kept = entry if entry is not None else Entry(node="", key="", blob=last)
        return Step(path=path, action=Action.KEEP_EDITED, state=state), kept
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeOutcome:
    """What merging the new render into a user's file gave (``vault.decide.merge``)."""

    theirs: str
    """Blob id of the new render: the next merge base, or the side a conflict waits on."""
    clean: bool = False
    blob: str = ""
    """Blob id of the merged bytes (a clean merge)."""
    overlaps: tuple[str, ...] = ()
    """What both sides changed apart (a conflict)."""
    waiting: str = ""
    """Why no merge was tried this time (the file is being edited…); the next sync tries."""


def _merged_entry(
    step: Step, result: MergeOutcome | None, outcome: Mapping[str, str | None]
) -> Entry | None:
    """The entry a merge step leaves, or None to keep ``prior`` (no merge, or a lost write)."""
    if result is None or step.spec is None or step.prior is None:
        return None
    if step.source:  # a note the stores moved: a new note at its new path, merged or not
        written = result.blob if result.clean else result.theirs
    elif result.waiting:
        return None
    elif not result.clean:  # waits on `vaultsync resolve`; a later store change merges again
        return replace(step.prior, key=step.spec.key, theirs=result.theirs)
    else:
        written = result.blob
    if outcome.get(step.path) != written:
        return None
    return Entry(node=step.spec.node_id, key=step.spec.key, blob=result.theirs)


def next_manifest(
    plan: Plan,
    outcome: Mapping[str, str | None],
    merges: Mapping[str, MergeOutcome] | None = None,
) -> tuple[dict[str, Entry], frozenset[str]]:
    """Entries and deleted paths after the sync.

    ``outcome`` holds what happened: each rendered path whose bytes are now on disk → their blob
    (written, or already equal), each removed path → ``None``. A step missing from it (the file
    changed under the sync) keeps its ``prior`` entry, so the file counts as edited next time.
    ``merges``: what each merge step gave; a clean merge now on disk records the new render as
    its base, a conflict records the render it waits on.
    """
    entries = dict(plan.keep)
    for step in plan.steps:
        if step.action is Action.MERGE:
            merged = _merged_entry(step, (merges or {}).get(step.path), outcome)
            if merged is not None:
                entries[step.path] = merged
            continue
        if step.action is Action.MOVED:
            if step.path in outcome and outcome[step.path] is None:  # removed: merged elsewhere
                entries.pop(step.path, None)
            continue
        if step.action not in (Action.CREATE, Action.UPDATE, Action.REMOVE):
            continue
        if step.path not in outcome:
            if step.prior is not None:
                entries[step.path] = step.prior
        elif step.spec is not None and (blob := outcome[step.path]) is not None:
            entries[step.path] = Entry(node=step.spec.node_id, key=step.spec.key, blob=blob)
    for path in plan.chosen & entries.keys():
        entries[path] = replace(entries[path], chosen=True)
    return entries, plan.deleted

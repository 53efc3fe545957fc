"""Stage 6, decide: control files + disk + git history → ``Decision`` → rendered bytes; reads only.

What every vault command starts from (``sync``, ``--dry-run``, ``check``, ``status``):

1. :func:`read_controls`: ``.vaultsync/manifest.json``, the journal of an interrupted sync and
   the stat cache, parsed into one :class:`ControlFiles`;
2. :func:`plan_vault`: the disk state of every path that matters (stat data, hashing only what
   the cache cannot vouch for; most of it scanned by a helper while the notes were built,
   :func:`begin_scan`), the journal's work adopted, git history asked only what the manifest
   cannot answer, then ``plan.plan_sync``;
3. :func:`render`: the create/update steps rendered (shared with a forked helper), keeping only
   the bytes that differ from the disk;
4. :func:`merge` (``sync`` only): each merge step's new render merged into the user's file
   (``vault.merge``), with the base read from git's object store.

Nothing here writes a file of the vault; a vault folder that does not exist reads as empty
(``fs`` is ``None``).  :func:`merge` stores blobs in git's object store: the new render (the
next merge base) and the three sides libgit2 merges.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import pygit2
from vaultsync.core import progress
from vaultsync.core.errors import VaultWriteError
from vaultsync.core.model import NoteSpec
from vaultsync.core.parallel import Background, in_background, split_map
from vaultsync.core.process import paused_gc
from vaultsync.render import RENDER_FORMAT
from vaultsync.vault.lazyrepo import LazyRepo
from vaultsync.vault.manifest import (
    CACHE,
    JOURNAL,
    MANIFEST,
    Journal,
    Manifest,
    StatCache,
    StatKey,
    blob_id,
    load_cache,
    load_journal,
    load_manifest,
    parsed_manifest,
)
from vaultsync.vault.markers import MARKERS_REASON, has_conflict_markers
from vaultsync.vault.merge import merge_note
from vaultsync.vault.moves import NO_MOVES, LinkTargets, Moves, follow, same_but_links
from vaultsync.vault.plan import (
    ABSENT,
    Action,
    FileKind,
    FileState,
    MergeOutcome,
    Ownership,
    Plan,
    Step,
    differs,
    file_state,
    history_questions,
    plan_sync,
    reconcile,
)
from vaultsync.vault.vaultevents import events_of
from vaultsync.vault.vcs import VaultRepo, scratch_merger
from vaultsync.vault.write import ControlFile, VaultFS


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlFiles:
    """The engine's records in ``.vaultsync/``, as read at the start of a command."""

    manifest_bytes: bytes | None
    """The manifest file's bytes (``None``: missing); a sync rewrites it only if they differ."""
    manifest_stat: StatKey | None = None
    """The stat data of the manifest file read (``None``: missing)."""
    manifest: Manifest
    journal: Journal | None
    """The intents of an interrupted sync (``None``: the last sync finished)."""
    cache: StatCache
    cache_stat: StatKey | None = None
    """The stat data of the stat cache file read (``None``: missing)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """Everything a sync decides from, and its plan."""

    controls: ControlFiles
    manifest: Manifest
    """The manifest with the journal's finished work adopted (``plan.reconcile``)."""
    disk: Mapping[str, FileState]
    racy: int
    """Files hashed only because their stat data were racy (the cache is worth rewriting)."""
    plan: Plan
    renamed: Mapping[str, str] = field(default_factory=dict)
    """The user's moves this sync follows (old path → new path): committed as renames."""
    scanned_ns: int = 0
    """When the scan of ``disk`` began (ns since the epoch; ``0``: not known).  A file changed
    within ``fsio.RACY_NS`` before may have changed again since, unseen in the same timestamp
    (the scan may be seconds before the stat cache is written): the stat cache records it as
    unproven (``apply.save_cache``), and the next sync reads it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    """The bytes of the notes to write, their blob ids, and the renders that changed nothing."""

    writes: Mapping[str, bytes]
    blobs: Mapping[str, str]
    same: Mapping[str, str | None]
    """Rendered notes whose file already holds exactly those bytes (path → blob)."""
    merges: Mapping[str, MergeOutcome] = field(default_factory=dict)
    """What each merge step gave (:func:`merge`); a clean one's bytes are in ``writes``/``same``."""


def read_manifest(fs: VaultFS | None) -> tuple[ControlFile | None, Manifest]:
    """The manifest file as read and its parse (``None``: missing).

    Raises ``VaultWriteError`` when it is there but cannot be read.
    """
    raw = fs.read_control_file(MANIFEST) if fs is not None else None
    return raw, parsed_manifest(raw.data) if raw is not None else load_manifest(None)


def _refuse_newer(manifest: Manifest) -> None:
    """A manifest a newer vaultsync wrote is never read, or rewritten, as an older one.

    Raises:
        VaultWriteError: its schema or render format is newer than this vaultsync knows.
    """
    newer = manifest.newer or (
        f"render format {manifest.render_format}" if manifest.render_format > RENDER_FORMAT else ""
    )
    if newer:
        raise VaultWriteError(
            f"{MANIFEST}: written by a newer vaultsync ({newer}); nothing read or written",
            hint="upgrade vaultsync (pip install -U vaultsync), or sync with the newer one",
        )


BOUND_LOOKBACK = 1000
"""How many commits back a manifest restored from this vault's history is still recognised."""


def _refuse_foreign(manifest: Manifest, repo: LazyRepo, *, trusted: bool) -> None:
    """A manifest is bound to its vault: it must be one this vault's own history records.

    The binding is the vault's git history, not an id written into the manifest (that would
    make two vaults synced from the same stores differ by a byte).  A manifest is this vault's
    when its bytes are those of the manifest committed at ``HEAD`` — what every sync leaves,
    what a clone or a pull (merged by ``vault.manifestmerge``) brings, what ``history --purge``
    rewrites in step with the work tree — or of one of the last :data:`BOUND_LOOKBACK` commits
    (restored by hand), or when it records the same notes as ``HEAD``'s (re-formatted).
    ``trusted`` skips git: the stat cache says the last sync here left these very bytes (the
    no-op sync never opens git), or an interrupted sync's journal is there (it wrote the
    manifest and had not committed it).  With nothing to bind to (no repository, no commit,
    no manifest committed at ``HEAD``: an older vaultsync's vault) it is adopted, and bound
    from the next sync's commit on.  A missing or corrupt manifest is rebuilt from history
    elsewhere; only a readable one can lie.

    Raises:
        VaultWriteError: the manifest is readable and no commit of this vault holds it.
    """
    if manifest.lost or trusted:
        return
    found = repo.get()
    if found is None or _in_history(found, manifest):
        return
    raise VaultWriteError(
        f"{MANIFEST}: not this vault's manifest (no commit of this vault holds it: copied from "
        "another vault?); nothing read or written",
        hint=f"delete it and sync (it is rebuilt from this vault's git history), or restore "
        f"this vault's: git checkout HEAD -- {MANIFEST}",
    )


def _in_history(repo: VaultRepo, manifest: Manifest) -> bool:
    """Whether ``HEAD`` or one of its :data:`BOUND_LOOKBACK` ancestors holds ``manifest``.

    Its bytes, or ``HEAD``'s records laid out otherwise (a manifest the user re-formatted).
    ``True`` too when ``HEAD`` holds no manifest: there is nothing to bind to yet.
    """
    git = repo.repo
    if git.head_is_unborn:
        return True
    head = None
    for count, commit in enumerate(git.walk(git.head.target)):
        if count >= BOUND_LOOKBACK:
            break
        tree = repo.vault_tree(commit)
        if tree is None or MANIFEST not in tree:
            if count == 0:
                return True
            continue
        blob = tree[MANIFEST]
        head = head or blob
        if str(blob.id) == manifest.fingerprint:
            return True
    return isinstance(head, pygit2.Blob) and _same_records(load_manifest(head.data), manifest)


def _same_records(one: Manifest, other: Manifest) -> bool:
    """Whether two manifests record the same notes, whatever their layout."""
    return (one.entries, one.deleted, one.released, one.render_format) == (
        other.entries,
        other.deleted,
        other.released,
        other.render_format,
    )


def read_controls(fs: VaultFS | None, repo: LazyRepo | None = None) -> ControlFiles:
    """Read and parse the manifest, the journal and the stat cache (each may be missing).

    ``repo``: the vault's repository, opened here when not given (the manifest's binding).

    Raises ``VaultWriteError`` when one is there but cannot be read, was written by a newer
    vaultsync, or is not this vault's.
    """
    raw, manifest = read_manifest(fs)
    _refuse_newer(manifest)
    journal = fs.read_control_file(JOURNAL) if fs is not None else None
    raw_cache = fs.read_control_file(CACHE) if fs is not None else None
    cache = load_cache(raw_cache.data, written_ns=raw_cache.mtime_ns) if raw_cache else StatCache()
    if fs is not None:
        left = manifest.fingerprint in (cache.dumped, cache.manifest)
        found = repo if repo is not None else LazyRepo(fs.root)
        _refuse_foreign(manifest, found, trusted=left or journal is not None)
    return ControlFiles(
        manifest_bytes=raw.data if raw is not None else None,
        manifest_stat=raw.stat if raw is not None else None,
        manifest=manifest,
        journal=load_journal(journal.data if journal is not None else None),
        cache=cache,
        cache_stat=raw_cache.stat if raw_cache is not None else None,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Asked:
    """What a command asks of the plan besides the specs."""

    force: bool = False
    """Regenerate every note of ours, edited ones included."""
    force_paths: frozenset[str] = frozenset()
    """Regenerate these notes only."""
    moves: Moves = NO_MOVES
    """The notes the user moved (``vault.moves.find_moves``), followed to their paths."""
    keep_gone: bool = False
    """Remove nothing: a store file was skipped, so a note may be missing only because of it."""


EARLY_SCAN_MIN = 5_000
"""Paths the manifest must list for :func:`begin_scan` to scan them in a helper (at 2,800
notes the whole scan takes about 15 ms: not worth a fork)."""

ScanRow = tuple[str, str, str, StatKey, str]
"""A path's state as plain values, sent from the helper: path, kind, blob, stat, detail."""
Scanned = tuple[list[ScanRow], int, int]
"""The rows of a scan, how many racy files it hashed, and when it began (ns since the epoch)."""


def begin_scan(fs: VaultFS | None, controls: ControlFiles) -> Background[Scanned] | None:
    """The disk state of the manifest's and journal's paths, begun in a forked helper.

    The scan (a ``stat`` per note: 0.6 s at 100,000) then runs on the second core while the
    notes are built; :func:`plan_vault` takes it and scans only the paths it lacks.  A user
    edit after this scan is no risk: every write checks the file is still as the plan saw
    it (``VaultFS.apply``), as it does for an edit made after the plan's own scan.
    ``None``: no vault folder, or too few paths to be worth it.

    Not for a resident process (``watch``): its heap is a gigabyte, and each page it writes
    while the helper lives is copied (measured at 100,000 notes: a one-fact sync 0.3 s faster
    in a one-shot process, 0.1 s slower in ``watch``).
    """
    if fs is None:
        return None
    paths = set(controls.manifest.entries)
    if controls.journal is not None:
        paths |= controls.journal.intents.keys()
    if len(paths) < EARLY_SCAN_MIN:
        return None
    work = functools.partial(_scan_rows, fs, paths, controls.cache)
    return in_background(work, min_items=len(paths))


def _scan_rows(fs: VaultFS, paths: set[str], cache: StatCache) -> Scanned:
    """``fs.scan`` as plain values (what a pipe carries fastest), and when it began."""
    began = time.time_ns()
    states, racy = fs.scan(paths, cache)
    return [(p, s.kind.value, s.blob, s.stat, s.detail) for p, s in states.items()], racy, began


def _states(rows: list[ScanRow], paths: set[str]) -> dict[str, FileState]:
    """The rows of ``paths`` as states (a moved note's old path is no longer asked about)."""
    states: dict[str, FileState] = {}
    for path, kind, blob, stat_key, detail in rows:
        if path not in paths:
            continue
        if kind == FileKind.FILE and not detail:
            states[path] = file_state(blob, stat_key)
        else:
            states[path] = FileState(kind=FileKind(kind), blob=blob, stat=stat_key, detail=detail)
    return states


def _disk(
    fs: VaultFS | None, paths: set[str], controls: ControlFiles, early: Background[Scanned] | None
) -> tuple[dict[str, FileState], int, int]:
    """The disk state of ``paths``, how many racy files were hashed, when the scan began.

    ``early`` is taken first; the paths it lacks are scanned now.  In a process that hears
    the vault's file events (``vault.vaultevents``), the files they leave untouched since the
    stat cache's scan are not looked at.
    """
    began = time.time_ns()
    cache = controls.cache
    if fs is None:
        return dict.fromkeys(paths, ABSENT), 0, began
    if early is None:
        events = events_of(fs.root)
        changed = events.began_scan(controls.cache_stat) if events is not None else None
        disk, racy = fs.scan(paths, cache, changed)
        return disk, racy, began
    rows, racy, began = early.result()  # it began first
    states = _states(rows, paths)
    rest, more = fs.scan(paths - states.keys(), cache)
    states.update(rest)
    return states, racy + more, began


def plan_vault(
    fs: VaultFS | None,
    repo: LazyRepo,
    specs: Sequence[NoteSpec],
    asked: Asked,
    *,
    controls: ControlFiles | None = None,
    early: Background[Scanned] | None = None,
) -> Decision:
    """The control files (read here unless given), the disk state and the plan.

    ``early``: :func:`begin_scan`'s scan of the same ``controls``, taken instead of scanning
    its paths again.
    """
    # Stat data, entries and steps by the hundred thousand, none in a cycle: left on, the
    # collector walked them again and again (0.19 s of a one-fact sync at 100,000 notes).
    with paused_gc():
        return _plan_vault(fs, repo, specs, asked, controls=controls, early=early)


def _plan_vault(
    fs: VaultFS | None,
    repo: LazyRepo,
    specs: Sequence[NoteSpec],
    asked: Asked,
    *,
    controls: ControlFiles | None,
    early: Background[Scanned] | None,
) -> Decision:
    moves = asked.moves
    controls = read_controls(fs) if controls is None else controls
    followed = follow(controls.manifest, moves.renamed)
    paths = _paths(specs, controls, followed, repo)
    disk, racy, scanned_ns = _disk(fs, paths, controls, early)
    manifest = followed
    if controls.journal is not None:
        manifest = reconcile(manifest, controls.journal, disk)
    history = _history(repo, specs, manifest, disk, journal=controls.journal)
    plan = plan_sync(
        specs,
        manifest,
        disk,
        history,
        force=asked.force,
        force_paths=asked.force_paths,
        keep_gone=asked.keep_gone,
    )
    if fs is not None and moves.chosen:
        targets = LinkTargets.of(controls.manifest, moves.renamed)
        plan = _links_rewritten(fs, repo, plan, targets)
    return Decision(
        controls=controls,
        manifest=manifest,
        disk=disk,
        racy=racy,
        scanned_ns=scanned_ns,
        plan=plan,
        renamed=moves.renamed,
    )


def _links_rewritten(fs: VaultFS, repo: LazyRepo, plan: Plan, targets: LinkTargets) -> Plan:
    """The plan with each "edited" note that differs only by links Obsidian rewrote updated."""
    steps, keep = list(plan.steps), dict(plan.keep)
    found = None
    for number, step in enumerate(steps):
        if step.action not in (Action.KEEP_EDITED, Action.MERGE) or step.spec is None:
            continue
        if step.prior is None:
            continue
        found = found or repo.get()
        base = found.read_blob(step.prior.blob) if found is not None else None
        ours = fs.read(step.path)
        if base is None or ours is None or blob_id(ours) != step.state.blob:
            continue
        if same_but_links(ours, base, step.path, targets):
            steps[number] = replace(step, action=Action.UPDATE, prior=replace(step.prior, key=""))
            keep.pop(step.path, None)
    return replace(plan, steps=tuple(steps), keep=MappingProxyType(keep))


def _paths(
    specs: Sequence[NoteSpec], controls: ControlFiles, manifest: Manifest, repo: LazyRepo
) -> set[str]:
    """Every path the plan needs the disk state of.

    The specs', the manifest's (moves followed), the journal's; with a lost manifest, the last
    sync commit's.
    """
    paths = {s.path for s in specs} | manifest.entries.keys()
    if controls.journal is not None:
        paths |= controls.journal.intents.keys()
    if controls.manifest.lost and (found := repo.get()) is not None:
        paths |= load_manifest(found.last_sync_manifest()).entries.keys()
    return paths


def _history(
    repo: LazyRepo,
    specs: Sequence[NoteSpec],
    manifest: Manifest,
    disk: Mapping[str, FileState],
    *,
    journal: Journal | None,
) -> Ownership:
    """What git history says the engine last wrote at the paths the manifest cannot settle.

    The manifest is trusted for its own paths when it is the one the last sync commit
    recorded; git is opened only when some file differs from it.
    """
    trust = True
    if differs(manifest, disk) and (found := repo.get()) is not None:
        fingerprint = found.last_sync_fingerprint()
        trust = not manifest.lost and journal is None and fingerprint == manifest.fingerprint
    questions = history_questions((s.path for s in specs), manifest, disk, trust_manifest=trust)
    found = repo.get() if questions else None
    return found.last_sync_blobs(questions) if found is not None else {}


_RENDERED = (Action.CREATE, Action.UPDATE)


def render(plan: Plan) -> Rendered:
    """Render the create/update steps, keeping only the bytes that differ from the disk."""
    writes: dict[str, bytes] = {}
    blobs: dict[str, str] = {}
    same: dict[str, str | None] = {}
    steps = [s for s in plan.steps if s.spec is not None and s.action in _RENDERED]
    progress.phase("render", len(steps))
    for step, data in zip(steps, split_map(_render_step, steps), strict=True):
        blob = blob_id(data)
        if step.state.kind is FileKind.FILE and step.state.blob == blob:
            same[step.path] = blob
        else:
            writes[step.path], blobs[step.path] = data, blob
    return Rendered(writes=writes, blobs=blobs, same=same)


def _render_step(step: Step) -> bytes:
    assert step.spec is not None  # noqa: S101 - render passes only steps with a spec
    return step.spec.render()


BUSY_NS = 3_000_000_000
"""A file modified this recently may be mid-save in an editor: it is merged by a later sync."""


def merge(
    fs: VaultFS,
    repo: LazyRepo,
    decision: Decision,
    rendered: Rendered,
    *,
    now_ns: int,
    dry_run: bool = False,
) -> Rendered:
    """``rendered`` plus every merge step's outcome; clean merges join the bytes to write.

    ``dry_run``: the same merges, their objects kept in a scratch repository only, so a dry run
    reports what the sync would merge and leaves the vault's repository as it was.
    """
    steps = decision.plan.paths(Action.MERGE)
    found = repo.get(create=not dry_run) if steps else None
    if found is None:
        return rendered
    if dry_run:  # the same merges, their objects written to a scratch repository only
        with scratch_merger() as scratch:
            return _merged(fs, found, decision, rendered, now_ns=now_ns, lines=scratch)
    return _merged(fs, found, decision, rendered, now_ns=now_ns, lines=found)


def _merged(
    fs: VaultFS,
    found: VaultRepo,
    decision: Decision,
    rendered: Rendered,
    *,
    now_ns: int,
    lines: VaultRepo,
) -> Rendered:
    """Every merge step tried, ``lines`` merging by lines and keeping the objects it needs."""
    plan, seen = decision.plan, decision.controls.cache.entries
    steps = plan.paths(Action.MERGE)
    writes, blobs, same = dict(rendered.writes), dict(rendered.blobs), dict(rendered.same)
    merges: dict[str, MergeOutcome] = {}
    by_path = {s.path: s for s in plan.steps}
    for path in steps:
        step = by_path[path]
        mine = step.source or path  # a note the stores moved: the user's file is at its old path
        # A file still as the last sync saw or wrote it is not being saved by an editor.
        known = mine in seen and seen[mine][0] == step.state.stat
        busy = not known and now_ns - step.state.stat[1] < BUSY_NS
        assert step.spec is not None  # noqa: S101 - merge steps have a spec
        theirs = step.spec.render()
        merges[path], data = _merge_step(fs, found, step, theirs, busy=busy, lines=lines)
        if step.source and data is None:  # not merged: the new note as rendered, the edit stays
            data = theirs
            merges[path] = replace(merges[path], clean=False, blob="")
        if data is not None and merges[path].blob == step.state.blob and not step.source:
            same[path] = merges[path].blob
        elif data is not None:
            writes[path], blobs[path] = data, blob_id(data)
    return Rendered(writes=writes, blobs=blobs, same=same, merges=merges)


def _merge_step(
    fs: VaultFS, repo: VaultRepo, step: Step, theirs: bytes, *, busy: bool, lines: VaultRepo
) -> tuple[MergeOutcome, bytes | None]:
    """One merge of ``theirs`` (the new render): its outcome, and the merged bytes if clean.

    ``busy`` (an editor may be saving the file): nothing is written, and nothing recorded
    unless the file already holds the merge (a killed sync wrote it).
    """
    assert step.prior is not None  # noqa: S101 - merge steps have one
    outcome = MergeOutcome(theirs=blob_id(theirs))
    ours = fs.read(step.source or step.path)
    if ours is None or blob_id(ours) != step.state.blob:
        return replace(outcome, waiting="it changed during the sync"), None
    if has_conflict_markers(ours):  # a merge left unfinished is no edit to merge into
        return replace(outcome, overlaps=(MARKERS_REASON,)), None
    lines.store_blobs({outcome.theirs: theirs})
    base = repo.read_blob(step.prior.blob)
    if base is None:
        missing = "the version vaultsync last wrote is not in git"
        return replace(outcome, overlaps=(missing,)), None
    merged = merge_note(base, ours, theirs, merge_lines=lines.merge_lines)
    if busy and not (merged.clean and merged.data == ours):
        return replace(outcome, waiting="modified seconds ago (an editor may be saving it)"), None
    if not merged.clean:
        return replace(outcome, overlaps=merged.overlaps), None
    return replace(outcome, clean=True, blob=blob_id(merged.data)), merged.data

"""Stages 5-6, orchestrated: specs → vault files → manifest → git commit → index.

``sync_vault``: lock → load manifest, journal, stat cache → read the disk state → recover an
interrupted sync (adopt its files, sweep its temp files) → ask git history only what the
manifest cannot answer → plan → render only what must be written → journal (durable) → write
→ manifest, written last once the notes are durable → commit → index sync → drop the journal.

Crash windows (SIGKILL at any point loses nothing the user owns and the next sync converges):

* before the journal: nothing changed (a stray temp of the journal is swept);
* notes partly written: the journal names every intended blob, so the next sync adopts the
  files that hold it (without the journal they would look like foreign files), sweeps temps in
  the journal's folders and does the rest;
* manifest written, no commit: the journal's paths join the next commit;
* committed, index not synced: the next commit is empty, the index sync runs;
* a git ``*.lock`` left by the kill: git's rule holds, never deleted; the error says so.

``check_vault`` and ``vault_status`` read only (no lock file, no repository created) and render
only the notes whose key changed.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from vaultsync.core.errors import VaultWriteError
from vaultsync.core.fsio import RACY_NS
from vaultsync.core.model import NoteSpec
from vaultsync.core.parallel import split_map
from vaultsync.vault.manifest import (
    CACHE,
    CONTROL_DIR,
    GITIGNORE,
    GITIGNORE_BYTES,
    JOURNAL,
    MANIFEST,
    Entry,
    Journal,
    Manifest,
    StatCache,
    StatKey,
    blob_id,
    dump_cache,
    dump_journal,
    dump_manifest,
    load_cache,
    load_journal,
    load_manifest,
)
from vaultsync.vault.plan import (
    ABSENT,
    Action,
    FileKind,
    FileState,
    Plan,
    Step,
    differs,
    history_questions,
    next_manifest,
    plan_sync,
    reconcile,
    validate_specs,
)
from vaultsync.vault.vcs import EditOrigin, VaultRepo
from vaultsync.vault.write import VaultFS

LOCK_TIMEOUT = 30.0


@contextlib.contextmanager
def _io_errors(vault: Path) -> Iterator[None]:
    """Any file-system failure leaves as a ``VaultWriteError`` naming the file."""
    try:
        yield
    except OSError as err:
        where = err.filename or vault
        raise VaultWriteError(f"{where}: {err.strerror or err}") from err


class _Repo:
    """The vault's repository, opened on first use: a clean no-op sync never touches git."""

    def __init__(self, vault: Path | None) -> None:
        self.vault = vault
        self._repo: VaultRepo | None = None
        self._opened = vault is None

    def get(self, *, create: bool = False) -> VaultRepo | None:
        if self.vault is not None and (not self._opened or (create and self._repo is None)):
            self._repo = VaultRepo.open(self.vault, create=create)
            self._opened = True
        return self._repo


@dataclass(frozen=True, slots=True, kw_only=True)
class Conflict:
    """A produced note that cannot be written, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncReport:
    """What one sync did (or, with ``dry_run``, would do); path tuples are sorted."""

    created: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: int = 0
    kept_edited: tuple[str, ...] = ()
    kept_deleted: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    commit: str = ""
    manifest_problem: str = ""
    """Why the manifest was unusable (that sync kept every file git history did not prove ours)."""
    recovered: bool = False
    """The sync finished the work of an interrupted one."""
    index_synced: bool = True
    """``False``: ``.git/index`` stayed locked; the next sync retries."""
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        """Some note was (or would be) created, updated or removed."""
        return bool(self.created or self.updated or self.removed)


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusReport:
    """``vaultsync status``: what the vault keeps for the user and what a sync would change."""

    edited: tuple[EditOrigin, ...] = ()
    deleted: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    pending: tuple[str, ...] = ()
    manifest_problem: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Look:
    raw_manifest: bytes | None
    manifest: Manifest
    journal: Journal | None
    cache: StatCache
    disk: Mapping[str, FileState]
    racy: int
    plan: Plan


def _look(fs: VaultFS | None, repo: _Repo, specs: Sequence[NoteSpec], *, force: bool) -> _Look:
    """Everything a sync decides from, read without writing anything."""
    raw = fs.read_control(MANIFEST) if fs is not None else None
    data = raw[0] if raw is not None else None
    manifest = load_manifest(data, fingerprint=blob_id(data) if data is not None else "")
    journal_raw = fs.read_control(JOURNAL) if fs is not None else None
    journal = load_journal(journal_raw[0] if journal_raw is not None else None)
    cache_raw = fs.read_control(CACHE) if fs is not None else None
    cache = StatCache()
    if cache_raw is not None:
        cache = load_cache(cache_raw[0], written_ns=cache_raw[1])
    paths = {s.path for s in specs} | manifest.entries.keys()
    if journal is not None:
        paths |= journal.intents.keys()
    if manifest.lost and (found := repo.get()) is not None:
        paths |= load_manifest(found.last_sync_manifest()).entries.keys()
    disk, racy = fs.scan(paths, cache) if fs is not None else (dict.fromkeys(paths, ABSENT), 0)
    if journal is not None:
        manifest = reconcile(manifest, journal, disk)
    trust = True
    if differs(manifest, disk) and (found := repo.get()) is not None:
        fingerprint = found.last_sync_fingerprint()
        trust = not manifest.lost and journal is None and fingerprint == manifest.fingerprint
    questions = history_questions((s.path for s in specs), manifest, disk, trust_manifest=trust)
    found = repo.get() if questions else None
    history = found.last_sync_blobs(questions) if found is not None else {}
    plan = plan_sync(specs, manifest, disk, history, force=force)
    return _Look(
        raw_manifest=data,
        manifest=manifest,
        journal=journal,
        cache=cache,
        disk=disk,
        racy=racy,
        plan=plan,
    )


def _conflicts(plan: Plan, appeared: frozenset[str] = frozenset()) -> tuple[Conflict, ...]:
    out = [
        Conflict(path=s.path, reason=s.reason) for s in plan.steps if s.action is Action.CONFLICT
    ]
    out += [Conflict(path=p, reason="a file appeared there during the sync") for p in appeared]
    return tuple(sorted(out, key=lambda c: c.path))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Rendered:
    writes: dict[str, bytes]
    blobs: dict[str, str]
    same: dict[str, str | None]
    """Rendered notes whose file already holds exactly those bytes."""


def _render(plan: Plan) -> _Rendered:
    """Render the create/update steps, keeping only the bytes that differ from the disk."""
    writes: dict[str, bytes] = {}
    blobs: dict[str, str] = {}
    same: dict[str, str | None] = {}
    steps = [s for s in plan.steps if s.spec is not None and s.action in _RENDERED]
    for step, data in zip(steps, split_map(_render_step, steps), strict=True):
        blob = blob_id(data)
        if step.state.kind is FileKind.FILE and step.state.blob == blob:
            same[step.path] = blob
        else:
            writes[step.path], blobs[step.path] = data, blob
    return _Rendered(writes=writes, blobs=blobs, same=same)


_RENDERED = (Action.CREATE, Action.UPDATE)


def _render_step(step: Step) -> bytes:
    assert step.spec is not None  # noqa: S101 - _render passes only steps with a spec
    return step.spec.render()


def _pending(plan: Plan, rendered: _Rendered, manifest: Manifest) -> tuple[str, ...]:
    lines = [f"{s.action} {s.path}" for s in plan.steps if s.path in rendered.writes]
    lines += [f"remove {p}" for p in plan.paths(Action.REMOVE)]
    if manifest.corrupt:
        lines.append(f"manifest {MANIFEST}: {manifest.problem}")
    return tuple(sorted(lines))


def _read_only(
    vault: Path, specs: Sequence[NoteSpec], *, force: bool = False
) -> tuple[_Look, _Repo]:
    validate_specs(specs)
    if not vault.is_dir():
        return _look(None, _Repo(None), specs, force=force), _Repo(None)
    repo = _Repo(vault)
    with _io_errors(vault), VaultFS(vault) as fs, fs.lock(timeout=LOCK_TIMEOUT, shared=True):
        return _look(fs, repo, specs, force=force), repo


def check_vault(vault: Path, specs: Sequence[NoteSpec]) -> tuple[str, ...]:
    """What a sync would change (``create``/``update``/``remove <path>``); empty = in sync."""
    look, _repo = _read_only(vault, specs)
    lines = list(_pending(look.plan, _render(look.plan), look.manifest))
    if look.journal is not None:
        lines.append(f"journal {JOURNAL}: an interrupted sync is unfinished")
    return tuple(lines)


def vault_status(vault: Path, specs: Sequence[NoteSpec]) -> StatusReport:
    """Kept edits (with the commit that carried them), user deletions, conflicts, pending work."""
    look, repo = _read_only(vault, specs)
    edited = {p: look.disk[p].blob for p in look.plan.paths(Action.KEEP_EDITED)}
    found = repo.get() if edited else None
    origins = found.edit_origins(edited) if found is not None else {}
    return StatusReport(
        edited=tuple(origins.get(p, EditOrigin(path=p, uncommitted=True)) for p in sorted(edited)),
        deleted=look.plan.paths(Action.KEEP_DELETED),
        conflicts=_conflicts(look.plan),
        pending=_pending(look.plan, _render(look.plan), look.manifest),
        manifest_problem=look.manifest.problem,
    )


def _report(
    look: _Look,
    rendered: _Rendered,
    *,
    written: Mapping[str, StatKey] | None = None,
    removed: Sequence[str] | None = None,
    skipped: Sequence[str] = (),
    commit: str = "",
    index_synced: bool = True,
) -> SyncReport:
    """The report; ``written``/``removed`` default to the plan's (a dry run)."""
    plan = look.plan
    done = rendered.writes.keys() if written is None else written.keys()
    creates = frozenset(plan.paths(Action.CREATE))
    appeared = frozenset(p for p in skipped if p in creates)
    return SyncReport(
        created=tuple(sorted(p for p in done if p in creates)),
        updated=tuple(sorted(p for p in done if p not in creates)),
        removed=tuple(plan.paths(Action.REMOVE) if removed is None else removed),
        unchanged=len(plan.paths(Action.UNCHANGED)) + len(rendered.same),
        kept_edited=tuple(sorted({*plan.paths(Action.KEEP_EDITED), *(set(skipped) - appeared)})),
        kept_deleted=plan.paths(Action.KEEP_DELETED),
        conflicts=_conflicts(plan, appeared),
        commit=commit,
        manifest_problem=look.manifest.problem,
        recovered=look.journal is not None,
        index_synced=index_synced,
        dry_run=written is None,
    )


def _save_cache(
    fs: VaultFS,
    look: _Look,
    written: Mapping[str, StatKey],
    blobs: Mapping[str, str],
    removed: Sequence[str],
    *,
    inputs: str = "",
) -> None:
    """Record the stat data of every file seen or written; skipped when nothing would change.

    ``inputs`` is kept only after a sync without conflicts: ``vault.quick`` may then skip a
    later sync whose inputs and files are all unchanged.
    """
    gone = set(removed)
    entries = {
        p: (s.stat, s.blob)
        for p, s in look.disk.items()
        if s.kind is FileKind.FILE and p not in gone
    }
    entries.update({p: (key, blobs[p]) for p, key in written.items()})
    recorded = "" if _conflicts(look.plan) else inputs
    stale = look.racy and time.time_ns() > look.cache.written_ns + RACY_NS
    if stale or entries != look.cache.entries or recorded != look.cache.inputs:
        fs.write_control(CACHE, dump_cache(entries, recorded), durable=False)


def _change_set(
    fs: VaultFS,
    *,
    look: _Look,
    intents: Mapping[str, Entry | None],
    rendered: _Rendered,
    outcome: Mapping[str, str | None],
    entries: Mapping[str, Entry],
    manifest_bytes: bytes,
) -> dict[str, bytes | None]:
    """What to commit: the paths this sync (or the interrupted one) wrote or removed.

    Each as the new manifest says, if the disk agrees; a removal only if one was intended and
    the file is gone.
    """
    changes: dict[str, bytes | None] = {MANIFEST: manifest_bytes, GITIGNORE: GITIGNORE_BYTES}
    for path in sorted(intents.keys() | outcome.keys()):
        entry = entries.get(path)
        if entry is None:
            before = look.disk.get(path, ABSENT).kind
            gone = (path in outcome and outcome[path] is None) or before is FileKind.ABSENT
            if path in intents and intents[path] is None and gone:
                changes[path] = None
        elif path in rendered.writes and outcome.get(path) == entry.blob:
            changes[path] = rendered.writes[path]
        elif (data := fs.read(path)) is not None and blob_id(data) == entry.blob:
            changes[path] = data
    return changes


def sync_vault(
    vault: Path,
    specs: Sequence[NoteSpec],
    *,
    force: bool = False,
    commit: bool = True,
    dry_run: bool = False,
    clock: Callable[[], datetime] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
    inputs: str = "",
) -> SyncReport:
    """Bring the vault in line with ``specs``; see the module docstring for the steps.

    Raises ``UnsafePathError`` (a spec path that could leave the vault: nothing is written),
    ``VaultWriteError`` (a duplicate path, the lock timed out, a write or commit failed).
    """
    if dry_run:
        look, _repo = _read_only(vault, specs, force=force)
        return _report(look, _render(look.plan))
    validate_specs(specs)
    with _io_errors(vault), VaultFS(vault, create=True) as fs, fs.lock(timeout=lock_timeout):
        repo = _Repo(vault)
        look = _look(fs, repo, specs, force=force)
        journal = look.journal
        if journal is not None and not journal.readable:
            fs.clean_temps(None)
        else:  # a kill while writing the journal itself leaves a temp in .vaultsync/
            folders = {p.rpartition("/")[0] for p in journal.intents} if journal else set()
            fs.clean_temps({CONTROL_DIR, *folders})
        rendered = _render(look.plan)
        removes = look.plan.paths(Action.REMOVE)
        ignore = fs.read_control(GITIGNORE)
        ignored = ignore is not None and ignore[0] == GITIGNORE_BYTES
        if not rendered.writes and not removes and journal is None and ignored:
            entries, deleted = next_manifest(look.plan, rendered.same)
            kept = look.manifest
            if not kept.lost and entries == kept.entries and deleted == kept.deleted:
                _save_cache(fs, look, {}, {}, (), inputs=inputs)
                return _report(look, rendered, written={}, removed=())
        intents: dict[str, Entry | None] = dict(journal.intents) if journal is not None else {}
        for step in look.plan.steps:
            if step.spec is not None and step.path in rendered.writes:
                blob = rendered.blobs[step.path]
                intents[step.path] = Entry(node=step.spec.node_id, key=step.spec.key, blob=blob)
        intents.update(dict.fromkeys(removes))
        fs.write_control(JOURNAL, dump_journal(Journal(intents=intents)))
        if not ignored:
            fs.write_control(GITIGNORE, GITIGNORE_BYTES)
        applied = fs.apply(rendered.writes, removes, look.disk)
        outcome: dict[str, str | None] = {**rendered.same, **dict.fromkeys(applied.removed)}
        outcome.update({p: rendered.blobs[p] for p in applied.written})
        entries, deleted = next_manifest(look.plan, outcome)
        manifest_bytes = dump_manifest(entries, deleted)
        if manifest_bytes != look.raw_manifest:
            fs.write_control(MANIFEST, manifest_bytes)
        sha, synced = "", True
        if commit:
            found = repo.get(create=True)
            assert found is not None  # noqa: S101 - create=True never gives None
            changes = _change_set(
                fs,
                look=look,
                intents=intents,
                rendered=rendered,
                outcome=outcome,
                entries=entries,
                manifest_bytes=manifest_bytes,
            )
            when = clock() if clock is not None else None
            # _change_set keeps only bytes whose blob is the new manifest's: hashed already.
            known = {p: entries[p].blob for p, data in changes.items() if data and p in entries}
            sha = (
                found.commit(changes, fingerprint=blob_id(manifest_bytes), when=when, known=known)
                or ""
            )
            synced = found.sync_index(changes, written=applied.written, known=known)
        _save_cache(fs, look, applied.written, rendered.blobs, applied.removed, inputs=inputs)
        if synced:
            fs.remove_control(JOURNAL)
        return _report(
            look,
            rendered,
            written=applied.written,
            removed=applied.removed,
            skipped=applied.skipped,
            commit=sha,
            index_synced=synced,
        )

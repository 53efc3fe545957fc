"""Stage 6, apply: a ``Decision`` and its rendered bytes → files, manifest, commit, index; I/O.

:func:`run` takes the steps in this order, each a function of its own:

1. :func:`sweep_temps` — recover: remove temp files an interrupted sync left;
2. :func:`write_journal` — the intents, durable before any note is touched;
3. :func:`write_notes` — notes written and removed (``VaultFS.apply``: no clobbering, durable);
4. :func:`write_manifest` — the new manifest, written last once the notes are durable;
5. :func:`commit_changes` — one commit of exactly the paths this sync (or the interrupted one)
   wrote or removed, plus the manifest;
6. :func:`sync_index` — ``.git/index`` agrees with that commit for those paths;
7. :func:`save_cache` — the stat cache (a hint only);
8. :func:`drop_journal` — the sync is finished.

A sync with nothing to write (:func:`nothing_to_write`) stops after the cache, touching git not
at all.

Crash windows (SIGKILL at any point loses nothing the user owns and the next sync converges):

* before the journal: nothing changed (a stray temp of the journal is swept);
* notes partly written: the journal names every intended blob, so the next sync adopts the
  files that hold it (without the journal they would look like foreign files), sweeps temps in
  the journal's folders and does the rest;
* manifest written, no commit: the journal's paths join the next commit;
* committed, index not synced: the next commit is empty, the index sync runs;
* index synced, journal not dropped: the next sync's commit is empty, it syncs the index again
  and drops the journal;
* a git ``*.lock`` left by the kill: git's rule holds, never deleted; the error says so.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from datetime import datetime

from vaultsync.core import progress
from vaultsync.core.config import CONFIG
from vaultsync.core.fsio import RACY_NS, is_racy
from vaultsync.core.model import Skipped
from vaultsync.core.process import paused_gc
from vaultsync.render import RENDER_FORMAT
from vaultsync.vault.decide import Decision, Rendered
from vaultsync.vault.indexproof import IndexProver
from vaultsync.vault.lazyrepo import LazyRepo
from vaultsync.vault.manifest import (
    CACHE,
    CONTROL_DIR,
    GITIGNORE,
    GITIGNORE_BYTES,
    JOURNAL,
    MANIFEST,
    Entry,
    Journal,
    LastSync,
    Manifest,
    StatCache,
    StatKey,
    blob_id,
    dump_journal,
    dump_manifest,
    dump_stat_cache,
    know_written_manifest,
    patch_manifest,
    proven,
)
from vaultsync.vault.plan import ABSENT, Action, FileKind, next_manifest
from vaultsync.vault.report import (
    SyncReport,
    conflicts,
    counts_text,
    format_change,
    settled_unchanged,
    sync_report,
    unchanged_count,
)
from vaultsync.vault.vaultevents import events_of
from vaultsync.vault.vcs import VaultRepo
from vaultsync.vault.write import Applied, VaultFS

Intents = Mapping[str, Entry | None]
"""The journal's content: the entry each written path will hold, ``None`` for each removal."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Written:
    """What the write step did, and what each rendered or removed path now holds."""

    applied: Applied
    outcome: Mapping[str, str | None]
    """Path → the blob now on disk (written, or already equal), ``None`` for a removal."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NewManifest:
    """The manifest after the sync, and its bytes."""

    entries: Mapping[str, Entry]
    deleted: frozenset[str]
    data: bytes
    blob: str
    """The blob id of ``data``."""
    stat: StatKey | None = None
    """The stat data of the manifest file that holds ``data`` (``None``: not known)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    """What the commit step committed (the index step syncs exactly these paths)."""

    repo: VaultRepo
    sha: str
    """The new commit, or ``""`` when the tree did not change."""
    changes: Mapping[str, bytes | None]
    known: Mapping[str, str]
    """Blob ids of the committed bytes (hashed already: not hashed again)."""


def run(
    fs: VaultFS,
    repo: LazyRepo,
    decision: Decision,
    rendered: Rendered,
    *,
    commit: bool = True,
    clock: Callable[[], datetime] | None = None,
    inputs: str = "",
    skipped: tuple[Skipped, ...] = (),
) -> SyncReport:
    """Every step, in order (see the module docstring); the caller holds the vault lock.

    ``inputs`` (``vault.quick.sync_inputs``) and ``skipped`` (the store files the notes were
    built without) are recorded with the stat cache for the quick answers.
    """
    sweep_temps(fs, decision.controls.journal)
    waiting = unsettled(decision, rendered)
    ignored = fs.read_control_file(GITIGNORE)
    gitignore_ok = ignored is not None and ignored.data == GITIGNORE_BYTES
    if gitignore_ok and nothing_to_write(decision, rendered):
        kept = decision.controls
        left = None
        if not kept.manifest.corrupt and kept.manifest_bytes is not None:
            left = NewManifest(
                entries=kept.manifest.entries,
                deleted=kept.manifest.deleted,
                data=kept.manifest_bytes,
                blob=kept.manifest.fingerprint,
                stat=kept.manifest_stat,
            )
        cache = save_cache(
            fs,
            decision,
            {},
            {},
            (),
            inputs=inputs,
            skipped=skipped,
            waiting=waiting,
            manifest=left,
            dumped=kept.cache.dumped,
            unchanged=unchanged_count(decision.plan, rendered),  # it wrote nothing
        )
        tie_events(fs, cache, Applied())
        return sync_report(decision, rendered, written={}, removed=())
    if commit and (found := repo.get()) is not None:
        found.verify()  # a broken repository stops the sync before any note is written
    intents = write_journal(fs, decision, rendered, gitignore=not gitignore_ok)
    written = write_notes(fs, decision, rendered)
    manifest = write_manifest(fs, decision, rendered, written)
    applied = written.applied
    report = sync_report(
        decision,
        rendered,
        written=applied.written,
        removed=applied.removed,
        skipped=applied.skipped,
    )
    committed = None
    if commit:
        committed = commit_changes(
            fs,
            repo,
            decision,
            rendered=rendered,
            intents=intents,
            written=written,
            manifest=manifest,
            counts=report,
            clock=clock,
        )
    else:
        store_written(repo, rendered, written)
    synced = sync_index(committed, written) if committed is not None else True
    sha = committed.sha if committed is not None else ""
    report = replace(report, commit=sha, index_synced=synced)
    cache = save_cache(
        fs,
        decision,
        applied.written,
        rendered.blobs,
        applied.removed,
        inputs=inputs,
        skipped=skipped,
        waiting=waiting or bool(applied.skipped),  # a write refused: the next sync makes it
        manifest=manifest,
        dumped=manifest.blob,
        unchanged=settled_unchanged(report),
    )
    tie_events(fs, cache, applied)
    if synced:
        drop_journal(fs)
    return report


def unsettled(decision: Decision, rendered: Rendered) -> bool:
    """Whether the next sync with the same inputs would still act: no quick answer then.

    A merge left for later (a file being saved) or one that conflicted, and an edit kept
    without knowing its render (a file where a deleted note was): the next plan merges it.
    """
    if any(m.waiting or not m.clean for m in rendered.merges.values()):
        return True
    return any(
        s.action is Action.KEEP_EDITED and s.spec and s.prior and s.prior.key != s.spec.key
        for s in decision.plan.steps
    )


def sweep_temps(fs: VaultFS, journal: Journal | None) -> None:
    """Remove the temp files an interrupted sync left: in its journal's folders and ours.

    An unreadable journal names no folders, so the whole vault is swept.  Only names of the
    temp pattern are removed.  Crash window: none (a temp file is never anyone's data).
    """
    if journal is not None and not journal.readable:
        fs.clean_temps(None)
        return
    # A kill while writing the journal itself leaves a temp in .vaultsync/.
    folders = {p.rpartition("/")[0] for p in journal.intents} if journal else set()
    fs.clean_temps({CONTROL_DIR, *folders})


def nothing_to_write(decision: Decision, rendered: Rendered) -> bool:
    """No note to write or remove, no journal to finish, and the manifest already says it all."""
    plan = decision.plan
    if rendered.writes or plan.paths(Action.REMOVE) or decision.controls.journal is not None:
        return False
    if decision.renamed:  # the manifest moves the entries, the commit records the renames
        return False
    entries, deleted = next_manifest(plan, rendered.same, rendered.merges)
    kept = decision.manifest
    return not kept.lost and entries == kept.entries and deleted == kept.deleted


def write_journal(
    fs: VaultFS, decision: Decision, rendered: Rendered, *, gitignore: bool
) -> Intents:
    """Write the journal durably: every path this sync will write (with its blob) or remove.

    An interrupted sync's intents are kept: its paths are still to be committed.  Then
    ``.vaultsync/.gitignore`` when ``gitignore`` (missing or not ours).  Crash window: a kill
    before the journal is durable changed nothing but a temp file in ``.vaultsync/``.
    """
    journal = decision.controls.journal
    intents: dict[str, Entry | None] = dict(journal.intents) if journal is not None else {}
    for step in decision.plan.steps:
        if step.spec is not None and step.path in rendered.writes:
            # A merged note holds the user's text: its intent names the merge base, so a killed
            # sync's merge is never adopted as vaultsync's own bytes (the next sync merges again).
            merged = rendered.merges.get(step.path)
            blob, wrote = rendered.blobs[step.path], ""
            if merged is not None:
                blob, wrote = merged.theirs, blob
            intents[step.path] = Entry(
                node=step.spec.node_id, key=step.spec.key, blob=blob, wrote=wrote
            )
    intents.update(dict.fromkeys(decision.plan.paths(Action.REMOVE, Action.MOVED)))
    # A followed move: the old path leaves git, the note joins it at its new path.
    for old, new in decision.renamed.items():
        intents[old] = None
        if new not in intents and (entry := decision.manifest.entries.get(new)) is not None:
            intents[new] = entry
    fs.write_control(JOURNAL, dump_journal(Journal(intents=intents)))
    if gitignore:
        fs.write_control(GITIGNORE, GITIGNORE_BYTES)
    return intents


def write_notes(fs: VaultFS, decision: Decision, rendered: Rendered) -> Written:
    """Remove, then write, each path only if it is still as the plan saw it; durable on return.

    A path that changed since the scan is left alone (reported as kept, or as a conflict).
    Crash window: some notes written, some not; the journal lets the next sync adopt the
    ones that hold an intended blob and sweep the temp files.
    """
    removes = decision.plan.paths(Action.REMOVE)
    progress.phase("write", len(rendered.writes) + len(removes))
    applied = fs.apply(rendered.writes, removes, decision.disk)
    carried = _carried(decision, rendered, applied)
    if carried:  # only now: the merged note is durable at its new path
        then = fs.apply({}, carried, decision.disk)
        applied = replace(applied, removed=(*applied.removed, *then.removed))
    outcome: dict[str, str | None] = {**rendered.same, **dict.fromkeys(applied.removed)}
    outcome.update({p: rendered.blobs[p] for p in applied.written})
    return Written(applied=applied, outcome=outcome)


def _carried(decision: Decision, rendered: Rendered, applied: Applied) -> list[str]:
    """The old paths of the notes the stores moved whose edit was merged and written anew."""
    return [
        step.source
        for step in decision.plan.steps
        if step.source
        and step.path in applied.written
        and (merged := rendered.merges.get(step.path)) is not None
        and merged.clean
    ]


def write_manifest(
    fs: VaultFS, decision: Decision, rendered: Rendered, written: Written
) -> NewManifest:
    """Write the manifest of what is now on disk (durably), unless its bytes are unchanged.

    Crash window: manifest written, nothing committed; the journal's paths join the next
    sync's commit.
    """
    entries, deleted = next_manifest(decision.plan, written.outcome, rendered.merges)
    data = _patched(decision, entries, deleted) or dump_manifest(
        entries, deleted, decision.plan.released, render_format=RENDER_FORMAT
    )
    controls = decision.controls
    if data == controls.manifest_bytes:  # the bytes read: their parse holds their blob id
        blob, stat = controls.manifest.fingerprint, controls.manifest_stat
    else:
        blob, stat = blob_id(data), fs.write_control(MANIFEST, data)
        written_as = Manifest(
            entries=entries,
            deleted=deleted,
            released=decision.plan.released,
            fingerprint=blob,
            render_format=RENDER_FORMAT,
        )
        know_written_manifest(data, written_as)
    return NewManifest(entries=entries, deleted=deleted, data=data, blob=blob, stat=stat)


def _patched(
    decision: Decision, entries: Mapping[str, Entry], deleted: frozenset[str]
) -> bytes | None:
    """The new manifest patched from the one read, when that one is provably a dump.

    Its blob id is the one the stat cache recorded as dumped by the last sync, and only
    entries changed (same deleted and released paths, same render format); ``None`` otherwise.
    """
    controls = decision.controls
    before = controls.manifest
    if (
        controls.manifest_bytes is None
        or before.corrupt
        or not controls.cache.dumped
        or before.fingerprint != controls.cache.dumped
        or before.deleted != deleted
        or before.released != decision.plan.released
        or before.render_format != RENDER_FORMAT
    ):
        return None
    return patch_manifest(controls.manifest_bytes, before.entries, entries)


def commit_changes(
    fs: VaultFS,
    repo: LazyRepo,
    decision: Decision,
    *,
    rendered: Rendered,
    intents: Intents,
    written: Written,
    manifest: NewManifest,
    counts: SyncReport,
    clock: Callable[[], datetime] | None = None,
) -> Committed:
    """Commit the paths this sync (or the interrupted one) wrote or removed, and the manifest.

    ``counts``: the sync's report, whose counts (as the terminal and ``--json`` give them) make
    the commit's subject.  Creates the repository if there is none.  Crash window: committed,
    index not synced; the next sync's commit is empty and its index sync runs.
    """
    progress.phase("commit")
    found = repo.get(create=True)
    assert found is not None  # noqa: S101 - create=True never gives None
    changes, known = _change_set(
        fs,
        decision,
        rendered=rendered,
        intents=intents,
        written=written,
        manifest=manifest,
        committed=found.head_holds(_unwritten(rendered, written, manifest)),
    )
    when = clock() if clock is not None else None
    subject = format_change_subject(decision, changes) or f"sync ({counts_text(counts)})"
    sha = found.commit(changes, fingerprint=manifest.blob, when=when, known=known, subject=subject)
    return Committed(repo=found, sha=sha or "", changes=changes, known=known)


def format_change_subject(decision: Decision, changes: Mapping[str, bytes | None]) -> str:
    """``render format N`` when this sync rewrites notes of an older format, else ``""``."""
    changed = format_change(decision, changes)
    return f"render format {changed}" if changed else ""


def _change_set(
    fs: VaultFS,
    decision: Decision,
    *,
    rendered: Rendered,
    intents: Intents,
    written: Written,
    manifest: NewManifest,
    committed: Set[str] = frozenset(),
) -> tuple[dict[str, bytes | None], dict[str, str]]:
    """What to commit, and the blob ids known for those bytes (not hashed again).

    The paths this sync (or the interrupted one) wrote or removed, each as the new manifest
    says if the disk agrees, and each merge this sync wrote; a removal only if one was intended
    and the file is gone.  ``committed``: paths ``HEAD`` already holds as the manifest says
    (:func:`_unwritten`), not read again.
    """
    outcome, entries = written.outcome, manifest.entries
    changes: dict[str, bytes | None] = {MANIFEST: manifest.data, GITIGNORE: GITIGNORE_BYTES}
    known: dict[str, str] = {MANIFEST: manifest.blob}
    # The saved config travels with the vault: each sync commits it as it is on disk.
    config = fs.read_control_file(CONFIG)
    changes[CONFIG] = config.data if config is not None else None
    for path in sorted(intents.keys() | outcome.keys()):
        entry = entries.get(path)
        if entry is None:
            before = decision.disk.get(path, ABSENT).kind
            gone = (path in outcome and outcome[path] is None) or before is FileKind.ABSENT
            if path in intents and intents[path] is None and gone:
                changes[path] = None
        elif path in rendered.writes and outcome.get(path) in {entry.blob, _merged(rendered, path)}:
            changes[path], known[path] = rendered.writes[path], rendered.blobs[path]
        elif path in committed:
            continue  # nothing to commit: reading it would only prove so
        elif (data := fs.read(path)) is not None and blob_id(data) in {
            entry.blob,
            _merged(rendered, path),
            _wrote(intents, path),
        }:
            # A merge the file already held (a killed sync wrote it) is committed as well.
            changes[path], known[path] = data, blob_id(data)
    return changes, known


def _unwritten(rendered: Rendered, written: Written, manifest: NewManifest) -> dict[str, str]:
    """The paths found already as rendered and as the manifest says, with their blob.

    After an upgrade, every note is rendered again and nearly all are found as they were: the
    commit need not read them back from disk (2.2 s at 100,000 notes) when ``HEAD`` holds them.
    """
    entries = manifest.entries
    return {
        path: blob
        for path, blob in written.outcome.items()
        if blob is not None
        and path not in rendered.writes
        and (entry := entries.get(path)) is not None
        and entry.blob == blob
    }


def _wrote(intents: Intents, path: str) -> str | None:
    """The blob an interrupted sync's merge wrote at ``path`` (``None``: no merge there)."""
    intent = intents.get(path)
    return intent.wrote if intent is not None and intent.wrote else None


def _merged(rendered: Rendered, path: str) -> str | None:
    """The blob of the clean merge this sync made at ``path`` (``None``: no merge there)."""
    merged = rendered.merges.get(path)
    return merged.blob if merged is not None and merged.clean else None


def store_written(repo: LazyRepo, rendered: Rendered, written: Written) -> None:
    """Without a commit, put the notes written into git's object store all the same.

    They are the merge bases of later syncs (``vault.decide.merge`` reads them from there).
    Crash window: none (an object not yet referenced is nobody's data).
    """
    paths = written.applied.written
    found = repo.get(create=True) if paths else None
    if found is not None:
        found.store_blobs({rendered.blobs[p]: rendered.writes[p] for p in paths})


def sync_index(committed: Committed, written: Written) -> bool:
    """Make ``.git/index`` agree with the commit for its paths (the user's other changes stay).

    ``False`` when the index stayed locked: the journal is kept and the next sync retries.
    Crash window: index synced, journal kept; the next sync's commit is empty, it syncs the
    index again and drops the journal.
    """
    return committed.repo.sync_index(
        committed.changes, written=written.applied.written, known=committed.known
    )


def save_cache(
    fs: VaultFS,
    decision: Decision,
    written: Mapping[str, StatKey],
    blobs: Mapping[str, str],
    removed: Sequence[str],
    *,
    inputs: str = "",
    skipped: tuple[Skipped, ...] = (),
    waiting: bool = False,
    manifest: NewManifest | None = None,
    dumped: str = "",
    unchanged: int | None = None,
) -> StatKey | None:
    """Record the stat data of every file seen or written; skipped when nothing would change.

    ``inputs`` is kept only after a sync without conflicts that left nothing for the next
    one (``waiting``: see :func:`unsettled`): ``vault.quick`` may then skip a later sync whose
    inputs and files are all unchanged.  With it, ``manifest`` (the valid manifest the sync
    left) is summed up as its blob id and the paths that have no file, so ``vault.quick`` need
    not parse it, and its edited and deleted notes are recorded with ``skipped`` (``LastSync``)
    for ``status`` and ``check``, and ``unchanged``, its report's count, for a sync answered from
    that record (``vault.known``), and what git's index vouches for is proven, so that they
    learn which notes changed from git (``vault.indexproof``).  ``dumped``: the blob id of
    the manifest bytes a sync dumped (``apply._patched`` may patch those next time).  Not
    durable (a hint only: a lost or stale cache costs hashing, never correctness).  Crash
    window: none of its own.  Returns the stat data of the cache file left (``None``: none).
    """
    gone = set(removed)
    doubtful = range(decision.scanned_ns - RACY_NS, time.time_ns() - RACY_NS)
    recorded = "" if conflicts(decision.plan) or waiting else inputs
    # Git's index is proven for the quick answers, which read a cache only with its inputs.
    # An entry per note and no cycles: the collector walked them again and again (0.2 s of
    # collections in a one-fact sync at 100,000 notes).
    with IndexProver(fs.root, wanted=bool(recorded)) as prover, paused_gc():
        entries = {
            p: (proven(s.stat, doubtful), s.blob)
            for p, s in decision.disk.items()
            if s.kind is FileKind.FILE and p not in gone
        }
        entries.update({p: (key, blobs[p]) for p, key in written.items()})
        told = LastSync(skipped=skipped, unchanged=unchanged)
        after = _next_cache(entries, recorded, manifest, told, dumped)
        after = replace(after, index=prover.prove(entries))  # None without recorded inputs
        cache = decision.controls.cache
        # Files hashed only because they were racy are trusted once a cache written out of
        # their racy window records them.
        stale = decision.racy and not is_racy(cache.written_ns, time.time_ns())
        kept = decision.controls.cache_stat
        if stale or entries != cache.entries or _RECORDS(after) != _RECORDS(cache):
            kept = fs.write_control(CACHE, dump_stat_cache(after), durable=False)
    return kept


def tie_events(fs: VaultFS, cache: StatKey | None, applied: Applied) -> None:
    """Tell the vault's file events, if this process hears them, which stat cache it left.

    Its next scan then looks only at the notes changed since (``vault.vaultevents``).  A write
    refused because its file changed unseen means the events missed that change: the next
    scan looks at every note.
    """
    events = events_of(fs.root)
    if events is None:
        return
    if applied.skipped:
        cache = None
    events.cache_kept(cache, written=len(applied.written) + len(applied.removed))


_RECORDS = operator.attrgetter(
    "inputs", "manifest", "manifest_stat", "absent", "dumped", "last", "index"
)
"""What a stat cache records besides its entries (and its own mtime)."""


def _next_cache(
    entries: dict[str, tuple[StatKey, str]],
    inputs: str,
    manifest: NewManifest | None,
    told: LastSync,
    dumped: str,
) -> StatCache:
    """The stat cache a sync leaves: the manifest and the last sync recorded with ``inputs``."""
    summary, absent = _manifest_summary(manifest, entries) if inputs else ("", ())
    if manifest is None or not summary:
        return StatCache(entries=entries, inputs=inputs, dumped=dumped)
    return StatCache(
        entries=entries,
        inputs=inputs,
        manifest=summary,
        manifest_stat=manifest.stat,
        absent=absent,
        dumped=dumped,
        last=_last_sync(manifest, entries, told),
    )


def _manifest_summary(
    manifest: NewManifest | None, entries: Mapping[str, object]
) -> tuple[str, tuple[str, ...]]:
    """The manifest's blob id and its entry paths without a file (``""``: none to record)."""
    if manifest is None:
        return "", ()
    return manifest.blob, tuple(sorted(p for p in manifest.entries if p not in entries))


def _last_sync(
    manifest: NewManifest | None,
    entries: Mapping[str, tuple[StatKey, str]],
    told: LastSync,
) -> LastSync:
    """The notes a plan would find edited or deleted now, as ``plan`` decides them.

    Edited: a file whose bytes are not what the engine last wrote there (for a merged note the
    manifest keeps the merge base, so it counts too).  Deleted: the manifest's deleted notes.
    ``told``: what the sync says of itself, its skipped store files and unchanged count.
    """
    assert manifest is not None  # noqa: S101 - called only with a recorded manifest
    edited = sorted(
        path
        for path, entry in manifest.entries.items()
        if path in entries and entries[path][1] != entry.blob
    )
    return replace(told, edited=tuple(edited), deleted=tuple(sorted(manifest.deleted)))


def drop_journal(fs: VaultFS) -> None:
    """Remove the journal: the sync is finished (committed and indexed, or not committing)."""
    fs.remove_control(JOURNAL)

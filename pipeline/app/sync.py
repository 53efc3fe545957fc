"""Where a sync happens: ``sync``, ``check`` and ``status``, one function each.

A sync, start to end:

0. with ``pull`` (``git.pull``): the remote's new commits integrated first (``app.remote``),
   so what other devices committed is an edit like one made here;
1. the quick answer (``vault.quick``): when nothing it depends on changed since the last
   sync, stat data say so and nothing else runs; when only a few notes were edited by hand
   since, the last sync's record answers (``vault.known``): the edits kept, no note built;
2. the vault held once (``vault.sync.vault_session``: one lock, one manifest read): the
   user's moves found, so the notes are built with the paths the user chose;
3. every note built (``render.specs``: extract the stores → build the graph → resolve links
   → lay out and key the notes);
4. planned against the vault, rendered, merged with the user's edits, written atomically and
   committed (``vault.decide`` and ``vault.apply``);
5. after it: the search index refreshed, the history checked for newly masked values, and
   ``--templates`` saved once a run succeeded with it;
6. with ``push`` (``git.push``): the result pushed, never forced.

``watch`` works steps 2-4 out ahead, read-only, while the stores are quiet (:func:`prepare`);
the sync then applies that plan when the stores, the vault's records and its HEAD are still
the ones it was made from, and works them out again otherwise.

``check`` and ``status`` run steps 2-4 read-only.  Each returns a frozen outcome; what it has
to say besides (warnings) travels in the outcome, for the adapter to print.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.app import remote
from vaultsync.app.remote import RemoteOutcome, RemoteState
from vaultsync.app.workspace import Workspace
from vaultsync.core import cachefile, process
from vaultsync.core.config import CONFIG
from vaultsync.core.errors import UsageError, VaultsyncError
from vaultsync.core.text import plural
from vaultsync.vault.gitstate import operation_in_progress, refuse_while_busy

if TYPE_CHECKING:
    from vaultsync.core.model import NoteSpec, Skipped
    from vaultsync.search.index import Since
    from vaultsync.vault.decide import Asked, Decision
    from vaultsync.vault.gitfacts import GitFacts
    from vaultsync.vault.hooks import SkippedHooks
    from vaultsync.vault.known import Known
    from vaultsync.vault.manifest import Manifest
    from vaultsync.vault.moves import Moves
    from vaultsync.vault.report import StatusReport, SyncReport
    from vaultsync.vault.sync import VaultSession

Clock = Callable[[], datetime]
"""The time a commit is dated with."""
Confirm = Callable[[str], bool]
"""Asks the person a yes/no question (an adapter's prompt); ``None`` where nobody can answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncRequest:
    """What a sync is asked to do besides bringing the vault in line."""

    force: bool = False
    """Regenerate notes: the named ``paths``, or every note of vaultsync's when none is named."""
    paths: tuple[str, ...] = ()
    """Vault paths of the notes to regenerate (with ``force``)."""
    overwrite_edited: bool = False
    """With a bare ``force``: overwrite edited notes without asking (``--yes``)."""
    commit: bool = True
    dry_run: bool = False
    remember_templates: bool = False
    """Save the templates folder in the vault's config once the sync succeeded with it."""
    pull: bool | None = None
    """Integrate the remote's new commits first (``None``: the ``git.pull`` setting)."""
    push: bool | None = None
    """Push the sync's commit (``None``: the ``git.push`` setting)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VaultNotes:
    """What a vault command works from: every note, the skipped store files, the user's moves."""

    specs: tuple[NoteSpec, ...]
    skipped: tuple[Skipped, ...]
    moves: Moves
    warnings: tuple[str, ...] = ()
    """A line for each skipped store file not warned about before."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Prepared:
    """A sync worked out ahead of its time (:func:`prepare`): its notes, its plan, its inputs."""

    inputs: str
    """The stores' stat data and settings it was worked out from (``vault.quick.sync_inputs``)."""
    notes: VaultNotes
    decision: Decision
    head: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Synced:
    """A sync that ran: its report, its store files skipped and warnings, the manifest it read."""

    report: SyncReport
    skipped: tuple[Skipped, ...]
    warnings: tuple[str, ...]
    read: Manifest | None
    """The manifest the sync read (``None``: not read, or a new vault); what the search index
    follows."""
    """The commit the vault's HEAD named then."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncOutcome:
    """A sync's result: its report (``None``: the quick answer, nothing to do) and warnings."""

    vault: Path
    report: SyncReport | None
    skipped: tuple[Skipped, ...] = ()
    warnings: tuple[str, ...] = ()
    """Lines for stderr, in the order they arose (``warning: …``, ``saved …``)."""
    remote: RemoteOutcome | None = None
    """What pulling and pushing did (``None``: neither was asked for)."""
    planned_ahead: bool = False
    """The sync applied a plan :func:`prepare` made before it was due (``watch``)."""

    @property
    def quick(self) -> bool:
        """Answered from stat data alone: nothing changed since the last sync."""
        return self.report is None

    @property
    def changed(self) -> bool:
        """Whether the sync changed (or, dry, would change) the vault."""
        return self.report is not None and self.report.changed


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOutcome:
    """``check``: the differences between the vault and what the stores produce."""

    vault: Path
    differences: tuple[str, ...]
    skipped: tuple[Skipped, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def in_sync(self) -> bool:
        """No difference at all."""
        return not self.differences


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusOutcome:
    """``status``: what the vault keeps for the user, conflicts, pending work, exposed commits."""

    vault: Path
    report: StatusReport
    skipped: tuple[Skipped, ...] = ()
    exposed: tuple[str, ...] = ()
    """Commits of the vault's history holding a secret or private value, newest first."""
    warnings: tuple[str, ...] = ()
    embedding_failed: str = ""
    """How the semantic index's background job last failed (empty: it did not)."""
    packing_failed: str = ""
    """How the last background packing of git objects failed (``vault.housekeeping``)."""
    git_busy: str | None = None
    """A git operation unfinished in the vault (no command writes until it ends)."""
    hooks: SkippedHooks | None = None
    """The commit hooks of the vault's repository that vaultsync's commits do not run."""
    remote: RemoteState | None = None
    """Where the vault stands against its upstream (``None``: no upstream)."""


def sync(
    ws: Workspace,
    request: SyncRequest,
    *,
    confirm: Confirm | None = None,
    clock: Clock | None = None,
    prepared: Prepared | None = None,
    inputs: str = "",
) -> SyncOutcome:
    """Bring the vault in line with the stores and commit what changed (one commit).

    ``confirm`` asks the person before a bare ``force`` overwrites edited notes; ``clock``
    dates the commit (the system clock when ``None``; tests pass a fixed one).  ``prepared``:
    the plan :func:`prepare` made earlier, applied when nothing it was made from has changed
    since (else the sync works it out again, as without it).  ``inputs``: the stores' stat
    data (``vault.quick.sync_inputs``) as the caller just took them (the watcher's look),
    else taken here.

    Raises:
        UsageError: paths without ``force``, or a bare ``force`` over edited notes that was
            not confirmed.
        GitBusy: a git merge, rebase, cherry-pick or revert is unfinished in the vault.
        VaultsyncError: anything the stages refuse (their exit codes).
    """
    if request.paths and not request.force:
        raise UsageError("note paths are given only with --force (sync --force PATH…)")
    if not request.dry_run:
        refuse_while_busy(ws.vault)
    pulling, pushing = _remote_steps(ws, request)
    pulled = remote.pull(ws) if pulling else None
    outcome = _local_sync(ws, request, confirm, clock, prepared=prepared, inputs=inputs)
    if not pushing:
        return replace(outcome, remote=pulled) if pulled is not None else outcome
    local = replace(request, pull=False, push=False)
    pushed = remote.push(ws, resync=lambda: _local_sync(ws, local, None, clock))
    return replace(outcome, remote=_joined(pulled, pushed))


def _remote_steps(ws: Workspace, request: SyncRequest) -> tuple[bool, bool]:
    """Whether this sync pulls first and pushes after (a dry run does neither)."""
    if request.dry_run:
        return False, False
    wanted = ws.settings.value
    pulling = bool(wanted("git.pull")) if request.pull is None else request.pull
    pushing = bool(wanted("git.push")) if request.push is None else request.push
    return pulling, pushing


def _joined(pulled: RemoteOutcome | None, pushed: RemoteOutcome) -> RemoteOutcome:
    if pulled is None:
        return pushed
    problem = "; ".join(p for p in (pulled.problem, pushed.problem) if p)
    return replace(pushed, pulled=pulled.pulled, taken=pulled.taken, problem=problem)


def _local_sync(
    ws: Workspace,
    request: SyncRequest,
    confirm: Confirm | None,
    clock: Clock | None,
    *,
    prepared: Prepared | None = None,
    inputs: str = "",
) -> SyncOutcome:
    """The sync of this vault, the remote left aside.

    A plan made ahead is tried first: it stands only if the vault's records are the very
    ones it found something to do against, so the quick answer could not hold then.
    """
    from vaultsync.vault.quick import sync_inputs, unchanged_since_last_sync

    process.let_go()  # what an earlier sync of this process kept to its end
    inputs = inputs or sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
    ahead = _applied_ahead(ws, request, inputs, clock, prepared)
    quick = not (request.force or request.dry_run)
    if ahead is None and quick and unchanged_since_last_sync(ws.vault, inputs):
        return SyncOutcome(vault=ws.vault, report=None)
    done = ahead or (_from_record(ws, inputs) if quick else None)
    if done is None:
        inputs = "" if request.dry_run else inputs
        done = _full_sync(ws, request, inputs, confirm, clock)
    warnings = list(done.warnings)
    if not request.dry_run:
        warnings += _after_sync(ws, request, done)
    return SyncOutcome(
        vault=ws.vault,
        report=done.report,
        skipped=done.skipped,
        warnings=tuple(warnings),
        planned_ahead=ahead is not None,
    )


def _from_record(ws: Workspace, inputs: str) -> _Synced | None:
    """The sync answered from the last one's record, when only a few notes were edited since.

    ``vault.known.sync_from_record``: the full sync's report, no note built.  Its skipped store
    files were warned about by the sync that skipped them.
    """
    from vaultsync.vault.known import sync_from_record

    found = sync_from_record(ws.vault, inputs) if ws.vault.is_dir() else None
    if found is None:
        return None
    report, last = found
    return _Synced(report=report, skipped=last.skipped, warnings=(), read=None)


def prepare(ws: Workspace, inputs: str = "") -> Prepared | None:
    """The next plain sync worked out now, read-only: its notes built, its plan made.

    For ``watch``, while the stores are quiet before the sync is due: :func:`sync` given it
    then only applies it, as long as the stores, the vault's records and its HEAD are those
    it was made from.  ``None`` when there is nothing to prepare: no vault yet, nothing to
    do, an interrupted sync to finish, or a store file skipped (whose repair is the sync's).
    A failure here is the sync's to report: it meets the same one when it works it out.
    ``inputs``: ``vault.quick.sync_inputs`` of ``ws`` taken just before (the watcher's look).
    """
    from vaultsync.vault.decide import Asked
    from vaultsync.vault.quick import sync_inputs, unchanged_since_last_sync
    from vaultsync.vault.sync import vault_session

    inputs = inputs or sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
    if not ws.vault.is_dir() or unchanged_since_last_sync(ws.vault, inputs):
        return None
    with vault_session(ws.vault, write=False) as session:
        if session.controls.journal is not None:
            return None
        notes = vault_notes(ws, session, say=False)
        if notes.skipped:
            return None
        decision = session.plan(notes.specs, Asked(moves=notes.moves))
        return Prepared(inputs=inputs, notes=notes, decision=decision, head=session.head())


def warm(ws: Workspace) -> None:
    """Every note built once, read-only, so a resident process holds what a sync starts from.

    For ``watch`` starting on a vault in sync: the first sync after a change then patches from
    memory, as every later one does, instead of loading the caches first (at 100,000 notes
    the first change's commit came 3 s past the quiet period, the next ones 0.6 s).  Nothing
    outside a resident process (``core.cachefile.resident``: nothing would be held), with no
    vault yet, or with an interrupted sync to finish (the sync's work).
    """
    from vaultsync.vault.sync import vault_session

    if not cachefile.is_resident() or not ws.vault.is_dir():
        return
    with vault_session(ws.vault, write=False) as session:
        if session.controls.journal is None:
            vault_notes(ws, session, say=False)


def _plain(request: SyncRequest) -> bool:
    """A sync that asks nothing but to bring the vault in line (what :func:`prepare` plans)."""
    asked = replace(request, pull=None, push=None)  # pulling moves HEAD: checked anyway
    return asked == SyncRequest()


def _applied_ahead(
    ws: Workspace,
    request: SyncRequest,
    inputs: str,
    clock: Clock | None,
    prepared: Prepared | None,
) -> _Synced | None:
    """``prepared`` applied, when it is still this sync's plan; ``None`` when it is not."""
    if prepared is None or prepared.inputs != inputs or not _plain(request):
        return None
    if not ws.vault.is_dir():
        return None  # gone since: a first sync again, which makes the folder its own way
    from vaultsync.vault.sync import vault_session  # not on the no-op's path

    with vault_session(ws.vault, write=True) as session:
        decision = prepared.decision
        if not session.still_as_planned(decision) or session.head() != prepared.head:
            return None
        report = session.sync(decision, inputs=inputs, clock=clock)
    return _planned(report, prepared.notes, decision.manifest)


def _full_sync(
    ws: Workspace,
    request: SyncRequest,
    inputs: str,
    confirm: Confirm | None,
    clock: Clock | None,
) -> _Synced:
    """Every note built (moves followed) and synced in one hold of the vault."""
    from vaultsync.vault.decide import Asked
    from vaultsync.vault.sync import vault_session

    forced = frozenset(request.paths)
    everything = request.force and not forced
    write = not request.dry_run and ws.vault.is_dir()
    with vault_session(ws.vault, write=write) as session, _caches_aside(session):
        restored = None if everything else forced
        notes = vault_notes(ws, session, repair=not request.dry_run, restored=restored)
        if everything and not request.dry_run:
            _confirm_force(session, notes, request, confirm)
        asked = Asked(
            force=everything, force_paths=forced, moves=notes.moves, keep_gone=bool(notes.skipped)
        )
        if write or request.dry_run:
            decision = session.plan(notes.specs, asked)
            process.outlive(session, decision)  # freed by the exit, not on return
            report = session.sync(
                decision,
                commit=request.commit,
                dry_run=request.dry_run,
                inputs=inputs,
                skipped=notes.skipped,
                clock=clock,
            )
            return _planned(report, notes, decision.manifest)
    first = _first_sync(ws, notes, asked, commit=request.commit, inputs=inputs, clock=clock)
    return _planned(first, notes, None)


def _caches_aside(session: VaultSession) -> contextlib.AbstractContextManager[None]:
    """The build's caches written on the other core while this one goes on (``saved_aside``).

    A helper only into a vault synced before: a first sync renders every note, its heap at its
    largest, and a helper pickling beside it copied every page it touched (its processes
    peaked at 1,018 MiB instead of 940 at 100,000 notes).
    """
    return cachefile.saved_aside(helper=session.controls.manifest_bytes is not None)


def _planned(report: SyncReport, notes: VaultNotes, read: Manifest | None) -> _Synced:
    """A sync that built every note and planned them against the manifest it ``read``."""
    return _Synced(report=report, skipped=notes.skipped, warnings=notes.warnings, read=read)


def _first_sync(
    ws: Workspace,
    notes: VaultNotes,
    asked: Asked,
    *,
    commit: bool,
    inputs: str,
    clock: Clock | None,
) -> SyncReport:
    """A vault that does not exist yet: its notes checked safe first, then the folder made."""
    from vaultsync.vault.plan import validate_specs
    from vaultsync.vault.sync import vault_session

    validate_specs(notes.specs)  # an unsafe path is refused before the vault folder is made
    with vault_session(ws.vault, write=True) as session:
        decision = session.plan(notes.specs, asked)
        process.outlive(session, decision)
        return session.sync(
            decision, commit=commit, inputs=inputs, skipped=notes.skipped, clock=clock
        )


def vault_notes(
    ws: Workspace,
    session: VaultSession,
    *,
    repair: bool = False,
    restored: frozenset[str] | None = frozenset(),
    say: bool = True,
) -> VaultNotes:
    """Every note of the vault, to render when the command needs its bytes, and what was skipped.

    The notes the user moved are found first: their renders, and every link to them, go to
    the paths the user chose; the notes the user deleted are left off ``Home.md``, but for
    those ``restored`` names (``sync --force PATH``; ``None``: a bare ``--force``, every one).
    ``say``: the command says the warnings of skipped store files not said before (then they
    are remembered as said); a build ahead of time (``watch``) leaves them to the sync.
    """
    from vaultsync.graph.cache import remember_warned
    from vaultsync.render.specs import vault_specs_skipped

    if not cachefile.is_resident():  # the plan's scan, on the other core (decide.begin_scan)
        session.begin_scan()
    moves = session.moves()
    deleted = frozenset() if restored is None else moves.deleted - restored
    with process.collector_resumes_at_end():  # after big_run froze what the build made
        specs, skipped = vault_specs_skipped(
            ws.state, ws.caps, ws.templates, repair=repair, chosen=moves.chosen, deleted=deleted
        )
        process.big_run(len(specs))
        process.outlive(specs)
    warnings = tuple(f"warning: {source.line()}" for source in skipped if source.new)
    if say:
        remember_warned(ws.state, skipped)
    return VaultNotes(specs=specs, skipped=skipped, moves=moves, warnings=warnings)


def _confirm_force(
    session: VaultSession, notes: VaultNotes, request: SyncRequest, confirm: Confirm | None
) -> None:
    """A bare ``force`` says how many edited notes it overwrites, and needs a yes."""
    edited = session.edited_notes(notes.specs, notes.moves)
    if not edited or request.overwrite_edited:
        return
    what = f"--force overwrites {plural(len(edited), 'note')} you edited (e.g. {edited[0]})"
    if confirm is None:
        raise UsageError(what, hint="add --yes, or name the notes: sync --force PATH…")
    if not confirm(f"{what}. Go on?"):
        raise UsageError("nothing written (--force not confirmed)")


def _after_sync(ws: Workspace, request: SyncRequest, done: _Synced) -> list[str]:
    """What follows a sync that succeeded: index, git's objects, saved templates, history.

    Returns its warnings.
    """
    from vaultsync.app.history import exposure_warning, history_check_due

    warnings = []
    report = done.report
    if report.changed and (problem := refresh_search_index(ws.vault, _index_since(done))):
        warnings.append(f"warning: search index not updated: {problem}")
    if report.commit and (problem := pack_git_objects(ws.vault)):
        warnings.append(f"warning: git objects not packed: {problem}")
    if request.remember_templates and (saved := _remember_templates(ws, request)):
        warnings.append(saved)
    if said := clear_text_notice(ws, request):
        warnings.append(said)
    if history_check_due(ws) and (text := exposure_warning(ws)):
        warnings.append(text)
    return warnings


def clear_text_notice(ws: Workspace, request: SyncRequest) -> str:
    """Once per vault, when it was written from sealed stores: their text is in clear here.

    Said when the vault has no saved ``stores.open_sealed`` yet; saving it (``true``) is the
    record that it was said, and the user's answer, if any, comes by setting it ``false``.
    """
    if not ws.caps.open_sealed or "stores.open_sealed" in ws.settings.saved:
        return ""
    if not ws.caps.seal_keys:
        return ""  # nothing sealed was opened without a key
    from vaultsync.extract.jsonio import CLEAR_TEXT_NOTICE
    from vaultsync.vault.config import save_setting

    if not _sealed_store_opens(ws):
        return ""
    save_setting(ws.vault, "stores.open_sealed", "true", commit=request.commit)
    return f"{CLEAR_TEXT_NOTICE} (said once: saved stores.open_sealed = true in {CONFIG})"


def _sealed_store_opens(ws: Workspace) -> bool:
    """Whether the first sealed store file opens: the vault then holds sealed text in clear."""
    from vaultsync.core.errors import StoreError
    from vaultsync.extract.atrest import first_sealed
    from vaultsync.extract.jsonio import read_bytes, size_limit, unsealing
    from vaultsync.graph.load import unsealing_of

    sealed = first_sealed(ws.state, ws.caps.sources)
    if sealed is None:
        return False
    how = unsealing_of(ws.state, ws.caps)
    try:
        with size_limit(ws.caps.store_file_mib * 1024 * 1024), unsealing(how):
            read_bytes(sealed)
    except StoreError:
        return False  # a wrong key: nothing sealed is in the vault
    return bool(how.opened)


def _remember_templates(ws: Workspace, request: SyncRequest) -> str:
    """Save the templates folder once a sync succeeded with it, so a later plain sync renders alike.

    A saved folder that differs is not replaced: the flag wins for this run, and the
    workspace has said so; ``vaultsync config set render.templates`` changes the saved one.
    """
    from vaultsync.vault.config import save_setting

    folder = ws.templates
    if "render.templates" in ws.settings.saved or folder is None:
        return ""
    relative = os.path.relpath(folder, ws.vault.absolute())  # portable to any clone
    # Committed right after the sync that succeeded with it, so a clone renders alike.
    save_setting(ws.vault, "render.templates", relative, commit=request.commit)
    return f"saved render.templates = {relative} in {CONFIG} (a plain sync uses it)"


def pack_git_objects(vault: Path) -> str:
    """Start packing the vault's own loose objects in the background once they pile up.

    A commit leaves its manifest loose, the size of the whole file (``vault.housekeeping``).
    Returns how the last background packing failed, if it did (a new one is started all the
    same).  The vault is synced whatever happens here: unpacked objects only take disk space.
    """
    from vaultsync.vault.housekeeping import start_packing

    failed = packing_problem(vault)
    try:
        start_packing(vault)
    except VaultsyncError as error:
        return error.message
    return failed


def packing_problem(vault: Path) -> str:
    """How the last background packing of git objects failed, in one phrase; empty if it did not."""
    from vaultsync.vault.housekeeping import pack_job, packing_failure

    found = packing_failure(vault)
    if found is None:
        return ""
    log = pack_job(vault).log.relative_to(vault).as_posix()
    return f"the background packing failed ({found.describe()}); see {log}"


def _index_since(done: _Synced) -> Since | None:
    """What the sync changed, for the search index to look at only that (``None``: walk).

    A sync that recovered an interrupted one, or met an unusable manifest, may have written
    more than it reports: the index then walks the vault.
    """
    report = done.report
    if done.read is None or report.recovered or report.manifest_problem:
        return None
    from vaultsync.search.index import Since

    moved = [path for pair in report.renamed for path in pair]
    paths = {*report.created, *report.updated, *report.merged, *report.removed, *moved}
    return Since(manifest=done.read, paths=frozenset(paths))


def refresh_search_index(vault: Path, since: Since | None = None) -> str:
    """Keep an existing search index current (its vectors in the background); the problem, if any.

    ``since``: what the sync just made changed (``search.index.Since``), all the index looks at.
    The vault is synced whatever happens here: a stale index is only a warning.
    """
    from vaultsync.search.database import index_path

    if not index_path(vault).exists():
        return ""
    from vaultsync.search.index import update_index
    from vaultsync.search.vectors import start_background

    try:
        update_index(vault, since=since)
    except VaultsyncError as error:
        return error.message
    # the semantic index, when the extra is installed: the job itself finds all that is missing
    start_background(vault, paths=None if since is None else since.paths)
    return ""


def check(ws: Workspace) -> CheckOutcome:
    """What a sync would change; empty differences: the vault is exactly what the stores give.

    A merge conflict waiting on ``vaultsync resolve``, or store data not yet merged into an
    edited note, is a difference too.
    """
    warnings: tuple[str, ...]
    if (known := _known_since_last_sync(ws)) is not None:
        from vaultsync.vault.known import known_conflicts

        found = known_conflicts(ws.vault, known.last)
        differences = tuple(f"conflict {c.path}: {c.reason}" for c in found)
        skipped, warnings = known.last.skipped, ()  # warned about by the sync that skipped them
    else:
        differences, skipped, warnings = _planned_check(ws)
    if (busy := git_busy(ws.vault)) is not None:
        differences = (f"git {busy}", *differences)
    return CheckOutcome(vault=ws.vault, differences=differences, skipped=skipped, warnings=warnings)


def _planned_check(ws: Workspace) -> tuple[tuple[str, ...], tuple[Skipped, ...], tuple[str, ...]]:
    """``check`` the long way: every note built and planned against the vault."""
    from vaultsync.vault.sync import vault_session

    with vault_session(ws.vault, write=False) as session, _caches_aside(session):
        notes = vault_notes(ws, session)
        differences = session.check(notes.specs, notes.moves, keep_gone=bool(notes.skipped))
    return differences, notes.skipped, notes.warnings


def _known_since_last_sync(ws: Workspace, inputs: str = "") -> Known | None:
    """The last sync's record, when it still tells the whole vault (``vault.known``).

    A few notes the user edited since are read again, the rest is the record's: ``check`` and
    ``status`` then cost about a no-op sync: no store read, no note built.
    ``inputs``: ``vault.quick.sync_inputs`` of ``ws``, when the caller has them already.
    """
    from vaultsync.vault.known import since_last_sync
    from vaultsync.vault.quick import sync_inputs

    if not ws.vault.is_dir():
        return None
    return since_last_sync(
        ws.vault, inputs or sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
    )


def status(ws: Workspace) -> StatusOutcome:
    """What the vault keeps for the user (edited, deleted), conflicts, what a sync would change."""
    from vaultsync.app.history import exposed_commits
    from vaultsync.app.remote import remote_state
    from vaultsync.vault.quick import sync_inputs

    warnings: tuple[str, ...]
    # Read once: the last sync's record and the history check are both keyed by them.
    inputs = sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
    facts = _git_facts(ws)
    if (known := _known_since_last_sync(ws, inputs)) is not None:
        from vaultsync.vault.known import known_status

        report = known_status(ws.vault, known, facts)
        skipped, warnings = known.last.skipped, ()  # warned about by the sync that skipped them
    else:
        report, skipped, warnings = _planned_status(ws, facts)
    outcome = StatusOutcome(
        vault=ws.vault,
        report=report,
        skipped=skipped,
        exposed=tuple(exposed_commits(ws, inputs=inputs, facts=facts)),
        warnings=warnings,
        embedding_failed=embedding_failure(ws.vault),
        packing_failed=packing_problem(ws.vault),
        git_busy=git_busy(ws.vault),
        hooks=_skipped_hooks(ws, facts),
        remote=remote_state(ws, facts),
    )
    facts.save()
    return outcome


def _git_facts(ws: Workspace) -> GitFacts:
    """The kept answers about the vault's repository (``vault.gitfacts``)."""
    from vaultsync.core import cachefile
    from vaultsync.vault.gitfacts import GitFacts

    return GitFacts(ws.vault, cachefile.cache_dir(ws.state), ws.settings.git_environment)


def _skipped_hooks(ws: Workspace, facts: GitFacts) -> SkippedHooks | None:
    """The commit hooks vaultsync's commits skip, the hooks folder as ``facts`` keep it."""
    from vaultsync.vault.hooks import hooks_folder, hooks_in

    def ask() -> str | None:
        found = hooks_folder(ws.vault)
        return None if found is None else str(found)

    folder = facts.hooks_folder(ask)
    return hooks_in(None if folder is None else Path(folder))


def _planned_status(
    ws: Workspace, facts: GitFacts
) -> tuple[StatusReport, tuple[Skipped, ...], tuple[str, ...]]:
    """``status`` the long way: every note built and planned against the vault."""
    from vaultsync.vault.sync import vault_session

    with vault_session(ws.vault, write=False) as session, _caches_aside(session):
        notes = vault_notes(ws, session)
        keep_gone = bool(notes.skipped)
        report = session.status(notes.specs, notes.moves, keep_gone=keep_gone, facts=facts)
    return report, notes.skipped, notes.warnings


def git_busy(vault: Path) -> str | None:
    """The git operation unfinished in the vault, and how to end it, in one phrase."""
    busy = operation_in_progress(vault)
    return None if busy is None else f"{busy[0]} is in progress: {busy[1]}"


def embedding_failure(vault: Path) -> str:
    """How the semantic index's background job last failed, in a few words; empty if it did not."""
    from vaultsync.search.paths import index_path

    found = index_path(vault)
    if not found.exists():
        return ""
    from vaultsync.search.embedjob import job_failure

    failure = job_failure(found)
    return failure.describe() if failure is not None else ""

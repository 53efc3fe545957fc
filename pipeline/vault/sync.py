"""Stages 5-6, the entry points: specs → vault files → manifest → git commit → index.

``sync_vault``: lock → decide (``vault.decide``: read the manifest, journal and stat cache, scan
the disk, ask git history only what the manifest cannot answer, plan, render only what must be
written) → apply (``vault.apply``: sweep an interrupted sync's temps, journal (durable), write,
manifest, commit, index, cache, drop the journal).  ``vault.apply``'s docstring lists the crash
windows: a SIGKILL at any point loses nothing the user owns and the next sync converges.

Every command holds the vault through one :func:`vault_session`: the lock taken once and the
control files read once, for the user's moves and the plan alike.  ``check`` and ``status``
read only (no lock file, no repository created) and render only the notes whose key changed;
so does a dry run.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.core.errors import VaultWriteError
from vaultsync.core.model import NoteSpec, Skipped
from vaultsync.vault import apply, decide
from vaultsync.vault.known import kept_edits, marked_conflicts
from vaultsync.vault.lazyrepo import LazyRepo
from vaultsync.vault.manifest import JOURNAL
from vaultsync.vault.moves import NO_MOVES, Moves, find_moves
from vaultsync.vault.plan import Action, validate_specs
from vaultsync.vault.report import (
    Conflict,
    StatusReport,
    SyncReport,
    conflicts,
    pending,
    sync_report,
)
from vaultsync.vault.write import LOCK_TIMEOUT, VaultFS

if TYPE_CHECKING:
    from vaultsync.core.parallel import Background
    from vaultsync.vault.gitfacts import GitFacts

__all__ = [
    "LOCK_TIMEOUT",
    "Conflict",
    "StatusReport",
    "SyncReport",
    "VaultSession",
    "check_vault",
    "edited_notes",
    "sync_vault",
    "vault_moves",
    "vault_session",
    "vault_status",
]


@contextlib.contextmanager
def _io_errors(vault: Path) -> Iterator[None]:
    """Any file-system failure leaves as a ``VaultWriteError`` naming the file."""
    try:
        yield
    except OSError as err:
        where = err.filename or vault
        raise VaultWriteError(f"{where}: {err.strerror or err}") from err


class VaultSession:
    """One command's hold on the vault: the lock taken once, the control files read once.

    A sync finds the user's moves, builds its notes with them and plans against the same
    manifest, all under one lock (:func:`vault_session`); ``check`` and ``status`` do the same
    under the shared lock, and a vault folder that does not exist reads as empty.
    """

    def __init__(self, vault: Path, fs: VaultFS | None, *, write: bool) -> None:
        self.vault, self.fs, self.write = vault, fs, write
        self.repo = LazyRepo(vault if fs is not None else None)
        self.controls = decide.read_controls(fs, self.repo)
        self._early: Background[decide.Scanned] | None = None

    def begin_scan(self) -> None:
        """Begin the next plan's scan of the vault in a helper (``decide.begin_scan``).

        Called before the notes are built: the scan runs on the other core meanwhile.
        """
        if self._early is None:
            self._early = decide.begin_scan(self.fs, self.controls)

    def close(self) -> None:
        """Stop a scan no plan took (the command failed before planning)."""
        if self._early is not None:
            self._early.discard()
            self._early = None

    def moves(self) -> Moves:
        """The notes the user moved or renamed, and the paths chosen before (``vault.moves``)."""
        if self.fs is None:
            return NO_MOVES
        repo = self.repo

        def similar(paths: list[str]) -> Mapping[str, str]:
            found = repo.get()
            return found.worktree_renames(paths) if found is not None else {}

        return find_moves(self.vault, self.controls.manifest, similar=similar)

    def plan(self, specs: Sequence[NoteSpec], asked: decide.Asked) -> decide.Decision:
        """The plan of ``specs`` against this vault (nothing written)."""
        validate_specs(specs)
        early, self._early = self._early, None  # a later plan scans anew
        try:
            with _io_errors(self.vault):
                return decide.plan_vault(
                    self.fs, self.repo, specs, asked, controls=self.controls, early=early
                )
        finally:
            if early is not None:
                early.discard()  # nothing left behind if the plan failed before taking it

    def edited_notes(self, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES) -> tuple[str, ...]:
        """The notes the user edited that a sync keeps or merges (what ``--force`` overwrites)."""
        decision = self.plan(specs, decide.Asked(moves=moves))
        return decision.plan.paths(Action.KEEP_EDITED, Action.MERGE)

    def check(
        self, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES, *, keep_gone: bool = False
    ) -> tuple[str, ...]:
        """What a sync would change (``create``/``update``/``remove <path>``); empty = in sync.

        Every note that cannot be written is a difference too (``conflict <path>: why``): a
        user's file at its path, a symlinked folder, a merge conflict waiting on ``vaultsync
        resolve``.  ``keep_gone``: a store file was skipped, so a sync would remove nothing.
        """
        decision = self.plan(specs, decide.Asked(moves=moves, keep_gone=keep_gone))
        plan = decision.plan
        lines = [
            line
            for line in pending(plan, decide.render(plan), decision.manifest)
            if not line.startswith("conflict ")
        ]
        lines += [f"conflict {c.path}: {c.reason}" for c in self._conflicts(decision)]
        if decision.controls.journal is not None:
            lines.append(f"journal {JOURNAL}: an interrupted sync is unfinished")
        return tuple(lines)

    def status(
        self,
        specs: Sequence[NoteSpec],
        moves: Moves = NO_MOVES,
        *,
        keep_gone: bool = False,
        facts: GitFacts | None = None,
    ) -> StatusReport:
        """Kept edits (with the commit that carried them), user deletions, conflicts, pending.

        ``facts``: where the edits' origins are kept (``vault.known.kept_edits``).
        """
        decision = self.plan(specs, decide.Asked(moves=moves, keep_gone=keep_gone))
        plan = decision.plan
        edited = {p: decision.disk[p].blob for p in plan.paths(Action.KEEP_EDITED, Action.MERGE)}
        return StatusReport(
            edited=kept_edits(self.repo, edited, facts),
            deleted=plan.paths(Action.KEEP_DELETED),
            conflicts=self._conflicts(decision),
            pending=pending(plan, decide.render(plan), decision.manifest),
            manifest_problem=decision.manifest.problem,
        )

    def _conflicts(self, decision: decide.Decision) -> tuple[Conflict, ...]:
        """The plan's conflicts, and every edited note holding git's conflict markers."""
        planned = conflicts(decision.plan)
        if self.fs is None:
            return planned
        listed = {c.path for c in planned}
        edited = decision.plan.paths(Action.KEEP_EDITED, Action.MERGE)
        unlisted = [path for path in edited if path not in listed]
        return (*planned, *marked_conflicts(unlisted, self.fs.read))

    def head(self) -> str:
        """The commit the vault's HEAD names (``""``: no repository or no commit yet)."""
        repo = self.repo.get()
        return repo.head_id() if repo is not None else ""

    def still_as_planned(self, decision: decide.Decision) -> bool:
        """Whether the vault's records are the very ones ``decision`` was planned from.

        The manifest's bytes and stat data, and no interrupted sync's journal, then or now:
        a plan made by another session (``watch`` plans during the stores' quiet period) may
        then be applied in this one.  The notes themselves need no such check: every write
        checks its file is still as the plan saw it (``VaultFS.apply``).
        """
        now, then = self.controls, decision.controls
        return (
            now.journal is None
            and then.journal is None
            and now.manifest_stat == then.manifest_stat
            and now.manifest_bytes == then.manifest_bytes
        )

    def sync(
        self,
        decision: decide.Decision,
        *,
        commit: bool = True,
        dry_run: bool = False,
        clock: Callable[[], datetime] | None = None,
        inputs: str = "",
        skipped: tuple[Skipped, ...] = (),
    ) -> SyncReport:
        """Bring the vault in line with ``decision`` (see the module docstring for the steps).

        The plan comes from :meth:`plan`, in this session or in one whose vault
        :meth:`still_as_planned` says this one holds (``watch`` plans ahead).  ``inputs`` and
        ``skipped`` are recorded for the quick answers (``apply.run``).
        """
        if dry_run or not self.write:
            rendered = decide.render(decision.plan)
            if self.fs is not None:  # the merges the sync would make, tried in memory
                with _io_errors(self.vault):
                    rendered = decide.merge(
                        self.fs, self.repo, decision, rendered, now_ns=time.time_ns(), dry_run=True
                    )
            return sync_report(decision, rendered)
        assert self.fs is not None  # noqa: S101 - a writing session always has the vault
        with _io_errors(self.vault):
            rendered = decide.render(decision.plan)
            rendered = decide.merge(self.fs, self.repo, decision, rendered, now_ns=time.time_ns())
            return apply.run(
                self.fs,
                self.repo,
                decision,
                rendered,
                commit=commit,
                clock=clock,
                inputs=inputs,
                skipped=skipped,
            )


@contextlib.contextmanager
def vault_session(
    vault: Path, *, write: bool, lock_timeout: float = LOCK_TIMEOUT
) -> Iterator[VaultSession]:
    """The vault held for one command: exclusively to ``write`` (created if missing), else shared.

    Raises ``VaultWriteError`` (the lock timed out, a control file cannot be read).
    """
    if not write and not vault.is_dir():
        yield VaultSession(vault, None, write=False)
        return
    with (
        _io_errors(vault),
        VaultFS(vault, create=write) as fs,
        fs.lock(timeout=lock_timeout, shared=not write),
    ):
        session = VaultSession(vault, fs, write=write)
        try:
            yield session
        finally:
            session.close()


def vault_moves(vault: Path) -> Moves:
    """The notes the user moved or renamed (one read-only session)."""
    with vault_session(vault, write=False) as session:
        return session.moves()


def edited_notes(
    vault: Path, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES
) -> tuple[str, ...]:
    """The notes the user edited that a sync keeps or merges (one read-only session)."""
    with vault_session(vault, write=False) as session:
        return session.edited_notes(specs, moves)


def check_vault(
    vault: Path, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES, *, keep_gone: bool = False
) -> tuple[str, ...]:
    """:meth:`VaultSession.check` in a read-only session of its own."""
    with vault_session(vault, write=False) as session:
        return session.check(specs, moves, keep_gone=keep_gone)


def vault_status(
    vault: Path, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES, *, keep_gone: bool = False
) -> StatusReport:
    """:meth:`VaultSession.status` in a read-only session of its own."""
    with vault_session(vault, write=False) as session:
        return session.status(specs, moves, keep_gone=keep_gone)


def sync_vault(
    vault: Path,
    specs: Sequence[NoteSpec],
    *,
    force: bool = False,
    force_paths: frozenset[str] = frozenset(),
    commit: bool = True,
    dry_run: bool = False,
    clock: Callable[[], datetime] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
    inputs: str = "",
    moves: Moves = NO_MOVES,
    keep_gone: bool = False,
) -> SyncReport:
    """Bring the vault in line with ``specs`` in a session of its own.

    ``force`` regenerates every note vaultsync owns, edited ones included; ``force_paths``
    only the named ones.  ``moves`` (:func:`vault_moves`, found before the specs were built
    with its chosen paths): the notes the user moved, followed.  ``keep_gone``: remove
    nothing (a store file was skipped: its notes are kept, never removed).

    Raises ``UnsafePathError`` (a spec path that could leave the vault: nothing is written),
    ``VaultWriteError`` (a duplicate path, the lock timed out, a write or commit failed).
    """
    asked = decide.Asked(force=force, force_paths=force_paths, moves=moves, keep_gone=keep_gone)
    if not dry_run and not vault.is_dir():
        validate_specs(specs)  # an unsafe path refused before the vault folder is made
    with vault_session(vault, write=not dry_run, lock_timeout=lock_timeout) as session:
        decision = session.plan(specs, asked)
        return session.sync(decision, commit=commit, dry_run=dry_run, clock=clock, inputs=inputs)

"""Stages 5-6, the entry points: specs → vault files → manifest → git commit → index.

``sync_vault``: lock → decide (``vault.decide``: read the manifest, journal and stat cache, scan
the disk, ask git history only what the manifest cannot answer, plan, render only what must be
written) → apply (``vault.apply``: sweep an interrupted sync's temps, journal (durable), write,
manifest, commit, index, cache, drop the journal).  ``vault.apply``'s docstring lists the crash
windows: a SIGKILL at any point loses nothing the user owns and the next sync converges.

``check_vault`` and ``vault_status`` read only (no lock file, no repository created) and render
only the notes whose key changed; so does ``sync_vault(dry_run=True)``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from vaultsync.core.errors import VaultWriteError
from vaultsync.core.model import NoteSpec
from vaultsync.vault import apply, decide
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
from vaultsync.vault.vcs import EditOrigin
from vaultsync.vault.write import LOCK_TIMEOUT, VaultFS

__all__ = [
    "LOCK_TIMEOUT",
    "Conflict",
    "StatusReport",
    "SyncReport",
    "check_vault",
    "edited_notes",
    "sync_vault",
    "vault_moves",
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


def _read_only(
    vault: Path, specs: Sequence[NoteSpec], asked: decide.Asked
) -> tuple[decide.Decision, decide.LazyRepo]:
    """The decision, under the shared lock; a vault folder that does not exist reads as empty."""
    validate_specs(specs)
    if not vault.is_dir():
        nowhere = decide.LazyRepo(None)
        return decide.plan_vault(None, nowhere, specs, asked), nowhere
    repo = decide.LazyRepo(vault)
    with _io_errors(vault), VaultFS(vault) as fs, fs.lock(timeout=LOCK_TIMEOUT, shared=True):
        return decide.plan_vault(fs, repo, specs, asked), repo


def vault_moves(vault: Path) -> Moves:
    """The notes the user moved or renamed, and the paths chosen before (``vault.moves``)."""
    if not vault.is_dir():
        return NO_MOVES
    with _io_errors(vault), VaultFS(vault) as fs, fs.lock(timeout=LOCK_TIMEOUT, shared=True):
        repo = decide.LazyRepo(vault)

        def similar(paths: list[str]) -> Mapping[str, str]:
            found = repo.get()
            return found.worktree_renames(paths) if found is not None else {}

        return find_moves(vault, decide.read_manifest(fs)[1], similar=similar)


def edited_notes(
    vault: Path, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES
) -> tuple[str, ...]:
    """The notes the user edited that a sync keeps or merges (what ``--force`` overwrites)."""
    decision, _repo = _read_only(vault, specs, decide.Asked(moves=moves))
    return decision.plan.paths(Action.KEEP_EDITED, Action.MERGE)


def check_vault(
    vault: Path, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES, *, keep_gone: bool = False
) -> tuple[str, ...]:
    """What a sync would change (``create``/``update``/``remove <path>``); empty = in sync.

    Every note that cannot be written is a difference too (``conflict <path>: why``): a user's
    file at its path, a symlinked folder, a merge conflict waiting on ``vaultsync resolve``.
    ``keep_gone``: a store file was skipped, so a sync would remove nothing.
    """
    decision, _repo = _read_only(vault, specs, decide.Asked(moves=moves, keep_gone=keep_gone))
    plan = decision.plan
    lines = [
        line
        for line in pending(plan, decide.render(plan), decision.manifest)
        if not line.startswith("conflict ")
    ]
    lines += [f"conflict {c.path}: {c.reason}" for c in conflicts(plan)]
    if decision.controls.journal is not None:
        lines.append(f"journal {JOURNAL}: an interrupted sync is unfinished")
    return tuple(lines)


def vault_status(
    vault: Path, specs: Sequence[NoteSpec], moves: Moves = NO_MOVES, *, keep_gone: bool = False
) -> StatusReport:
    """Kept edits (with the commit that carried them), user deletions, conflicts, pending work."""
    decision, repo = _read_only(vault, specs, decide.Asked(moves=moves, keep_gone=keep_gone))
    plan = decision.plan
    edited = {p: decision.disk[p].blob for p in plan.paths(Action.KEEP_EDITED, Action.MERGE)}
    found = repo.get() if edited else None
    origins = found.edit_origins(edited) if found is not None else {}
    return StatusReport(
        edited=tuple(origins.get(p, EditOrigin(path=p, uncommitted=True)) for p in sorted(edited)),
        deleted=plan.paths(Action.KEEP_DELETED),
        conflicts=conflicts(plan),
        pending=pending(plan, decide.render(plan), decision.manifest),
        manifest_problem=decision.manifest.problem,
    )


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
    """Bring the vault in line with ``specs``; see the module docstring for the steps.

    ``force`` regenerates every note vaultsync owns, edited ones included; ``force_paths``
    only the named ones.  ``moves`` (:func:`vault_moves`, found before the specs were built
    with its chosen paths): the notes the user moved, followed.  ``keep_gone``: remove
    nothing (a store file was skipped: its notes are kept, never removed).

    Raises ``UnsafePathError`` (a spec path that could leave the vault: nothing is written),
    ``VaultWriteError`` (a duplicate path, the lock timed out, a write or commit failed).
    """
    asked = decide.Asked(force=force, force_paths=force_paths, moves=moves, keep_gone=keep_gone)
    if dry_run:
        decision, _repo = _read_only(vault, specs, asked)
        return sync_report(decision, decide.render(decision.plan))
    validate_specs(specs)
    with _io_errors(vault), VaultFS(vault, create=True) as fs, fs.lock(timeout=lock_timeout):
        repo = decide.LazyRepo(vault)
        decision = decide.plan_vault(fs, repo, specs, asked)
        rendered = decide.render(decision.plan)
        rendered = decide.merge(fs, repo, decision, rendered, now_ns=time.time_ns())
        return apply.run(fs, repo, decision, rendered, commit=commit, clock=clock, inputs=inputs)

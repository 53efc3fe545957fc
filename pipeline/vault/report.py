"""What a sync did, what ``status`` shows, what ``check`` lists; pure (a decision in, reports out).

The report types are importable from ``vaultsync.vault.sync`` too, beside the entry points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vaultsync.vault.decide import Decision, Rendered
from vaultsync.vault.manifest import MANIFEST, Manifest, StatKey
from vaultsync.vault.plan import Action, Plan
from vaultsync.vault.vcs import EditOrigin


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


def conflicts(plan: Plan, appeared: frozenset[str] = frozenset()) -> tuple[Conflict, ...]:
    """The plan's conflicts, plus the paths where a file appeared during the sync, by path."""
    out = [
        Conflict(path=s.path, reason=s.reason) for s in plan.steps if s.action is Action.CONFLICT
    ]
    out += [Conflict(path=p, reason="a file appeared there during the sync") for p in appeared]
    return tuple(sorted(out, key=lambda c: c.path))


def pending(plan: Plan, rendered: Rendered, manifest: Manifest) -> tuple[str, ...]:
    """``check``'s lines: ``create``/``update``/``remove <path>``, and a corrupt manifest."""
    lines = [f"{s.action} {s.path}" for s in plan.steps if s.path in rendered.writes]
    lines += [f"remove {p}" for p in plan.paths(Action.REMOVE)]
    if manifest.corrupt:
        lines.append(f"manifest {MANIFEST}: {manifest.problem}")
    return tuple(sorted(lines))


def sync_report(
    decision: Decision,
    rendered: Rendered,
    *,
    written: Mapping[str, StatKey] | None = None,
    removed: Sequence[str] | None = None,
    skipped: Sequence[str] = (),
    commit: str = "",
    index_synced: bool = True,
) -> SyncReport:
    """The report; ``written``/``removed`` default to the plan's (a dry run)."""
    plan = decision.plan
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
        conflicts=conflicts(plan, appeared),
        commit=commit,
        manifest_problem=decision.manifest.problem,
        recovered=decision.controls.journal is not None,
        index_synced=index_synced,
        dry_run=written is None,
    )

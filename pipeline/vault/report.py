"""What a sync did, what ``status`` shows, what ``check`` lists; pure (a decision in, reports out).

The report types are importable from ``vaultsync.vault.sync`` too, beside the entry points.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from vaultsync.render import RENDER_FORMAT
from vaultsync.vault.manifest import MANIFEST, Manifest, StatKey
from vaultsync.vault.plan import Action, Plan

if TYPE_CHECKING:
    from vaultsync.vault.decide import Decision, Rendered


@dataclass(frozen=True, slots=True, kw_only=True)
class EditOrigin:
    """Where a user's edit of one of our notes comes from."""

    path: str
    commit: str = ""
    """The first non-sync commit after our last write that changed the file (``""``: none)."""
    when: datetime | None = None
    uncommitted: bool = False
    """The file on disk differs from ``HEAD``."""
    merged: str = ""
    """The newest sync commit that merged the stores' changes into the edit (``""``: none)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EditHistory:
    """The edited notes' origins as read from the history behind one commit."""

    origins: Mapping[str, EditOrigin]
    head: str
    """The commit the walk began at (``""``: none yet)."""
    walked: int | None
    """How many commits it took to settle every note (``None``: the walk's limit came first)."""


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
    merged: tuple[str, ...] = ()
    """Edited notes the stores' changes were merged into (written)."""
    merge_waiting: tuple[Conflict, ...] = ()
    """Merges left for a later sync, and why (the file was being saved)."""
    kept_deleted: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    """The user's moves this sync followed: (old path, new path), by old path."""
    conflicts: tuple[Conflict, ...] = ()
    commit: str = ""
    manifest_problem: str = ""
    """Why the manifest was unusable (that sync kept every file git history did not prove ours)."""
    recovered: bool = False
    """The sync finished the work of an interrupted one."""
    index_synced: bool = True
    """``False``: ``.git/index`` stayed locked; the next sync retries."""
    dry_run: bool = False
    format_change: int = 0
    """The render format this sync rewrites older notes into (``vaultsync: render format N``);
    0 when it changes no note's format."""

    @property
    def changed(self) -> bool:
        """Some note was (or would be) created, updated, merged or removed."""
        return bool(self.created or self.updated or self.removed or self.merged)


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusReport:
    """``vaultsync status``: what the vault keeps for the user and what a sync would change."""

    edited: tuple[EditOrigin, ...] = ()
    deleted: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    pending: tuple[str, ...] = ()
    manifest_problem: str = ""


def merge_conflict(path: str, overlaps: tuple[str, ...]) -> Conflict:
    """A merge that could not be made, with the command that shows the three versions."""
    what = ", ".join(overlaps) or "the same lines"
    reason = (
        f"your edit and the stores' change overlap ({what}); your file is kept as it is — "
        f"see `vaultsync resolve {shlex.quote(path)} --show`"
    )
    return Conflict(path=path, reason=reason)


def conflicts(
    plan: Plan, appeared: frozenset[str] = frozenset(), rendered: Rendered | None = None
) -> tuple[Conflict, ...]:
    """Every conflict, by path.

    The plan's, the paths where a file appeared during the sync, and the merge conflicts:
    those this sync met (``rendered``) and those an earlier sync recorded.
    """
    out = [
        Conflict(path=s.path, reason=s.reason) for s in plan.steps if s.action is Action.CONFLICT
    ]
    out += [Conflict(path=p, reason="a file appeared there during the sync") for p in appeared]
    merges = rendered.merges if rendered is not None else {}
    met = {p: m for p, m in merges.items() if not m.clean and not m.waiting}
    out += [merge_conflict(p, m.overlaps) for p, m in met.items()]
    out += [
        merge_conflict(p, ())
        for p, e in plan.keep.items()
        if e.theirs and p not in met and not (p in merges and merges[p].clean)
    ]
    return tuple(sorted(out, key=lambda c: c.path))


def pending(plan: Plan, rendered: Rendered, manifest: Manifest) -> tuple[str, ...]:
    """``check``'s lines: ``create``/``update``/``merge``/``remove <path>``, and the rest.

    The rest: ``conflict <path>`` for each merge conflict waiting on ``vaultsync resolve``, and
    a corrupt manifest.
    """
    lines = [
        f"{s.action} {s.path}"
        for s in plan.steps
        if s.path in rendered.writes or s.action is Action.MERGE
    ]
    lines += [f"remove {p}" for p in plan.paths(Action.REMOVE)]
    lines += [f"conflict {p}" for p, e in plan.keep.items() if e.theirs]
    if manifest.corrupt:
        lines.append(f"manifest {MANIFEST}: {manifest.problem}")
    return tuple(sorted(lines))


def _kept_edited(
    plan: Plan, merged: set[str], removed: Sequence[str] | None, changed: frozenset[str]
) -> tuple[str, ...]:
    """The edited notes left as the user wrote them: kept, not merged, or changed meanwhile."""
    moved_to = {s.path for s in plan.steps if s.source}
    return tuple(
        sorted(
            {
                *plan.paths(Action.KEEP_EDITED),
                *(set(plan.paths(Action.MERGE)) - merged - moved_to),
                *(set(plan.paths(Action.MOVED)) - set(removed or ())),
                *changed,
            }
        )
    )


def counts_text(report: SyncReport) -> str:
    """What a sync did, counted one way for the terminal, the commit subject and ``--each``.

    Merges are counted as merges (never as updates), and conflicts are named when there are.
    """
    parts = [f"{len(report.created)} created", f"{len(report.updated)} updated"]
    if report.merged:
        parts.append(f"{len(report.merged)} merged")
    parts.append(f"{len(report.removed)} removed")
    waiting = len(report.conflicts) + len(report.merge_waiting)
    if waiting:
        parts.append(f"{waiting} conflict" + ("" if waiting == 1 else "s"))
    return ", ".join(parts)


def unchanged_count(plan: Plan, rendered: Rendered) -> int:
    """The notes a sync leaves as they are: planned so, or rendered to the bytes already there."""
    return len(plan.paths(Action.UNCHANGED)) + len(rendered.same)


def settled_unchanged(report: SyncReport) -> int:
    """The notes a plan right after this sync, with the same inputs, finds unchanged.

    Those it found unchanged, and those it wrote (created or updated: the file is the render
    now); a merged note is the user's edit, kept.
    """
    return report.unchanged + len(report.created) + len(report.updated)


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
    clean = {p for p, m in rendered.merges.items() if m.clean}
    merged = clean & set(done)  # a merge that changed nothing (a code upgrade) goes unsaid
    return SyncReport(
        created=tuple(sorted(p for p in done if p in creates)),
        updated=tuple(sorted(p for p in done if p not in creates and p not in clean)),
        merged=tuple(sorted(merged)),
        merge_waiting=tuple(
            Conflict(path=p, reason=m.waiting)
            for p, m in sorted(rendered.merges.items())
            if m.waiting
        ),
        removed=tuple(plan.paths(Action.REMOVE) if removed is None else removed),
        unchanged=unchanged_count(plan, rendered),
        kept_edited=_kept_edited(plan, merged, removed, frozenset(skipped) - appeared),
        kept_deleted=plan.paths(Action.KEEP_DELETED),
        renamed=tuple(sorted(decision.renamed.items())),
        conflicts=conflicts(plan, appeared, rendered),
        commit=commit,
        manifest_problem=decision.manifest.problem,
        recovered=decision.controls.journal is not None,
        index_synced=index_synced,
        dry_run=written is None,
        format_change=format_change(decision, [*done, *plan.paths(Action.REMOVE)]),
    )


def format_change(decision: Decision, changed: Iterable[str]) -> int:
    """The render format a sync changing ``changed`` moves older notes to, else 0.

    A vault without a usable manifest (new, or lost) has no format to change from.
    """
    old = decision.manifest
    if old.lost or old.render_format >= RENDER_FORMAT:
        return 0
    return RENDER_FORMAT if any(path in old.entries for path in changed) else 0

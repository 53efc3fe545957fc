"""A sync's and a status's reports → the text and JSON the CLI prints; pure.

Kept apart from the query views: printing a report loads no graph code, so a ``status``
answered from the last sync's record loads none at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vaultsync.cli.schemas import SCHEMA_VERSION
from vaultsync.core.text import plural
from vaultsync.vault.report import EditOrigin, StatusReport, SyncReport, counts_text


def _summary_lines(report: SyncReport, vault: Path, *, verbose: bool) -> list[str]:
    """The counts line, and with ``verbose`` every path written or removed."""
    verb = "would change" if report.dry_run else "synced"
    commit = f" (commit {report.commit[:10]})" if report.commit else ""
    lines = [f"{verb} {vault}: {counts_text(report)}, {report.unchanged} unchanged{commit}"]
    if report.format_change:
        will = "would rewrite" if report.dry_run else "rewrote"
        lines.append(
            f"{will} the notes in render format {report.format_change} (one commit, "
            f"`vaultsync: render format {report.format_change}`; your edits merged as usual)"
        )
    if verbose:
        for label, paths in (("+", report.created), ("~", report.updated), ("-", report.removed)):
            lines.extend(f"  {label} {p}" for p in paths)
    return lines


def sync_lines(report: SyncReport, vault: Path, *, verbose: bool, quiet: bool = False) -> list[str]:
    """Nothing when nothing changed and nothing needs attention; else a short summary.

    ``quiet`` (``sync -q``, for cron): only what needs the person, conflicts and warnings.
    """
    if quiet:
        return [line for line in _report_lines(report, vault, verbose=False) if _needs_you(line)]
    return _report_lines(report, vault, verbose=verbose)


def _needs_you(line: str) -> bool:
    """A report line that asks for the person: a conflict to resolve, or a warning."""
    return line.startswith(("conflict: ", "warning: "))


def _report_lines(report: SyncReport, vault: Path, *, verbose: bool) -> list[str]:
    lines = _summary_lines(report, vault, verbose=verbose) if report.changed else []
    if report.recovered:
        lines.append("finished the work of an interrupted sync")
    if report.manifest_problem:
        lines.append(f"warning: manifest unusable ({report.manifest_problem}); existing files kept")
    lines.extend(f"followed your move: {old} → {new}" for old, new in report.renamed)
    lines.extend(f"merged the stores' changes into your edit: {p}" for p in report.merged)
    for path in report.kept_edited:
        lines.append(f"kept (edited by you): {path}")
    lines.extend(
        f"merge left for the next sync: {c.path} — {c.reason}" for c in report.merge_waiting
    )
    if verbose:
        lines.extend(f"kept deleted (deleted by you): {p}" for p in report.kept_deleted)
    lines.extend(f"conflict: {c.path} — {c.reason}" for c in report.conflicts)
    if not report.index_synced:
        lines.append("warning: .git/index was locked; the next sync updates it")
    return lines


def sync_json(report: SyncReport, vault: Path) -> dict[str, Any]:
    """A sync's report as plain data (``sync --json``; schema: ``cli.schemas.SYNC``)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "vault": str(vault),
        "changed": report.changed,
        "dry_run": report.dry_run,
        "commit": report.commit or None,
        "created": list(report.created),
        "updated": list(report.updated),
        "removed": list(report.removed),
        "merged": list(report.merged),
        "unchanged": report.unchanged,
        "kept_edited": list(report.kept_edited),
        "kept_deleted": list(report.kept_deleted),
        "renamed": [{"from": old, "to": new} for old, new in report.renamed],
        "merge_waiting": [{"path": c.path, "reason": c.reason} for c in report.merge_waiting],
        "conflicts": [{"path": c.path, "reason": c.reason} for c in report.conflicts],
        "recovered": report.recovered,
        "index_synced": report.index_synced,
        "manifest_problem": report.manifest_problem or None,
    }


def _origin(edit: EditOrigin) -> str:
    """Where an edit comes from, and whether the stores' changes were merged into it."""
    if edit.commit and not (edit.uncommitted and not edit.merged):
        when = edit.when.date().isoformat() if edit.when else "?"
        origin = f"edited in commit {edit.commit[:10]} on {when}"
    else:
        origin = "uncommitted edit" if edit.uncommitted or not edit.merged else "your edit"
    if edit.merged:
        origin += f"; the stores' changes merged in commit {edit.merged[:10]}"
    return origin


def status_text(report: StatusReport, vault: Path) -> str:
    """What the vault keeps for the person, and what a sync would do."""
    lines = [f"vault: {vault}"]
    if report.manifest_problem:
        lines.append(f"manifest unusable: {report.manifest_problem} (every existing file is kept)")
    if report.edited:
        lines.append(f"kept, edited by you ({len(report.edited)}):")
        lines.extend(f"  - {edit.path} ({_origin(edit)})" for edit in report.edited)
    if report.deleted:
        lines.append(f"deleted by you, not re-created ({len(report.deleted)}):")
        lines.extend(f"  - {path}" for path in report.deleted)
    if report.conflicts:
        lines.append(f"conflicts ({len(report.conflicts)}):")
        lines.extend(f"  - {c.path}: {c.reason}" for c in report.conflicts)
    work = [line for line in report.pending if not line.startswith("conflict ")]
    if work:
        lines.append(f"a sync would change {plural(len(work), 'note')} (run `vaultsync sync`)")
    elif report.pending:
        lines.append("waiting on you: `vaultsync resolve` each conflict above")
    else:
        lines.append("in sync with the stores")
    return "\n".join(lines)


def status_json(report: StatusReport, vault: Path) -> dict[str, Any]:
    """The status as plain data (``status --json``; schema: ``cli.schemas.STATUS``)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "vault": str(vault),
        "edited": [
            {
                "path": e.path,
                "commit": e.commit or None,
                "when": e.when.isoformat() if e.when else None,
                "uncommitted": e.uncommitted,
                "merged": e.merged or None,
            }
            for e in report.edited
        ],
        "deleted": list(report.deleted),
        "conflicts": [{"path": c.path, "reason": c.reason} for c in report.conflicts],
        "pending": list(report.pending),
        "manifest_problem": report.manifest_problem or None,
    }

"""Query results → the text and JSON the CLI prints; pure.

Text follows ChatCLI's own commands (``@memory neighbors``, ``@memory map``, ``@knowledge links``);
JSON carries the same facts with ids, for scripts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultsync.app.shapes import node_json
from vaultsync.cli.schemas import SCHEMA_VERSION
from vaultsync.core.model import Graph, Node
from vaultsync.core.text import plural
from vaultsync.graph.stats import counts_by_kind, hubs
from vaultsync.vault.report import EditOrigin, StatusReport, SyncReport, counts_text

if TYPE_CHECKING:  # annotations only: status and sync load no query code
    from vaultsync.graph.query import DocumentLinks, LocalGraph, Neighbour


def _label(node: Node) -> str:
    return f"[{node.kind.value}] {node.title}"


def _relations(neighbour: Neighbour) -> str:
    parts = []
    for relation in neighbour.relations:
        text = f"{relation.direction} {relation.rel}"
        if relation.origin == "user":
            text += " · linked by you" + (f": {relation.note}" if relation.note else "")
        parts.append(text)
    return ", ".join(parts)


def local_graph_text(view: LocalGraph) -> str:
    """``Local graph of "<title>" (<id>):`` then neighbors and the second hop."""
    lines = [f'Local graph of "{view.subject.title}" ({view.subject.id}):']
    if not view.neighbours:
        lines.append("  (no connected notes yet)")
        return "\n".join(lines)
    lines.append("Connected (→ links it writes, ← backlinks):")
    lines.extend(f"  - {_label(n.node)}  ({_relations(n)})" for n in view.neighbours)
    if view.second_hop:
        titles = {n.node.id: n.node.title for n in view.neighbours}
        lines.append("Two hops away:")
        for node, via in view.second_hop:
            through = ", ".join(titles.get(hop, hop) for hop in via[:3])
            lines.append(f"  - {_label(node)}  (via {through})")
        hidden = view.second_hop_total - len(view.second_hop)
        if hidden > 0:
            lines.append(f"  … and {hidden} more")
    return "\n".join(lines)


def map_text(graph: Graph) -> str:
    """Node counts by kind and up to 8 hubs."""
    if not graph.nodes:
        return "The knowledge graph is empty so far."
    counts = " · ".join(f"{kind.value} {count}" for kind, count in counts_by_kind(graph))
    sizes = f"{plural(len(graph.nodes), 'note')}, {plural(len(graph.links), 'link')}"
    lines = [f"Knowledge graph: {sizes}", f"  {counts}"]
    top = hubs(graph)
    if top:
        lines.append("Hubs:")
        lines.extend(f"  - {_label(h.node)}  ({h.degree} neighbors)" for h in top)
    return "\n".join(lines)


def map_json(graph: Graph) -> dict[str, Any]:
    """Counts and hubs as plain data."""
    return {
        "notes": len(graph.nodes),
        "links": len(graph.links),
        "counts": {kind.value: count for kind, count in counts_by_kind(graph)},
        "hubs": [
            {**node_json(h.node), "degree": h.degree, "weight": h.weight} for h in hubs(graph)
        ],
    }


def _doc_path(node: Node) -> str:
    return node.id.split(":", 2)[2]


def document_links_text(view: DocumentLinks, summary: str) -> str:
    """``<context> :: <path> — "<title>"`` then links to, linked from, and outside wikilinks."""
    context = view.context.title if view.context else "?"
    lines = [f'{context} :: {_doc_path(view.document)} — "{view.document.title}"']
    if summary:
        lines.append(f"  · {summary}")
    for arrow, label, nodes in (
        ("→", "links to", view.outgoing),
        ("←", "linked from", view.incoming),
    ):
        lines.append(f"{arrow} {label} ({len(nodes)}):")
        lines.extend(f'  - {_doc_path(n)} — "{n.title}"' for n in nodes)
    if view.outside:
        names = ", ".join(n.title for n in view.outside)
        lines.append(
            f"[[wikilinks]] to notes outside this base (see vaultsync graph neighbors): {names}"
        )
    return "\n".join(lines)


def document_links_json(view: DocumentLinks, summary: str) -> dict[str, Any]:
    """The document links view as plain data."""
    return {
        "document": {**node_json(view.document), "summary": summary},
        "context": node_json(view.context) if view.context else None,
        "links_to": [node_json(n) for n in view.outgoing],
        "linked_from": [node_json(n) for n in view.incoming],
        "outside": [node_json(n) for n in view.outside],
    }


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

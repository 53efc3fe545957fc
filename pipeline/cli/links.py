"""``vaultsync link``, ``unlink`` and ``links``: the links people draw by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click
from vaultsync.cli.options import (
    json_option,
    state_option,
    vault_option,
    workspace,
)
from vaultsync.core.errors import UsageError
from vaultsync.core.text import plural

if TYPE_CHECKING:
    from vaultsync.drawn.store import Quarantine

ARROWS = ("->", "→")


def split_link_arguments(words: tuple[str, ...]) -> tuple[str, str]:
    """``FROM -> TO`` (words on each side joined) or exactly two quoted references."""
    for index, word in enumerate(words):
        if word in ARROWS:
            source, target = " ".join(words[:index]), " ".join(words[index + 1 :])
            if source and target:
                return source, target
            break
        for arrow in ARROWS:
            if arrow in word and word not in ARROWS:
                left, _, right = word.partition(arrow)
                joined = (*words[:index], left, arrow, right, *words[index + 1 :])
                return split_link_arguments(tuple(w for w in joined if w))
    if len(words) == 2 and not any(w in ARROWS for w in words):
        return words[0], words[1]
    raise UsageError(
        "expected FROM -> TO (or two quoted references)",
        hint='vaultsync link "telemetry security" "->" orbital --rel about',
    )


def _report_quarantine(quarantined: Quarantine | None) -> None:
    if quarantined is not None:
        click.echo(
            f"warning: links.json was corrupt ({quarantined.reason}); "
            f"moved aside to {quarantined.path}, starting a new one",
            err=True,
        )


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True)
@click.option(
    "--rel", default="related", show_default=True, help="Relation name (stored as a slug)."
)
@click.option("--note", default="", help="One line about the link (at most 280 bytes).")
@state_option
@vault_option
def link(words: tuple[str, ...], rel: str, note: str, state: str | None, vault: str | None) -> None:
    """Draw a link by hand: FROM -> TO (the arrow may also be →).

    FROM and TO are node ids, fact ids or id prefixes, titles, aliases, [[wikilinks]] or free
    text that names exactly one note; a reference that could mean several notes is refused.
    A [[wikilink]] names what it links in a note (a shared name goes to the more specific
    kind) and is refused only when that still ties.
    """
    from vaultsync.app.links import draw_link

    source_ref, target_ref = split_link_arguments(words)
    drawn = draw_link(workspace(state, vault), source_ref, target_ref, rel, note)
    result, source, target = drawn.result, drawn.source, drawn.target
    _report_quarantine(result.quarantined)
    link = result.link
    verb = {"added": "linked", "updated": "updated the note of", "unchanged": "already linked"}
    click.echo(f"{verb[result.status]}: {source.title} → {target.title} ({link.rel})")
    click.echo(f"  {link.source} → {link.target}" + (f" · {link.note}" if link.note else ""))


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True)
@click.option("--rel", default=None, help="Only this relation (default: every one you drew).")
@state_option
@vault_option
def unlink(words: tuple[str, ...], rel: str | None, state: str | None, vault: str | None) -> None:
    """Remove links you drew between FROM -> TO; links from the data stay (change the data)."""
    from vaultsync.app.links import remove_links

    source_ref, target_ref = split_link_arguments(words)
    removed = remove_links(workspace(state, vault), source_ref, target_ref, rel)
    _report_quarantine(removed.result.quarantined)
    for link in removed.result.removed:
        click.echo(f"unlinked: {removed.source.title} → {removed.target.title} ({link.rel})")


class _LinksGroup(click.Group):
    """``links NOTE`` shows a note's links; ``links export|import|compact`` manage links.json."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_LinksGroup)
def links() -> None:
    """Show a note's links (vaultsync links NOTE), or export, import and compact links.json."""


@links.command(name="show")
@click.argument("note")
@state_option
@vault_option
@json_option
def links_show(note: str, state: str | None, vault: str | None, as_json: bool) -> None:
    """The same view as `vaultsync graph neighbors NOTE`."""
    from vaultsync.cli.graph import neighbors

    neighbors.callback(note, state, vault, as_json)  # type: ignore[misc]


@links.command(name="export")
@state_option
def links_export(state: str | None) -> None:
    """Print every link you drew as JSON Lines (to carry them to another machine)."""
    from vaultsync.drawn.store import LinkStore

    root = workspace(state).state
    click.echo(LinkStore(root).export_jsonl(), nl=False)


@links.command(name="import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@state_option
def links_import(file: Any, state: str | None) -> None:
    """Merge links from a JSON Lines FILE written by `links export` (- for stdin)."""
    from vaultsync.drawn.store import LinkStore

    root = workspace(state).state
    report = LinkStore(root).import_jsonl(file.read(), now=datetime.now(UTC), source=file.name)
    _report_quarantine(report.quarantined)
    click.echo(
        f"imported: {report.added} added, {report.updated} updated, {report.skipped} skipped"
    )


@links.command(name="compact")
@state_option
def links_compact(state: str | None) -> None:
    """Follow superseded facts, and drop links whose note left the stores over 30 days ago."""
    from vaultsync.drawn.store import LinkStore
    from vaultsync.graph import load

    ws = workspace(state)
    root = ws.state
    records = load.read_records(root, ws.caps)
    report = LinkStore(root).compact(
        records.facts, load.every_node_id(records), now=datetime.now(UTC)
    )
    _report_quarantine(report.quarantined)
    click.echo(
        f"compacted: {len(report.moved)} moved to newer facts, {len(report.collected)} dropped, "
        f"{plural(len(report.missing), 'note')} missing (kept for 30 days), "
        f"{report.pruned_tombstones} old removals forgotten"
    )

"""The whole graph → ``home.md.j2`` context: the vault's map of content (``Home.md``); pure.

The index card (counts by kind and hubs, :mod:`vaultsync.graph.stats`), then links to every
profile, project, topic, context, skill, card, journal note and session the vault holds (not
those the user deleted).  Facts, episodes and
documents are reached from those notes; listing them would make Home as large as the vault.
"""

from __future__ import annotations

from typing import TypedDict

from vaultsync.core.model import Kind
from vaultsync.core.redact import redact
from vaultsync.graph.stats import index_card
from vaultsync.render.yamlfm import FieldValue, clean_fields
from vaultsync.renderers.base import LinkItem, RenderInputs, sorted_notes

TEMPLATE = "home.md.j2"

SECTIONS: tuple[tuple[str, tuple[Kind, ...]], ...] = (
    ("Profile", (Kind.PROFILE,)),
    ("Projects", (Kind.PROJECT,)),
    ("Topics", (Kind.TOPIC,)),
    ("Contexts", (Kind.KBCONTEXT, Kind.CONTEXT)),
    ("Skills", (Kind.SKILL,)),
    ("Board", (Kind.CARD,)),
    ("Journal", (Kind.NOTE,)),
    ("Sessions", (Kind.SESSION,)),
)


class HomeSection(TypedDict):
    """A heading and its notes."""

    heading: str
    notes: list[LinkItem]


class HomeContext(TypedDict):
    """``Home.md``: not a graph note, so no links section of its own."""

    node_id: str
    kind: str
    title: str
    path: str
    front_matter: tuple[tuple[str, FieldValue], ...]
    properties: dict[str, FieldValue]
    """The same properties by key."""
    card: str
    sections: list[HomeSection]


def listed_ids(inputs: RenderInputs) -> list[tuple[str, list[str]]]:
    """Each section's heading and node ids (they also enter Home's key).

    A note the user deleted is not listed: the map shows what the vault holds.
    """
    by_kind: dict[Kind, list[str]] = {}
    for node in inputs.graph.nodes:
        if inputs.deleted and inputs.paths.get(node.id) in inputs.deleted:
            continue
        by_kind.setdefault(node.kind, []).append(node.id)
    return [
        (heading, [node_id for kind in kinds for node_id in by_kind.get(kind, ())])
        for heading, kinds in SECTIONS
    ]


def _journal_order(items: list[LinkItem]) -> list[LinkItem]:
    """Daily notes, then weeklies, then monthlies; newest first within each."""
    order = {"Daily": 0, "Weekly": 1, "Monthly": 2}
    ranked = sorted(items, key=lambda item: item["path"], reverse=True)
    return sorted(ranked, key=lambda item: order.get(item["path"].split("/")[1], 3))


def context_card(inputs: RenderInputs) -> str:
    """The index card line (hub titles are graph titles; secrets masked like any text)."""
    return redact(index_card(inputs.graph))


def context(inputs: RenderInputs, path: str) -> HomeContext:
    """The map of content; ``path`` is where Home lives (``Home.md``)."""
    sections = []
    for heading, node_ids in listed_ids(inputs):
        notes = sorted_notes(node_ids, inputs)
        if heading == "Journal":
            notes = _journal_order(notes)
        if notes:
            sections.append(HomeSection(heading=heading, notes=notes))
    front_matter = clean_fields(
        [("vaultsync_id", "home"), ("kind", "home"), ("aliases", ()), ("tags", ())]
    )
    return HomeContext(
        node_id="",
        kind="home",
        title="Home",
        path=path,
        front_matter=front_matter,
        properties=dict(front_matter),
        card=context_card(inputs),
        sections=sections,
    )

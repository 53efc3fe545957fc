r"""Rules for links drawn by hand: relation slugs, notes, endpoints, supersession; pure.

Everything here is a function of its arguments: no I/O, no clock.  ``drawn.fileformat`` (the
``links.json`` format) and ``drawn.store`` (locking and writing) build on it, and the
graph build calls ``supersession_map`` and ``follow_supersession`` (re-exported by
``drawn.store``).

Supersession rule
-----------------
ChatCLI records a supersession only in the *newer* fact's ``provenance``: when it replaces a
stale fact it appends `` (supersedes <old id>)`` (``cli/workspace/memory/facts.go``), e.g.
``user (supersedes 0a1b2c3d4e5f60718293a4b5)``.  So a fact *N* supersedes a fact id *O* when
N's provenance matches, case-insensitively,

    ``\bsupersedes\b[\s:]*`` followed by a list of one or more ids, each ``[fact:]<24 hex>``,
    separated by ``,``, ``&`` or ``and``

(``supersedes 0a1b…``, ``supersedes: fact:0a1b…, fact:9f8e…``); ids are lowercased.  Other
words (``superseded by``, ``replaces``) are not supersession records.  The claim is ignored when
N names itself, or when O is among the facts given and was created *after* N (it was learned
again after being replaced, so it stands on its own — as a tombstone loses to a re-learned
fact).  When several facts claim the same O, the newest (``created_at``, then id) wins.  Chains
are followed to their end (A → B → C maps A and B to C); an id whose chain runs into a cycle
is left unmapped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from types import MappingProxyType

from vaultsync.core.model import ZERO_TIME, ExplicitLink, Fact
from vaultsync.core.redact import redact
from vaultsync.links.names import slugify_relation

__all__ = [
    "DEFAULT_RELATION",
    "MAX_NOTE_BYTES",
    "RELATION_ALIASES",
    "endpoint_problem",
    "follow_supersession",
    "is_collectable",
    "normalize_note",
    "relation_slug",
    "resolve_chains",
    "superseded_ids",
    "supersession_map",
]

DEFAULT_RELATION = "related"
RELATION_ALIASES: MappingProxyType[str, str] = MappingProxyType(
    {
        "mention": "mentions",
        "reference": "links_to",
        "references": "links_to",
        "link": "links_to",
        "links": "links_to",
        "belongs_to": "part_of",
        "project": "in_project",
    }
)
"""Common words (as slugs) mapped onto the graph's built-in relations (seed 002)."""

MAX_NOTE_BYTES = 280
ELLIPSIS = "…"

COLLECTABLE_KINDS = frozenset(
    {
        "card",
        "ctx",
        "doc",
        "episode",
        "kb",
        "note",
        "profile",
        "project",
        "session",
        "skill",
        "topic",
    }
)
"""Node-id prefixes whose notes come and go with the stores (``fact:`` is checked apart)."""

_WHITESPACE = re.compile(r"\s+")
_CONTROL = re.compile("(?!\\s)[\x00-\x1f\x7f-\x9f]")  # category Cc, but not whitespace
_CONTROL_OR_SURROGATE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_FACT_ID = re.compile(r"[0-9a-f]{24}")
_ENDPOINT = re.compile(r"[A-Za-z][A-Za-z0-9_-]*:\S.*", re.DOTALL)
_SUPERSEDES = re.compile(
    r"\bsupersedes\b[\s:]*"
    r"(?P<ids>(?:fact:)?[0-9a-f]{24}\b(?:\s*(?:,|&|\band\b)\s*(?:fact:)?[0-9a-f]{24}\b)*)",
    re.IGNORECASE,
)
_HEX24 = re.compile(r"[0-9a-f]{24}", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# Relations, notes, endpoints


def relation_slug(name: str) -> str:
    """The stored relation: ``links.names`` slug, common words mapped, ``related`` if empty.

    ``Depends On`` → ``depends_on``; ``References`` → ``links_to``; ``""`` → ``related``.
    Idempotent: a stored relation maps to itself.
    """
    slug = slugify_relation(redact(name))  # masked first: a slug hides a secret from the rules
    return RELATION_ALIASES.get(slug, slug) if slug else DEFAULT_RELATION


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so it always encodes to UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def normalize_note(text: str) -> str:
    """One line of at most ``MAX_NOTE_BYTES`` UTF-8 bytes.

    Whitespace runs (newlines included) become one space, other control characters go, and a
    longer note is cut on a character boundary and ends with ``…`` (the ellipsis counts).
    """
    line = _WHITESPACE.sub(" ", _CONTROL.sub("", clean_text(text))).strip()
    data = line.encode("utf-8")
    if len(data) <= MAX_NOTE_BYTES:
        return line
    room = MAX_NOTE_BYTES - len(ELLIPSIS.encode("utf-8"))
    # "ignore" drops only the partial character the byte cut may leave at the end.
    return data[:room].decode("utf-8", "ignore").rstrip() + ELLIPSIS


def endpoint_problem(node_id: str) -> str | None:
    """Why ``node_id`` cannot be a link endpoint, or ``None`` when it can.

    An endpoint is a graph node id: ``<kind>:<rest>`` on one line, without surrounding spaces
    or control characters.  Unknown kinds are allowed (they are simply never collected).
    """
    if not node_id:
        return "is empty"
    if node_id != node_id.strip():
        return "has leading or trailing spaces"
    if _CONTROL_OR_SURROGATE.search(node_id):
        return "holds a control character"
    if not _ENDPOINT.fullmatch(node_id):
        return "is not a node id (expected <kind>:<name>, e.g. topic:telemetry)"
    return None


def is_collectable(node_id: str) -> bool:
    """Whether compaction may drop links to ``node_id`` once it is long gone from the stores.

    Only ids of notes that live in the stores qualify: ``fact:<24 hex>`` and the kinds in
    ``COLLECTABLE_KINDS``.  Tags (``tag:``) and unknown id forms never do.
    """
    kind, _, rest = node_id.partition(":")
    if kind == "fact":
        return _FACT_ID.fullmatch(rest) is not None
    return kind in COLLECTABLE_KINDS and bool(rest)


# ---------------------------------------------------------------------------------------------
# Supersession


def superseded_ids(provenance: str) -> tuple[str, ...]:
    """The fact ids a provenance text says its fact supersedes, sorted, lowercase."""
    found = {
        fact_id.lower()
        for match in _SUPERSEDES.finditer(provenance)
        for fact_id in _HEX24.findall(match["ids"])
    }
    return tuple(sorted(found))


def supersession_map(facts: Iterable[Fact]) -> dict[str, str]:
    """Old fact id → the newest fact that replaces it, chains followed (see the module doc).

    Args:
        facts: the facts of the store; only their ``id``, ``created_at`` and ``provenance``
            are read.

    Returns:
        A mapping of bare fact ids (no ``fact:`` prefix); ids that are not superseded, or
        whose chain runs into a cycle, are absent.
    """
    by_id = {fact.id: fact for fact in facts}
    claims: dict[str, Fact] = {}
    for newer in sorted(by_id.values(), key=lambda fact: fact.id):
        for old in superseded_ids(newer.provenance):
            if old == newer.id:
                continue
            stale = by_id.get(old)
            if stale is not None and _born(stale) > _born(newer):
                continue
            held = claims.get(old)
            if held is None or (_born(newer), newer.id) > (_born(held), held.id):
                claims[old] = newer
    return resolve_chains({old: fact.id for old, fact in claims.items()})


def resolve_chains(successor: Mapping[str, str]) -> dict[str, str]:
    """Each id → the end of its chain of successors; ids whose chain loops are left out."""
    mapping: dict[str, str] = {}
    for start in sorted(successor):
        seen = {start}
        current = successor[start]
        while current in successor and current not in seen:
            seen.add(current)
            current = successor[current]
        if current not in seen:
            mapping[start] = current
    return mapping


def _born(fact: Fact) -> datetime:
    return fact.created_at or ZERO_TIME


def follow_node(node_id: str, mapping: Mapping[str, str]) -> str:
    """``fact:<old>`` → ``fact:<newest>`` when ``mapping`` supersedes it; other ids unchanged."""
    kind, _, rest = node_id.partition(":")
    if kind == "fact" and rest in mapping:
        return f"fact:{mapping[rest]}"
    return node_id


def follow_supersession(
    links: Iterable[ExplicitLink], mapping: Mapping[str, str]
) -> tuple[ExplicitLink, ...]:
    """Links with superseded fact endpoints moved to the newest fact, sorted by (from, to, rel).

    A link that becomes a self-link is dropped; two links that become the same (from, to, rel)
    merge into the most recently drawn one.
    """
    chosen: dict[tuple[str, str, str], ExplicitLink] = {}
    for link in links:
        source = follow_node(link.source, mapping)
        target = follow_node(link.target, mapping)
        if source == target:
            continue
        moved = ExplicitLink(
            source=source, target=target, rel=link.rel, note=link.note, created_at=link.created_at
        )
        key = (source, target, link.rel)
        held = chosen.get(key)
        if held is None or _drawn(moved) > _drawn(held):
            chosen[key] = moved
    return tuple(chosen[key] for key in sorted(chosen))


def _drawn(link: ExplicitLink) -> tuple[datetime, str]:
    return (link.created_at or ZERO_TIME, link.note)

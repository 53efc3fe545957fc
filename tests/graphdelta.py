"""Test helper: the :class:`GraphDelta` between two full builds, found by comparing them.

It stands in for the graph patch's own delta: whatever the patch reports must be at least
this (the interface in ``graph/build.py``).  It takes the narrowest reading of "a record
changed": a document's record changes with its own document only, not with its context or its
sibling documents (the context's record says those), so the specs' reuse is tested against the
least the patch may say.
"""

from __future__ import annotations

from vaultsync.core.model import Graph, Records
from vaultsync.graph.build import GraphDelta
from vaultsync.links.names import normalize_name
from vaultsync.renderers.records import DocumentRecord, Record, RecordIndex


def _own(record: Record | None) -> object:
    """What of a record is its own: a document's record is its document."""
    if isinstance(record, DocumentRecord):
        return record.document
    return record


def _names(graph: Graph) -> set[str]:
    return {normalize_name(name) for node in graph.nodes for name in (node.title, *node.aliases)}


def graph_delta(old_records: Records, old: Graph, new_records: Records, new: Graph) -> GraphDelta:
    """What differs between the ``old`` build and the ``new`` one, as the interface says."""
    ids = old.by_id.keys() | new.by_id.keys()
    old_index, new_index = RecordIndex.build(old_records), RecordIndex.build(new_records)
    records = old_index.by_id.keys() | new_index.by_id.keys()
    sources = {link.source for link in (*old.links, *new.links)}
    return GraphDelta(
        nodes=frozenset(n for n in ids if old.by_id.get(n) != new.by_id.get(n)),
        records=frozenset(
            n for n in records if _own(old_index.by_id.get(n)) != _own(new_index.by_id.get(n))
        ),
        sources=frozenset(s for s in sources if old.links_from(s) != new.links_from(s)),
        names=frozenset(_names(old) ^ _names(new)),
    )

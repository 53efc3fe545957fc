"""Nodes + documents → a ``Resolver`` that says which note a ``[[target]]`` names; pure.

Wikilinks and name resolution: a target resolves by (1) the exact node id, then
(2) a title or alias compared with accents removed, case folded and space, ``-`` and ``_``
alike; on a shared name the more specific kind wins (``KIND_PRIORITY``).  A wikilink written in
a document first resolves within its own context in Obsidian's order (exact path, same folder,
shortest path), then by the file names and front-matter titles of that context, then across the
graph.  A document's heading never names it (``DocumentNote.link_names``), as in Obsidian.
The same resolver serves the graph build and the vault renderer, so a link never means one
note in the graph and another in the vault.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

from vaultsync.core.model import KIND_PRIORITY, Node
from vaultsync.core.pickling import fast_pickle
from vaultsync.graph.documents import DocumentNote
from vaultsync.links.names import normalize_name
from vaultsync.links.pathresolve import ObsidianIndex


@fast_pickle
@dataclass(frozen=True, slots=True)
class _ContextIndex:
    paths: ObsidianIndex
    node_by_path: Mapping[str, str]
    by_name: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class Resolver:
    """Resolves wikilink targets to node ids; build it once with :func:`build_resolver`."""

    by_id: Mapping[str, str]
    by_id_folded: Mapping[str, str]
    by_name: Mapping[str, str]
    doc_context: Mapping[str, str] = field(default_factory=dict)
    doc_path: Mapping[str, str] = field(default_factory=dict)
    contexts: Mapping[str, _ContextIndex] = field(default_factory=dict)

    def resolve_wikilink(self, target: str, source_id: str) -> str | None:
        """The node id a ``[[target]]`` written in ``source_id`` names, or ``None``."""
        target = target.strip()
        if not target:
            return None
        found = self._resolve(target, source_id)
        # Percent-encoded targets decode, but a name that really holds "%" is tried first.
        if found is None and "%" in target:
            found = self._resolve(unquote(target), source_id)
        return found

    def answers(self, lookups: tuple[tuple[str, ...], ...]) -> tuple[tuple[str | None, ...], ...]:
        """What the graph-wide tables hold for :func:`lookup_keys` ``(ids, folded, names)``.

        Equal answers, and the same context, give the same resolutions: within its context a
        wikilink resolves by the context's own documents.
        """
        ids, folded, names = lookups
        return (
            tuple(map(self.by_id.get, ids)),
            tuple(map(self.by_id_folded.get, folded)),
            tuple(map(self.by_name.get, names)),
        )

    def _resolve(self, target: str, source_id: str) -> str | None:
        exact = self.by_id.get(target) or self.by_id_folded.get(target.casefold())
        if exact is not None:
            return exact
        context_id = self.doc_context.get(source_id)
        if context_id is not None:
            found = self._within_context(target, source_id, context_id)
            if found is not None:
                return found
        return self.by_name.get(wikilink_name_key(target))

    def _within_context(self, target: str, source_id: str, context_id: str) -> str | None:
        index = self.contexts[context_id]
        path = index.paths.resolve(target, self.doc_path[source_id])
        if path is not None:
            return index.node_by_path[path]
        return index.by_name.get(wikilink_name_key(target))


def lookup_keys(targets: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """The keys :meth:`Resolver.resolve_wikilink` reads of the graph-wide tables for ``targets``.

    ``(ids, case-folded ids, name keys)``: each target as written, then percent-decoded when
    it holds ``%`` (its second try).
    """
    ids: list[str] = []
    for written in targets:
        target = written.strip()
        if target:
            ids.append(target)
            if "%" in target:
                ids.append(unquote(target))
    return (
        tuple(ids),
        tuple(key.casefold() for key in ids),
        tuple(map(wikilink_name_key, ids)),
    )


def build_resolver(
    nodes: Iterable[Node],
    documents: Iterable[DocumentNote],
    *,
    context_index: Callable[[str, Callable[[], Any]], Any] | None = None,
    normalize: Callable[[str], str] = normalize_name,
) -> Resolver:
    """Index every node's id, title and aliases, and every context's document paths.

    ``nodes`` come sorted by id, so a case-folded id shared by two notes goes to the first.
    ``context_index(context id, compute)``: a context's index as an earlier build made it from
    the same documents (``graph.patch.Memo``), else ``compute()``; ``normalize``: the same as
    ``normalize_name``, perhaps remembered.
    """
    documents = tuple(documents)
    doc_names = {doc.node_id: doc.link_names for doc in documents}
    by_id: dict[str, str] = {}
    by_id_folded: dict[str, str] = {}
    ranked: dict[str, tuple[int, str]] = {}
    for node in nodes:
        by_id[node.id] = node.id
        by_id_folded.setdefault(node.id.casefold(), node.id)
        rank = (KIND_PRIORITY[node.kind], node.id)
        for name in doc_names.get(node.id) or (node.title, *node.aliases):
            key = normalize(name)
            if key and (key not in ranked or rank < ranked[key]):
                ranked[key] = rank

    doc_context: dict[str, str] = {}
    doc_path: dict[str, str] = {}
    per_context: dict[str, list[DocumentNote]] = {}
    for doc in documents:
        doc_context[doc.node_id] = doc.context_id
        doc_path[doc.node_id] = doc.path
        per_context.setdefault(doc.context_id, []).append(doc)
    remembered = context_index or _compute
    contexts = {
        cid: remembered(cid, functools.partial(_context_index, docs))
        for cid, docs in per_context.items()
    }
    return Resolver(
        by_id=MappingProxyType(by_id),
        by_id_folded=MappingProxyType(by_id_folded),
        by_name=MappingProxyType({key: node_id for key, (_, node_id) in ranked.items()}),
        doc_context=MappingProxyType(doc_context),
        doc_path=MappingProxyType(doc_path),
        contexts=MappingProxyType(contexts),
    )


def _compute(_context_id: str, compute: Callable[[], Any]) -> Any:
    return compute()


def _context_index(docs: list[DocumentNote]) -> _ContextIndex:
    by_name: dict[str, str] = {}
    for doc in sorted(docs, key=lambda d: d.node_id):
        for name in doc.link_names:
            by_name.setdefault(normalize_name(name), doc.node_id)
    return _ContextIndex(
        paths=ObsidianIndex.build(doc.path for doc in docs),
        node_by_path=MappingProxyType({doc.path: doc.node_id for doc in docs}),
        by_name=MappingProxyType(by_name),
    )


def wikilink_name_key(target: str) -> str:
    """The title-or-alias key a ``[[target]]`` resolves by: ``.md`` dropped, name-normalised."""
    return normalize_name(target[:-3] if target.lower().endswith(".md") else target)

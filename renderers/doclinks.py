"""Markdown links between documents → links Obsidian opens in the vault; pure.

A document's ``[label](dest#anchor "title")`` (and reference definition ``[label]: dest``)
was written for its own collection: ``/section2/page36.md`` is site-absolute from the
collection's root, ``../x.md`` relative to the file.  Once the file sits at
``Contexts/<context>/…`` neither points anywhere, so each link that resolves to a document
of the same context (``links.mdlinks.resolve_document_link``, the rules the graph uses) is
rewritten to that document's vault path, percent-encoded, without a leading slash — the form
Obsidian itself writes and resolves first (an exact vault path wins).  The label, the
``#anchor`` and the title are kept; a link that resolves to nothing, or to a document that has
no note, stays exactly as written, and code is never touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from vaultsync.core.model import Context
from vaultsync.graph.documents import document_node_id
from vaultsync.links.mdlinks import (
    DestKind,
    DocPathIndex,
    MdLink,
    MdLinkKind,
    classify_destination,
    common_root,
    parse_markdown_links,
    resolve_document_link,
)
from vaultsync.renderers.base import RenderInputs

__all__ = ["ContextDocuments", "context_documents", "rewrite_document_links", "rewritten_link"]


class ContextDocuments:
    """One context's document paths (below their common root), indexed once per render."""

    __slots__ = ("by_source", "index", "node_of")

    def __init__(self, context: Context) -> None:
        posix = [doc.source.replace("\\", "/") for doc in context.documents]
        root = common_root(posix)
        cut = len(root) + 1 if root else 0
        paths = [path[cut:] for path in posix]
        self.index = DocPathIndex.build(paths)
        self.node_of: Mapping[str, str] = {
            path: document_node_id(context.id, doc.source)
            for doc, path in zip(context.documents, paths, strict=True)
        }
        self.by_source: Mapping[str, str] = {
            doc.source: path for doc, path in zip(context.documents, paths, strict=True)
        }


def context_documents(context: Context, inputs: RenderInputs) -> ContextDocuments:
    """The context's :class:`ContextDocuments`, built on first use in this render."""
    key = ("context-documents", context.id)
    found = inputs.memo.get(key)
    if not isinstance(found, ContextDocuments):
        found = ContextDocuments(context)
        inputs.memo[key] = found
    return found


def _title(title: str | None) -> str:
    if title is None:
        return ""
    if '"' not in title:
        return f' "{title}"'
    return f" ({title})" if "(" not in title and ")" not in title else f" '{title}'"


def rewritten_link(link: MdLink, vault_path: str) -> str:
    """``link`` pointing at ``vault_path`` (percent-encoded), its label, anchor and title kept."""
    cut = link.dest.find("#")
    dest = quote(vault_path, safe="/") + (link.dest[cut:] if cut >= 0 else "")
    if link.kind is MdLinkKind.DEFINITION:
        return f"[{link.text}]: {dest}{_title(link.title)}"
    return f"[{link.text}]({dest}{_title(link.title)})"


def rewrite_document_links(
    text: str, source: str, documents: ContextDocuments, inputs: RenderInputs
) -> str:
    """``text`` (a document's Markdown) with each resolved document link made a vault path."""
    own = documents.by_source.get(source)
    if own is None or ("](" not in text and "]:" not in text):
        return text
    parts: list[str] = []
    last = 0
    for link in parse_markdown_links(text):
        if classify_destination(link.dest) is not DestKind.PATH:
            continue
        found = resolve_document_link(link.dest, own, documents.index)
        node_id = documents.node_of.get(found) if found is not None else None
        vault_path = inputs.paths.get(node_id) if node_id is not None else None
        if vault_path is None:
            continue
        parts += [text[last : link.start], rewritten_link(link, vault_path)]
        last = link.end
    return "".join([*parts, text[last:]]) if parts else text

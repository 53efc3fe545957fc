"""Document node → ``document.md.j2`` context: the file's full content, safe to show; pure.

* Secrets were masked before the graph was built (:mod:`vaultsync.core.scrub`, the one
  boundary), on the whole text: the cut below never splits one.
* At most ``MAX_BYTES`` (1 MiB) of content per note, cut on a character boundary (at a line
  end when one is near) and followed by a notice; a fence left open by the cut is closed.
* Markdown (by file extension, as the graph decides: ``.md``, ``.mdx``, ``.markdown``) stays
  Markdown, with its ``[[wikilinks]]`` rewritten to exact vault paths and its own YAML front
  matter shown as a fenced ``yaml`` block (two front matters cannot share a note).
* Anything else is shown in a fenced block (longer than any backtick run inside, language
  from the store's ``Type``) and never rewritten.
"""

from __future__ import annotations

import re

from vaultsync.core.model import Node
from vaultsync.graph.documents import is_markdown
from vaultsync.links.codespans import fenced_blocks
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    close_open_fence,
    fence_for,
    leading_h1,
    normalize_newlines,
    one_line,
    relation_property,
    rewrite_links,
    trim_block,
)
from vaultsync.renderers.doclinks import context_documents, rewrite_document_links
from vaultsync.renderers.records import DocumentRecord

TEMPLATE = "document.md.j2"
MAX_BYTES = 1 << 20
"""Content kept per document note, in UTF-8 bytes (1 MiB)."""
_LINE_END_WINDOW = 4096

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_LANGUAGES = {
    "text": "text",
    "plain text": "text",
    "shell": "sh",
    "c++": "cpp",
    "c#": "csharp",
    "f#": "fsharp",
    "objective-c": "objectivec",
    "vue": "vue",
    "restructuredtext": "rst",
}


class DocumentContext(NoteContext):
    """One file of a context."""

    context_name: str
    source: str
    """The path as the store records it."""
    markdown: bool
    body: str
    """Ready to print: Markdown, or one fenced block."""
    truncated: bool
    size: int
    """The content's size in UTF-8 bytes, before any cut."""


def language_of(file_type: str) -> str:
    """The fence info string for the store's ``Type`` (``Go`` → ``go``, ``C++`` → ``cpp``)."""
    name = one_line(file_type).lower()
    mapped = _LANGUAGES.get(name)
    if mapped is not None:
        return mapped
    return re.sub(r"[^a-z0-9+#-]", "", name.replace(" ", "-"))


def _cut(text: str, max_bytes: int) -> tuple[str, bool]:
    data = text.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return text, False
    cut = data[:max_bytes].decode("utf-8", "ignore")
    newline = cut.rfind("\n", max(0, len(cut) - _LINE_END_WINDOW))
    return (cut[: newline + 1] if newline > 0 else cut), True


def _front_matter_as_code(text: str) -> str:
    match = _FRONT_MATTER.match(text)
    if match is None:
        return text
    block = match.group(1) or ""
    fence = fence_for(block)
    rest = text[match.end() :]
    return f"{fence}yaml\n{block}{fence}\n{'' if rest.startswith(chr(10)) else chr(10)}{rest}"


def own_heading(body: str) -> tuple[str, str] | None:
    """The H1 a Markdown body starts with (after its front matter shown as code) and the rest.

    The note then has one H1, the document's own; its front matter block stays first.
    """
    own = leading_h1(body)
    if own is not None:
        return own
    blocks = fenced_blocks(body)
    if not blocks or blocks[0][0] != 0 or not body.split("\n", 1)[0].endswith("yaml"):
        return None
    head, tail = body[: blocks[0][1]].rstrip(), body[blocks[0][1] :]
    own = leading_h1(trim_block(tail))
    if own is None:
        return None
    heading, rest = own
    return heading, f"{head}\n\n{rest}" if rest else head


def document_body(record: DocumentRecord, node_id: str, inputs: RenderInputs) -> tuple[str, bool]:
    """The printable body of a document and whether it was cut."""
    text = normalize_newlines(record.document.content)
    text, truncated = _cut(text, MAX_BYTES)
    if is_markdown(record.document.source.replace("\\", "/")):
        text = rewrite_links(_front_matter_as_code(text), node_id, inputs)
        documents = context_documents(record.context, inputs)
        text = rewrite_document_links(text, record.document.source, documents, inputs)
        return close_open_fence(trim_block(text)), truncated
    body = text.rstrip("\n")
    fence = fence_for(body)
    return f"{fence}{language_of(record.document.type)}\n{body}\n{fence}", truncated


def context(node: Node, inputs: RenderInputs) -> DocumentContext:
    """Front matter: source (the path as stored), context (a link), context name.

    A Markdown document that starts with an H1 gives the note its heading (one H1 per note).
    """
    record = inputs.records.get(node.id, DocumentRecord)
    if record is None:
        return DocumentContext(
            **base_context(node, inputs),
            context_name="",
            source="",
            markdown=False,
            body="",
            truncated=False,
            size=0,
        )
    base = base_context(
        node,
        inputs,
        [
            ("source", record.document.source),
            ("context", relation_property(node.id, inputs, "part_of")),
            ("context_name", record.context.name),
        ],
    )
    body, truncated = document_body(record, node.id, inputs)
    own = own_heading(body) if is_markdown(record.document.source.replace("\\", "/")) else None
    if own is not None:
        base["title"], body = own
    return DocumentContext(
        **base,
        context_name=one_line(record.context.name),
        source=one_line(record.document.source),
        markdown=is_markdown(record.document.source.replace("\\", "/")),
        body=body,
        truncated=truncated,
        size=len(record.document.content.encode("utf-8", "replace")),
    )


RENDERER = Renderer(template=TEMPLATE, context=context)

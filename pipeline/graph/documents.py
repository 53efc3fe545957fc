"""Context → its documents as graph notes (title, summary, path, links found); pure.

Context documents: a document's title is its front-matter ``title``, else its first
H1, else its file name; its summary is the first prose line (≤ 200 characters).  A lower heading
never names a document (``## Example`` is a section, not a title), and a wikilink never
resolves by a heading at all: Obsidian links by path and file name only (``link_names``).  Its
path is kept relative to the folder the context's documents share.  Links are *found* here and
*resolved* by the graph build, which knows every other note.

Front matter and the first H1 (ATX or setext, outside fenced code) are read
by :mod:`vaultsync.core.notes`, as every vault note is.  The YAML loader runs only for a block
that has a ``title`` key: it costs more than the rest of a document's parse, and no other
property is used.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import PurePosixPath

from vaultsync.core.model import Context, Document
from vaultsync.core.notes import first_heading, read_front_matter, split_front_matter
from vaultsync.core.pickling import fast_pickle
from vaultsync.core.text import shorten
from vaultsync.links.codespans import code_mask, fenced_blocks
from vaultsync.links.mdlinks import common_root, parse_markdown_links
from vaultsync.links.wikilinks import parse_wikilinks

MARKDOWN_SUFFIXES = frozenset({".md", ".mdx", ".markdown"})
SUMMARY_LIMIT = 200

_TITLE_KEY = re.compile(r"^[ \t]*title[ \t]*:", re.MULTILINE | re.IGNORECASE)
_ATX_HEADING = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_SETEXT_UNDERLINE = re.compile(r"^[ ]{0,3}(=+|-+)[ \t]*$")
_NOT_PROSE = re.compile(r"^[ ]{0,3}(?:[-*+>|]|\d+[.)]|<|!\[|```|~~~|\[[^\]]*\]:)")


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedText:
    """What a document's text alone gives, whatever its name or context: worth keeping."""

    title: str
    """Front-matter ``title``, else the first H1, else ``""``."""
    summary: str
    link_dests: tuple[str, ...]
    """Markdown link and reference-definition destinations outside code, in order."""
    link_targets: tuple[str, ...]
    """Non-empty wikilink targets outside code, in order."""
    heading_title: bool = False
    """``title`` comes from the H1: shown, but never a name a wikilink resolves by."""


NOT_PARSED = ParsedText(title="", summary="", link_dests=(), link_targets=())
"""A file that is not Markdown: shown as code, no title, summary or links."""


@fast_pickle
@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentNote:
    """One document of a context, ready to become a ``doc`` node."""

    node_id: str
    context_id: str
    source: str
    """The path as the store records it."""
    path: str
    """POSIX path relative to the folder the context's documents share."""
    title: str
    stem: str
    """The file name without extension: the document's alias."""
    markdown: bool
    digest: str
    """Of the text that was parsed (``""`` for a file that is not Markdown)."""
    parsed: ParsedText

    @property
    def summary(self) -> str:
        """The first prose line (at most ``SUMMARY_LIMIT`` characters)."""
        return self.parsed.summary

    @property
    def link_names(self) -> tuple[str, ...]:
        """The names a wikilink may use for this document: its file name, a front-matter title."""
        named = self.parsed.title and not self.parsed.heading_title
        return (self.stem, self.parsed.title) if named else (self.stem,)


def document_node_id(context_id: str, source: str) -> str:
    """``doc:<context id>:<source>``, the source exactly as the store records it."""
    return f"doc:{context_id}:{source}"


def is_markdown(path: str) -> bool:
    """Links are parsed only in Markdown; any other file is shown as code and never rewritten."""
    return PurePosixPath(path).suffix.lower() in MARKDOWN_SUFFIXES


def text_digest(text: str) -> str:
    """The key a parsed text is remembered by."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def context_documents(
    context: Context, limit: int, known: Mapping[str, ParsedText] | None = None
) -> tuple[DocumentNote, ...]:
    """The first ``limit`` documents of a context (in source order), with paths and links.

    ``known`` maps ``text_digest`` → ``ParsedText`` of texts parsed before (documents
    are derived once per revision); a text found there is not parsed again.
    """
    documents = context.documents[:limit]
    posix = [doc.source.replace("\\", "/") for doc in documents]
    root = common_root(posix)
    cut = len(root) + 1 if root else 0
    return tuple(
        _document_note(context.id, doc, path[cut:], known or {})
        for doc, path in zip(documents, posix, strict=True)
    )


def _document_note(
    context_id: str, doc: Document, path: str, known: Mapping[str, ParsedText]
) -> DocumentNote:
    name = PurePosixPath(path).name
    stem = PurePosixPath(name).stem if "." in name.lstrip(".") else name
    markdown = is_markdown(path)
    digest = text_digest(doc.content) if markdown else ""
    parsed = NOT_PARSED
    if markdown:
        found = known.get(digest)
        parsed = found if found is not None else parse_text(doc.content)
    return DocumentNote(
        node_id=document_node_id(context_id, doc.source),
        context_id=context_id,
        source=doc.source,
        path=path,
        title=parsed.title or name,
        stem=stem,
        markdown=markdown,
        digest=digest,
        parsed=parsed,
    )


def parse_text(text: str) -> ParsedText:
    """Title, summary and links of a Markdown text."""
    body = text
    front_title = ""
    block = split_front_matter(text)
    if block is not None:
        body = text[block.body_start :]
        if _TITLE_KEY.search(block.yaml):
            front_title = _text(read_front_matter(text).values.get("title"))
    heading = None if front_title else first_heading(body, fences=fenced_blocks(body), max_level=1)
    # One code mask serves both link parsers.
    mask = code_mask(text) if "[" in text else None
    return ParsedText(
        title=front_title or (heading.text if heading is not None else ""),
        heading_title=not front_title and heading is not None,
        summary=_first_prose_line(body),
        link_dests=tuple(md.dest for md in parse_markdown_links(text, mask=mask))
        if mask is not None
        else (),
        link_targets=tuple(w.target for w in parse_wikilinks(text, mask=mask) if w.target)
        if mask is not None
        else (),
    )


def _text(value: object) -> str:
    """A ``title`` value as text: a string, a number or a date as written in YAML; else ``""``."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float | date) and not isinstance(value, bool):
        return value.isoformat() if isinstance(value, date) else str(value)
    return ""


def _first_prose_line(body: str) -> str:
    in_fence = False
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not stripped or _ATX_HEADING.match(line) or _NOT_PROSE.match(line):
            continue
        if _SETEXT_UNDERLINE.match(line):
            continue
        return shorten(stripped, SUMMARY_LIMIT)
    return ""

"""What every note's template context shares: front matter, tags, aliases, links, text; pure.

A renderer module (one per kind) builds a ``TypedDict`` that extends :class:`NoteContext` from
its node, its record and :class:`RenderInputs`.  The helpers here decide, once for every kind:

* **tags**: the labels of the tag nodes a note links to (``tagged``, ``category``, ``uses``,
  ``has``, ``assigned``, ``triggered_by``, and any other link to a tag, so that a link drawn
  by hand to a tag is not lost, since links to tags are never listed as links), made
  Obsidian-valid (lowercase, spaces → ``-``, only letters, digits, ``_``, ``-`` and ``/``; an
  all-digit tag gets a leading ``_``), deduplicated and sorted.
* **aliases**: the graph title when the file name differs from it, then the node's aliases.
* **links**: the outgoing links grouped by relation (``in_project`` → ``in project``), as
  exact-path wikilinks ``[[Folder/Note|Title]]``, sorted; a link drawn by hand carries
  ``by_user`` and its note.
* **text**: wikilinks rewritten to exact paths (code untouched, unresolved targets and links to
  tags as written).  Its secrets were masked before the graph was built
  (:mod:`vaultsync.core.scrub`, the one boundary); one-line values are masked again here, since
  joining lines (``password:`` at one line's end, its value on the next) can make one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Protocol, TypedDict

from vaultsync.core.model import Graph, Kind, Link, Node, Origin, in_zone
from vaultsync.core.notes import first_heading
from vaultsync.core.redact import redact
from vaultsync.links.codespans import fenced_blocks
from vaultsync.links.wikilinks import WikiLink, format_wikilink, rewrite_wikilinks
from vaultsync.render.yamlfm import FieldValue, clean_fields, property_time
from vaultsync.renderers.records import RecordIndex

__all__ = [
    "PRIVATE",
    "LinkItem",
    "NoteContext",
    "RenderInputs",
    "Renderer",
    "Resolver",
    "base_context",
    "leading_h1",
    "link_to",
    "metadata_items",
    "obsidian_tag",
    "prepare_text",
    "relation_property",
    "resolved_targets",
    "target_resolutions",
]

PRIVATE = "\u2039private\u203a"
"""Shown instead of a private profile value: ``private`` in single angle quotation marks."""


class Resolver(Protocol):
    """Names a note for a ``[[target]]`` written in a note (``graph.resolve.Resolver``)."""

    def resolve_wikilink(self, target: str, source_id: str) -> str | None:
        """The node id ``target`` names when written in ``source_id``, or ``None``."""
        ...


@dataclass(frozen=True, kw_only=True)
class RenderInputs:
    """Everything a renderer reads: the graph, the records, the vault paths, the resolver."""

    graph: Graph
    records: RecordIndex
    paths: Mapping[str, str]
    """Node id → vault path (``Folder/Note.md``); tags have none."""
    resolver: Resolver
    zone: tzinfo = UTC
    """``render.timezone``: every rendered time is written in it."""
    deleted: frozenset[str] = frozenset()
    """The vault paths of the notes the user deleted: the map of content does not list them."""
    memo: dict[object, object] = field(default_factory=dict, compare=False, repr=False)
    """What a renderer derives once per render from the inputs (a context's document index);
    filled on first use, never read before it is derived from these inputs."""

    def link_path(self, node_id: str) -> str | None:
        """The vault path of a note without ``.md`` (what a wikilink names), if it has one."""
        path = self.paths.get(node_id)
        return path[:-3] if path is not None else None


class LinkItem(TypedDict):
    """One entry of a note's ``## Links`` section (or of a list of notes)."""

    rel: str
    """The relation in words: ``in project``, ``links to``."""
    path: str
    """The target's vault path without ``.md``."""
    title: str
    wikilink: str
    """``[[path|title]]``, safe to paste anywhere."""
    by_user: bool
    """Drawn by hand (origin ``user``)."""
    note: str
    """The person's note on a hand-drawn link, one line."""


class NoteContext(TypedDict):
    """The fields every note template gets."""

    node_id: str
    kind: str
    title: str
    """One line; the ``# heading``."""
    path: str
    front_matter: tuple[tuple[str, FieldValue], ...]
    """The properties in order, as ``(key, value)`` pairs; what ``m.front_matter`` writes."""
    properties: dict[str, FieldValue]
    """The same properties by key: ``properties.confidence``, ``properties.created``."""
    links: list[LinkItem]
    """The note's outgoing links, sorted; what ``m.links`` writes under ``## Links``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Renderer:
    """How one kind becomes a note: its template, its context, and the texts it rewrites."""

    template: str
    context: Callable[[Node, RenderInputs], Mapping[str, object]]
    texts: Callable[[Node, RenderInputs], Iterable[str]] = lambda node, inputs: ()
    """The short texts whose wikilinks the note rewrites (their targets enter the note's key);
    documents leave it empty: their graph links already say where their wikilinks go."""


# ---------------------------------------------------------------------------------------------
# Small text helpers

_NEWLINES = re.compile(r"\r\n?")
_BACKTICKS = re.compile(r"`+")
_FENCE_OPEN = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
# The target part of a wikilink, as vaultsync.links.wikilinks reads it: no "[[" inside, a single "]"
# allowed, up to the label's "|" or the fragment's "#".
_WIKILINK_TARGET = re.compile(r"\[\[((?:[^\[\]\n|#]|\[(?!\[)|\](?!\]))*)")


_BREAKS = re.compile("[\r\n\t\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with every line break and tab turned into a space, trimmed."""
    if _BREAKS.search(text):
        return " ".join(text.split())
    return text.strip()


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR → LF; NUL → U+FFFD (a vault note is text)."""
    if "\r" in text:
        text = _NEWLINES.sub("\n", text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def trim_block(text: str) -> str:
    """Blank lines before and whitespace after a block of text removed (indentation kept)."""
    return _LEADING_BLANK_LINES.sub("", text).rstrip()


# ---------------------------------------------------------------------------------------------
# Tags

_TAG_DROPPED = re.compile(r"[^\w/\-]|_(?=_)", re.UNICODE)


def obsidian_tag(label: str) -> str:
    """An Obsidian-valid tag for ``label``, or ``""`` when nothing of it is usable.

    Lowercase NFC; whitespace → ``-``; characters other than letters, digits (of any script),
    combining marks, ``_``, ``-`` and ``/`` → ``-``; runs of ``-`` and ``/`` collapsed and
    trimmed; an all-digit tag (``1984``, not a tag in Obsidian) gets a leading ``_``.
    """
    text = unicodedata.normalize("NFC", label).lower().strip()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "_-/" or category[0] in "LM" or category == "Nd":
            kept.append(char)
        else:
            kept.append("-")
    tag = re.sub(r"-{2,}", "-", "".join(kept))
    tag = re.sub(r"/{2,}", "/", tag)
    tag = re.sub(r"-?/-?", "/", tag).strip("-/")
    if tag and all(unicodedata.category(c) == "Nd" for c in tag):
        tag = f"_{tag}"
    return tag


def tags_of(node_id: str, inputs: RenderInputs) -> tuple[str, ...]:
    """The note's tags: every tag node it links to, Obsidian-valid, deduplicated, sorted."""
    by_id = inputs.graph.by_id
    found = set()
    for link in inputs.graph.links_from(node_id):
        target = by_id.get(link.target)
        if target is not None and target.kind is Kind.TAG:
            tag = obsidian_tag(target.title or target.id[len("tag:") :])
            if tag:
                found.add(tag)
    return tuple(sorted(found))


# ---------------------------------------------------------------------------------------------
# Links


def _label(title: str) -> str:
    return one_line(title).replace("|", "\u00a6")


def link_to(path_without_md: str, title: str) -> str:
    """``[[path|title]]`` that reads back as written, whatever the title holds.

    A ``|`` in the title becomes ``¦`` and brackets parentheses (Dataview's link grammar takes
    no ``[`` or ``]`` in a label: ``[[Board/x|[doing] y]]`` is no link to it); backticks become
    quotes when they would turn part of the link into code.
    """
    label = _label(title).replace("[", "(").replace("]", ")")
    if not label:
        return format_wikilink(path_without_md)
    try:
        return format_wikilink(path_without_md, label=label)
    except ValueError:
        return format_wikilink(path_without_md, label=label.replace("`", "'"))


def reading_time(moment: datetime | None, zone: tzinfo) -> str:
    """``moment`` as people read it, in ``zone``: ``2026-10-15 08:00`` (``""`` for no time).

    For the body only; properties keep the typed value Dataview reads (``property_time``).
    """
    if moment is None:
        return ""
    shown = in_zone(moment, zone) if moment.tzinfo is not None else moment
    return f"{shown.date().isoformat()} {shown:%H:%M}"


def relation_words(rel: str) -> str:
    """``in_project`` → ``in project``."""
    return " ".join(rel.replace("_", " ").split()) or rel


def note_link(
    node: Node, inputs: RenderInputs, *, rel: str = "", link: Link | None = None
) -> LinkItem | None:
    """A :class:`LinkItem` for ``node``, or ``None`` when it has no file (a tag)."""
    path = inputs.link_path(node.id)
    if path is None:
        return None
    title = one_line(node.title) or node.id
    by_user = link is not None and link.origin is Origin.USER
    return LinkItem(
        rel=relation_words(rel),
        path=path,
        title=title,
        wikilink=link_to(path, title),
        by_user=by_user,
        note=one_line(link.note) if link is not None and by_user else "",
    )


def links_of(node_id: str, inputs: RenderInputs) -> list[LinkItem]:
    """The note's outgoing links (not to tags), sorted by relation, title and path."""
    items = []
    by_id = inputs.graph.by_id
    for link in inputs.graph.links_from(node_id):
        target = by_id.get(link.target)
        if target is None or target.kind is Kind.TAG:
            continue
        item = note_link(target, inputs, rel=link.rel, link=link)
        if item is not None:
            items.append(item)
    items.sort(key=lambda i: (i.get("rel", ""), i["title"].casefold(), i["path"]))
    return items


def relation_property(node_id: str, inputs: RenderInputs, rel: str) -> str | None:
    """``"[[Folder/Note]]"`` for the note ``node_id`` links to by ``rel`` (the first by path).

    A link-typed property: Obsidian draws it in the graph, Dataview reads it as a link.
    """
    paths = sorted(
        path
        for link in inputs.graph.links_from(node_id)
        if link.rel == rel and (path := inputs.link_path(link.target)) is not None
    )
    return format_wikilink(paths[0]) if paths else None


def sorted_notes(node_ids: Iterable[str], inputs: RenderInputs) -> list[LinkItem]:
    """Links to the notes ``node_ids`` that have files, sorted by title then path."""
    items = []
    for node_id in node_ids:
        node = inputs.graph.by_id.get(node_id)
        item = note_link(node, inputs) if node is not None else None
        if item is not None:
            items.append(item)
    items.sort(key=lambda i: (i["title"].casefold(), i["path"]))
    return items


# ---------------------------------------------------------------------------------------------
# Text with wikilinks


def _target_path(link: WikiLink, source_id: str, inputs: RenderInputs) -> str | None:
    return _resolved_path(link.target, source_id, inputs) if link.target else None


def _resolved_path(written: str, source_id: str, inputs: RenderInputs) -> str | None:
    return _note_path(inputs.resolver.resolve_wikilink(written, source_id), inputs)


def _note_path(target: str | None, inputs: RenderInputs) -> str | None:
    """The link path of node ``target`` when it is a note (not a tag, not missing)."""
    if target is None:
        return None
    node = inputs.graph.by_id.get(target)
    if node is None or node.kind is Kind.TAG:
        return None
    return inputs.link_path(target)


def rewrite_links(text: str, source_id: str, inputs: RenderInputs) -> str:
    """``text`` with each resolvable ``[[wikilink]]`` pointing at the exact note path.

    ``#heading``, ``^block``, the label and the table-escaped pipe are kept; a link without a
    label gets what was written as its label (embeds excepted: their label is a size).
    Unresolved targets, links to tags and everything in code stay exactly as written.
    """

    def replace(link: WikiLink) -> str | None:
        path = _target_path(link, source_id, inputs)
        if path is None or path == link.target:
            return None
        label = link.label
        if label is None and not link.embed:
            label = link.target
        try:
            return format_wikilink(
                path,
                heading=link.heading,
                block=link.block,
                label=label,
                embed=link.embed,
                escaped_pipe=link.escaped_pipe,
            )
        except ValueError:
            return None

    return rewrite_wikilinks(text, replace)


def fence_for(text: str, char: str = "`") -> str:
    """A code fence longer than any run of backticks in ``text`` (at least three)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return char * max(3, longest + 1)


def close_open_fence(text: str) -> str:
    """Close a fenced block left open at the end, so what the note adds after it is not code."""
    blocks = fenced_blocks(text)
    if not blocks or blocks[-1][1] != len(text):
        return text
    start, end = blocks[-1]
    lines = text[start:end].rstrip("\n").split("\n")
    opener = _FENCE_OPEN.match(lines[0])
    if opener is None:
        return text
    fence = opener.group(1)
    last = lines[-1].strip().lstrip("> \t")
    if len(lines) > 1 and last and set(last) == {fence[0]} and len(last) >= len(fence):
        return text  # closed exactly at the end of the text
    return f"{text.rstrip(chr(10))}\n{fence}"


def prepare_text(text: str, source_id: str, inputs: RenderInputs) -> str:
    """A note text ready to print: newlines normalized, wikilinks rewritten (already masked)."""
    if not text:
        return ""
    text = trim_block(rewrite_links(normalize_newlines(text), source_id, inputs))
    return close_open_fence(text)


_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*$", re.MULTILINE)
_ATX_MARKS = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)", re.MULTILINE)


def nest_headings(text: str, levels: int) -> str:
    """``text`` with every heading outside fenced code ``levels`` deeper (at most ``######``).

    So a text shown under a ``##`` section keeps the note's one H1; a setext H1 (``===``)
    becomes a setext H2, the deepest that form has.
    """
    fences = fenced_blocks(text)

    def outside(offset: int) -> bool:
        return not any(start <= offset < end for start, end in fences)

    def deeper(match: re.Match[str]) -> str:
        if not outside(match.start()):
            return match[0]
        return match[1] + "#" * min(6, len(match[2]) + levels)

    text = _ATX_MARKS.sub(deeper, text)
    return _SETEXT_H1.sub(lambda m: m[0].replace("=", "-") if outside(m.start()) else m[0], text)


def leading_h1(text: str) -> tuple[str, str] | None:
    """``(heading, rest)`` when ``text`` starts with a level-1 heading (``#`` or ``===``).

    The note then uses the text's own heading as its ``# heading`` (one H1 per note); the
    rest keeps its heading levels.
    """
    heading = first_heading(text, fences=fenced_blocks(text), max_level=1)
    if heading is None or heading.start != 0 or heading.level != 1 or not one_line(heading.text):
        return None
    if text.lstrip(" ").startswith("#"):
        line_end = text.find("\n")
    else:
        underline = _SETEXT_H1.search(text)
        line_end = text.find("\n", underline.start()) if underline else -1
    rest = "" if line_end < 0 else text[line_end + 1 :]
    return one_line(heading.text), trim_block(rest)


def _target_candidates(text: str) -> Iterable[str]:
    """Every target a wikilink of ``text`` may name, a superset of ``parse_wikilinks``'s.

    Cheaper than parsing: code is not masked (a link in code only adds a harmless entry) and
    both readings of a trailing ``^…`` (block or part of the name) are kept.
    """
    for match in _WIKILINK_TARGET.finditer(text):
        raw = match.group(1)
        target = raw[:-1] if raw.endswith("\\") else raw
        yield target.strip()
        head, caret, _ = target.rpartition("^")
        if caret:
            yield head.strip()


def resolved_targets(texts: Iterable[str], source_id: str, inputs: RenderInputs) -> Iterable[str]:
    """For a note's key: each wikilink target of ``texts`` with the path it is rewritten to."""
    for target, _node_id, path in target_resolutions(texts, source_id, inputs):
        yield f"{target}\0{path or ''}"


def target_resolutions(
    texts: Iterable[str], source_id: str, inputs: RenderInputs
) -> Iterable[tuple[str, str | None, str | None]]:
    """Each wikilink target of ``texts`` (sorted), the node it names and the path it gets."""
    targets = {t for text in texts if "[[" in text for t in _target_candidates(text) if t}
    for target in sorted(targets):
        node_id = inputs.resolver.resolve_wikilink(target, source_id)
        yield target, node_id, _note_path(node_id, inputs)


# ---------------------------------------------------------------------------------------------
# The shared context


def aliases_of(node: Node, path: str) -> tuple[str, ...]:
    """The title (when the file name differs from it) and the node's aliases, in order."""
    name = path.rpartition("/")[2]
    stem = name[: -len(".md")] if name.endswith(".md") else name
    seen: set[str] = set()
    aliases = []
    for alias in (node.title, *node.aliases):
        text = one_line(alias)
        if text and text != stem and text not in seen:
            seen.add(text)
            aliases.append(text)
    return tuple(aliases)


def base_context(
    node: Node,
    inputs: RenderInputs,
    fields: Sequence[tuple[str, FieldValue]] = (),
    *,
    own_tags: Iterable[str] = (),
) -> NoteContext:
    """The shared part of every note's context; ``fields`` are the kind's front-matter fields.

    ``own_tags`` are tags the store gives the item itself (a skill's ``tags``), merged into
    the graph's tags so Obsidian lists them with the others.
    """
    path = inputs.paths[node.id]
    tags = set(tags_of(node.id, inputs))
    tags.update(tag for tag in map(obsidian_tag, own_tags) if tag)
    front_matter = clean_fields(
        [
            ("vaultsync_id", node.id),
            ("kind", node.kind.value),
            ("aliases", aliases_of(node, path)),
            ("tags", tuple(sorted(tags))),
            *fields,
        ]
    )
    front_matter = tuple(
        (key, property_time(value, inputs.zone) if isinstance(value, datetime) else value)
        for key, value in front_matter
    )
    return NoteContext(
        node_id=node.id,
        kind=node.kind.value,
        title=rewrite_links(one_line(node.title), node.id, inputs) or node.id,
        path=path,
        front_matter=front_matter,
        properties=dict(front_matter),
        links=links_of(node.id, inputs),
    )


# A metadata value that is one web address: shown as is, so Obsidian makes it clickable.
_WEB_ADDRESS = re.compile(r"https?://[^\s<>`\[\]()]+")


def metadata_items(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """A store's ``metadata`` map ready to list: ``(key, value)`` as Markdown, empty ones out.

    Keys and values are data, not prose: both are code spans (no ``[[…]]`` or ``#tag`` in a
    value can become a link), except a value that is a web address; secrets are masked.
    """
    items = []
    for key, value in pairs:
        text = redact(one_line(value))
        if text and one_line(key):
            shown = text if _WEB_ADDRESS.fullmatch(text) else code_span(text)
            items.append((code_span(key), shown))
    return items


def code_span(text: str) -> str:
    """``text`` as one inline code span (the ``code`` Jinja filter); ``""`` for no text."""
    text = one_line(text)
    if not text:
        return ""
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"

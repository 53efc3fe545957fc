r"""Markdown links between documents: find them and resolve them to document paths; pure.

Contract:

* ``parse_markdown_links(text)`` returns the inline links ``[text](dest "title")`` (also
  ``<dest>``) and the reference definitions ``[label]: dest`` of ``text`` that are outside code,
  in text order.  A definition is counted once, however often ``[label]`` is used; uses are not
  returned.  Images ``![alt](src)`` are skipped: they embed assets, they do not link documents
  (the rare image of a ``.md`` file is not a reading path).  ``[[1]](x.md)`` is a link whose
  text is ``[1]``.  Autolinks ``<https://…>`` are always URLs and are skipped.
* ``classify_destination(dest)`` tells document paths from URLs, ``mailto:``, ``data:``, same-page
  anchors and empty destinations.
* ``DocPathIndex.build(paths)`` indexes the documents of one context once (``O(total path
  length)``); ``resolve_document_link(dest, source, index)`` then costs a handful of dict
  lookups per link.

Resolution (the "Context documents" rules of the spec):

1. Backslash escapes are removed, ``#fragment`` and ``?query`` cut, the rest percent-decoded (in
   that order, so ``%23`` is a literal ``#`` in a file name).
2. A relative path is joined to the source document's folder; ``.`` and ``..`` are normalised and
   a path that climbs above the top of the index is unresolved.  A site-absolute ``/x/y`` is
   looked up from the corpus root (:func:`common_root` of the documents), then by a unique path
   suffix (``/guide/setup`` finds ``handbook/guide/setup.md`` when only one document ends so).
3. For each place, in order: the exact file; the path plus ``.md``, ``.mdx``, ``.markdown`` or
   ``.html`` when it has none of those extensions; for ``x.html`` (VitePress, MkDocs output), the
   source ``x.md``/``.mdx``/``.markdown``; then the folder's index page, ``index.*`` before
   ``README.*`` (either case).  A destination ending in ``/`` names a folder, except that
   ``x.md/`` (with a document extension) still reaches ``x.md``, as MkDocs and GitHub read it.
4. Matching ignores case and Unicode normalisation form (NFC); when several documents differ only
   by case, the one with the exact case wins, otherwise the link is ambiguous (unresolved).
5. Document paths may use ``\`` (contexts scanned on Windows): they are matched as ``/`` and
   returned exactly as given.  Links inside documents use ``/``.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from urllib.parse import unquote

from vaultsync.links.codespans import Span, code_mask, is_in_code

__all__ = [
    "DestKind",
    "DocPathIndex",
    "MdLink",
    "MdLinkKind",
    "classify_destination",
    "common_root",
    "parse_markdown_links",
    "resolve_document_link",
]

DOC_EXTENSIONS = (".md", ".mdx", ".markdown", ".html")
"""Extensions a document link may leave out, in the order they are tried."""
_SOURCE_EXTENSIONS = (".md", ".mdx", ".markdown")
_HTML_EXTENSIONS = (".html", ".htm")
_INDEX_STEMS = ("index", "readme")

# Link text and titles never cross a blank line; link text balances brackets one level deep
# (``[[1]](…)``, ``[![b](i)](u)``).  Atomic groups ``(?>…)`` and possessive ``*+`` keep every
# pattern linear: whitespace runs cannot be split between neighbouring optional parts.
_TEXT_CHAR = r"(?:[^\[\]\\\n]|\\.|\n(?![ \t]*\n))"
_WS = r"(?>[ \t]*+(?:\n[ \t]*+)?)"
_TITLE = (
    r'(?P<title>"(?:[^"\\\n]|\\.|\n(?![ \t]*\n))*+"'
    r"|'(?:[^'\\\n]|\\.|\n(?![ \t]*\n))*+'"
    r"|\((?:[^()\\\n]|\\.|\n(?![ \t]*\n))*+\))"
)
_INLINE = re.compile(
    rf"""
    (?P<bang>!?)
    \[(?P<text>(?:{_TEXT_CHAR}|\[{_TEXT_CHAR}*+\])*+)\]
    \({_WS}
    (?: <(?P<angle>(?:[^<>\\\n]|\\.)*+)>
      | (?P<dest>(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*+\))*+)
    )
    (?:{_WS}{_TITLE})?
    {_WS}\)
    """,
    re.VERBOSE,
)
_DEFINITION = re.compile(
    rf"""
    ^[ ]{{0,3}}\[(?P<text>(?!\^)(?:[^\[\]\\\n]|\\.){{1,999}}+)\]:
    {_WS}
    (?: <(?P<angle>(?:[^<>\\\n]|\\.)*+)> | (?P<dest>[^\s<]\S*+) )
    (?:(?=\s){_WS}{_TITLE})?
    [ \t]*+$
    """,
    re.VERBOSE | re.MULTILINE,
)
_FRAGMENT_OR_QUERY = re.compile(r"[#?]")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


class MdLinkKind(StrEnum):
    """How a Markdown link is written."""

    INLINE = "inline"
    """``[text](dest "title")``."""
    DEFINITION = "definition"
    """``[label]: dest "title"`` (a reference definition)."""


class DestKind(StrEnum):
    """What a link destination points at; only ``PATH`` can be a document link."""

    PATH = "path"
    URL = "url"
    MAILTO = "mailto"
    DATA = "data"
    ANCHOR = "anchor"
    """``#section`` or ``?query`` alone: the same page."""
    EMPTY = "empty"


_SPECIAL_SCHEMES = {"mailto:": DestKind.MAILTO, "data:": DestKind.DATA}


@dataclass(frozen=True, slots=True, kw_only=True)
class MdLink:
    """One inline link or reference definition as written in a text."""

    kind: MdLinkKind
    text: str
    """The link text (``[1]`` for ``[[1]](…)``), or the definition's label."""
    dest: str
    """The destination as written, without ``<…>``; escapes and ``%XX`` still in place."""
    title: str | None = None
    """The title without its quotes or parentheses."""
    start: int
    """Offset of the opening ``[``."""
    end: int
    """Offset just after the closing ``)`` or the end of the definition."""


def _escaped(text: str, offset: int) -> bool:
    """Whether the character at ``offset`` is preceded by an odd number of backslashes."""
    count = 0
    while offset - count > 0 and text[offset - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _title(raw: str | None) -> str | None:
    return None if raw is None else raw[1:-1]


def parse_markdown_links(text: str, *, mask: tuple[Span, ...] | None = None) -> tuple[MdLink, ...]:
    """The inline links and reference definitions of ``text`` outside code, in order.

    Args:
        text: Markdown source.
        mask: ``code_mask(text)`` when the caller already has it.

    Returns:
        The links; images, autolinks and reference *uses* are not included.
    """
    has_inline = "](" in text
    has_definition = "]:" in text
    if not (has_inline or has_definition):
        return ()
    if mask is None:
        mask = code_mask(text)
    links = list(_inline_links(text, mask)) if has_inline else []
    if has_definition:
        links += _definitions(text, mask)
        links.sort(key=lambda link: link.start)
    return tuple(links)


def _inline_links(text: str, mask: tuple[Span, ...]) -> Iterable[MdLink]:
    """``[text](dest "title")`` outside code; images are skipped unless their ``!`` is escaped."""
    for match in _INLINE.finditer(text):
        bang = bool(match["bang"])
        start = match.start() + bang
        if bang and not _escaped(text, match.start()):
            continue
        if (
            _escaped(text, start)
            or is_in_code(mask, start)
            or is_in_code(mask, match.end("text"))
            or is_in_code(mask, match.end() - 1)
        ):
            continue
        yield MdLink(
            kind=MdLinkKind.INLINE,
            text=match["text"],
            dest=_dest(match),
            title=_title(match["title"]),
            start=start,
            end=match.end(),
        )


def _definitions(text: str, mask: tuple[Span, ...]) -> Iterable[MdLink]:
    """``[label]: dest "title"`` outside code, with a label that is not blank."""
    for match in _DEFINITION.finditer(text):
        if not match["text"].strip() or is_in_code(mask, match.start("text")):
            continue
        yield MdLink(
            kind=MdLinkKind.DEFINITION,
            text=match["text"],
            dest=_dest(match),
            title=_title(match["title"]),
            start=match.start("text") - 1,
            end=match.end(),
        )


def _dest(match: re.Match[str]) -> str:
    """The destination as written: inside ``<…>`` when angled."""
    return match["angle"] if match["angle"] is not None else match["dest"]


def classify_destination(dest: str) -> DestKind:
    """What ``dest`` points at: a path, a URL (any ``scheme:`` or ``//host``), an anchor…."""
    dest = dest.strip()
    if not dest:
        return DestKind.EMPTY
    if dest[0] in "#?":
        return DestKind.ANCHOR
    if dest.startswith("//"):
        return DestKind.URL
    scheme = _SCHEME.match(dest)
    if scheme is None or _DRIVE.match(dest):
        return DestKind.PATH
    return _SPECIAL_SCHEMES.get(scheme.group().lower(), DestKind.URL)


def _norm(path: str) -> str:
    """The matching form of a path: ``/`` separators, NFC."""
    path = path.replace("\\", "/")
    return path if path.isascii() else unicodedata.normalize("NFC", path)


def _link_path(dest: str) -> str:
    """The path part of a destination: unescaped, without fragment or query, decoded."""
    dest = dest.strip()
    if "\\" in dest:
        dest = _ESCAPE.sub(r"\1", dest)
    cut = _FRAGMENT_OR_QUERY.search(dest)
    if cut is not None:
        dest = dest[: cut.start()]
    if "%" in dest:
        dest = unquote(dest)
    return _norm(dest)


def common_root(paths: Iterable[str]) -> str:
    r"""The deepest folder that contains every path, ``/``-separated, ``""`` for none.

    ``docs/guide/a.md`` and ``docs\config\b.md`` share ``docs``; a single ``docs/a.md`` gives
    ``docs``.  Used as the root of site-absolute links and of a context's vault layout.
    """
    common: list[str] | None = None
    for path in paths:
        folders = _norm(path).split("/")[:-1]
        if common is None:
            common = folders
            continue
        size = 0
        for mine, theirs in zip(common, folders, strict=False):
            if mine != theirs:
                break
            size += 1
        del common[size:]
        if not common:
            break
    return "/".join(common or ())


def _index_rank(name: str) -> tuple[int, int] | None:
    """The preference of a folder's index page (lower first), or None if ``name`` is not one."""
    stem, dot, extension = name.lower().rpartition(".")
    if not dot or stem not in _INDEX_STEMS or f".{extension}" not in DOC_EXTENSIONS:
        return None
    return _INDEX_STEMS.index(stem), DOC_EXTENSIONS.index(f".{extension}")


def _suffixes(key: str) -> Iterable[str]:
    """``a/b/c``, ``b/c``, ``c``: every tail of ``key`` that starts at a segment."""
    yield key
    position = key.find("/")
    while position != -1:
        yield key[position + 1 :]
        position = key.find("/", position + 1)


def _freeze(table: dict[str, list[str]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({key: tuple(sorted(set(paths))) for key, paths in table.items()})


@dataclass(frozen=True, slots=True)
class DocPathIndex:
    """The documents of one context, indexed for link resolution.  Build with ``build``."""

    root: str
    """The corpus root (:func:`common_root`), ``/``-separated, where ``/x`` links start."""
    files: Mapping[str, tuple[str, ...]]
    """Lower-cased NFC path → the document paths with that key, as given."""
    file_suffixes: Mapping[str, tuple[str, ...]]
    """Lower-cased tail of a path (whole segments) → document paths."""
    folders: Mapping[str, tuple[str, ...]]
    """Lower-cased folder → its preferred index page (per case variant of the folder)."""
    folder_suffixes: Mapping[str, tuple[str, ...]]
    """Lower-cased tail of a folder → index pages."""

    @classmethod
    def build(cls, paths: Iterable[str]) -> DocPathIndex:
        r"""Index ``paths`` (relative document paths, ``/`` or ``\`` separated)."""
        paths = tuple(paths)
        files: dict[str, list[str]] = {}
        file_suffixes: dict[str, list[str]] = {}
        best_index: dict[str, tuple[tuple[int, int], str]] = {}
        for path in paths:
            key = _norm(path).lower()
            files.setdefault(key, []).append(path)
            for tail in _suffixes(key):
                file_suffixes.setdefault(tail, []).append(path)
            folder, _, name = _norm(path).rpartition("/")
            rank = _index_rank(name)
            if rank is not None:
                current = best_index.get(folder)
                if current is None or (rank, path) < current:
                    best_index[folder] = (rank, path)
        folders: dict[str, list[str]] = {}
        folder_suffixes: dict[str, list[str]] = {}
        for folder, (_, path) in best_index.items():
            key = folder.lower()
            folders.setdefault(key, []).append(path)
            if key:
                for tail in _suffixes(key):
                    folder_suffixes.setdefault(tail, []).append(path)
        return cls(
            common_root(paths),
            _freeze(files),
            _freeze(file_suffixes),
            _freeze(folders),
            _freeze(folder_suffixes),
        )


def _candidates(path: str, *, folder_only: bool) -> list[tuple[bool, str]]:
    """The ``(is_folder, key)`` lookups for a normalised path, in order of preference."""
    stem, dot, extension = path.rpartition(".")
    extension = f".{extension.lower()}" if dot and "/" not in extension else ""
    if folder_only or not path:
        # ``x.md/`` is the file, as MkDocs (normpath) and GitHub read it.
        return [(True, path)] + ([(False, path)] if extension in DOC_EXTENSIONS else [])
    found = [(False, path)]
    if extension in _HTML_EXTENSIONS:
        found += [(False, stem + source) for source in _SOURCE_EXTENSIONS]
    elif extension not in DOC_EXTENSIONS:
        found += [(False, path + ext) for ext in DOC_EXTENSIONS]
    found.append((True, path))
    return found


def _pick(hits: tuple[str, ...], wanted: str) -> str | None:
    """The one path of ``hits`` (same key as ``wanted`` but for case), or None if ambiguous."""
    if len(hits) == 1:
        return hits[0]
    exact = [path for path in hits if _norm(path).endswith(wanted)]
    return exact[0] if len(exact) == 1 else None


def _lookup(
    index: DocPathIndex, path: str, *, folder_only: bool, by_suffix: bool
) -> tuple[bool, str | None]:
    """Whether anything matched the normalised ``path``, and the document (None: ambiguous)."""
    for is_folder, wanted in _candidates(path, folder_only=folder_only):
        if is_folder:
            hits = (index.folder_suffixes if by_suffix else index.folders).get(wanted.lower())
            if hits:
                return True, hits[0] if len(hits) == 1 else None
        else:
            hits = (index.file_suffixes if by_suffix else index.files).get(wanted.lower())
            if hits:
                return True, _pick(hits, wanted)
    return False, None


def resolve_document_link(dest: str, source_path: str, index: DocPathIndex) -> str | None:
    """The document that the link ``dest``, written in ``source_path``, reaches.

    Args:
        dest: the destination as written (from :class:`MdLink`).
        source_path: the path of the linking document, as given to the index.
        index: the context's documents.

    Returns:
        The target document's path exactly as given to ``DocPathIndex.build``, or None for a
        link that is not a document link, points nowhere or is ambiguous.
    """
    if classify_destination(dest) is not DestKind.PATH:
        return None
    path = _link_path(dest)
    if not path:
        return None
    folder_only = path.endswith("/")
    if path.startswith("/"):
        relative = posixpath.normpath(path).lstrip("/")
        relative = "" if relative == "." else relative
        place = posixpath.normpath(posixpath.join(index.root, relative)) if index.root else relative
        place = "" if place == "." else place
        matched, found = _lookup(index, place, folder_only=folder_only, by_suffix=False)
        if not matched and relative:
            _, found = _lookup(index, relative, folder_only=folder_only, by_suffix=True)
        return found
    folder = posixpath.dirname(_norm(source_path))
    place = posixpath.normpath(posixpath.join(folder, path))
    if place == ".":
        place = ""
    if place == ".." or place.startswith("../"):
        return None
    return _lookup(index, place, folder_only=folder_only, by_suffix=False)[1]

r"""Vault notes, read one way: the walk, front matter, the ``## Links`` section, the title.

Pure, except :func:`walk_vault` and :class:`NoteReader`, which read the file system and never
write.  One walk, one front-matter reader, one ``## Links`` parser and one first-heading finder:

search, the knowledge model, the graph's documents and the skill extractor read notes here, so
a note means the same to all of them.

**Walk** (:func:`walk_vault`): every regular file of the vault, sorted, and the stat data of
its notes (``*.md``, any case).

* Names starting with ``.`` are never entered or listed (``.obsidian``, ``.trash``, ``.git``,
  ``.vaultsync``, dotfiles).
* **No symlink is ever followed**, to a file or a folder, inside the vault or out of it: the
  vault writer never follows one either, so every consumer sees the files the engine could
  have written, no folder is walked twice and the walk cannot leave the vault.  Folders are
  opened relative to their parent's descriptor with ``O_NOFOLLOW``, so a folder swapped for a
  symlink mid-walk is skipped too.  The vault root itself may be a symlink: the user chose it.
* Names no vault write could produce are skipped: a ``\`` in a name, bytes that are not UTF-8,
  a drive-letter prefix (``C:``) at the root.
* :class:`NoteReader` reads a listed note the same way (descriptors, ``O_NOFOLLOW``, regular
  files only) and returns None for anything else.

**Front matter** (:func:`split_front_matter`, :func:`load_yaml`, :func:`read_front_matter`):

* The block opens with a ``---`` first line (a BOM before it is ignored) and closes with the
  next ``---`` or ``...`` line (trailing blanks allowed; LF or CRLF).  Without a closing line
  there is no front matter and the whole text is body, as in Obsidian.
* YAML is read by **ruamel.yaml, YAML 1.2**, safe loader: ``yes``/``on`` are strings,
  ``priority: 42`` is the integer 42, ``2024-01-02`` a date.  A key written twice keeps its
  first value.
* **Fast path.** ruamel's pure-Python loader takes about a millisecond a block, ten times
  PyYAML's C loader, so the common shapes are read line by line without it: the engine's own
  (:mod:`vaultsync.render.yamlfm`: JSON-compatible double-quoted strings, integers,
  ``true``/``false``, ``[]``, block lists) and the simple ones people write (plain text that
  starts with a letter, ``YYYY-MM-DD`` dates, flow lists of such text or quoted strings, block
  lists at zero or two spaces).  It accepts nothing the loader reads differently (property
  tested against ruamel); anything else (comments, multi-line or single-quoted scalars,
  nesting, anchors, floats) goes to the loader.
* **Key folding** (vault notes, :func:`read_front_matter`): keys are trimmed and case folded,
  and the first spelling wins (``Title`` and ``title`` are one property), because Obsidian
  matches property names without regard to case.  :func:`load_yaml` alone folds nothing: a
  ``SKILL.md`` is ChatCLI's, whose keys are exact.
* **Errors are data**: a :class:`YamlProblem` with the note's 1-based line and column; a block
  that is a list or a scalar is a problem too.  The block is never body text.  Each consumer
  decides whether to skip the note, report the problem or raise, and keeps its own coercion
  of the values.

**``## Links``** (:func:`links_section`): the section the engine closes every note with
(``templates/_macros.j2``), lines like ``- in project → [[Projects/orbital|orbital]]``, maybe
followed by `` · linked by you`` and `` — a note``.  The section is the last ``## Links``
heading outside code, up to the next heading of level 1 or 2; each ``- words → link`` item,
and each item under a ``### words`` heading, gives its **first** link the relation.  The
relation comes back in words and as the graph's slug (``in project`` → ``in_project``, the
inverse of ``renderers.base.relation_words``); links later on the line (in a note) get none.

**Headings** (:func:`first_heading`): ATX (``# Title``, closing ``#``s dropped) and setext
(a paragraph underlined with ``=`` or ``-``), never inside a fenced code block.

The functions that must know where code is take the fenced blocks of the text as an argument
(``vaultsync.links.codespans.fenced_blocks``): the fence rules live in the links stage, above
this one.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import SafeConstructor

__all__ = [
    "Block",
    "FrontMatter",
    "Heading",
    "NoteFile",
    "NoteReader",
    "SectionLink",
    "Span",
    "VaultListing",
    "YamlProblem",
    "first_heading",
    "fold_keys",
    "is_note_path",
    "links_section",
    "listed_note",
    "load_yaml",
    "read_front_matter",
    "relation_slug",
    "split_front_matter",
    "walk_vault",
]

Span = tuple[int, int]
"""A half-open ``[start, end)`` range of offsets (a fenced code block)."""

_EMPTY: Mapping[str, object] = MappingProxyType({})

# ---------------------------------------------------------------------------------------------
# The walk

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_DRIVE = re.compile(r"[A-Za-z]:")
_OPEN_FOLDERS = 32
"""Folder descriptors a :class:`NoteReader` keeps open (the walk is sorted: few are needed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteFile:
    """A note as the walk saw it."""

    path: str
    """Vault-relative, ``/``-separated, exactly as on disk."""
    size: int
    mtime_ns: int
    inode: int


@dataclass(frozen=True, slots=True, kw_only=True)
class VaultListing:
    """Every file of a vault, and its notes with their stat data."""

    files: tuple[str, ...] = ()
    """Every regular file (notes and attachments), sorted."""
    notes: tuple[NoteFile, ...] = ()
    """The files ending ``.md`` (any case), sorted by path."""


def is_note_path(path: str) -> bool:
    """Whether a vault file is a Markdown note (``.md``, any case)."""
    return path[-3:].lower() == ".md"


def _nameable(name: str, *, top: bool) -> bool:
    """Whether a vault write could produce this name (see the module docstring)."""
    if name.startswith(".") or "\\" in name or (top and _DRIVE.match(name)):
        return False
    if name.isascii():
        return True
    try:
        name.encode()
    except UnicodeEncodeError:  # undecodable bytes, kept by os as lone surrogates
        return False
    return True


def listed_note(path: str) -> bool:
    """Whether :func:`walk_vault` lists vault path ``path`` as a note when a file is there."""
    parts = path.split("/")
    return is_note_path(path) and all(
        part and _nameable(part, top=index == 0) for index, part in enumerate(parts)
    )


def _list_folder(fd: int, prefix: str, files: list[str], notes: list[NoteFile]) -> list[str]:
    """Record the files of the folder open at ``fd``; the names of its subfolders."""
    with os.scandir(fd) as listing:
        entries = list(listing)
    folders: list[str] = []
    for entry in entries:
        if not _nameable(entry.name, top=not prefix):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                rel = prefix + entry.name
                files.append(rel)
                if is_note_path(rel):
                    info = entry.stat(follow_symlinks=False)
                    notes.append(
                        NoteFile(
                            path=rel,
                            size=info.st_size,
                            mtime_ns=info.st_mtime_ns,
                            inode=info.st_ino,
                        )
                    )
        except OSError:  # vanished since the listing
            continue
    return folders


def _subfolders(fd: int, prefix: str, files: list[str], notes: list[NoteFile]) -> list[str]:
    """:func:`_list_folder`, or nothing when the folder cannot be listed."""
    try:
        return _list_folder(fd, prefix, files, notes)
    except OSError:  # unreadable: its files are simply not there
        return []


def walk_vault(root: Path) -> VaultListing:
    """Every file and note of the vault at ``root`` (see the module docstring).

    Unreadable folders are skipped; a missing root gives an empty listing.
    """
    files: list[str] = []
    notes: list[NoteFile] = []
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return VaultListing()
    # One descriptor per level of the folder being walked: depth-bounded, never breadth.
    # Each is on the stack before its folder is listed, so ``finally`` closes it whatever
    # happens.
    stack: list[tuple[int, str, list[str]]] = [(top, "", [])]
    try:
        stack[0] = (top, "", _subfolders(top, "", files, notes))
        while stack:
            fd, prefix, pending = stack[-1]
            if not pending:
                os.close(stack.pop()[0])
                continue
            name = pending.pop()
            try:
                child = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:  # gone, unreadable, or now a symlink
                continue
            inner = f"{prefix}{name}/"
            stack.append((child, inner, []))
            stack[-1] = (child, inner, _subfolders(child, inner, files, notes))
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    files.sort()
    notes.sort(key=lambda note: note.path)
    return VaultListing(files=tuple(files), notes=tuple(notes))


class NoteReader:
    """Reads files of one vault by vault path, never through a symlink; a context manager.

    Folder descriptors are kept open between reads (a bounded few), so reading a sorted list
    of notes opens each folder about once.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._folders: dict[str, int] = {}

    def __enter__(self) -> NoteReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every folder descriptor."""
        for fd in self._folders.values():
            os.close(fd)
        self._folders.clear()

    def _folder(self, folder: str) -> int:
        """The descriptor of a vault folder (``""``: the root), opened without following."""
        found = self._folders.get(folder)
        if found is not None:
            return found
        if not folder:
            fd = os.open(self._root, _DIR_FLAGS)
        else:
            parent, _, name = folder.rpartition("/")
            fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=self._folder(parent))
        while len(self._folders) >= _OPEN_FOLDERS:
            oldest = next(key for key in self._folders if key)  # the root stays open
            os.close(self._folders.pop(oldest))
        self._folders[folder] = fd
        return fd

    def read(self, path: str) -> bytes | None:
        """The bytes of the regular file at vault path ``path``, else None (gone, a symlink…)."""
        found = self.read_note(path)
        return None if found is None else found[1]

    def read_note(self, path: str) -> tuple[NoteFile, bytes] | None:
        """:meth:`read`, with the stat data of the very file read (before reading it)."""
        folder, _, name = path.rpartition("/")
        if not name or name.startswith("."):
            return None
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self._folder(folder))
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            chunks = [os.read(fd, info.st_size + 1)]
            while chunks[-1]:  # the file may have grown since the fstat
                chunks.append(os.read(fd, 1 << 16))
        except OSError:
            return None
        finally:
            os.close(fd)
        found = NoteFile(path=path, size=info.st_size, mtime_ns=info.st_mtime_ns, inode=info.st_ino)
        return found, b"".join(chunks)


# ---------------------------------------------------------------------------------------------
# Front matter

_OPEN = re.compile(r"\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class YamlProblem:
    """Why YAML could not be used, and where (1-based, in the note)."""

    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """Where a note's front matter lies."""

    yaml: str
    """The YAML text between the opening and closing lines."""
    yaml_start: int
    """Offset of the YAML text (after the opening line)."""
    first_line: int
    """The 1-based line of the YAML's first line (2)."""
    body_start: int
    """Offset of the body: after the closing line and its line break."""
    body_line: int
    """1-based line number of the body's first line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FrontMatter:
    """A vault note's properties (keys folded) and where its body starts."""

    values: Mapping[str, object] = field(default_factory=lambda: _EMPTY)
    body_start: int = 0
    """Offset of the body (after the block; after a BOM when there is no block)."""
    body_line: int = 1
    problem: YamlProblem | None = None


def split_front_matter(text: str) -> Block | None:
    """Where the front matter of ``text`` lies, or None when it has none."""
    opening = _OPEN.match(text)
    if opening is None:
        return None
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        return None
    end = closing.end()
    body_start = end + 1 if text.startswith("\n", end) else end
    return Block(
        yaml=text[opening.end() : closing.start()],
        yaml_start=opening.end(),
        first_line=2,
        body_start=body_start,
        body_line=text.count("\n", 0, body_start) + 1,
    )


@cache
def _text_scalars() -> type[SafeConstructor]:
    """A constructor reading every non-null scalar as its text (as yaml.v3 fills a Go string)."""
    from ruamel.yaml.constructor import SafeConstructor  # noqa: PLC0415 - see _loader

    class TextScalars(SafeConstructor):
        pass

    for tag in ("bool", "int", "float", "timestamp"):
        TextScalars.add_constructor(f"tag:yaml.org,2002:{tag}", SafeConstructor.construct_yaml_str)
    return TextScalars


_LOADERS = threading.local()
"""One ruamel loader per thread and flavour: building one costs about a tenth of a load."""


def _loader(*, text_scalars: bool, unique_keys: bool) -> YAML:
    key = f"yaml_{int(text_scalars)}{int(unique_keys)}"
    found: YAML | None = getattr(_LOADERS, key, None)
    if found is None:
        # Imported on first use: ruamel takes ~30 ms to import, and the fast path, a warm
        # cache or a no-op index update never needs it.
        from ruamel.yaml import YAML  # noqa: PLC0415

        found = YAML(typ="safe", pure=True)
        found.allow_duplicate_keys = not unique_keys
        if text_scalars:
            found.Constructor = _text_scalars()
        setattr(_LOADERS, key, found)
    return found


def load_yaml(
    text: str, *, first_line: int = 1, text_scalars: bool = False, unique_keys: bool = False
) -> tuple[object, YamlProblem | None]:
    """``text`` read as YAML 1.2 (ruamel, safe), or None and where it fails.

    Args:
        text: the YAML (a front-matter block).
        first_line: the note's line number of the text's first line, for problems.
        text_scalars: read every non-null scalar as its text (``1.10`` stays ``"1.10"``).
        unique_keys: a key written twice is an error (else its first value is kept).
    """
    from ruamel.yaml.error import MarkedYAMLError, YAMLError  # noqa: PLC0415 - see _loader

    try:
        return _loader(text_scalars=text_scalars, unique_keys=unique_keys).load(text), None
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, column = (mark.line + first_line, mark.column + 1) if mark else (first_line, 1)
        message = err.problem or err.context or type(err).__name__
        return None, YamlProblem(line=line, column=column, message=str(message))
    except (YAMLError, ValueError, TypeError, OverflowError, RecursionError) as err:
        # ruamel builds dates and numbers with Python's constructors, which raise plainly.
        return None, YamlProblem(line=first_line, column=1, message=str(err) or type(err).__name__)


def _fold_key(key: object) -> str:
    return "null" if key is None else str(key).strip().casefold()


def fold_keys(values: Mapping[Any, object]) -> Mapping[str, object]:
    """Keys trimmed and case folded, the first spelling kept (see the module docstring)."""
    folded: dict[str, object] = {}
    for key, value in values.items():
        folded.setdefault(_fold_key(key), value)
    return MappingProxyType(folded)


_QUICK_LINE = re.compile(
    r"(?:(?P<key>[A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+(?P<value>.*))?|(?P<indent>(?:  )?)- (?P<item>.*))"
)
_QUICK_INT = re.compile(r"0|-?[1-9][0-9]{0,17}")
_QUICK_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_FLOW_ITEM = re.compile(r'[ ]*("(?:[^"\\]|\\.)*"|[^,\[\]{}"#:]+?)[ ]*(?:,|\Z)')
# Characters YAML refuses raw or reads as line breaks (NEL, LS, PS) where JSON keeps them.
# Spelled as the forbidden ranges: the negated class of the allowed ones takes 5 ms to compile.
_NOT_QUICK = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")
_RESOLVED = frozenset(["true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL"])
"""The plain words starting with a letter that YAML 1.2 reads as booleans or null."""
_NOT_QUICK_VALUE = object()


def _quoted(raw: str) -> str | None:
    """A double-quoted scalar read as JSON reads it; None when YAML might read it otherwise."""
    if "\\" not in raw:
        inner = raw[1:-1]
        return inner if len(raw) > 1 and raw[-1] == '"' and '"' not in inner else None
    if "\\u" in raw:  # JSON joins surrogate pairs, YAML does not
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _plain(raw: str) -> str | None:
    """A plain scalar YAML reads as this very string, else None.

    Only text that starts with a letter, holds no tab, no ``: `` and no `` #``, and is not one
    of the words YAML resolves (``true``, ``null``…): nothing else starting with a letter is
    resolved to another type in YAML 1.2.
    """
    if not raw[:1].isalpha() or raw in _RESOLVED or raw.endswith(":"):
        return None
    if "\t" in raw or ": " in raw or " #" in raw:
        return None
    return raw


def _flow_list(raw: str) -> list[object] | None:
    """``[a, "b"]`` of plain or double-quoted strings, else None."""
    inner = raw[1:-1]
    if not inner.strip():
        return []
    items: list[object] = []
    position = 0
    while position < len(inner):
        match = _FLOW_ITEM.match(inner, position)
        if match is None:
            return None
        token = match[1]
        item = _quoted(token) if token.startswith('"') else _plain(token)
        if item is None:
            return None
        items.append(item)
        position = match.end()
    return items if not inner.rstrip(" ").endswith(",") else None


def _quick_value(raw: str) -> object:
    """A one-line value of the fast path, or ``_NOT_QUICK_VALUE``."""
    raw = raw.rstrip(" ")
    found: object = None
    if raw.startswith('"'):
        found = _quoted(raw)
    elif raw.startswith("[") and raw.endswith("]"):
        found = _flow_list(raw)
    elif raw in ("true", "false"):
        found = raw == "true"
    elif _QUICK_INT.fullmatch(raw):
        found = int(raw)
    elif _QUICK_DATE.fullmatch(raw):
        try:
            found = date.fromisoformat(raw)
        except ValueError:  # the loader words the problem
            found = None
    else:
        found = _plain(raw)
    return _NOT_QUICK_VALUE if found is None else found


def _quick_item(match: re.Match[str], listed: list[object] | None, indent: str | None) -> bool:
    """Append a block list item to ``listed``; False when the fast path cannot read it."""
    if listed is None or (indent is not None and match["indent"] != indent):
        return False
    item = _quick_value(match["item"])
    if item is _NOT_QUICK_VALUE or isinstance(item, list):
        return False
    listed.append(item)
    return True


def _quick(block: str) -> dict[str, object] | None:
    """The mapping of a block of the simple shapes (see the module docstring), else None."""
    if _NOT_QUICK.search(block):
        return None
    values: dict[str, object] = {}
    listed: list[object] | None = None
    indent: str | None = None  # of the current block list's items
    block_lists: list[str] = []
    for line in block.split("\n"):
        match = _QUICK_LINE.fullmatch(line)
        if match is None:
            if line:
                return None
        elif match["item"] is not None:
            if not _quick_item(match, listed, indent):
                return None
            indent = match["indent"]
        elif match["key"] in values or match["key"] in _RESOLVED:
            return None
        elif match["value"] is None:
            values[match["key"]] = listed = []
            indent = None
            block_lists.append(match["key"])
        else:
            listed = indent = None
            values[match["key"]] = value = _quick_value(match["value"])
            if value is _NOT_QUICK_VALUE:
                return None
    for key in block_lists:
        if not values[key]:
            values[key] = None  # ``key:`` with nothing under it is null in YAML
    return values


_KINDS = {"list": "a list", "str": "a string", "int": "a number", "float": "a number"}


def read_front_matter(text: str) -> FrontMatter:
    """The properties of a vault note (keys folded) and where its body starts.

    Args:
        text: the whole note (LF or CRLF line endings).

    Returns:
        Empty values, and a problem, when the block is there but not a usable mapping.
    """
    block = split_front_matter(text)
    if block is None:
        return FrontMatter(body_start=1 if text.startswith("\ufeff") else 0)
    values, problem = _block_values(block)
    return FrontMatter(
        values=values,
        body_start=block.body_start,
        body_line=block.body_line,
        problem=problem,
    )


def _block_values(block: Block) -> tuple[Mapping[str, object], YamlProblem | None]:
    """The folded mapping of a front-matter block, or none and why."""
    loaded: object = _quick(block.yaml) if "\r" not in block.yaml else None
    if loaded is None:
        if not block.yaml.strip():
            return _EMPTY, None
        loaded, problem = load_yaml(block.yaml, first_line=block.first_line)
        if problem is not None:
            return _EMPTY, problem
    if loaded is None:
        return _EMPTY, None
    if not isinstance(loaded, dict):
        kind = _KINDS.get(type(loaded).__name__, f"a {type(loaded).__name__}")
        message = f"{kind}, not a mapping of properties"
        return _EMPTY, YamlProblem(line=block.first_line, column=1, message=message)
    return fold_keys(loaded), None


# ---------------------------------------------------------------------------------------------
# Headings

_CANDIDATE = re.compile(r"^[ ]{0,3}(?:#{1,6}(?:[ \t]|\r?$)|(?:=+|-+)[ \t]*\r?$)", re.MULTILINE)
_ATX = re.compile(r"[ ]{0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*\r?")
# Lines that end a paragraph above a setext underline: a blank line, a list item, a quote, a
# table row, HTML, a fence, an ATX heading, an underline or thematic break.
_STOPS = re.compile(r"[ \t]*\r?$|[ ]{0,3}(?:[-*+>|#<=_]|\d{1,9}[.)][ \t]|```|~~~)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Heading:
    """A heading of a Markdown text."""

    level: int
    text: str
    """Trimmed, closing ``#``s removed; a setext heading's lines joined with spaces."""
    start: int
    """Offset of the heading's first line."""


def _in_spans(spans: Sequence[Span], offset: int) -> bool:
    index = bisect_right(spans, (offset, 1 << 62)) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


def _setext_text(body: str, underline: int) -> tuple[str, int] | None:
    """The paragraph above the underline starting at ``underline``, and its offset."""
    lines: list[str] = []
    end = underline - 1
    while end > 0:
        start = body.rfind("\n", 0, end) + 1
        line = body[start:end]
        if _STOPS.match(line):
            break
        lines.append(line.strip())
        end = start - 1
        if start == 0:
            break
    if not lines or body.startswith(("    ", "\t"), end + 1):
        return None  # no paragraph, or one that is indented code
    return " ".join(reversed(lines)), end + 1


def first_heading(body: str, *, fences: Sequence[Span], max_level: int = 6) -> Heading | None:
    """The first heading of ``body`` of level ``max_level`` or less, outside fenced code.

    Args:
        body: Markdown text without its front matter.
        fences: the fenced code blocks of ``body``, sorted
            (``vaultsync.links.codespans.fenced_blocks``).
        max_level: the deepest level that counts (1: only ``#`` and ``===`` headings).
    """
    for candidate in _CANDIDATE.finditer(body):
        offset = candidate.start()
        if fences and _in_spans(fences, offset):
            continue
        line_end = body.find("\n", offset)
        line = body[offset : len(body) if line_end < 0 else line_end]
        atx = _ATX.fullmatch(line)
        if atx is not None:
            text = (atx["text"] or "").strip()
            if text and len(atx["marks"]) <= max_level:
                return Heading(level=len(atx["marks"]), text=text, start=offset)
            continue
        level = 1 if "=" in line else 2
        setext = _setext_text(body, offset) if level <= max_level and offset else None
        if setext is not None:
            return Heading(level=level, text=setext[0], start=setext[1])
    return None


# ---------------------------------------------------------------------------------------------
# The engine's ``## Links`` section

_SECTION = re.compile(r"^##[ \t]+Links(?:[ \t]+#+)?[ \t]*\r?$", re.MULTILINE)
_NEXT_SECTION = re.compile(r"^#{1,2}(?:[ \t]|\r?$)", re.MULTILINE)
_MARKER = r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+"
_ARROW_ITEM = re.compile(_MARKER + r"(?P<words>[^\n→\[]*?)[ \t]*→[ \t]*")
_ARROW_LINE = re.compile("^" + _MARKER + r"(?P<words>[^\n→\[]*?)[ \t]*→[ \t]*", re.MULTILINE)
_ITEM = re.compile(_MARKER)
_SUB_HEADING = re.compile(r"###[ \t]+(?P<words>[^\n]*?)(?:[ \t]+#+)?[ \t]*")
_TAIL = re.compile(r"(?P<by>[ \t]*·[ \t]*linked by you)?(?:[ \t]+—[ \t]+(?P<note>.*?))?[ \t]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class SectionLink:
    """One link of the engine's ``## Links`` section and the relation it is given."""

    words: str
    """The relation as rendered (``in project``)."""
    rel: str
    """The graph's relation slug (``in_project``)."""
    start: int
    """Offset (in the body) of the link that gets the relation: ``[[``, ``![[`` or ``[``."""
    link: str
    """The wikilink as written (``[[Projects/orbital|orbital]]``), or ``""`` for another form."""
    line_start: int
    """Offset of the item's text, after its list marker."""
    line_end: int
    """Offset of the end of its line."""
    by_user: bool
    """The line says `` · linked by you``."""
    note: str
    """The person's note after `` — ``, or ``""``."""


def relation_slug(words: str) -> str:
    """The graph relation a rendered relation names: ``in project`` → ``in_project``."""
    return "_".join(words.split())


def _section_bounds(body: str, fences: Sequence[Span]) -> Span | None:
    """The text of the last ``## Links`` section outside fenced code, heading excluded."""
    heading = None
    last = body.rfind("\n## Links")
    if last >= 0 and not fences:  # the engine's shape: the heading is found from the end
        heading = _SECTION.match(body, last + 1)
    if heading is None:
        for match in _SECTION.finditer(body):
            if not _in_spans(fences, match.start()):
                heading = match
    if heading is None:
        return None
    for following in _NEXT_SECTION.finditer(body, heading.end()):
        if not _in_spans(fences, following.start()):
            return heading.end(), following.start()
    return heading.end(), len(body)


def _section_link(body: str, words: str, line_start: int, start: int, end: int) -> SectionLink:
    link = ""
    if body.startswith(("[[", "![["), start):
        close = body.find("]]", start, end)
        link = body[start : close + 2] if close >= 0 else ""
    after = start + len(link)
    tail = _TAIL.fullmatch(body, after, end) if link and after < end else None
    return SectionLink(
        words=words,
        rel=relation_slug(words),
        start=start,
        link=link,
        line_start=line_start,
        line_end=end,
        by_user=bool(tail and tail["by"]),
        note=(tail["note"] or "") if tail else "",
    )


def _section_line(body: str, start: int, end: int, group: str) -> tuple[SectionLink | None, str]:
    """The typed link of one line of the section (if any), and the ``### words`` group after it."""
    arrow = _ARROW_ITEM.match(body, start, end)
    if arrow is not None:
        words = arrow["words"].strip()
        link = _section_link(body, words, arrow.start("words"), arrow.end(), end) if words else None
        return link, group
    sub = _SUB_HEADING.fullmatch(body, start, end)
    if sub is not None:
        return None, sub["words"].strip()
    item = _ITEM.match(body, start, end) if group else None
    if item is not None:
        return _section_link(body, group, item.end(), item.end(), end), group
    return None, group


def _arrow_lines(body: str, start: int, end: int) -> list[SectionLink]:
    """The typed links of a section of ``- words → link`` lines only (no fence, no ``###``)."""
    found: list[SectionLink] = []
    for arrow in _ARROW_LINE.finditer(body, start, end):
        words = arrow["words"].strip()
        if words:
            line_end = body.find("\n", arrow.end(), end)
            line_end = end if line_end < 0 else line_end
            if body.startswith("\r", line_end - 1):
                line_end -= 1
            found.append(_section_link(body, words, arrow.start("words"), arrow.end(), line_end))
    return found


def links_section(body: str, *, fences: Sequence[Span]) -> tuple[SectionLink, ...]:
    """The typed links of the engine's ``## Links`` section (see the module docstring).

    Args:
        body: the note's text after its front matter.
        fences: the fenced code blocks of ``body``, sorted.
    """
    if "## Links" not in body:
        return ()
    bounds = _section_bounds(body, fences)
    if bounds is None:
        return ()
    position, end = bounds
    if "###" not in body[position:end] and not (fences and fences[-1][1] > position):
        return tuple(_arrow_lines(body, position, end))  # the engine's own shape: one scan
    found: list[SectionLink] = []
    group = ""  # the relation of a ``### words`` heading, for the items under it
    while position < end:
        line_end = body.find("\n", position, end)
        line_end = end if line_end < 0 else line_end
        if not (fences and _in_spans(fences, position)):
            text_end = line_end - 1 if body.startswith("\r", line_end - 1) else line_end
            link, group = _section_line(body, position, text_end, group)
            if link is not None:
                found.append(link)
        position = line_end + 1
    return tuple(found)

r"""Inline fields ``key:: value`` (Dataview's syntax, without Dataview); pure, no I/O.

Contract: ``parse_inline_fields(text)`` returns every inline field of a note body, in text order,
with the offsets of its value so that a caller can tell which links sit inside which field.  It
never raises.  The caller passes the body only: the front matter block is not part of ``text``.

Two forms, as in ZettelFlow's parser, with its gaps closed:

* **Bracketed**: ``[key:: value]`` or ``(key:: value)``, anywhere in a line, several per line.
  The brackets must pair.  A value may hold wikilinks (``[supports:: [[X]]]`` gives the value
  ``[[X]]``; the peer's parser cut it at the first ``]``), Markdown links and one level of
  balanced brackets or parentheses.
* **Whole line**: ``key:: value`` as the whole line, after optional ``>`` quote markers, a list
  marker (``-``, ``*``, ``+``, ``1.``, ``1)``) and a task box (``[ ]``, ``[x]``…).  Tried only
  on a line without a bracketed field.

Keys start with a letter and hold letters, digits, ``_`` and ``-``; they are matched without
regard to case (``key`` is case folded, ``raw_key`` is as written).  Values are trimmed and
never empty.  The value runs to the end of the line, so ``time:: 10:30`` keeps its colon; a URL
(``https://x``) has no ``::`` after a key and is not a field.  A field whose key lies in fenced
or inline code is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultsync.links.codespans import code_mask, is_in_code

__all__ = ["InlineField", "parse_inline_fields"]

_KEY = r"[^\W\d_][\w-]*"
_WIKILINK = r"!?\[\[(?:[^\[\]\n]|\](?!\]))*\]\]"
_NESTED_SQUARE = r"\[[^\[\]\n]*\]"
_NESTED_ROUND = r"\([^()\n]*\)"
_SQUARE = re.compile(
    rf"(?<![\[\w])\[[ \t]*(?P<key>{_KEY})[ \t]*::(?P<value>(?:{_WIKILINK}|{_NESTED_SQUARE}"
    rf"|{_NESTED_ROUND}|[^\[\]\n])+?)\](?!\])"
)
_ROUND = re.compile(
    rf"(?<![\w\]])\([ \t]*(?P<key>{_KEY})[ \t]*::(?P<value>(?:{_WIKILINK}|{_NESTED_SQUARE}"
    rf"|{_NESTED_ROUND}|[^()\[\]\n])+?)\)"
)
_FULL_LINE = re.compile(
    r"[ \t]*(?:>[ \t]?)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?:\[.\][ \t]+)?"
    rf"(?P<key>{_KEY})[ \t]*::(?P<value>[^\n]*)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class InlineField:
    """One ``key:: value`` of a note body."""

    key: str
    """The key, case folded (``Supports`` → ``supports``)."""
    raw_key: str
    """The key as written."""
    value: str
    """The value, trimmed, never empty."""
    start: int
    """Offset of the trimmed value's first character in the body."""
    end: int
    """Offset just after the trimmed value."""
    line: int
    """1-based line of the field within the body."""
    bracketed: bool = False


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " \t":
        start += 1
    while end > start and text[end - 1] in " \t":
        end -= 1
    return start, end


def _line_fields(text: str, line_start: int, line_end: int, line: int) -> list[InlineField]:
    """The fields of one line, before the code check."""
    found: list[InlineField] = []
    for pattern in (_SQUARE, _ROUND):
        for match in pattern.finditer(text, line_start, line_end):
            start, end = _trimmed(text, match.start("value"), match.end("value"))
            if start < end:
                found.append(
                    InlineField(
                        key=match["key"].casefold(),
                        raw_key=match["key"],
                        value=text[start:end],
                        start=start,
                        end=end,
                        line=line,
                        bracketed=True,
                    )
                )
    if found:
        found.sort(key=lambda field: field.start)
        return found
    whole = _FULL_LINE.match(text, line_start, line_end)
    if whole is None or whole.end() != line_end:
        return found
    start, end = _trimmed(text, whole.start("value"), whole.end("value"))
    if start < end:
        found.append(
            InlineField(
                key=whole["key"].casefold(),
                raw_key=whole["key"],
                value=text[start:end],
                start=start,
                end=end,
                line=line,
            )
        )
    return found


def parse_inline_fields(text: str) -> tuple[InlineField, ...]:
    """Every inline field of a note body outside code, in text order.

    Args:
        text: the body of a note (no front matter), LF line endings.

    Returns:
        The fields, each with the body offsets of its trimmed value.
    """
    position = text.find("::")
    if position < 0:
        return ()
    mask = code_mask(text)
    fields: list[InlineField] = []
    line = 1
    counted = 0
    while position >= 0:
        line_start = text.rfind("\n", 0, position) + 1
        line_end = text.find("\n", position)
        if line_end < 0:
            line_end = len(text)
        line += text.count("\n", counted, line_start)
        counted = line_start
        for field in _line_fields(text, line_start, line_end, line):
            key_at = text.rfind(field.raw_key, line_start, field.start)
            if not is_in_code(mask, max(key_at, line_start)):
                fields.append(field)
        position = text.find("::", line_end)
    return tuple(fields)

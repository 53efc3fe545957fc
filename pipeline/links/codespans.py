"""Where Markdown text is code, so that link parsers can skip it; pure, no I/O.

Contract: ``code_mask(text)`` returns the sorted, non-overlapping ``(start, end)`` offsets of
every fenced code block and inline code span; ``is_in_code(mask, offset)`` answers in
``O(log n)``.  Nothing here raises on any input.

What counts as code:

* **Fenced blocks** open with a line of three or more backticks or tildes and close with a line
  of the same character, at least as long, and nothing else but whitespace.  A backtick fence's
  info string may not contain a backtick.  An unclosed fence runs to the end of the text.  A
  block covers its fence lines too.  Unlike CommonMark's three-space limit, **any indentation and
  any ``>`` blockquote prefix** is accepted before a fence: without a block parser, a fence
  nested in a list item or an admonition (four or eight spaces in the MkDocs docs) or in a quote
  would otherwise go unseen and its example links would count.
* **Inline code spans** follow CommonMark: a backtick run opens a span that the next run of
  exactly the same length closes; an unmatched run is literal text; a backslash escapes one
  backtick outside code.  A span never crosses a blank line (a paragraph break) or a fence.
* **Indented code blocks are not detected.**  Telling them apart from indented list
  continuations needs a full block parser, and guessing wrong would hide real links in nested
  lists; the rare link written as an example in an indented block is counted instead.
"""

from __future__ import annotations

import re
from bisect import bisect_right

__all__ = ["Span", "code_mask", "fenced_blocks", "is_in_code", "overlaps_code"]

Span = tuple[int, int]
"""A half-open ``[start, end)`` range of offsets into the text."""

_FENCE_LINE = re.compile(
    r"^(?:[ \t]*>)*[ \t]*(?P<fence>`{3,}|~{3,})(?P<rest>[^\n]*)$",
    re.MULTILINE,
)
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*(?=\n)")
_END = 1 << 62  # sorts after every real end offset in bisect keys


def fenced_blocks(text: str) -> tuple[Span, ...]:
    """The fenced code blocks of ``text``, from the start of the opening fence line.

    A closed block ends after its closing fence (before the newline); an unclosed one ends at
    ``len(text)``.  A renderer that must leave fenced code untouched copies these ranges as is.
    """
    if "```" not in text and "~~~" not in text:
        return ()
    blocks: list[Span] = []
    opener: re.Match[str] | None = None
    for line in _FENCE_LINE.finditer(text):
        fence = line["fence"]
        if opener is None:
            if fence[0] == "`" and "`" in line["rest"]:
                continue  # ``` followed by more backticks is inline code, not a fence
            opener = line
        elif (
            fence[0] == opener["fence"][0]
            and len(fence) >= len(opener["fence"])
            and not line["rest"].strip()
        ):
            blocks.append((opener.start(), line.end()))
            opener = None
    if opener is not None:
        blocks.append((opener.start(), len(text)))
    return tuple(blocks)


def _inline_spans(text: str, start: int, end: int, out: list[Span]) -> None:
    """Append the inline code spans of ``text[start:end]`` (no fences in between)."""
    runs: list[Span] = []
    for match in _BACKTICKS.finditer(text, start, end):
        run_start, run_end = match.span()
        escapes = 0
        while run_start - escapes - 1 >= start and text[run_start - escapes - 1] == "\\":
            escapes += 1
        if escapes % 2:
            run_start += 1  # the first backtick is escaped: literal, and cannot open a span
            if run_start == run_end:
                continue
        runs.append((run_start, run_end))
    if len(runs) < 2:
        return
    breaks = [m.start() for m in _BLANK_LINE.finditer(text, start, end)]
    by_length: dict[int, list[int]] = {}
    for index, (run_start, run_end) in enumerate(runs):
        by_length.setdefault(run_end - run_start, []).append(index)
    index = 0
    while index < len(runs):
        run_start, run_end = runs[index]
        same = by_length[run_end - run_start]
        position = bisect_right(same, index)
        if position < len(same):
            close_start, close_end = runs[same[position]]
            crossing = bisect_right(breaks, run_start)
            if crossing == len(breaks) or breaks[crossing] >= close_start:
                out.append((run_start, close_end))
                index = same[position] + 1
                continue
        index += 1


def code_mask(text: str) -> tuple[Span, ...]:
    """Every code region of ``text``: fenced blocks and inline code spans, sorted.

    Args:
        text: Markdown source.

    Returns:
        Sorted, non-overlapping half-open ``(start, end)`` offsets.
    """
    if "`" not in text and "~~~" not in text:
        return ()
    spans: list[Span] = []
    cursor = 0
    for block_start, block_end in fenced_blocks(text):
        _inline_spans(text, cursor, block_start, spans)
        spans.append((block_start, block_end))
        cursor = block_end
    _inline_spans(text, cursor, len(text), spans)
    return tuple(spans)


def is_in_code(mask: tuple[Span, ...], offset: int) -> bool:
    """Whether ``offset`` lies inside one of the spans of ``mask`` (from ``code_mask``)."""
    index = bisect_right(mask, (offset, _END)) - 1
    return index >= 0 and mask[index][0] <= offset < mask[index][1]


def overlaps_code(mask: tuple[Span, ...], start: int, end: int) -> bool:
    """Whether the range ``[start, end)`` shares any offset with a span of ``mask``."""
    if not mask:
        return False
    index = bisect_right(mask, (start, _END)) - 1
    if index >= 0 and mask[index][1] > start:
        return True
    return index + 1 < len(mask) and mask[index + 1][0] < end

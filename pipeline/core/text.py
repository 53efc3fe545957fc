"""Small text helpers shared by the stages: shortening, first lines, counted nouns; pure."""

from __future__ import annotations


def shorten(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` characters at a word boundary, ending the cut in ``…``."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else head
    return (cut or head).rstrip() + "…"


def plural(count: int, word: str) -> str:
    """``1 note``, ``2 notes``: a count with its noun (every noun here takes an ``s``)."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def first_line(text: str) -> str:
    """The first non-blank line, stripped; ``""`` for blank text."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped
    return ""

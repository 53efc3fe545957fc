"""A note's body + the searched words → about 120 characters around the hits, marked; pure.

Contract: ``cut_snippet(body, words)`` returns one line of the body: the window that holds the
most distinct searched words (then the most hits, then the earliest), cut at spaces, each hit
written ``**hit**``, ``…`` where text was left out.  A body without a hit (the note matched
by its title, path or tags) gives its beginning.

Matching follows the index's tokenizer (``unicode61 remove_diacritics 2``): words are runs of
letters and digits, compared without case and accents (``creme`` marks ``Crème``); a prefix
word (``comm*``) marks the whole word it starts.  A note hybrid search found by a word's stem
only (``restarting`` for ``restarts``) has no mark, and shows its beginning.  The body is
folded character by character so offsets stay those of the original text.

Why not FTS5's ``snippet()``: it walks the whole list of notes holding a word, so each snippet
of a common word costs milliseconds; here the cost is one pass over the few bodies shown.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["HIT_END", "HIT_START", "WINDOW", "cut_snippet"]

HIT_START = "**"
HIT_END = "**"
WINDOW = 120
"""Characters of the body a snippet shows around its hits (about 16 words)."""
LEAD = 30
"""Characters kept before the first hit of the window."""
_MAX_HITS = 200  # the best window among the first 200 hits is good enough
_SPACE = re.compile(r"\s+")
_BREAK = re.compile(r"[\s/|\[\](){}.,;:]+")
_WORD_CHAR = r"[^\W_]"


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """One character without accent and case, always one character (else itself)."""
    base = unicodedata.normalize("NFKD", char)[:1].lower()[:1]
    return base if base else char


def fold(text: str) -> str:
    """``text`` without accents and case, of the same length (offsets carry over)."""
    if text.isascii():
        return text.lower()
    table = {ord(c): _fold_char(c) for c in set(text) if not c.isascii()}
    folded = text.translate(table).lower()
    return folded if len(folded) == len(text) else "".join(map(_fold_char, text))


def _pattern(words: Iterable[tuple[str, bool]]) -> re.Pattern[str] | None:
    alternatives = sorted(
        {
            re.escape(fold(word)) + (f"{_WORD_CHAR}*" if prefix else f"(?!{_WORD_CHAR})")
            for word, prefix in words
            if word
        },
        key=lambda alt: (-len(alt), alt),
    )
    if not alternatives:
        return None
    return re.compile(f"(?<!{_WORD_CHAR})(?:{'|'.join(alternatives)})")


def _best_window(hits: list[tuple[int, int, str]]) -> int:
    """Index of the hit that starts the best window (see the module docstring)."""
    best, best_key = 0, (0, 0)
    end = 0
    for start in range(len(hits)):
        end = max(end, start)
        while end < len(hits) and hits[end][0] < hits[start][0] + WINDOW - LEAD:
            end += 1
        inside = hits[start:end]
        key = (len({hit[2] for hit in inside}), len(inside))
        if key > best_key:
            best, best_key = start, key
    return best


def _clip(body: str, lo: int, hi: int) -> tuple[int, int]:
    """Move ``lo`` forward and ``hi`` back to a space or punctuation, so no word is cut."""
    if lo > 0 and (found := _BREAK.search(body, lo, lo + 30)) is not None:
        lo = found.end()
    if hi < len(body):
        cut = max((m.start() for m in _BREAK.finditer(body, max(lo, hi - 30), hi)), default=-1)
        hi = cut if cut > lo else hi
    return lo, hi


def cut_snippet(body: str, words: Iterable[tuple[str, bool]]) -> str:
    """The snippet of ``body`` for the searched ``(word, is_prefix)`` pairs."""
    text = _SPACE.sub(" ", body).strip()
    pattern = _pattern(words)
    hits: list[tuple[int, int, str]] = []
    if pattern is not None:
        for match in pattern.finditer(fold(text)):
            hits.append((match.start(), match.end(), match.group()))
            if len(hits) >= _MAX_HITS:
                break
    lo = max(0, hits[_best_window(hits)][0] - LEAD) if hits else 0
    lo, hi = _clip(text, lo, min(len(text), lo + WINDOW))
    pieces: list[str] = []
    cursor = lo
    for start, end, _ in hits:
        if start < lo or end > hi:
            continue
        pieces += [text[cursor:start], HIT_START, text[start:end], HIT_END]
        cursor = end
    pieces.append(text[cursor:hi])
    return ("…" if lo > 0 else "") + "".join(pieces).strip() + ("…" if hi < len(text) else "")

r"""Titles and names → portable file and folder names for the vault; pure.

Contract:

* ``safe_component(text)`` turns any text into one path component (a folder name or a file
  stem) that every platform, git and Obsidian's link syntax accept, or ``""`` when nothing of
  it survives.  ``note_filename(stem, tail=…, extension=…, fallback=…)`` builds a whole file
  name that is never empty and whose ``tail`` (a short id such as `` (ab12cd34)``) and
  extension survive the length bound.
* Both are **stable**: feeding an output back in returns it unchanged, so a name never drifts
  from one sync to the next.

Rules, in order:

1. NFC (macOS stores names decomposed; comparing and writing NFC keeps one spelling).
2. Whitespace of any kind (tabs, newlines, U+2028…) becomes one space; control characters,
   bidi overrides, the BOM and noncharacters are dropped.
3. What Windows or Obsidian links reject is translated, not deleted, so words stay apart:
   ``[ ]`` and ``< >`` → ``( )``, ``"`` and a backtick → ``'`` (a pair of backticks would
   make part of a link inline code), and ``\ / : * ? | # ^`` → ``-``; a run of
   ``%`` becomes one ``%`` (``%%`` opens an Obsidian comment).
4. Leading dots are dropped (Obsidian hides dot files, and ``..`` must never be a component);
   leading and trailing spaces and trailing dots are dropped (Windows drops them silently).
5. pathvalidate (``platform="universal"``) then renames reserved device names (``CON`` →
   ``CON_``) and removes anything still invalid somewhere.
6. The UTF-8 length is bounded (``MAX_NAME_BYTES`` for a whole file name): the stem is cut on a
   character boundary, never inside a combining sequence, and the extension is kept.

Unicode is kept as is: ``Configuração`` and ``日本語のノート`` are valid names on every platform and
in Obsidian, and transliterating them to ASCII would lose meaning and make distinct names
collide (``Café`` and ``Cafe``, or every title in a script without a Latin spelling).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from pathvalidate import sanitize_filename

__all__ = ["MAX_NAME_BYTES", "is_safe_component", "note_filename", "safe_component"]

MAX_NAME_BYTES = 160
"""Upper bound of a file or folder name in UTF-8 bytes; ext4 allows 255, and a vault nests
names several levels deep under Windows' 260-character path limit."""

_WHITESPACE = re.compile(r"[\s\u2028\u2029\x85]+")
# Controls (C0, DEL, C1), bidi overrides and isolates, the BOM, noncharacters and surrogates.
_DROPPED = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff"
    "\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]"
)
_TRANSLATE = str.maketrans(
    {
        "[": "(",
        "]": ")",
        "<": "(",
        ">": ")",
        '"': "'",
        "`": "'",
        "\\": "-",
        "/": "-",
        ":": "-",
        "*": "-",
        "?": "-",
        "|": "-",
        "#": "-",
        "^": "-",
    }
)
_PERCENTS = re.compile(r"%{2,}")
# A name made only of these, not starting with a dot or a space and not ending with a dot or a
# space, passes pathvalidate unchanged unless it is a reserved device name: skip the slow call.
_PLAIN = re.compile(r"[A-Za-z0-9_(][A-Za-z0-9 _.,;()'+=@&$!~%{}-]*(?<![. ])")
# Already clean: plain characters, single spaces, no ``%`` run; most titles, every short id.
_CLEAN = re.compile(r"[A-Za-z0-9_(](?:[A-Za-z0-9_.,;()'+=@&$!~{}-]| (?! ))*(?<![. ])")
_RESERVED = re.compile(
    r"(?:CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³]|CONIN\$|CONOUT\$)(?:\..*)?", re.IGNORECASE
)
_UNLIMITED = 1 << 20


@functools.lru_cache(maxsize=1 << 16)  # folder names and ids repeat across thousands of notes
def _clean(text: str) -> str:
    """Rules 1 to 5 without the length bound."""
    if _CLEAN.fullmatch(text) and not _RESERVED.fullmatch(text):
        return text
    text = unicodedata.normalize("NFC", text)
    text = _WHITESPACE.sub(" ", _DROPPED.sub("", text))
    text = _PERCENTS.sub("%", text.translate(_TRANSLATE))
    text = text.lstrip(". ").rstrip(". ")
    if not text:
        return ""
    if _PLAIN.fullmatch(text) and not _RESERVED.fullmatch(text):
        return text
    text = sanitize_filename(text, platform="universal", replacement_text="-", max_len=_UNLIMITED)
    return text.lstrip(". ").rstrip(". ")


def _truncate(text: str, max_bytes: int) -> str:
    """``text`` cut to ``max_bytes`` UTF-8 bytes on a character boundary, marks kept whole."""
    if max_bytes <= 0:
        return ""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    cut = encoded[:max_bytes].decode("utf-8", errors="ignore")
    # Do not leave a base letter without the combining mark(s) that followed it.
    while cut and len(cut) < len(text) and unicodedata.combining(text[len(cut)]):
        cut = cut[:-1]
    return cut


def safe_component(text: str, *, max_bytes: int = MAX_NAME_BYTES) -> str:
    """One portable path component made from ``text``; ``""`` when nothing valid remains.

    Args:
        text: any title, name or path segment.
        max_bytes: the bound on the result's UTF-8 length.

    Returns:
        A name that is valid on every platform, safe inside ``[[wikilinks]]``, at most
        ``max_bytes`` bytes long, and returned unchanged when given back.
    """
    name = _clean(text)
    # Cutting can expose a trailing dot or space, or shorten a name into a reserved one;
    # clean again until nothing changes (at most a few rounds: each one only removes).
    while True:
        cut = _truncate(name, max_bytes)
        if cut == name:
            return name
        name = _clean(cut)


def is_safe_component(name: str, *, max_bytes: int = MAX_NAME_BYTES) -> bool:
    """Whether ``name`` is already a non-empty portable component (``safe_component`` fixes it)."""
    return bool(name) and safe_component(name, max_bytes=max_bytes) == name


def note_filename(
    stem: str,
    *,
    fallback: str,
    tail: str = "",
    extension: str = ".md",
    max_bytes: int = MAX_NAME_BYTES,
) -> str:
    """``<stem><tail><extension>``, portable, with only the stem shortened to fit.

    Args:
        stem: the readable part (a title, a name); cut first when the name is too long.
        fallback: used instead of ``stem`` when nothing of it survives (e.g. ``"???"``);
            should be made of safe characters, such as a short id.
        tail: kept whole after the stem, e.g. `` (ab12cd34)``; cleaned like a stem.
        extension: kept whole, e.g. ``.md``.
        max_bytes: the bound on the whole name's UTF-8 length.

    Returns:
        A valid, non-empty file name of at most ``max_bytes`` bytes.
    """
    core = _clean(tail)
    tail = f" {core}" if core else ""
    budget = max_bytes - len((tail + extension).encode("utf-8"))
    base = safe_component(stem, max_bytes=budget) or safe_component(fallback, max_bytes=budget)
    if not base:
        base = "note" if budget >= 4 else "n"
    return f"{base}{tail}{extension}"

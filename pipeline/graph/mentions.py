"""Names of projects, topics, skills and contexts → mentions found in prose; pure.

Autolinked mentions: a name links only as whole words; names shorter than 3
characters, purely numeric names and single words shorter than 4 characters or too generic are
never autolinked; the longest name wins at a position; at most N mentions per note.  One
Aho-Corasick automaton holds every name, so each text is scanned once however many names
there are (one regex per name costs 50 s at 10,000 names, measured).

A name is never found where the text is not prose: inside inline code or a fenced block, or
inside the syntax of a link (a ``[[wikilink]]`` or embed, a Markdown link or reference
definition, a URL).  ``[[topic:auth]]`` *links* its note; it mentions nothing, and
``[docs](Example.md)`` or ``https://host/orbital`` do not mention ``Example`` or ``orbital``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import ahocorasick
from vaultsync.links.codespans import Span, code_mask, overlaps_code
from vaultsync.links.mdlinks import parse_markdown_links
from vaultsync.links.wikilinks import parse_wikilinks

# Words too generic to mean a particular note, in the languages ChatCLI users write in.
GENERIC_WORDS = frozenset(
    {
        "user", "users", "project", "projects", "test", "tests", "code", "data", "docs",
        "note", "notes", "todo", "task", "tasks", "main", "home", "work", "misc", "general",
        "config", "setup", "build", "issue", "issues", "team", "time", "name", "file", "files",
        "idea", "ideas", "topic", "topics", "skill", "skills", "memory", "context", "default",
        "dados", "projeto", "projetos", "usuario", "usuário", "teste", "codigo", "código",
        "tarefa", "arquivo", "nota", "notas", "tempo", "nome", "trabalho",
    }
)  # fmt: skip


# A URL as a reader sees one: a scheme with "//", or "www.", up to whitespace or a bracket.
_URL = re.compile(r"(?:\b[A-Za-z][A-Za-z0-9+.\-]*://|\bwww\.)[^\s<>\[\]()]+")


@dataclass(frozen=True, slots=True)
class Mention:
    """A name found in a text: the node it names and where."""

    target: str
    start: int
    end: int


MAX_NAME_CHARS = 1_000
"""Longer names are never autolinked: no text names a note that way, and the automaton frees
its trie recursively, so a name of a million characters crashed the process as it exited."""


def is_linkable_name(name: str) -> bool:
    """Whether a title or alias is specific enough to autolink (and short enough)."""
    stripped = name.strip()
    if not 3 <= len(stripped) <= MAX_NAME_CHARS or stripped.replace(" ", "").isdigit():
        return False
    words = stripped.split()
    if len(words) == 1:
        word = words[0].casefold()
        return len(word) >= 4 and word not in GENERIC_WORDS
    return True


class MentionFinder:
    """An automaton over every linkable name; :meth:`find` scans one text.

    The automaton is built at the first :meth:`find` (0.12 s at 2,500 names): a build that
    finds every text's mentions in its memo never needs it.  It pickles, built or not.
    """

    def __init__(self, names: Iterable[tuple[str, str]]) -> None:
        """Take ``(name, node id)`` pairs; a name shared by several notes keeps the first."""
        self._names = tuple(names)
        self._automaton: ahocorasick.Automaton | None = None
        self._empty = False

    def _built(self) -> ahocorasick.Automaton:
        if self._automaton is None:
            automaton = ahocorasick.Automaton()
            seen: set[str] = set()
            for name, node_id in self._names:
                key = _fold(name.strip())
                if key in seen or not is_linkable_name(name):
                    continue
                seen.add(key)
                automaton.add_word(key, (len(key), node_id))
            self._empty = not seen
            if not self._empty:
                automaton.make_automaton()
            self._automaton = automaton
        return self._automaton

    def find(self, text: str) -> tuple[Mention, ...]:
        """Whole-word mentions, leftmost-longest, non-overlapping, in text order."""
        if not text:
            return ()
        automaton = self._built()
        if self._empty:
            return ()
        folded = _fold(text)
        silent: tuple[Span, ...] | None = None
        candidates: list[tuple[int, int, str]] = []
        for end_inclusive, (length, node_id) in automaton.iter(folded):
            start = end_inclusive - length + 1
            end = end_inclusive + 1
            if not (_is_word_boundary(folded, start - 1) and _is_word_boundary(folded, end)):
                continue
            if silent is None:
                silent = not_prose(text)  # only computed for a text that names something
            if not overlaps_code(silent, start, end):
                candidates.append((start, -length, node_id))
        candidates.sort()
        found: list[Mention] = []
        position = 0
        for start, negative_length, node_id in candidates:
            if start >= position:
                found.append(Mention(node_id, start, start - negative_length))
                position = start - negative_length
        return tuple(found)


def not_prose(text: str) -> tuple[Span, ...]:
    """The sorted, disjoint spans of ``text`` where no mention is looked for.

    Code (fenced blocks, inline spans), every wikilink and embed, every Markdown link and
    reference definition, and every URL; the link parsers are the ones the graph uses, so a
    span is skipped here exactly when it is a link there.
    """
    mask = code_mask(text)
    spans = list(mask)
    spans += ((w.start, w.end) for w in parse_wikilinks(text, mask=mask))
    spans += ((m.start, m.end) for m in parse_markdown_links(text, mask=mask))
    if "//" in text or "www." in text:
        spans += (m.span() for m in _URL.finditer(text))
    return _union(spans)


def _union(spans: list[Span]) -> tuple[Span, ...]:
    """Sorted, overlapping or touching spans merged (a link may hold inline code)."""
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


def _fold(text: str) -> str:
    # Offsets must stay those of the original text, so folding may not change the length
    # ("İ".lower() is two characters); such rare characters are kept as written.
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)


def _is_word_boundary(text: str, index: int) -> bool:
    if index < 0 or index >= len(text):
        return True
    char = text[index]
    return not (char.isalnum() or char == "_")

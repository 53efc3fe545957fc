"""User input → a safe FTS5 query and its SQL; search hits → the linked notes to show; pure.

Contract:

* ``match_expression(text)`` turns what a person types into an FTS5 ``MATCH`` expression that
  can never be a syntax error: every word is quoted (``c++``, ``title:x``, ``AND`` are words),
  ``"a phrase"`` stays a phrase, ``word*`` is a prefix, ``-word`` excludes, and ``OR`` between
  two terms is an alternative (``AND`` binds tighter, as in FTS5).  Raises ``UsageError`` when
  nothing searchable is left (only punctuation, or only exclusions).
* ``search_sql(query)`` is the statement and parameters: a note whose title or alias *is* the
  query (``orbital``, ``telemetry security``; compared as ``vaultsync.links.names.normalize_name``
  does) comes first; then BM25 with column weights (title 10 > aliases, tags 6 > path 3 >
  body 1), ties broken by path so equal scores always come in the same order.  Kind and folder
  filters are part of the ``WHERE`` clause, so a limit counts only notes that pass them.  The
  snippet is cut from the body around the hits.
* ``loose_sql(query)`` is the same ranking over notes holding **any** of the query's words
  (stop words left out) or a form of it (the ``stems`` index: ``restarting`` finds
  ``restarts``), for hybrid search: a paraphrase rarely has every word of its note,
  so the all-words ranking lends hybrid nothing on it, while BM25 over the words it shares
  still puts the note near the top.  ``None`` when no word is left.
* ``rank_linked(...)`` picks up to six notes linked with the top results that are not results
  themselves (as ChatCLI's ``@knowledge search``): each link scores ``1/(rank+1)`` of the result
  it touches, once per (hit, note, direction); a backlink from a list-like note (more than 8
  outgoing links, as ``Home.md``) counts ``8/outdegree`` of that, so hubs do not crowd out the
  notes that matter.  Of a hit's backlinks, the 100 from the notes with the fewest links are
  considered.  Ties go by path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from vaultsync.core.errors import UsageError
from vaultsync.links.names import normalize_name
from vaultsync.search.model import Direction, SearchQuery

__all__ = [
    "BACKLINKS_CONSIDERED",
    "COLUMN_WEIGHTS",
    "LINKED_LIMIT",
    "STOP_WORDS",
    "TOP_FOR_LINKED",
    "Edge",
    "ParsedQuery",
    "Pick",
    "Term",
    "loose_sql",
    "match_expression",
    "normalize_folder",
    "parse_query",
    "rank_linked",
    "search_sql",
]

COLUMN_WEIGHTS = (10.0, 6.0, 6.0, 3.0, 1.0)
"""BM25 weights of the FTS columns: title, aliases, tags, path, body."""
LINKED_LIMIT = 6
TOP_FOR_LINKED = 5
"""How many of the best hits lend their links to the linked notes."""
BACKLINKS_CONSIDERED = 100
"""Backlinks of one hit considered, from the notes with the fewest links (a hub has thousands)."""
MAX_TERMS = 32
_LIST_LIKE = 8

_TERM = re.compile(r'(?P<neg>-?)(?:"(?P<phrase>[^"]*)"|(?P<word>\S+))')
_WORDY = re.compile(r"\w")
_TOKEN = re.compile(r"[^\W_]+")
_STOP = """a about after all an and any are as at be before by can could do does for from had has
have how i if in into is it its my no not of on or our she so that the their them then there
these they this to up was we were what when where which who why will with would you your"""
STOP_WORDS = frozenset(_STOP.split())
"""Words too common to lend a loose (any-word) ranking anything but noise and time."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # FTS5 ends a string at NUL: controls are spaces


@dataclass(frozen=True, slots=True, kw_only=True)
class Term:
    """One search term as typed: a word (maybe a prefix ``abc*``) or a quoted phrase."""

    text: str
    prefix: bool = False

    def fts(self) -> str:
        """The term as an FTS5 string: quoted (inner ``"`` doubled), ``*`` for a prefix."""
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedQuery:
    """Alternatives (``OR``) of terms that must all match, and the excluded terms."""

    groups: tuple[tuple[Term, ...], ...]
    excluded: tuple[Term, ...]

    def words(self) -> tuple[tuple[str, bool], ...]:
        """Every word of the wanted terms with its prefix flag, for marking hits in snippets."""
        found: dict[tuple[str, bool], None] = {}
        for group in self.groups:
            for term in group:
                tokens = _TOKEN.findall(term.text)
                for index, token in enumerate(tokens):
                    found[(token, term.prefix and index == len(tokens) - 1)] = None
        return tuple(found)


def parse_query(text: str) -> ParsedQuery:
    """What a person typed, as terms (see the module docstring); ``UsageError`` if no term."""
    groups: list[list[Term]] = [[]]
    excluded: list[Term] = []
    pending_or = False
    for match in _TERM.finditer(_CONTROL.sub(" ", text)):
        phrase, word = match["phrase"], match["word"]
        if word == "OR" and not match["neg"]:
            pending_or = bool(groups[-1])
            continue
        if phrase is not None:
            term = Term(text=phrase.strip())
        else:
            term = Term(text=word.rstrip("*").strip('"'), prefix=word.endswith("*"))
        if not _WORDY.search(term.text):
            continue
        if match["neg"]:
            excluded.append(term)
        else:
            if pending_or:
                groups.append([])
            groups[-1].append(term)
        pending_or = False
        if sum(map(len, groups)) + len(excluded) >= MAX_TERMS:
            break
    kept = tuple(tuple(group) for group in groups if group)
    if not kept:
        hint = "exclusions need a word to search for" if excluded else "type a word to look for"
        raise UsageError(f"nothing to search for in {text!r}", hint=hint)
    return ParsedQuery(groups=kept, excluded=tuple(excluded))


def match_expression(text: str) -> str:
    """The FTS5 ``MATCH`` expression for ``text`` (see the module docstring)."""
    parsed = parse_query(text)
    ored = " OR ".join(
        "(" + " AND ".join(term.fts() for term in group) + ")" for group in parsed.groups
    )
    expression = f"({ored})" if len(parsed.groups) > 1 else ored
    return " NOT ".join([expression, *(term.fts() for term in parsed.excluded)])


def normalize_folder(folder: str) -> str:
    """A folder filter as a vault path prefix without slashes at either end; ``""`` for all.

    Raises:
        UsageError: the folder climbs out of the vault (``..``).
    """
    parts = [part for part in folder.replace("\\", "/").split("/") if part and part != "."]
    if ".." in parts:
        raise UsageError(f"folder {folder!r} leaves the vault")
    return "/".join(parts)


def filter_sql(kinds: Sequence[str], folder: str) -> tuple[str, tuple[object, ...]]:
    """``AND …`` conditions on ``n`` (the notes table) for the kind and folder filters."""
    clauses: list[str] = []
    params: list[object] = []
    if kinds:
        clauses.append(f"n.kind IN ({','.join('?' * len(kinds))})")
        params.extend(kinds)
    prefix = normalize_folder(folder)
    if prefix:
        clauses.append("substr(n.path, 1, ?) = ?")
        params.extend((len(prefix) + 1, prefix + "/"))
    return "".join(f" AND {clause}" for clause in clauses), tuple(params)


def search_sql(query: SearchQuery, *, stems: bool = False) -> tuple[str, tuple[object, ...]]:
    """The ranked search statement for ``query`` and its parameters: ``(nid, bm25)`` rows.

    ``stems``: match any form of each word (the ``stems`` index), for hybrid search.  No
    ``snippet()`` here: SQLite would cut one for every matching note before sorting (23 ms
    of 28 for a word in 7,000 notes); ``vaultsync.search.snippets`` cuts the few shown.
    """
    where, params = filter_sql(query.kinds, query.folder)
    weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
    table = "stems" if stems else "fts"
    sql = (
        f"SELECT n.nid, bm25({table}, {weights}) AS score"  # noqa: S608 - constants, ? marks
        f" FROM {table} JOIN notes AS n ON n.nid = {table}.rowid"
        f" WHERE {table} MATCH ?{where}"
        " ORDER BY n.nid IN (SELECT nid FROM names WHERE key = ?) DESC, score, n.path LIMIT ?"
    )
    match = match_expression(query.text)
    exact = normalize_name(query.text)
    return sql, (match, *params, exact, query.limit)


def loose_sql(query: SearchQuery) -> tuple[str, tuple[object, ...]] | None:
    """The ranked any-word statement for ``query`` (see the module docstring), or ``None``."""
    parsed = parse_query(query.text)
    words = {
        word.lower()
        for group in parsed.groups
        for term in group
        for word in _TOKEN.findall(term.text)
    } - STOP_WORDS
    if not words:
        return None
    where, params = filter_sql(query.kinds, query.folder)
    weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
    anyword = " OR ".join(Term(text=word).fts() for word in sorted(words))
    expression = " NOT ".join([f"({anyword})", *(term.fts() for term in parsed.excluded)])
    sql = (
        f"SELECT n.nid, bm25(stems, {weights}) AS score"  # noqa: S608 - constants, ? marks only
        " FROM stems JOIN notes AS n ON n.nid = stems.rowid"
        f" WHERE stems MATCH ?{where} ORDER BY score, n.path LIMIT ?"
    )
    return sql, (expression, *params, query.limit)


@dataclass(frozen=True, slots=True, kw_only=True)
class Edge:
    """A link between a result (by rank) and another note, seen from the result."""

    rank: int
    other: int
    """The other note's nid."""
    direction: Direction
    link_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Pick:
    """A chosen linked note: its nid, the result it is best linked with, and how."""

    nid: int
    rank: int
    direction: Direction
    link_type: str
    score: float


def rank_linked(
    edges: Iterable[Edge],
    results: Iterable[int],
    outdegree: Mapping[int, int],
    paths: Mapping[int, str],
    *,
    limit: int = LINKED_LIMIT,
) -> tuple[Pick, ...]:
    """Up to ``limit`` linked notes, best first (see the module docstring).

    Args:
        edges: the links of the top results, each from a result's point of view.
        results: the nids of every hit (they are never picked).
        outdegree: nid → number of outgoing links, for the list-note discount.
        paths: nid → path, for the tie-break.
        limit: how many to pick.
    """
    exclude = set(results)
    scores: dict[int, float] = {}
    best: dict[int, Edge] = {}
    seen: set[tuple[int, int, str]] = set()
    for edge in edges:
        if edge.other in exclude or (edge.rank, edge.other, edge.direction) in seen:
            continue
        seen.add((edge.rank, edge.other, edge.direction))
        weight = 1.0 / (edge.rank + 1)
        if edge.direction == "links_to":
            weight *= min(1.0, _LIST_LIKE / max(1, outdegree.get(edge.other, 0)))
        scores[edge.other] = scores.get(edge.other, 0.0) + weight
        held = best.get(edge.other)
        if held is None or (edge.rank, edge.direction != "linked_from") < (
            held.rank,
            held.direction != "linked_from",
        ):
            best[edge.other] = edge
    ranked = sorted(scores, key=lambda nid: (-scores[nid], paths.get(nid, ""), nid))
    return tuple(
        Pick(
            nid=nid,
            rank=best[nid].rank,
            direction=best[nid].direction,
            link_type=best[nid].link_type,
            score=scores[nid],
        )
        for nid in ranked[:limit]
    )

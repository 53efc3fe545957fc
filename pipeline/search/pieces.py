"""A query's token ids without loading the tokenizer: Unigram pieces kept in the index; edge.

Contract: the packaged model's tokenizer (Unigram, 276k pieces) costs ~0.9 s and ~320 MB to
load, far more than a query's search.  For a model whose tokenizer is a word-by-word Unigram
(``light_pieces`` says which), the embed job stores its pieces in the index once
(``store_pieces``); then ``query_vector`` segments a query of printable ASCII itself (Viterbi
over the pieces each word holds, read by key) and gives the **same vector** the tokenizer
would.  Any other text or model, or an index without the pieces, embeds with the tokenizer.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from vaultsync.search.embed import MAX_TOKENS, Embedder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from vaultsync.search.embed import TextEmbedder

__all__ = ["light_pieces", "query_ids", "query_vector", "segment", "store_pieces"]

METASPACE = "\u2581"
_PRINTABLE = re.compile(r"[ -~]*")
_UNKNOWN = 1.0
"""The score of the row (``piece`` empty) holding the unknown token's id; no log-prob is > 0."""
_ADDED = 2.0
"""The score that marks an added token (matched whole before pre-tokenizing): refused."""

Piece = tuple[str, int, float]


def light_pieces(spec: Mapping[str, Any]) -> list[Piece]:
    """The ``(piece, id, score)`` rows to store for a tokenizer spec (``tokenizer.json``).

    Its pieces when it segments each whitespace-separated word alone, as ``▁word``; else one
    row that refuses every query (so the job does not read the spec again).
    """
    model = spec.get("model") or {}
    normalizer = spec.get("normalizer") or {"type": "Precompiled"}
    if (
        model.get("type") != "Unigram"
        or model.get("byte_fallback")
        or normalizer.get("type") != "Precompiled"
        or not _word_by_word(spec.get("pre_tokenizer") or {})
    ):
        return [("", -1, _ADDED)]
    # Added tokens first: they are matched whole before segmenting, so their row must win.
    rows: list[Piece] = [
        (str(t["content"]), int(t["id"]), _ADDED) for t in spec.get("added_tokens", [])
    ]
    rows += [(str(p), i, float(s)) for i, (p, s) in enumerate(model["vocab"])]
    unk = model.get("unk_id")
    rows.append(("", -1 if unk is None else int(unk), _UNKNOWN))
    return rows


def _word_by_word(pre: Mapping[str, Any]) -> bool:
    steps = pre.get("pretokenizers", [pre]) if pre.get("type") == "Sequence" else [pre]
    kinds = [step.get("type") for step in steps]
    meta = steps[-1] if steps else {}
    return (
        kinds in (["Metaspace"], ["WhitespaceSplit", "Metaspace"])
        and meta.get("replacement") == METASPACE
        and meta.get("prepend_scheme", "always") == "always"
        and meta.get("split", True) is True
    )


def store_pieces(conn: sqlite3.Connection, model: str, rows: Iterable[Piece]) -> None:
    """Replace the stored pieces with ``model``'s (inside the caller's transaction)."""
    conn.execute("DELETE FROM pieces WHERE model != ?", (model,))
    conn.executemany(
        "INSERT OR IGNORE INTO pieces VALUES (?, ?, ?, ?)",
        ((model, piece, pid, score) for piece, pid, score in rows),
    )


def segment(word: str, known: Mapping[str, tuple[int, float]]) -> list[int] | None:
    """The best-scoring split of ``word`` into known pieces; ``None`` if a character has none.

    Unigram's Viterbi; of equal scores the earliest start wins, as in ``tokenizers``.
    """
    best: list[tuple[float, int, int]] = [(0.0, 0, -1)] + [(-math.inf, 0, -1)] * len(word)
    for end in range(1, len(word) + 1):
        for start in range(end):
            hit = known.get(word[start:end])
            if hit is not None and best[start][0] > -math.inf:
                score = best[start][0] + hit[1]
                if score > best[end][0]:
                    best[end] = (score, start, hit[0])
    if any(known.get(char) is None for char in word):
        return None  # the tokenizer would use the unknown token here: leave it to it
    ids: list[int] = []
    end = len(word)
    while end > 0:
        _, start, pid = best[end]
        ids.append(pid)
        end = start
    return ids[::-1]


def _known_pieces(conn: sqlite3.Connection, model: str, words: list[str]) -> dict[str, Piece]:
    """The stored pieces among the substrings of ``words``, and the ``""`` row if stored."""
    wanted = {w[a:b] for w in words for a in range(len(w)) for b in range(a + 1, len(w) + 1)}
    chosen = sorted(wanted | {""})
    known: dict[str, Piece] = {}
    for start in range(0, len(chosen), 500):
        batch = chosen[start : start + 500]
        marks = ",".join("?" * len(batch))
        rows = conn.execute(
            "SELECT piece, id, score FROM pieces"  # noqa: S608 - ? marks only
            f" WHERE model = ? AND piece IN ({marks})",
            (model, *batch),
        )
        known.update(
            {str(piece): (str(piece), int(pid), float(score)) for piece, pid, score in rows}
        )
    return known


def query_ids(conn: sqlite3.Connection, model: str, text: str) -> tuple[list[int], int] | None:
    """``text``'s token ids from the stored pieces and the unknown id (-1: none), or ``None``."""
    if not _PRINTABLE.fullmatch(text):
        return None
    words = [METASPACE + word for word in text.split()]
    stored = _known_pieces(conn, model, words)
    if "" not in stored or any(score == _ADDED for _, _, score in stored.values()):
        return None  # no pieces stored, or an added token is in the text
    unknown = stored.pop("")[1]
    known = {piece: (pid, score) for piece, pid, score in stored.values()}
    ids: list[int] = []
    for word in words:
        found = segment(word, known)
        if found is None:
            return None
        ids += [pid for i, pid in enumerate(found) if pid != unknown or found[i - 1 : i] != [pid]]
    return (ids, unknown) if len(ids) <= MAX_TOKENS else None


def query_vector(
    conn: sqlite3.Connection, embedder: TextEmbedder, text: str
) -> npt.NDArray[np.float32]:
    """``embedder.embed([text])[0]``, from the stored pieces when they can tell the ids."""
    ids = query_ids(conn, embedder.name, text) if isinstance(embedder, Embedder) else None
    if isinstance(embedder, Embedder) and ids is not None:
        vectors = embedder.embed_ids([ids[0]], skip=ids[1])
    else:
        vectors = embedder.embed([text])
    vector: npt.NDArray[np.float32] = vectors[0]
    return vector

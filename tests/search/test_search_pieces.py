"""A query's token ids from the pieces kept in the index, without loading the tokenizer."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

import pytest
from vaultsync.search.database import SCHEMA
from vaultsync.search.embed import Embedder, default_model_dir, load_embedder
from vaultsync.search.pieces import light_pieces, query_ids, query_vector, segment, store_pieces

pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

UNIGRAM: dict[str, Any] = {
    "model": {
        "type": "Unigram",
        "unk_id": 0,
        "vocab": [
            ["<unk>", 0.0],
            ["\u2581re", -2.0],
            ["start", -3.0],
            ["\u2581restart", -4.0],
            ["\u2581", -5.0],
            ["r", -6.0],
            ["e", -6.0],
            ["s", -6.0],
            ["t", -6.0],
            ["a", -6.0],
            ["i", -6.0],
            ["n", -6.0],
            ["g", -6.0],
            ["ing", -2.5],
        ],
    },
    "normalizer": None,
    "pre_tokenizer": {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
        ],
    },
    "added_tokens": [{"id": 0, "content": "<unk>"}],
}


def stored(spec: Mapping[str, Any], model: str = "m") -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    store_pieces(conn, model, light_pieces(spec))
    return conn


class TestSegment:
    def test_best_scoring_split(self) -> None:
        """The split with the highest total score wins (one long piece beats two)."""
        vocab = UNIGRAM["model"]["vocab"]
        known = {piece: (pid, score) for pid, (piece, score) in enumerate(vocab)}
        assert segment("\u2581restart", known) == [3]

    def test_character_without_piece(self) -> None:
        """A character no piece holds leaves the text to the tokenizer."""
        assert segment("\u2581xy", {"\u2581": (4, -5.0), "x": (5, -6.0)}) is None


class TestQueryIds:
    def test_words_segmented_alone(self) -> None:
        """Each word is segmented alone, as ``▁word``."""
        conn = stored(UNIGRAM)
        assert query_ids(conn, "m", "restarting  restart") == ([3, 13, 3], 0)

    def test_non_ascii_refused(self) -> None:
        """Text outside printable ASCII (the normalizer may change it) is refused."""
        assert query_ids(stored(UNIGRAM), "m", "restart\u00e9") is None

    def test_added_token_refused(self) -> None:
        """A text holding an added token (matched before segmenting) is refused, even when the
        token is also a piece of the vocabulary."""
        spec = {**UNIGRAM, "added_tokens": [{"id": 2, "content": "start"}]}
        assert query_ids(stored(spec), "m", "restart") is None

    def test_other_model_refused(self) -> None:
        """Pieces of another model are not used."""
        assert query_ids(stored(UNIGRAM), "other", "restart") is None

    def test_other_tokenizer_refused(self) -> None:
        """A tokenizer that is not a word-by-word Unigram stores only a refusal."""
        spec = {**UNIGRAM, "model": {"type": "WordLevel", "vocab": {"a": 0}}}
        assert query_ids(stored(spec), "m", "restart") is None


@pytest.mark.skipif(default_model_dir() is None, reason="the packaged model is not installed")
def test_packaged_model_same_vector_without_tokenizer() -> None:
    """With the packaged model, a query's vector from the pieces is the tokenizer's, bit for bit,
    and the tokenizer is not loaded to get it."""
    folder = default_model_dir()
    assert folder is not None
    light = Embedder(folder)
    conn = stored(json.loads((folder / "tokenizer.json").read_text()), light.name)
    texts = ["what to do when a pod keeps restarting", "Stripe webhook replay", "x509 ... (a)"]
    vectors = [query_vector(conn, light, text) for text in texts]
    assert "tokenizer" not in light.__dict__
    full = load_embedder() if load_embedder().folder == folder else Embedder(folder)
    assert all(
        (vector == full.embed([t])[0]).all() for vector, t in zip(vectors, texts, strict=True)
    )

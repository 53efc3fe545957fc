"""Parsed document texts kept in SQLite by digest: used by a full build, saved by difference."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.documents import ParsedText, text_digest
from vaultsync.graph.load import build, read_records
from vaultsync.graph.parsedtexts import (
    REPLACED,
    load_parsed_texts,
    parsed_texts_path,
    save_parsed_texts,
)

GONE = ParsedText(title="gone", summary="", link_dests=(), link_targets=())


def test_rebuild_with_kept_texts_is_the_same(demo_state: Path) -> None:
    """A build from kept parsed texts gives the same graph and documents as parsing anew."""
    records = read_records(demo_state)
    cold = build_graph(records, Caps())
    assert save_parsed_texts(demo_state, cold.documents, {})
    known = load_parsed_texts(demo_state)
    assert known == {doc.digest: doc.parsed for doc in cold.documents if doc.digest}
    again = build_graph(records, Caps(), known=known)
    assert (again.graph, again.documents, again.unresolved) == (
        cold.graph,
        cold.documents,
        cold.unresolved,
    )


def test_kept_texts_are_used(demo_state: Path) -> None:
    """A text whose digest is known is not parsed again: the kept result is what counts."""
    records = read_records(demo_state)
    doc = next(d for d in build_graph(records, Caps()).documents if d.markdown)
    kept = ParsedText(title="Kept title", summary="kept", link_dests=(), link_targets=())
    built = build_graph(records, Caps(), known={doc.digest: kept})
    assert next(d for d in built.documents if d.node_id == doc.node_id).title == "Kept title"


def test_a_changed_text_is_parsed_again() -> None:
    """The digest follows the text: an edited document never reuses its old parse."""
    assert text_digest("# A\n\nsee [[b]]") != text_digest("# A\n\nsee [[c]]")


def test_only_current_texts_are_kept(demo_state: Path) -> None:
    """Texts of documents gone from the stores are dropped when the file is written."""
    built = build_graph(read_records(demo_state), Caps())
    assert save_parsed_texts(demo_state, built.documents, {})
    assert save_parsed_texts(demo_state, built.documents[:1], {"0" * 32: GONE})
    assert set(load_parsed_texts(demo_state)) == {built.documents[0].digest}


def test_a_save_writes_only_the_texts_that_changed(demo_state: Path) -> None:
    """Rows of texts still there are left as they are: only new texts are written."""
    built = build_graph(read_records(demo_state), Caps())
    first, *rest = [doc for doc in built.documents if doc.digest]
    assert save_parsed_texts(demo_state, rest, {})
    with sqlite3.connect(parsed_texts_path(demo_state)) as conn:  # a row changed behind its back
        conn.execute("UPDATE texts SET title = 'left alone' WHERE digest = ?", (rest[0].digest,))
    assert save_parsed_texts(demo_state, [first, *rest], {})
    kept = load_parsed_texts(demo_state)
    assert kept[rest[0].digest].title == "left alone"
    assert kept[first.digest] == first.parsed


def test_nothing_is_opened_when_the_texts_are_the_known_ones(demo_state: Path) -> None:
    """A build that parsed no new text (a one-fact sync) does not touch the file."""
    built = build_graph(read_records(demo_state), Caps())
    known = {doc.digest: doc.parsed for doc in built.documents if doc.digest}
    assert save_parsed_texts(demo_state, built.documents, known)
    assert not parsed_texts_path(demo_state).exists()


@pytest.mark.parametrize("data", [b"", b"not a database", b"SQLite format 3\x00" + b"\x01" * 200])
def test_unusable_files_are_ignored_and_replaced(demo_state: Path, data: bytes) -> None:
    """A damaged or foreign file gives nothing, no error, and the next save starts anew."""
    path = parsed_texts_path(demo_state)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    assert load_parsed_texts(demo_state) == {}
    built = build_graph(read_records(demo_state), Caps())
    if not save_parsed_texts(demo_state, built.documents, {}):  # damaged: removed, then anew
        assert save_parsed_texts(demo_state, built.documents, {})
    assert load_parsed_texts(demo_state)


def test_another_code_versions_texts_are_not_used(demo_state: Path) -> None:
    """Texts parsed by another version of the code are never answered."""
    built = build_graph(read_records(demo_state), Caps())
    assert save_parsed_texts(demo_state, built.documents, {})
    with sqlite3.connect(parsed_texts_path(demo_state)) as conn:
        conn.execute("UPDATE meta SET value = 'another version' WHERE key = 'envelope'")
    assert load_parsed_texts(demo_state) == {}


def test_the_json_file_of_before_is_removed(demo_state: Path) -> None:
    """The whole-file JSON form the texts were kept in before is deleted by a save."""
    built = build_graph(read_records(demo_state), Caps())
    old = parsed_texts_path(demo_state).parent / REPLACED
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text("{}")
    assert save_parsed_texts(demo_state, built.documents, {})
    assert not old.exists()


def test_build_keeps_them(demo_state: Path) -> None:
    """Building from the stores keeps the parsed texts in the cache folder."""
    build(demo_state, Caps())
    assert load_parsed_texts(demo_state)

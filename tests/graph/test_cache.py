"""The graph's JSON form (exact shape, byte-stable), its fingerprint; last good records."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.core.model import Graph, Kind, Link, Node, Origin
from vaultsync.core.settings import Caps
from vaultsync.graph import cache
from vaultsync.graph.cache import (
    LastGood,
    graph_fingerprint,
    graph_to_json,
    load_last_good,
    save_last_good,
)
from vaultsync.graph.load import build, read_records

GRAPH = Graph(
    nodes=(
        Node(id="project:orbital", kind=Kind.PROJECT, title="orbital", aliases=("gw",)),
        Node(id="topic:t", kind=Kind.TOPIC, title="t"),
    ),
    links=(
        Link(
            source="topic:t", target="project:orbital", rel="about", origin=Origin.USER, weight=2.0
        ),
    ),
    fingerprint="abc",
)


TEXT = st.text(max_size=12)
GRAPHS = st.builds(
    Graph,
    nodes=st.lists(
        st.builds(Node, id=TEXT, kind=st.sampled_from(Kind), title=TEXT,
                  aliases=st.lists(TEXT, max_size=3).map(tuple)),
        max_size=4,
    ).map(tuple),
    links=st.lists(
        st.builds(Link, source=TEXT, target=TEXT, rel=TEXT, origin=st.sampled_from(Origin),
                  weight=st.sampled_from((0.5, 1.0, 1.5, 2.0, 1, 2, 0.1 + 0.2, 1e-7, 1e22))),
        max_size=4,
    ).map(tuple),
    fingerprint=TEXT,
)  # fmt: skip


def write_topics(state: Path, names: list[str]) -> None:
    (state / "memory").mkdir(parents=True, exist_ok=True)
    (state / "memory" / "topics.json").write_text(json.dumps([{"name": n} for n in names]))


class TestFormat:
    def test_exact_shape(self) -> None:
        """graph.json has schema, fingerprint, nodes and links with exactly the documented keys."""
        doc = json.loads(graph_to_json(GRAPH))
        assert list(doc) == ["schema", "fingerprint", "nodes", "links"]
        assert doc["schema"] == 2
        assert doc["nodes"][0] == {
            "id": "project:orbital",
            "kind": "project",
            "title": "orbital",
            "aliases": ["gw"],
        }
        assert doc["links"][0] == {
            "from": "topic:t",
            "to": "project:orbital",
            "rel": "about",
            "origin": "user",
            "weight": 2.0,
        }

    @settings(max_examples=200)
    @given(graph=GRAPHS)
    def test_the_same_bytes_as_the_json_module(self, graph: Graph) -> None:
        """graph.json is byte for byte what json.dumps writes of the documented shape."""
        document = {
            "schema": 2,
            "fingerprint": graph.fingerprint,
            "nodes": [
                {"id": n.id, "kind": n.kind.value, "title": n.title, "aliases": list(n.aliases)}
                for n in graph.nodes
            ],
            "links": [
                {"from": k.source, "to": k.target, "rel": k.rel, "origin": k.origin.value,
                 "weight": k.weight}
                for k in graph.links
            ],
        }  # fmt: skip
        expected = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
        assert graph_to_json(graph) == expected.encode()


class TestFingerprint:
    def test_caps_are_part_of_the_fingerprint(self) -> None:
        """Raising a cap changes the fingerprint the kept graph is checked against."""
        assert graph_fingerprint(Path(), Caps()) != graph_fingerprint(Path(), Caps(episodes=301))


class TestLastGood:
    def test_kept_records_load_back(self, tmp_path: Path) -> None:
        """What a sync kept as the last good records is what the next one reads."""
        good = {"memory/topics.json": ("a", "b"), "sessions/x.json": {"k": 1}}
        assert save_last_good(tmp_path, good)
        assert load_last_good(tmp_path) == good

    def test_the_same_records_are_not_written_again(self, tmp_path: Path) -> None:
        """Unchanged records leave their part as it is (told by the digest in its head)."""
        assert save_last_good(tmp_path, {"a.json": 1})
        (path,) = cache._last_good_parts(tmp_path)
        before = path.stat()
        assert save_last_good(tmp_path, {"a.json": 1})
        assert path.stat().st_ino == before.st_ino
        assert save_last_good(tmp_path, {"a.json": 2})
        assert path.stat().st_ino != before.st_ino
        assert load_last_good(tmp_path) == {"a.json": 2}

    def test_one_changed_record_rewrites_one_part(self, tmp_path: Path) -> None:
        """The records live in parts by path: a changed one rewrites its part only."""
        good = {f"sessions/{n}.json": n for n in range(64)}
        assert save_last_good(tmp_path, good)
        parts = cache._last_good_parts(tmp_path)
        assert 1 < len(parts) <= cache.LAST_GOOD_PARTS
        before = {path.name: path.stat().st_ino for path in parts}
        assert save_last_good(tmp_path, {**good, "sessions/7.json": "changed"})
        after = {path.name: path.stat().st_ino for path in cache._last_good_parts(tmp_path)}
        assert len([name for name in before if before[name] != after[name]]) == 1
        assert load_last_good(tmp_path) == {**good, "sessions/7.json": "changed"}

    def test_a_part_left_empty_is_removed(self, tmp_path: Path) -> None:
        """A source gone from every part: no file keeps its record."""
        assert save_last_good(tmp_path, {"a.json": 1, "b.json": 2})
        assert save_last_good(tmp_path, {"a.json": 1})
        assert load_last_good(tmp_path) == {"a.json": 1}
        assert len(cache._last_good_parts(tmp_path)) == 1

    def test_a_resident_process_does_not_pickle_the_records_it_saved(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """In ``watch``, a part whose records are the very objects saved last time is skipped."""
        from vaultsync.core import cachefile

        records = {"sessions/a.json": ["x"], "sessions/b.json": ["y"]}
        dumped: list[object] = []
        real = pickle.dumps

        def counted(value: object, *args: Any, **kwargs: Any) -> bytes:
            dumped.append(value)
            return real(value, *args, **kwargs)

        with cachefile.resident():
            assert save_last_good(tmp_path, records)
            monkeypatch.setattr(pickle, "dumps", counted)
            assert save_last_good(tmp_path, dict(records))
            assert dumped == []
            assert save_last_good(tmp_path, {**records, "sessions/a.json": ["x"]})  # equal, new
            assert len(dumped) == 1
        assert load_last_good(tmp_path) == records

    def test_a_damaged_body_reads_as_none(self, tmp_path: Path) -> None:
        """Bytes after a valid head that do not unpickle are no last good records."""
        assert save_last_good(tmp_path, {"a.json": 1})
        (path,) = cache._last_good_parts(tmp_path)
        path.write_bytes(path.read_bytes()[:-5])
        assert load_last_good(tmp_path) == {}

    def test_read_only_when_a_record_is_asked_for(
        self, demo_state: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A read of healthy stores never loads the last good records; a skipped item does."""
        build(demo_state, Caps())
        loads: list[Path] = []
        real = cache.load_last_good

        def counted(state: Path) -> dict[str, Any]:
            loads.append(state)
            return real(state)

        monkeypatch.setattr(cache, "load_last_good", counted)
        read_records(demo_state)
        assert loads == []
        assert len(LastGood(demo_state)) > 0
        assert loads == [demo_state]


def test_a_resident_process_reads_the_masks_its_last_sync_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret masked by one read is known to the next read of the same process (watch): it
    asks for no second history check."""
    from vaultsync.core import cachefile
    from vaultsync.graph.load import _read

    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    state = tmp_path / "state"
    facts = state / "memory" / "memory_index.json"
    facts.parent.mkdir(parents=True)
    secret = "staging db PGPASSWORD: Xq7vR2mPz9Lk"  # noqa: S105 - planted, not a credential
    facts.write_text(json.dumps([{"id": "f0", "content": secret}]))
    with cachefile.resident():
        _read(state, Caps())
        assert cache.take_history_check(state)  # masked for the first time: look once
        topics = state / "memory" / "topics.json"
        topics.write_text(json.dumps([{"name": "auth", "summary": "unrelated"}]))
        _read(state, Caps())
        assert not cache.take_history_check(state)


def _collector_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, real: Any, builds: int
) -> list[bool]:
    """Whether the collector ran at each call of ``graph.load``'s ``name`` over ``builds``."""
    import gc

    from vaultsync.graph import load

    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    state = tmp_path / "state"
    (state / "memory").mkdir(parents=True)
    (state / "memory" / "topics.json").write_text(json.dumps([{"name": "auth", "summary": "s"}]))
    collecting: list[bool] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        collecting.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(load, name, watched)
    for _ in range(builds):
        build(state, Caps())
    assert gc.isenabled()
    return collecting


def test_the_collector_rests_only_while_a_build_is_patched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full build parses every document and collects; a patched one makes no cycles."""
    from vaultsync.graph import build as graph_build

    seen = _collector_seen(tmp_path, monkeypatch, "patch_graph", graph_build.patch_graph, 2)
    assert seen == [True, False]


def test_the_patch_state_loads_with_the_collector_resting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unpickling the last build's state makes no cycles: no collection walks it."""
    seen = _collector_seen(tmp_path, monkeypatch, "load_patch_state", cache.load_patch_state, 1)
    assert seen == [False]

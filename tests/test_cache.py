"""graph.json: exact shape, byte-stable, reused while the stores are unchanged, else rebuilt."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.app import current_graph
from pipeline.cache import graph_fingerprint, graph_from_json, graph_path, graph_to_json, load_graph
from pipeline.model import Graph, Kind, Link, Node, Origin
from pipeline.settings import Caps

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

    def test_round_trip(self) -> None:
        """A graph read back from its JSON equals the original."""
        assert graph_from_json(graph_to_json(GRAPH)) == GRAPH

    @pytest.mark.parametrize(
        "data",
        [
            b"{",
            b"[]",
            b'{"schema_version":1,"graph":{}}',
            b'{"schema":2,"nodes":[{"id":1}]}',
            b'{"schema":3,"fingerprint":"x","nodes":[],"links":[]}',
        ],
        ids=["corrupt", "foreign", "chatcli-schema-1", "bad-node", "future-schema"],
    )
    def test_unreadable_files_are_discarded(self, data: bytes) -> None:
        """Corrupt, foreign, schema-1 and other schemas read as no cache."""
        assert graph_from_json(data) is None


class TestReuse:
    def test_built_then_reused(self, tmp_path: Path) -> None:
        """The first query builds and writes graph.json; the next one reads it unchanged."""
        write_topics(tmp_path, ["telemetry"])
        first = current_graph(tmp_path, Caps())
        cached = load_graph(tmp_path, graph_fingerprint(tmp_path, Caps()))
        assert cached == first
        assert [n.id for n in first.nodes] == ["topic:telemetry"]

    def test_rebuilt_when_a_store_changes(self, tmp_path: Path) -> None:
        """Editing a store changes the fingerprint, so the graph is rebuilt."""
        write_topics(tmp_path, ["telemetry"])
        current_graph(tmp_path, Caps())
        topics = tmp_path / "memory" / "topics.json"
        write_topics(tmp_path, ["telemetry", "auth"])
        os.utime(topics, ns=(1, 2_000_000_000_000_000_000))
        assert {n.id for n in current_graph(tmp_path, Caps()).nodes} == {
            "topic:telemetry",
            "topic:auth",
        }

    def test_stale_file_is_not_trusted(self, tmp_path: Path) -> None:
        """A graph.json whose fingerprint differs is ignored and replaced."""
        write_topics(tmp_path, ["telemetry"])
        graph_path(tmp_path).write_bytes(graph_to_json(GRAPH))
        assert [n.id for n in current_graph(tmp_path, Caps()).nodes] == ["topic:telemetry"]
        assert json.loads(graph_path(tmp_path).read_bytes())["fingerprint"] != "abc"

    def test_caps_are_part_of_the_fingerprint(self, tmp_path: Path) -> None:
        """Raising a cap invalidates the cache."""
        write_topics(tmp_path, ["t"])
        assert graph_fingerprint(tmp_path, Caps()) != graph_fingerprint(
            tmp_path, Caps(episodes=301)
        )

    def test_unwritable_cache_still_answers(self, tmp_path: Path) -> None:
        """When graph.json cannot be written the graph is still built and returned."""
        write_topics(tmp_path, ["telemetry"])
        graph_path(tmp_path).mkdir()  # a folder where the file belongs: every write fails
        assert [n.id for n in current_graph(tmp_path, Caps()).nodes] == ["topic:telemetry"]

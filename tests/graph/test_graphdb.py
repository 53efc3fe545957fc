"""graph.db: the graph kept by note and link source, patched by each build's delta, equal to
the full build after any edits; a damaged, foreign or stale file is never trusted."""

from __future__ import annotations

import gc
import itertools
import json
import os
import sqlite3
import stat
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from graphedits import CAPS, apply, edits, records_of, reloaded
from hypothesis import example, given, settings
from hypothesis import strategies as st
from vaultsync.core.model import ExplicitLink, Fact, Graph, Kind, Link, Node, Origin, Project
from vaultsync.core.settings import Caps
from vaultsync.graph.build import GraphDelta, build_graph, patch_graph
from vaultsync.graph.cache import graph_fingerprint, graph_to_json
from vaultsync.graph.graphdb import graph_db_path, load_graph, save_graph
from vaultsync.graph.load import current_graph
from vaultsync.graph.patch import PatchState

GRAPH = Graph(
    nodes=(
        Node(id="project:orbital", kind=Kind.PROJECT, title="orbital", aliases=("gw", "é")),
        Node(id="topic:t", kind=Kind.TOPIC, title="t"),
    ),
    links=(
        Link(
            source="topic:t", target="project:orbital", rel="about", origin=Origin.USER, weight=2.0
        ),
    ),
    fingerprint="abc",
)

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
WEIGHTS = st.sampled_from((0.5, 1.0, 1.5, 2, 0.1 + 0.2, 1e-7, 1e22))


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    """Valid graphs: unique node ids sorted, links unique by (from, to, rel) and sorted."""
    node = st.tuples(st.sampled_from(Kind), TEXT, st.lists(TEXT, max_size=3))
    nodes = draw(st.dictionaries(TEXT, node, max_size=5))
    link = st.tuples(st.sampled_from(Origin), WEIGHTS)
    links = draw(st.dictionaries(st.tuples(TEXT, TEXT, TEXT), link, max_size=5))
    return Graph(
        nodes=tuple(
            Node(id=i, kind=k, title=t, aliases=tuple(a)) for i, (k, t, a) in sorted(nodes.items())
        ),
        links=tuple(
            Link(source=s, target=t, rel=r, origin=o, weight=w)
            for (s, t, r), (o, w) in sorted(links.items())
        ),
        fingerprint=draw(TEXT),
    )


@settings(max_examples=100, deadline=None)
@given(graph=graphs())
def test_a_graph_reads_back_equal(graph: Graph) -> None:
    """Any graph kept is read back equal: node order, link order, weights' types and all."""
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder)
        assert save_graph(state, graph)
        loaded = load_graph(state, graph.fingerprint)
        assert loaded is not None
        assert loaded == graph
        assert graph_to_json(loaded) == graph_to_json(graph)


FACT_ID = "a" * 24
NOTED_LINK = [
    ("facts", "put", Fact(id=FACT_ID, content="x", category="general")),
    ("projects", "put", Project(name="orbital")),
    ("links", "put", ExplicitLink(source="project:orbital", target=f"fact:{FACT_ID}",
                                  rel="related", note="why")),
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(edits, min_size=1, max_size=10))
@example(NOTED_LINK)  # a drawn link's note: graph.db keeps none (links.json does)
def test_patched_rows_equal_the_full_build_after_every_edit(steps: list[Any]) -> None:
    """Each build kept by its delta alone: the file then holds exactly the full build's graph."""
    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder)
        items: dict[str, dict[Any, Any]] = {}
        patch: PatchState | None = None
        for edit in steps:
            apply(items, edit)
            records = records_of(items)
            built, patch = patch_graph(records, CAPS, reloaded(patch), fingerprint=str(len(items)))
            assert save_graph(state, built.graph, build_id=built.build_id, delta=built.delta)
            full = build_graph(records, CAPS, fingerprint=built.graph.fingerprint).graph
            assert load_graph(state, full.fingerprint) == without_notes(full)


def without_notes(graph: Graph) -> Graph:
    """The graph as graph.db keeps it: a drawn link's note comes back from links.json."""
    links = tuple(replace(link, note="") for link in graph.links)
    return Graph(nodes=graph.nodes, links=links, fingerprint=graph.fingerprint)


def rows(state: Path) -> int:
    with sqlite3.connect(graph_db_path(state)) as conn:
        return int(conn.execute("SELECT count(*) FROM links").fetchone()[0])


NEW = Graph(
    nodes=GRAPH.nodes,
    links=(*GRAPH.links, Link(source="x", target="y", rel="r", origin=Origin.MENTION, weight=1)),
    fingerprint="abd",
)
"""GRAPH with one more link, from a source GRAPH does not have."""


def delta(base: str, sources: frozenset[str] = frozenset()) -> GraphDelta:
    """A delta patched from build ``base`` that names only ``sources``."""
    empty: frozenset[str] = frozenset()
    return GraphDelta(nodes=empty, records=empty, sources=sources, names=empty, base=base)


def test_a_delta_rewrites_only_its_sources(tmp_path: Path) -> None:
    """A build patched from the one kept rewrites only the delta's rows, nothing else."""
    assert save_graph(tmp_path, GRAPH, build_id="one")
    # the delta names no source: the new link is not written, which shows only it is applied
    assert save_graph(tmp_path, NEW, build_id="two", delta=delta("one"))
    assert rows(tmp_path) == 1
    assert save_graph(tmp_path, NEW, build_id="three", delta=delta("two", frozenset({"x"})))
    assert load_graph(tmp_path, "abd") == NEW


def test_a_delta_from_another_build_rewrites_every_row(tmp_path: Path) -> None:
    """When the file holds another build than the delta's base, every row is written."""
    assert save_graph(tmp_path, GRAPH, build_id="one")
    assert save_graph(tmp_path, NEW, build_id="two", delta=delta("not the one kept"))
    assert load_graph(tmp_path, "abd") == NEW


def test_another_fingerprint_reads_as_nothing(tmp_path: Path) -> None:
    """A kept graph of other stores (another fingerprint) is not answered."""
    assert save_graph(tmp_path, GRAPH)
    assert load_graph(tmp_path, "abd") is None
    assert load_graph(tmp_path, "abc") == GRAPH


def test_a_damaged_file_reads_as_nothing_and_is_replaced(tmp_path: Path) -> None:
    """Garbage where graph.db belongs: no graph answered; the next save starts a new file."""
    path = graph_db_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)
    assert load_graph(tmp_path, "abc") is None
    save_graph(tmp_path, GRAPH)  # the damage is found here, and the file removed
    assert save_graph(tmp_path, GRAPH)
    assert load_graph(tmp_path, "abc") == GRAPH


def test_a_foreign_database_is_replaced(tmp_path: Path) -> None:
    """A SQLite file of another schema (or code version) is emptied and rebuilt, not trusted."""
    path = graph_db_path(tmp_path)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('fingerprint', 'abc'), ('build', 'one')")
        conn.execute("CREATE TABLE other(x INTEGER PRIMARY KEY AUTOINCREMENT)")
        conn.execute("INSERT INTO other VALUES (NULL)")  # SQLite's own sqlite_sequence too
    assert load_graph(tmp_path, "abc") is None
    assert save_graph(tmp_path, GRAPH, build_id="one")
    assert load_graph(tmp_path, "abc") == GRAPH


def test_a_save_deletes_the_graph_json_it_replaces(tmp_path: Path) -> None:
    """The graph.json that kept the graph before graph.db is removed from the cache folder."""
    old = graph_db_path(tmp_path).with_name("graph.json")
    old.parent.mkdir(parents=True)
    old.write_bytes(graph_to_json(GRAPH))
    assert save_graph(tmp_path, GRAPH)
    assert not old.exists()


def test_the_file_is_private(tmp_path: Path) -> None:
    """graph.db holds titles: readable by its owner only."""
    assert save_graph(tmp_path, GRAPH)
    assert stat.S_IMODE(graph_db_path(tmp_path).stat().st_mode) == 0o600


def write_topics(state: Path, names: list[str]) -> None:
    (state / "memory").mkdir(parents=True, exist_ok=True)
    (state / "memory" / "topics.json").write_text(json.dumps([{"name": n} for n in names]))


class TestThroughQueries:
    def test_built_then_reused(self, tmp_path: Path) -> None:
        """The first query builds and keeps the graph; the next one reads it unchanged."""
        write_topics(tmp_path, ["telemetry"])
        first = current_graph(tmp_path, Caps())
        assert load_graph(tmp_path, graph_fingerprint(tmp_path, Caps())) == first
        assert [n.id for n in first.nodes] == ["topic:telemetry"]

    def test_rebuilt_when_a_store_changes(self, tmp_path: Path) -> None:
        """Editing a store changes the fingerprint, so the graph is rebuilt."""
        write_topics(tmp_path, ["telemetry"])
        current_graph(tmp_path, Caps())
        write_topics(tmp_path, ["telemetry", "auth"])
        os.utime(tmp_path / "memory" / "topics.json", ns=(1, 2_000_000_000_000_000_000))
        found = {n.id for n in current_graph(tmp_path, Caps()).nodes}
        assert found == {"topic:telemetry", "topic:auth"}

    def test_unwritable_cache_still_answers(self, tmp_path: Path) -> None:
        """When graph.db cannot be written the graph is still built and returned."""
        write_topics(tmp_path, ["telemetry"])
        graph_db_path(tmp_path).mkdir(parents=True)  # a folder where the file belongs
        assert [n.id for n in current_graph(tmp_path, Caps()).nodes] == ["topic:telemetry"]


def test_reading_a_graph_back_runs_no_collection(tmp_path: Path) -> None:
    """Thousands of nodes and links read back with the cyclic collector paused (it may run at
    the end, once per generation: not every 700 objects made)."""
    nodes = tuple(Node(id=f"topic:{i:05}", kind=Kind.TOPIC, title=f"t{i}") for i in range(3000))
    links = tuple(
        Link(source=a.id, target=b.id, rel="related", origin=Origin.MENTION, weight=1.0)
        for a, b in itertools.pairwise(nodes)
    )
    graph = Graph(nodes=nodes, links=links, fingerprint="big")
    assert save_graph(tmp_path, graph)
    runs: list[str] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(phase)

    gc.callbacks.append(counted)
    try:
        loaded = load_graph(tmp_path, "big")
    finally:
        gc.callbacks.remove(counted)
    assert loaded == graph
    assert len(runs) <= 3
    assert gc.isenabled()

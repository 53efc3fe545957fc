"""The graph view's data and page (no browser): edges, sizes, safety, no CDN, the command, /graph.

``test_graphview_browser.py`` drives the page in Chromium; these check what it is given.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from helpers import DEMO_STORE, ROOT, serving
from secretcorpus import ALL_SECRETS, plant_state
from vaults import demo_vault, write_vault
from vaultsync.core.model import Graph, Kind, Link, Node, Origin
from vaultsync.graphview.data import KIND_COLORS, view_data
from vaultsync.graphview.page import VENDORED, note_paths, render_page
from vaultsync.http.auth import vault_token

VENDOR = ROOT / "pipeline" / "graphview" / "vendor"


def node(nid: str, kind: Kind, title: str = "") -> Node:
    return Node(id=nid, kind=kind, title=title or nid.partition(":")[2])


def link(a: str, b: str, rel: str, origin: Origin = Origin.STRUCTURAL) -> Link:
    return Link(source=a, target=b, rel=rel, origin=origin, weight=1.0)


GRAPH = Graph(
    nodes=(
        node("fact:aa", Kind.FACT, "Orbital streams telemetry"),
        node("project:orbital", Kind.PROJECT),
        node("tag:grpc", Kind.TAG),
        node("topic:telemetry", Kind.TOPIC),
    ),
    links=(
        link("fact:aa", "project:orbital", "in_project"),
        link("fact:aa", "tag:grpc", "tagged"),
        link("fact:aa", "topic:telemetry", "mentions", Origin.MENTION),
        link("topic:telemetry", "fact:aa", "about"),
    ),
)


def vaultsync(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "vaultsync", *args], capture_output=True, cwd=cwd, check=False
    )


def embedded(page: bytes) -> dict[str, object]:
    """The JSON the page draws, read back from its ``<script id="graph-data">``."""
    found = re.search(rb'<script type="application/json" id="graph-data">(.*?)</script>', page)
    assert found is not None
    data: dict[str, object] = json.loads(found.group(1))
    return data


class _Refs(HTMLParser):
    """Every ``src``/``href``/``action`` attribute, and each ``<script>``'s attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.scripts: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.refs += [v or "" for k, v in attrs if k in {"src", "href", "action", "srcset"}]
        if tag == "script":
            self.scripts.append(dict(attrs))


class TestViewData:
    def test_one_edge_per_pair_with_every_relation(self) -> None:
        """Two links between a topic and a fact are one edge carrying both, each with its way."""
        data = view_data(GRAPH, {})
        fact, topic = 0, 3
        edge = next(e for e in data.edges if e[:2] == (fact, topic))
        named = [(data.rels[r], data.origins[o], way) for r, o, way in edge[2]]
        assert named == [("about", "structural", -1), ("mentions", "mention", 1)]
        assert data.links == len(GRAPH.links)

    def test_degree_counts_distinct_neighbours(self) -> None:
        """A note's size comes from how many notes it is linked with, not how many links."""
        degrees = {n[0]: n[4] for n in view_data(GRAPH, {}).nodes}
        assert degrees == {"fact:aa": 3, "project:orbital": 1, "tag:grpc": 1, "topic:telemetry": 1}

    def test_kinds_coloured_tags_hidden_at_first(self) -> None:
        """Every kind has its own colour; only tags start hidden."""
        kinds = view_data(GRAPH, {}).kinds
        assert [k for k, _, _ in kinds] == [kind.value for kind in Kind]
        assert len({colour for _, colour, _ in kinds}) == len(KIND_COLORS) == len(Kind)
        assert [k for k, _, shown in kinds if not shown] == ["tag"]

    def test_paths_and_vault_name_go_in(self) -> None:
        """A note's vault path rides along for its Obsidian link; a note without one gets ""."""
        data = view_data(GRAPH, {"project:orbital": "Projects/orbital.md"}, "my vault")
        assert data.vault == "my vault"
        assert [n[3] for n in data.nodes] == ["", "Projects/orbital.md", "", ""]

    def test_script_breaking_title_stays_data(self) -> None:
        """A title holding ``</script>`` cannot end the data element; it reads back intact."""
        title = "</script><script>alert(1)</script> & <!--"
        graph = Graph(nodes=(node("topic:x", Kind.TOPIC, title),), links=())
        page = render_page(view_data(graph, {}))
        assert b"<script>alert(1)" not in page
        nodes = embedded(page)["nodes"]
        assert isinstance(nodes, list) and nodes[0][2] == title

    def test_same_graph_same_bytes(self) -> None:
        """The page is deterministic: the graph's links in another order give the same bytes."""
        shuffled = Graph(nodes=GRAPH.nodes, links=tuple(reversed(GRAPH.links)))
        assert render_page(view_data(GRAPH, {})) == render_page(view_data(shuffled, {}))


class TestPage:
    def test_nothing_loaded_from_outside(self) -> None:
        """No CDN: no attribute points anywhere, every script is inline, the CSP forbids loads."""
        page = render_page(view_data(GRAPH, {}))
        refs = _Refs()
        refs.feed(page.decode())
        assert refs.refs == []
        assert refs.scripts and all("src" not in attrs for attrs in refs.scripts)
        assert b"default-src 'none'" in page
        # the only URLs in the page: two GEXF namespace names inside graphology-library
        urls = set(re.findall(rb"https?://[^\s\"'<>)]*", page))
        assert urls == {b"http:///www.gexf.net/1.1draft/viz", b"http://www.gexf.net/1.2draft"}

    def test_vendored_files_are_the_published_ones(self) -> None:
        """Each vendored script has the SHA-256 its README lists, and a license beside it."""
        readme = (VENDOR / "README.md").read_text()
        for name in VENDORED:
            digest = hashlib.sha256((VENDOR / name).read_bytes()).hexdigest()
            assert f"{digest}  {name}" in readme
        for package in ("sigma", "graphology", "graphology-library"):
            assert (
                "Permission is hereby granted, free of charge"
                in (VENDOR / f"LICENSE-{package}.txt").read_text()
            )

    def test_packaged_with_the_install(self) -> None:
        """``pip install .`` carries every asset and vendored file (package data globs)."""
        setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
        assert "vaultsync.graphview" in setup["packages"]
        globs = setup["package-data"]["vaultsync.graphview"]
        folder = ROOT / "pipeline" / "graphview"
        files = [
            p.relative_to(folder) for d in ("assets", "vendor") for p in (folder / d).iterdir()
        ]
        assert len(files) == 10
        assert [f for f in files if not any(f.match(glob) for glob in globs)] == []


class TestNotePaths:
    def test_from_the_manifest(self, tmp_path: Path) -> None:
        """The vault's manifest gives each engine note's path."""
        write_vault(tmp_path, {"Projects/o.md": "x"}, engine={"Projects/o.md": "project:orbital"})
        assert note_paths(tmp_path) == {"project:orbital": "Projects/o.md"}

    def test_no_vault_no_paths(self, tmp_path: Path) -> None:
        """No vault (never synced) is no paths, not an error."""
        assert note_paths(tmp_path / "nothing") == {}


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the command tests: the demo's graph is built once, then reused."""
    return tmp_path_factory.mktemp("cache")


class TestCommand:
    @pytest.fixture(autouse=True)
    def _cache(self, shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(shared_cache))

    def test_writes_the_page_private(self, tmp_path: Path) -> None:
        """``graph view --out FILE`` writes the demo's page (mode 0600) and says what is in it."""
        out = tmp_path / "g.html"
        done = vaultsync(
            "graph",
            "view",
            "--state",
            str(DEMO_STORE),
            "--vault",
            str(tmp_path / "v"),
            "--out",
            str(out),
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.decode().startswith(f"wrote {out}: 213 notes, 459 links")
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        nodes = embedded(out.read_bytes())["nodes"]
        assert isinstance(nodes, list) and len(nodes) == 213

    def test_dash_is_stdout(self, tmp_path: Path) -> None:
        """``--out -`` prints the page and writes no file."""
        done = vaultsync(
            "graph",
            "view",
            "--state",
            str(DEMO_STORE),
            "--vault",
            str(tmp_path / "v"),
            "--out",
            "-",
            cwd=tmp_path,
        )
        assert done.returncode == 0 and done.stdout.startswith(b"<!DOCTYPE html>")
        assert list(tmp_path.iterdir()) == []

    def test_unwritable_target_is_one_line_exit_7(self, tmp_path: Path) -> None:
        """A folder that does not exist is exit 7 and one ``error:`` line, no traceback."""
        out = tmp_path / "missing" / "g.html"
        done = vaultsync(
            "graph",
            "view",
            "--state",
            str(DEMO_STORE),
            "--vault",
            str(tmp_path / "v"),
            "--out",
            str(out),
        )
        assert done.returncode == 7
        assert done.stderr.decode().splitlines() == [
            f"error: cannot write {out}: No such file or directory"
        ]


class TestServed:
    def test_graph_behind_the_token(self, tmp_path: Path) -> None:
        """``GET /graph`` is the page with a token and a 401 without, like every route."""
        from vaultsync.http.server import make_app

        state = tmp_path / "state"
        shutil.copytree(DEMO_STORE, state)
        vault = demo_vault(state, tmp_path / "vault")
        app = make_app(vault, state, host="127.0.0.1", refresh=0, environ={})
        with serving(app) as url, httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/graph").status_code == 401
            answer = client.get("/graph", headers={"authorization": f"Bearer {vault_token(vault)}"})
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/html")
        data = embedded(answer.content)
        assert data["vault"] == "vault"
        assert isinstance(data["nodes"], list) and len(data["nodes"]) == 213


def test_no_secret_in_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores full of planted secrets give a page (and a /graph answer) holding none of them."""
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    state = plant_state(tmp_path / "state")
    vault = tmp_path / "vault"
    assert vaultsync("sync", "--state", str(state), "--vault", str(vault)).returncode == 0
    done = vaultsync("graph", "view", "--state", str(state), "--vault", str(vault), "--out", "-")
    assert done.returncode == 0, done.stderr
    page = done.stdout.lower()
    assert len(embedded(done.stdout)["nodes"]) > 10  # type: ignore[arg-type]
    assert [s for s in ALL_SECRETS if s.lower().encode() in page] == []

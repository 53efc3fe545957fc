"""The graph view in a real headless Chromium: offline, counts, local graph, edges, search, /graph.

Marked ``external`` (it drives Debian's chromium through chromedriver, see ``browser.py``);
without them every test skips with one line saying how to install them.  A screenshot of the
demo vault's graph is written to the test's temporary folder (never committed).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from browser import chromium, missing, wait_for
from helpers import DEMO_STORE, serving
from vaults import demo_vault
from vaultsync.core.model import Graph, Kind
from vaultsync.core.settings import Caps
from vaultsync.graph.load import current_graph
from vaultsync.graphview.page import graph_page, note_paths

pytestmark = pytest.mark.external


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The demo store (a private copy), its synced vault, and the page ``graph view`` writes."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("graphview")
    state = root / "state"
    shutil.copytree(DEMO_STORE, state)
    vault = demo_vault(state, root / "vault")
    page = root / "graph.html"
    page.write_bytes(graph_page(state, vault, Caps())[0])
    return state, vault, page


@pytest.fixture(scope="module")
def graph(demo: tuple[Path, Path, Path]) -> Graph:
    return current_graph(demo[0], Caps())


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(driver: Any, demo: tuple[Path, Path, Path]) -> Any:
    """The demo page loaded from its file and laid out."""
    driver.get(demo[2].as_uri())
    wait_for(lambda: driver.execute_script("return document.body.dataset.layout"), "layout done")
    return driver


def shown(driver: Any) -> dict[str, int]:
    """The counts the page prints, and how many nodes and edges sigma draws."""
    count = driver.find_element("id", "count")
    drawn = driver.execute_script(
        """
        const r = window.graphview.renderer, g = r.getGraph();
        return [g.filterNodes(n => !r.getNodeDisplayData(n).hidden).length,
                g.filterEdges(e => !r.getEdgeDisplayData(e).hidden).length];
        """
    )
    return {
        "printed": int(count.get_attribute("data-nodes")),
        "drawn": drawn[0],
        "edges_printed": int(count.get_attribute("data-edges")),
        "edges_drawn": drawn[1],
    }


def click_at_node(driver: Any, node_id: str) -> None:
    """A real mouse click on a note's disc."""
    spot = driver.execute_script(
        """
        const gv = window.graphview, key = String(gv.nodeIndex(arguments[0]));
        return gv.renderer.graphToViewport(gv.graph.getNodeAttributes(key));
        """,
        node_id,
    )
    click_in_graph(driver, spot["x"], spot["y"])


def click_in_graph(driver: Any, x: float, y: float) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    box = driver.find_element("id", "graph")
    size = box.size
    ActionChains(driver).move_to_element_with_offset(
        box, round(x - size["width"] / 2), round(y - size["height"] / 2)
    ).click().perform()


def two_hops(graph: Graph, node_id: str) -> set[str]:
    """The notes of a local graph as the page shows it: two hops, tags hidden."""
    seen, frontier = {node_id}, {node_id}
    for _ in range(2):
        reached = {
            other
            for n in frontier
            for link in (*graph.links_from(n), *graph.links_to(n))
            for other in (link.source, link.target)
            if graph.by_id[other].kind is not Kind.TAG
        }
        frontier = reached - seen
        seen |= reached
    return seen


def test_loads_offline_and_screenshot(page: Any, tmp_path: Path) -> None:
    """The file page fetches nothing, logs no error, and draws: a screenshot is taken."""
    assert page.execute_script("return performance.getEntriesByType('resource').length") == 0
    errors = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    shot = tmp_path / "graph.png"
    assert page.save_screenshot(str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")
    print(f"screenshot: {shot}")  # where to look, with pytest -s


def test_node_count_matches_the_graph(page: Any, graph: Graph) -> None:
    """Tags hidden at first: every other note is drawn and counted; ticking tags adds them."""
    notes = sum(1 for n in graph.nodes if n.kind is not Kind.TAG)
    first = shown(page)
    assert first["printed"] == first["drawn"] == notes
    assert first["edges_printed"] == first["edges_drawn"] > 0
    page.find_element("id", "kind-tag").click()
    assert shown(page)["printed"] == shown(page)["drawn"] == len(graph.nodes)


def test_relation_filter_hides_its_edges(page: Any, graph: Graph) -> None:
    """Unticking a relation hides the connections made only of it."""
    before = shown(page)["edges_drawn"]
    page.find_element("css selector", "#rel-filter summary").click()
    page.find_element("id", "rel-about").click()
    after = shown(page)
    assert after["edges_printed"] == after["edges_drawn"] < before


def test_click_node_shows_local_graph_and_obsidian_link(
    page: Any, graph: Graph, demo: tuple[Path, Path, Path]
) -> None:
    """Clicking a note shows its two-hop graph and a link opening its note in Obsidian."""
    vault = demo[1]
    click_at_node(page, "project:orbital")
    link = wait_for(lambda: page.find_elements("id", "open-obsidian"), "the node's panel")[0]
    path = note_paths(vault)["project:orbital"].removesuffix(".md")
    assert link.get_attribute("href") == (
        f"obsidian://open?vault={quote(vault.name, safe='')}&file={quote(path, safe='')}"
    )
    counts = shown(page)
    assert counts["printed"] == counts["drawn"] == len(two_hops(graph, "project:orbital"))


def test_select_edge_shows_relations_and_origins(page: Any, graph: Graph) -> None:
    """Clicking a connection with two relations lists both (`about · links_to`), with origins."""
    fact, topic = "fact:446a88b7927b6f200cdb74f2", "topic:telemetry"
    rels = sorted({link.rel for link in graph.links if {link.source, link.target} == {fact, topic}})
    assert len(rels) == 2
    click_at_node(page, topic)
    wait_for(lambda: page.find_elements("id", "open-obsidian"), "the topic's panel")
    still = "return !window.graphview.renderer.getCamera().isAnimated()"
    wait_for(lambda: page.execute_script(still), "the camera at rest")  # or it moves after us
    # Zoom onto the middle of the connection, so the click lands on it and on nothing else.
    page.execute_script(
        """
        const gv = window.graphview, r = gv.renderer;
        const a = r.getNodeDisplayData(String(gv.nodeIndex(arguments[0])));
        const b = r.getNodeDisplayData(String(gv.nodeIndex(arguments[1])));
        r.getCamera().setState({x: (a.x + b.x) / 2, y: (a.y + b.y) / 2, ratio: 0.05});
        r.refresh();
        """,
        fact,
        topic,
    )
    size = page.find_element("id", "graph").size
    click_in_graph(page, size["width"] / 2, size["height"] / 2)
    relations = wait_for(lambda: page.find_elements("id", "edge-relations"), "the edge's panel")
    assert relations[0].text == " · ".join(rels)
    details = page.find_element("id", "edge-details").text
    assert "(structural)" in details and "(wikilink)" in details


def test_search_focuses_the_note(page: Any, graph: Graph) -> None:
    """Typing a title lists the note; Enter shows its local graph."""
    box = page.find_element("id", "search")
    box.send_keys("ledger")
    first = wait_for(lambda: page.find_elements("css selector", "#results button"), "results")[0]
    assert first.text == graph.by_id["project:ledger"].title
    box.send_keys("\n")
    assert shown(page)["drawn"] == len(two_hops(graph, "project:ledger"))


def test_served_at_graph(driver: Any, demo: tuple[Path, Path, Path], graph: Graph) -> None:
    """`vaultsync serve` serves the same page at /graph, which draws the graph offline too."""
    from vaultsync.http.server import make_app

    state, vault, _ = demo
    app = make_app(vault, state, host="127.0.0.1", refresh=0, auth=False, environ={})
    with serving(app) as url:
        driver.get(f"{url}/graph")
        wait_for(lambda: driver.execute_script("return document.body.dataset.layout"), "layout")
        counts = shown(driver)
        resources = driver.execute_script("return performance.getEntriesByType('resource')")
    assert counts["drawn"] == sum(1 for n in graph.nodes if n.kind is not Kind.TAG)
    assert resources == []

"""The graph view at 10,000 notes: page build, then first paint and layout in headless Chromium.

Usage: python bench/graphview.py [--notes 10000] [--runs 3] [--out bench/results/graphview.json]
                                 [--screenshot PNG]

Writes a synthetic store (``vaultsync.synthetic``, seeded) with the seed's caps raised so every
note is in the graph, runs ``vaultsync graph view`` (wall time, graph cached as on a second
run), then loads the page ``--runs`` times in a fresh headless Chromium (Debian's, through
chromedriver, as the browser test does) and reads the page's own clocks: ``firstPaint`` (ms
from navigation start to the frame after sigma's first draw), ``layoutMs`` (time spent in
ForceAtlas2) and ``layoutDone`` (ms from navigation start to the frame after the last layout
step).  There is no GPU here: WebGL runs in software (SwiftShader), so frame rates mean little.
Prints the medians and writes them as JSON beside the Markdown table of ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from browser import chromium, missing, wait_for  # noqa: E402 - after sys.path

RAISED_CAPS = {
    "VAULTSYNC_CAP_EPISODES": "1000000",
    "VAULTSYNC_CAP_SESSIONS": "1000000",
    "VAULTSYNC_CAP_DOCS_PER_CONTEXT": "1000000",
    "VAULTSYNC_CAP_DOCS_TOTAL": "1000000",
}


def build_page(root: Path, notes: int) -> tuple[Path, dict[str, float]]:
    from vaultsync.synthetic import generate_store

    state = root / "state"
    generate_store(state, notes=notes, seed=1)
    env = {**os.environ, **RAISED_CAPS, "VAULTSYNC_CACHE_DIR": str(root / "cache")}
    page = root / "graph.html"
    command = [sys.executable, "-m", "vaultsync", "graph", "view", "--state", str(state)]
    command += ["--vault", str(root / "vault"), "--out", str(page)]
    times = []
    for _ in range(2):  # the first builds graph.db, the second reuses it
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return page, {"cold_s": times[0], "cached_s": times[1], "page_mib": page.stat().st_size / 2**20}


def measure(page: Path, screenshot: Path | None = None) -> dict[str, float]:
    with chromium() as driver:
        driver.get(page.as_uri())
        wait_for(lambda: driver.execute_script("return document.body.dataset.layout"), "layout")
        clocks = driver.execute_script(
            "const t = window.graphview.timings, s = window.graphview.shown();"
            "return {start: t.start, firstPaint: t.firstPaint, layoutMs: t.layoutMs,"
            " layoutDone: t.layoutDone, renderMs: t.renderMs,"
            " iterations: t.iterations, nodes: window.graphview.graph.order,"
            " edges: window.graphview.graph.size, shownNodes: s.nodes, shownEdges: s.edges};"
        )
        if screenshot is not None:
            driver.save_screenshot(str(screenshot))
    return {key: float(value) for key, value in clocks.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "graphview.json")
    parser.add_argument("--screenshot", type=Path, help="a PNG of the laid-out page (last run)")
    args = parser.parse_args()
    if missing() is not None:
        raise SystemExit(f"bench: {missing()}")
    with tempfile.TemporaryDirectory(prefix="vaultsync-graphview-") as tmp:
        page, build = build_page(Path(tmp), args.notes)
        runs = [measure(page) for _ in range(args.runs - 1)]
        runs.append(measure(page, args.screenshot))
    median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    result = {
        "notes": args.notes,
        "runs": args.runs,
        "build": build,
        "median": median,
        "all": runs,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), {platform.system()}",
        "python": platform.python_version(),
        "chromium": subprocess.run(
            ["/usr/bin/chromium", "--version"], capture_output=True, text=True, check=False
        ).stdout.strip(),
    }
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(json.dumps({"build": build, "median": median}, indent=2))


if __name__ == "__main__":
    main()

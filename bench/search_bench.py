"""Benchmark the search index: build it, update it, and answer 1,000 queries with p50/p95.

Usage::

    .venv/bin/python bench/search_bench.py VAULT [--queries 1000] [--seed 7] [--json FILE]
    .venv/bin/python bench/search_bench.py --generate 10000 [...]

VAULT is a synced vault (the 10,000-note vault of ``make bench``).  With ``--generate N`` a
synthetic store of N notes (``vaultsync.synthetic``, seed 7) is synced into
``bench/out/search-N/vault`` first (kept for the next run).  The vault's notes are only read;
its search index (``.vaultsync/search.db``) is rebuilt.

Figures (in-process):

* ``build_s``: ``update_index(vault, rebuild=True)``: walk, read, hash, parse, index, resolve;
* ``noop_update_s``: the update a search runs first when nothing changed (stat walk only),
  median of 5;
* ``p50_ms``/``p95_ms``/``p99_ms``/``mean_ms``: ``IndexReader.search`` (BM25 ranking, snippets
  and the linked-notes expansion, limit 10) over ``--queries`` queries drawn with the seed
  from the index's own vocabulary (``fts5vocab``): 60% one word, 25% two words, 10% a prefix
  ``abc*``, 5% a two-word phrase; ``rows_p50`` is the median number of notes matching.

``main`` prints a Markdown row and returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vaultsync.search.index import index_path, update_index  # noqa: E402
from vaultsync.search.model import SearchQuery  # noqa: E402
from vaultsync.search.query import match_expression  # noqa: E402
from vaultsync.search.reader import IndexReader  # noqa: E402
from vaultsync.synthetic import generate_store  # noqa: E402

OUT = ROOT / "bench" / "out"
RAISED_CAPS = {
    "VAULTSYNC_CAP_EPISODES": "1000000",
    "VAULTSYNC_CAP_SESSIONS": "1000000",
    "VAULTSYNC_CAP_DOCS_PER_CONTEXT": "1000000",
    "VAULTSYNC_CAP_DOCS_TOTAL": "1000000",
}


def generated_vault(notes: int) -> Path:
    """A synthetic store of ``notes`` notes synced into a vault (made once, then reused)."""
    work = OUT / f"search-{notes}"
    vault = work / "vault"
    if (vault / ".vaultsync" / "manifest.json").is_file():
        return vault
    generate_store(work / "state", notes=notes, seed=7)
    env = {**os.environ, **RAISED_CAPS, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@l",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@l"}  # fmt: skip
    command = [sys.executable, "-m", "pipeline", "sync", "--state", str(work / "state"),
               "--vault", str(vault), "--no-commit"]  # fmt: skip
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return vault


def vocabulary(vault: Path) -> list[tuple[str, int]]:
    """Every term of the index with the number of notes holding it, sorted by term."""
    conn = sqlite3.connect(f"{index_path(vault).absolute().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, 'fts', 'row')")
        rows = conn.execute("SELECT term, doc FROM temp.vocab ORDER BY term").fetchall()
    finally:
        conn.close()
    return [(str(term), int(doc)) for term, doc in rows if str(term).isalpha() and len(term) > 2]


def make_queries(vocab: list[tuple[str, int]], count: int, seed: int) -> list[str]:
    """``count`` queries drawn with ``seed`` (the mix is in the module docstring)."""
    rng = random.Random(seed)
    terms = [term for term, _ in vocab]
    queries: list[str] = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.60:
            queries.append(rng.choice(terms))
        elif roll < 0.85:
            queries.append(f"{rng.choice(terms)} {rng.choice(terms)}")
        elif roll < 0.95:
            queries.append(rng.choice(terms)[:3] + "*")
        else:
            queries.append(f'"{rng.choice(terms)} {rng.choice(terms)}"')
    return queries


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run(vault: Path, *, queries: int, seed: int) -> dict[str, Any]:
    """Build the index, time a no-op update, then time ``queries`` searches."""
    start = time.perf_counter()
    report = update_index(vault, rebuild=True)
    build_s = time.perf_counter() - start
    noop = []
    for _ in range(5):
        start = time.perf_counter()
        update_index(vault)
        noop.append(time.perf_counter() - start)
    texts = make_queries(vocabulary(vault), queries, seed)
    reader = IndexReader(vault)
    latencies: list[float] = []
    hits: list[int] = []
    linked: list[int] = []
    rows: list[int] = []
    conn = sqlite3.connect(f"{index_path(vault).absolute().as_uri()}?mode=ro", uri=True)
    for text in texts:
        start = time.perf_counter()
        result = reader.search(SearchQuery(text=text, limit=10))
        latencies.append((time.perf_counter() - start) * 1000)
        hits.append(len(result.hits))
        linked.append(len(result.linked))
        if len(rows) < 200:  # how many notes match, for context
            matching = "SELECT count(*) FROM fts WHERE fts MATCH ?"
            rows.append(conn.execute(matching, (match_expression(text),)).fetchone()[0])
    conn.close()
    reader.close()
    return {
        "notes": report.notes,
        "build_s": round(build_s, 3),
        "noop_update_s": round(statistics.median(noop), 4),
        "db_mib": round(index_path(vault).stat().st_size / 2**20, 1),
        "queries": len(texts),
        "p50_ms": round(percentile(latencies, 0.50), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "mean_ms": round(statistics.fmean(latencies), 2),
        "rows_p50": int(statistics.median(rows)) if rows else 0,
        "hits_mean": round(statistics.fmean(hits), 2),
        "linked_mean": round(statistics.fmean(linked), 2),
        "seed": seed,
    }


def markdown(row: dict[str, Any]) -> str:
    columns = ("notes", "build_s", "noop_update_s", "db_mib", "queries", "p50_ms", "p95_ms",
               "p99_ms", "rows_p50", "hits_mean", "linked_mean")  # fmt: skip
    return "\n".join(
        [
            "| " + " | ".join(columns) + " |",
            "|" + "---|" * len(columns),
            "| " + " | ".join(str(row[c]) for c in columns) + " |",
        ]
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("vault", nargs="?", type=Path, help="a synced vault")
    parser.add_argument(
        "--generate", type=int, metavar="N", help="sync a synthetic N-note store first"
    )
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.vault is None and args.generate is None:
        parser.error("give a VAULT or --generate N")
    vault = args.vault if args.vault is not None else generated_vault(args.generate)
    row = run(vault, queries=args.queries, seed=args.seed)
    print(markdown(row))
    if args.json is not None:
        args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    return row


if __name__ == "__main__":
    main()

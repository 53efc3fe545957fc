"""``make bench``: ``sync --each`` over many small sender state directories, 1 shard vs 2.

A ChatCLI gateway sender's state directory is small: a few facts, an episode or two, a daily
note.  This writes ``--senders`` of them under ``ROOT/<platform>/<chat id>/`` (the same bytes
every run), then times, on fresh copies of that tree:

* ``1 shard``:  one ``vaultsync sync --each ROOT --json``;
* ``2 shards``: ``--shard 0/2`` and ``--shard 1/2`` started together (two cron lines, two
  Job indexes), the wall time until both end;

each for the first sync (every vault created and committed), the run right after it (nothing
changed, but notes written within 2 s of the sync's own records are read again: the racy
rule of ``vault.quick``) and a third run (the quick answer: what most cron runs are).  CPU is the user + system time
of the processes (``RUSAGE_CHILDREN``).  ``--in-process`` adds the 1-shard first sync with
every vault run in the parent process instead of a forked child, to weigh the fork.
Writes ``bench/results/each-<date>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
VAULTSYNC = Path(sys.executable).with_name("vaultsync")
PLATFORMS = ("telegram", "discord", "slack", "whatsapp")
WRITTEN = datetime(2026, 11, 20, tzinfo=UTC).timestamp()


def write_senders(root: Path, count: int) -> None:
    """``count`` small sender state directories under ``root`` (deterministic bytes)."""
    for i in range(count):
        state = root / PLATFORMS[i % len(PLATFORMS)] / f"{1_000_000 + i * 7919}"
        memory = state / "memory"
        (memory / "202611").mkdir(parents=True)
        facts = [
            {
                "id": f"{i:012x}{k:012x}",
                "content": f"Sender {i} prefers answer style {k}",
                "category": "preference",
                "created_at": "2026-11-0{k}T10:00:00Z".replace("0{k}", f"0{k + 1}"),
                "last_accessed": "2026-11-20T10:00:00Z",
                "access_count": k,
                "score": 1.0,
                "confidence": 0.9,
                "provenance": "user",
            }
            for k in range(3)
        ]
        (memory / "memory_index.json").write_text(json.dumps(facts, indent=2))
        episodes = [
            {
                "id": f"ep_{i:012x}{k:012x}",
                "date": f"2026-11-1{k}T09:00:00Z",
                "summary": f"Asked about deploy step {k}",
                "outcome": "answered",
                "created_at": f"2026-11-1{k}T09:05:00Z",
            }
            for k in range(2)
        ]
        (memory / "episodes.json").write_text(json.dumps(episodes, indent=2))
        (memory / "202611" / "20261112.md").write_text(f"\n## 09:00\n\nSender {i} asked twice.\n")
        for path in (*memory.rglob("*"), state):  # written long ago, as a real store's files
            os.utime(path, (WRITTEN, WRITTEN))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_shards(root: Path, shards: int) -> dict[str, float | int]:
    """``shards`` processes of ``sync --each ROOT`` started together: wall, CPU, exit codes."""
    cpu, start = _children_cpu(), time.perf_counter()
    procs = []
    for k in range(shards):
        share = ["--shard", f"{k}/{shards}"] if shards > 1 else []
        procs.append(subprocess.Popen(
            [str(VAULTSYNC), "sync", "--each", str(root), *share, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        ))  # fmt: skip
    summaries = [json.loads(p.communicate()[0]) for p in procs]
    wall = time.perf_counter() - start
    failed = sum(s["failed"] for s in summaries) + sum(p.returncode != 0 for p in procs)
    synced = sum(s["synced"] for s in summaries)
    return {"wall_s": round(wall, 2), "cpu_s": round(_children_cpu() - cpu, 2),
            "vaults": synced, "failed": failed}  # fmt: skip


def in_process(root: Path) -> dict[str, float | int]:
    """The 1-shard first sync with every vault in this process (no fork), for comparison."""
    code = (
        "import sys; from vaultsync.core import parallel; "
        "from vaultsync.app import each; each._runner = lambda: (lambda one, n, s: one()); "
        "from vaultsync.cli.main import main; sys.argv = ['vaultsync', 'sync', '--each', "
        f"{str(root)!r}, '--json']; main()"
    )
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    wall = time.perf_counter() - start
    summary = json.loads(done.stdout)
    return {"wall_s": round(wall, 2), "cpu_s": round(_children_cpu() - cpu, 2),
            "vaults": summary["synced"], "failed": summary["failed"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senders", type=int, default=2000)
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    work = HERE / "out" / "each"
    shutil.rmtree(work, ignore_errors=True)
    seed = work / "seed"
    write_senders(seed, args.senders)
    rows: dict[str, dict[str, float | int]] = {}
    for shards in (1, 2):
        root = work / f"root-{shards}"
        shutil.copytree(seed, root, symlinks=True)
        rows[f"{shards} shard(s), first sync"] = run_shards(root, shards)
        rows[f"{shards} shard(s), second run (notes just written: re-read)"] = run_shards(
            root, shards
        )
        rows[f"{shards} shard(s), steady (nothing changed: quick answer)"] = run_shards(
            root, shards
        )
        print(shards, rows, flush=True)
    if args.in_process:
        root = work / "root-inprocess"
        shutil.copytree(seed, root, symlinks=True)
        rows["1 shard, first sync, in-process (no fork)"] = in_process(root)
    write_results(args, rows)
    shutil.rmtree(work, ignore_errors=True)


def write_results(args: argparse.Namespace, rows: dict[str, dict[str, float | int]]) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"date": stamp, "senders": args.senders, "cpus": os.cpu_count(),
            "python": sys.version.split()[0]}  # fmt: skip
    (args.out / f"each-{stamp}.json").write_text(
        json.dumps({**meta, "runs": rows}, indent=2) + "\n"
    )
    lines = [
        f"# sync --each: {args.senders} sender state directories ({stamp}, "
        f"{os.cpu_count()} CPUs, shared)",
        "",
        "| run | wall (s) | CPU (s) | vaults | failed | ms wall / vault |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        per = 1000 * float(row["wall_s"]) / max(int(row["vaults"]), 1)
        lines.append(
            f"| {name} | {row['wall_s']} | {row['cpu_s']} | {row['vaults']} | {row['failed']} "
            f"| {per:.0f} |"
        )
    (args.out / f"each-{stamp}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""`vaultsync watch` measured: store change → commit latency, and CPU while idle.

    .venv/bin/python bench/watch.py --notes 2800 [--idle 30]

Writes a synthetic store (``vaultsync.synthetic``), syncs it, starts a watcher with the
default timings, then, per run, changes one fact and times until the vault's HEAD moves.
The latency minus ``watch.debounce_s`` is what polling (≤ ``watch.poll_s``) and the sync add.
Idle CPU is the watcher's user+system time over ``--idle`` seconds with no change.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

VAULTSYNC = [sys.executable, "-m", "vaultsync"]
DEBOUNCE_S = 5.0  # watch.debounce_s's default: the quiet period a change → commit includes
RAISED_CAPS = {  # as bench/run.py: past 10,000 notes every note of the store is rendered
    "VAULTSYNC_CAP_EPISODES": "1000000",
    "VAULTSYNC_CAP_SESSIONS": "1000000",
    "VAULTSYNC_CAP_DOCS_PER_CONTEXT": "1000000",
    "VAULTSYNC_CAP_DOCS_TOTAL": "1000000",
}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def head(vault: Path) -> str:
    """The vault's HEAD commit id."""
    return str(pygit2.Repository(str(vault)).head.target)


def change_one_fact(state: Path, run: int) -> None:
    """Edit the first fact the way ChatCLI does: a temp file renamed over the store."""
    path = state / "memory" / "memory_index.json"
    facts = json.loads(path.read_text())
    facts[0]["content"] = f"{facts[0]['content'].split(' [watch')[0]} [watch {run}]"
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(facts, indent=2))
    temp.replace(path)


def wait_moved(vault: Path, before: str, timeout: float = 300) -> float:
    """Seconds until HEAD is no longer ``before``."""
    start = time.monotonic()
    while head(vault) == before:
        if time.monotonic() - start > timeout:
            raise SystemExit("the watcher did not commit in time")
        time.sleep(0.02)
    return time.monotonic() - start


def wait_quiet(pid: int, timeout: float = 600) -> None:
    """Until ``pid`` used under 10 % of a core over one second."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(1)
        if cpu_seconds(pid) - before < 0.1:
            return


def main() -> None:
    """Measure and print one line per figure."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=2800)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=30)
    parser.add_argument("--json", type=Path, help="also write the figures here (bench/run.py)")
    args = parser.parse_args()
    from vaultsync.synthetic import generate_store

    with tempfile.TemporaryDirectory() as tmp:
        state, vault = Path(tmp) / "state", Path(tmp) / "vault"
        generate_store(state, notes=args.notes, seed=7)
        where = ["--state", str(state), "--vault", str(vault)]
        env = {**os.environ, **(RAISED_CAPS if args.notes > 10_000 else {})}
        subprocess.run([*VAULTSYNC, "sync", *where], check=True, stdout=subprocess.DEVNULL, env=env)
        watcher = subprocess.Popen(
            [*VAULTSYNC, "watch", *where], stdout=subprocess.DEVNULL, env=env
        )
        time.sleep(11)  # the first sync comes 10 s after the start
        wait_quiet(watcher.pid)  # it may be a full one (notes written within the racy window)
        start_cpu, start = cpu_seconds(watcher.pid), time.monotonic()
        time.sleep(args.idle)
        idle = (cpu_seconds(watcher.pid) - start_cpu) / (time.monotonic() - start)
        latencies = []
        for run in range(args.runs):
            before = head(vault)
            change_one_fact(state, run)
            latencies.append(wait_moved(vault, before))
        watcher.send_signal(signal.SIGTERM)
        code = watcher.wait()
    latencies.sort()
    print(f"notes {args.notes}: change → commit {latencies[len(latencies) // 2]:.2f} s median "
          f"(min {latencies[0]:.2f}, max {latencies[-1]:.2f}; debounce 5 s, poll 1 s)")  # fmt: skip
    print(f"idle CPU {idle * 100:.2f} % of one core over {args.idle:g} s; exit {code}")
    if args.json:
        median = latencies[len(latencies) // 2]
        figures = {"watch_commit_s": median, "watch_over_quiet_s": median - DEBOUNCE_S,
                   "watch_min_s": latencies[0], "watch_max_s": latencies[-1],
                   "watch_idle_cpu": idle, "watch_runs": args.runs}  # fmt: skip
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()

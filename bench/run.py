"""`make bench`: time vaultsync on synthetic stores, side by side with git's own floor.

Usage: python bench/run.py [--sizes 2800,10000] [--runs 5] [--out bench/results]

Per size it writes a store with ``vaultsync.synthetic`` (seeded, deterministic), then measures:
graph build cold, rebuilt (parsed document texts kept) and warm in-process, and the size of
graph.db (the kept graph); building every note's spec (layout and keys) against rendering every note (up to
10,000 notes); first sync, no-op sync, sync after changing one fact, sync after adding one
document and ``check`` as whole commands (wall time, median of ``--runs``, interpreter start
included, the file system flushed before each), and a no-op sync right after a first and
after a one-fact sync (inside their racy window, nothing flushed); the peak RSS of a first
sync; and, in the same run, the floors: ``git add -A && git commit`` of the same rendered tree,
plain and durable (``&& sync``), ``python -c pass`` and ``git status --porcelain`` on the
synced vault.  At 2,800 and 100,000 notes it runs ``bench/watch.py`` (store change → commit
under ``vaultsync watch``).  The results end with the goal table: every measure beside
its goal and its floor, met or missed by how much.  Past 10,000 notes the seed's caps bind, so they are raised
through their settings (``VAULTSYNC_CAP_*``) and the results say so.  Once per run: secret
masking of 1 MB of Markdown lines and of one long line at 100 KB and 1 MB (linear in its length).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
VAULTSYNC = [sys.executable, "-m", "pipeline"]
RAISED_CAPS = {
    "VAULTSYNC_CAP_EPISODES": "1000000",
    "VAULTSYNC_CAP_SESSIONS": "1000000",
    "VAULTSYNC_CAP_DOCS_PER_CONTEXT": "1000000",
    "VAULTSYNC_CAP_DOCS_TOTAL": "1000000",
}


def timed(
    command: list[str], *, env: dict[str, str], cwd: Path | None = None, flush: bool = True
) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one command, which must succeed.

    The file system is flushed first: a sync ends with ``syncfs``, which would otherwise also
    pay for the previous command's unwritten data (git's loose objects, a deleted vault).
    ``flush=False`` runs it at once (a no-op right after a sync, inside its racy window).
    """
    if flush:
        os.sync()
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench: {' '.join(command)} failed")
    return elapsed, usage.ru_maxrss


def _tree(pid: int) -> list[int]:
    """The process and its descendants, from /proc (Linux)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        pending.extend(int(child) for child in children)
    return found


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def peak_memory(command: list[str], *, env: dict[str, str]) -> tuple[int, int]:
    """Peak RSS (KiB, ``wait4``) and peak PSS of the whole process tree (KiB, sampled).

    ``ru_maxrss`` is the largest single process; a sync that forks a rendering helper holds
    both at once, so the tree's PSS (shared pages counted once) is sampled every 20 ms too.
    Run apart from the timed runs, which the sampling would slow.
    """
    os.sync()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], sum(_pss_kib(pid) for pid in _tree(process.pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    done.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench: {' '.join(command)} failed")
    return usage.ru_maxrss, peak[0]


def median(samples: list[float]) -> float:
    return statistics.median(samples)


CALIBRATION_LOOP = "s = 0\nfor i in range(10_000_000):\n    s += i\n"
CALIBRATION_REFERENCE_S = 0.55
"""The loop's time on the machine of ``bench/results/large/2026-12-02.md`` (estimated from that
run's figures, about 4× faster than the 2026-12-04 machine): machines differ this much, and
every absolute goal is read against it."""


def calibration() -> float:
    """Seconds of a fixed pure-Python loop (10M additions), best of 3: this machine's speed."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        exec(CALIBRATION_LOOP, {})  # noqa: S102 - a constant loop, our own text
        times.append(time.perf_counter() - start)
    return min(times)


def in_process(state: Path, env: dict[str, str], *, profiled: bool) -> dict[str, Any]:
    """Graph build in one process: cold (nothing kept), rebuild (a store changed: the parsed
    document texts are kept) and warm (graph.db reused).  ``profiled``: then one more cold
    and warm build under cProfile, as ``profiles`` (what explains a missed build goal)."""
    code = f"""
import json, os, sys, time
from pathlib import Path
from vaultsync.graph import graphdb, parsedtexts
from vaultsync.core.sqlitefile import remove_database
from vaultsync.graph import load as app
from vaultsync.core.config import resolve
state = Path({str(state)!r}); caps = resolve({{}}, vault=Path()).caps
remove_database(graphdb.graph_db_path(state)); remove_database(parsedtexts.parsed_texts_path(state))
t0 = time.perf_counter(); records = app.read_records(state); t1 = time.perf_counter()
from vaultsync.graph.build import build_graph
built = build_graph(records, caps); t2 = time.perf_counter()
parsedtexts.save_parsed_texts(state, built.documents, {{}})
rebuild = []
for _ in range(5):
    t = time.perf_counter()
    build_graph(records, caps, known=parsedtexts.load_parsed_texts(state))
    rebuild.append(time.perf_counter() - t)
rebuild.sort()
app.current_graph(state, caps)
warm = []
for _ in range(5):
    t = time.perf_counter(); g = app.current_graph(state, caps); warm.append(time.perf_counter() - t)
warm.sort()
figures = {{"extract_s": t1 - t0, "build_cold_s": t2 - t1, "build_warm_s": warm[2],
  "build_rebuild_s": rebuild[2],
  "graph_db_bytes": graphdb.graph_db_path(state).stat().st_size, "nodes": len(built.graph.nodes),
  "links": len(built.graph.links),
  "documents": sum(1 for n in built.graph.nodes if n.kind.value == "doc")}}
if {profiled!r}:
    sys.path.insert(0, {str(ROOT / "bench")!r})
    from profile_command import profiled_call
    figures["profiles"] = {{
        "build_cold_s": profiled_call(["graph.build.build_graph", "(cold, in one process)"],
                                      lambda: build_graph(records, caps)),
        "build_warm_s": profiled_call(["graph.load.current_graph", "(warm, in one process)"],
                                      lambda: app.current_graph(state, caps)),
    }}
print(json.dumps(figures))
"""
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, check=True)  # fmt: skip
    return dict(json.loads(result.stdout))


def keys_and_render(state: Path, env: dict[str, str]) -> dict[str, float]:
    """Seconds to build every note's spec (layout and keys) and to render every note, in one
    process, best of 3: what the sync saves by rendering only the notes whose key changed."""
    code = f"""
import json, time
from pathlib import Path
from vaultsync.core.config import resolve
from vaultsync.graph.load import build
from vaultsync.render.specs import build_note_specs, make_environment
records, built = build(Path({str(state)!r}), resolve({{}}, vault=Path()).caps)
environment = make_environment()
keys, renders = [], []
for _ in range(3):
    t = time.perf_counter()
    specs = build_note_specs(records, built.graph, built.resolver, environment)
    keys.append(time.perf_counter() - t)
    t = time.perf_counter()
    for spec in specs:
        spec.render()
    renders.append(time.perf_counter() - t)
print(json.dumps({{"keys_s": min(keys), "render_s": min(renders)}}))
"""
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, check=True)  # fmt: skip
    figures = dict(json.loads(result.stdout))
    figures["keys_over_render"] = figures["keys_s"] / figures["render_s"]
    return figures


REDACTION_CODE = """
import json, time
from vaultsync.core.redact import MASKED, mask, redact
token = "ghp_" + "1234567890abcdefghij" + "ABCDEFGHIJ123456"
sentence = ("Orbital streams [[telemetry]] through /docs/section12/page103.md; password: choose "
            "one well; see https://example.com/v2/guide2 and fact 5e0c1b9a7d3f2e4c8a6b0d1f. ")
def text(size, line_break):
    body = (sentence.replace("; ", line_break) * (size // len(sentence) + 1))[:size]
    return body + " " + token + "\\n"
redact(token)  # the rules are loaded once per process: not part of what is measured
figures = {}
for name, size, line_break in (("lines_1mb", 1_000_000, "\\n"), ("one_line_100kb", 100_000, "; "),
                               ("one_line_1mb", 1_000_000, "; ")):
    data = text(size, line_break)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter(); masked = redact(data); best = min(best, time.perf_counter() - t)
    assert masked.endswith(mask(token) + "\\n") and len(MASKED.findall(masked)) == 1, name
    figures[f"redact_{name}_s"] = best
print(json.dumps(figures))
"""


def redaction(env: dict[str, str]) -> dict[str, float]:
    """Seconds to mask 1 MB of Markdown lines, and one line of 100 KB and of 1 MB: the
    masking must stay linear in the length of a line (1 MB about 10 times 100 KB)."""
    result = subprocess.run([sys.executable, "-c", REDACTION_CODE], env=env,
                            capture_output=True, text=True, check=True)  # fmt: skip
    figures = dict(json.loads(result.stdout))
    figures["one_line_1mb_over_100kb"] = (
        figures["redact_one_line_1mb_s"] / figures["redact_one_line_100kb_s"]
    )
    return figures


def change_one_fact(state: Path, run: int) -> None:
    path = state / "memory" / "memory_index.json"
    facts = json.loads(path.read_text())
    facts[0]["content"] = f"{facts[0]['content'].split(' [edit')[0]} [edit {run}]"
    path.write_text(json.dumps(facts, indent=2))


def add_one_document(state: Path, run: int) -> None:
    path = sorted((state / "contexts").glob("*.json"))[0]
    context = json.loads(path.read_text())
    body = f"# Added page {run}\n\nA new page that links [back](/docs/section0/page0.md).\n"
    context["files"].append({"Path": f"docs/added/page-{run}.md", "Content": body,
                             "Size": len(body), "Type": "Markdown"})  # fmt: skip
    path.write_text(json.dumps(context, indent=2))


def phases(state: Path, vault: Path, env: dict[str, str]) -> dict[str, float]:
    """Seconds per stage of one sync, in-process (``bench/phases.py``)."""
    target = vault.parent / "phases.json"
    os.sync()
    subprocess.run([sys.executable, str(ROOT / "bench" / "phases.py"), str(state), str(vault),
                    "--json", str(target)], env=env, check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return dict(json.loads(target.read_text()))


def profile(args: list[str], out: Path, env: dict[str, str]) -> dict[str, Any]:
    """``bench/profile_command.py``: one command under cProfile, its top functions."""
    subprocess.run([sys.executable, str(ROOT / "bench" / "profile_command.py"), str(out), "--",
                    *args], env=env, check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return dict(json.loads(out.read_text()))


def sample(args: list[str], out: Path, env: dict[str, str]) -> dict[str, Any]:
    """``bench/sample_command.py``: one command sampled by py-spy, its wall-clock profile."""
    subprocess.run([sys.executable, str(ROOT / "bench" / "sample_command.py"), str(out), "--",
                    *args], env=env, check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return dict(json.loads(out.read_text()))


def profiles(
    state: Path, vault: Path, env: dict[str, str], runs: int, *, first: bool
) -> dict[str, Any]:
    """A profile of each whole-command measure after the timed runs: what explains a miss.

    ``first``: a first sync into a new vault and the no-op right after it too (past 10,000
    notes a first sync is explained by "Where the time goes": profiling it takes minutes).
    """
    sync = ["sync", "--state", str(state), "--vault", str(vault)]
    out = vault.parent / "profile.json"
    found = {"noop_sync_s": profile(sync, out, env)}
    if first:
        fresh = vault.parent / "vault-profiled"
        other = ["sync", "--state", str(state), "--vault", str(fresh)]
        found["first_sync_s"] = profile(other, out, env)
        found["noop_after_first_sync_s"] = profile(other, out, env)  # inside its racy window
        shutil.rmtree(fresh, ignore_errors=True)
    change_one_fact(state, runs + 1)
    found["one_fact_sync_s"] = profile(sync, out, env)
    found["noop_after_one_fact_s"] = profile(sync, out, env)
    add_one_document(state, runs)
    found["one_document_sync_s"] = profile(sync, out, env)
    # the same two changes again, sampled from outside: their seconds are wall-clock seconds
    change_one_fact(state, runs + 3)
    found["one_fact_sync_s"]["sampled"] = sample(sync, out, env)
    add_one_document(state, runs + 1)
    found["one_document_sync_s"]["sampled"] = sample(sync, out, env)
    return found


def git_floor(vault: Path, work: Path, env: dict[str, str], runs: int) -> tuple[float, float]:
    """``git add -A && git commit`` of the same rendered tree, in a fresh repository: plain,
    and durable (``&& sync``: git fsyncs nothing, a sync makes its notes durable)."""
    plain: list[float] = []
    durable: list[float] = []
    for run in range(runs):
        for script, samples in (("git add -A && git commit -qm floor", plain),
                                ("git add -A && git commit -qm floor && sync", durable)):  # fmt: skip
            tree = work / f"floor-{run}"
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(vault, tree, ignore=shutil.ignore_patterns(".git", ".vaultsync"))
            subprocess.run(["git", "init", "-q", str(tree)], check=True, env=env)
            samples.append(timed(["sh", "-c", script], env=env, cwd=tree)[0])
            shutil.rmtree(tree, ignore_errors=True)
    return median(plain), median(durable)


RATIOS = (
    ("first_sync_over_floor", "first_sync_s", "git_floor_s"),
    ("first_sync_over_durable_floor", "first_sync_s", "durable_floor_s"),
    ("noop_over_git_status", "noop_sync_s", "git_status_s"),
    ("noop_over_floor", "noop_sync_s", "noop_floor_s"),
)


def floors(vault: Path, work: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """What git and the interpreter alone take on the same vault: the goals' floors."""
    plain, durable = git_floor(vault, work, env, runs)
    row = {"git_floor_s": plain, "durable_floor_s": durable}
    row["git_status_s"] = median(
        [timed(["git", "-C", str(vault), "status", "--porcelain"], env=env)[0] for _ in range(runs)]
    )
    row["python_start_s"] = median(
        [timed([sys.executable, "-c", "pass"], env=env)[0] for _ in range(runs)]
    )
    row["noop_floor_s"] = row["python_start_s"] + row["git_status_s"]
    return row


def watch_latency(notes: int, env: dict[str, str]) -> dict[str, float]:
    """``bench/watch.py``: store change → commit under ``vaultsync watch`` (3 runs, 10 s idle)."""
    target = OUT / f"watch-{notes}.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "watch.py"), "--notes", str(notes),
                    "--runs", "3", "--idle", "10", "--json", str(target)],
                   env=env, check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return dict(json.loads(target.read_text()))


def one_fact(state: Path, vault: Path, env: dict[str, str], runs: int) -> dict[str, Any]:
    """A one-fact sync: its time, the no-op right after it, its stages and its peak memory."""
    sync = [*VAULTSYNC, "sync", "--state", str(state), "--vault", str(vault)]
    samples, after = [], []
    for run in range(runs):
        change_one_fact(state, run)
        samples.append(timed(sync, env=env)[0])
        after.append(timed(sync, env=env, flush=False)[0])  # in its racy window
    found: dict[str, Any] = {"one_fact_sync_s": median(samples)}
    found["noop_after_one_fact_s"] = median(after)
    change_one_fact(state, runs)
    found["phases_one_fact"] = phases(state, vault, env)
    change_one_fact(state, runs + 2)  # a change of its own (the profiles make runs + 1)
    rss, pss = peak_memory(sync, env=env)  # with the helpers it forks beside a full heap
    found["peak_one_fact_mib"] = max(rss, pss) / 1024
    return found


def bench_size(notes: int, runs: int, *, watch: bool) -> dict[str, Any]:
    from vaultsync.synthetic import generate_store

    work = OUT / f"n{notes}"
    shutil.rmtree(work, ignore_errors=True)
    state = work / "state"
    generate_store(state, notes=notes, seed=7)
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}  # fmt: skip
    caps_raised = notes > 10_000
    if caps_raised:
        env.update(RAISED_CAPS)
    row: dict[str, Any] = {"notes": notes, "caps_raised": caps_raised}
    row.update(in_process(state, env, profiled=notes < 100_000))
    if notes <= 10_000:  # rendering 100,000 notes three times over adds minutes, not insight
        row.update(keys_and_render(state, env))

    firsts, after_first = [], []
    for run in range(runs):
        command = [*VAULTSYNC, "sync", "--state", str(state), "--vault", str(work / f"vault-{run}")]
        firsts.append(timed(command, env=env)[0])
        after_first.append(timed(command, env=env, flush=False)[0])  # in its racy window
    rss, pss = peak_memory(
        [*VAULTSYNC, "sync", "--state", str(state), "--vault", str(work / "vault-memory")], env=env
    )
    shutil.rmtree(work / "vault-memory", ignore_errors=True)
    vault = work / "vault-0"
    sync = [*VAULTSYNC, "sync", "--state", str(state), "--vault", str(vault)]
    row["first_sync_s"] = median(firsts)
    row["noop_after_first_sync_s"] = median(after_first)
    row["peak_rss_mib"] = rss / 1024
    row["peak_tree_pss_mib"] = pss / 1024
    row["peak_memory_mib"] = max(rss, pss) / 1024
    row["vault_files"] = sum(1 for p in vault.rglob("*.md") if ".git" not in p.parts)
    row["noop_sync_s"] = median([timed(sync, env=env)[0] for _ in range(runs)])
    for verb in ("check", "status"):  # in sync: both read the last sync's record
        row[f"{verb}_s"] = median(
            [timed([*VAULTSYNC, verb, "--state", str(state), "--vault", str(vault)],
                   env=env)[0] for _ in range(runs)]
        )  # fmt: skip
    row["phases_first"] = phases(state, work / "vault-phases", env)
    row.update(one_fact(state, vault, env, runs))
    samples = []
    for run in range(runs):
        add_one_document(state, run)
        samples.append(timed(sync, env=env)[0])
    row["one_document_sync_s"] = median(samples)
    row["profiles"] = {
        **row.get("profiles", {}),
        **profiles(state, vault, env, runs, first=notes <= 10_000),
    }
    row.update(floors(vault, work, env, runs))
    for ratio, over, under in RATIOS:
        row[ratio] = row[over] / row[under]
    if watch:
        row.update(watch_latency(notes, env))
    for run in range(1, runs):
        shutil.rmtree(work / f"vault-{run}", ignore_errors=True)
    shutil.rmtree(work / "vault-phases", ignore_errors=True)
    return row


@dataclass(frozen=True, slots=True, kw_only=True)
class Goal:
    """One row of the goal table: a measure at one size, its limit and its floor.

    The limit is ``limit`` itself, or ``limit`` times the floor measured in the same run
    (``floor`` names that figure).  ``also`` names further floors shown beside it.
    """

    key: str
    label: str
    notes: int
    """2,800, or 100,000 (any size of at least 100,000)."""
    limit: float
    floor: str = ""
    also: tuple[str, ...] = ()
    unit: str = "s"


GOALS = (
    Goal(key="first_sync_s", label="first sync", notes=2800, limit=1.5,
         floor="durable_floor_s", also=("git_floor_s",)),
    Goal(key="noop_sync_s", label="no-op sync, steady", notes=2800, limit=2.0,
         floor="noop_floor_s"),
    Goal(key="noop_after_first_sync_s", label="no-op right after a first sync", notes=2800,
         limit=2.0, floor="noop_floor_s"),
    Goal(key="noop_after_one_fact_s", label="no-op right after a one-fact sync", notes=2800,
         limit=2.0, floor="noop_floor_s"),
    Goal(key="build_cold_s", label="graph build, cold", notes=2800, limit=0.100),
    Goal(key="build_warm_s", label="graph build, warm", notes=2800, limit=0.010),
    Goal(key="watch_over_quiet_s", label="watch: store change → commit, past the quiet period",
         notes=2800, limit=0.5),
    Goal(key="one_fact_sync_s", label="one fact changed", notes=100_000, limit=3.0),
    Goal(key="one_document_sync_s", label="one document added", notes=100_000, limit=3.0),
    Goal(key="noop_sync_s", label="no-op sync, steady", notes=100_000, limit=1.0,
         also=("noop_floor_s",)),
    Goal(key="check_s", label="check, in sync", notes=2800, limit=2.0, floor="noop_floor_s"),
    Goal(key="status_s", label="status, in sync", notes=2800, limit=2.0, floor="noop_floor_s"),
    Goal(key="check_s", label="check, in sync", notes=100_000, limit=2.0,
         floor="noop_floor_s"),
    Goal(key="status_s", label="status, in sync", notes=100_000, limit=2.0,
         floor="noop_floor_s"),
    Goal(key="noop_sync_s", label="no-op sync, steady", notes=100_000, limit=2.0,
         floor="noop_floor_s"),
    Goal(key="first_sync_s", label="first sync", notes=100_000, limit=30.0,
         also=("durable_floor_s", "git_floor_s")),
    Goal(key="first_sync_s", label="first sync", notes=100_000, limit=2.0,
         floor="durable_floor_s", also=("git_floor_s",)),
    Goal(key="peak_memory_mib", label="peak memory, all processes", notes=100_000,
         limit=1024.0, unit="MiB"),
    Goal(key="peak_one_fact_mib", label="peak memory of a one-fact sync, all processes",
         notes=100_000, limit=1024.0, unit="MiB"),
    Goal(key="watch_over_quiet_s", label="watch: store change → commit, past the quiet period",
         notes=100_000, limit=1.0),
)  # fmt: skip
FLOOR_NAMES = {
    "durable_floor_s": "`git add -A && git commit && sync`",
    "git_floor_s": "`git add -A && git commit`",
    "noop_floor_s": "`python -c pass` + `git status`",
}


# Why a goal is missed, from the stage timings of the same run (`bench/phases.py`, shown
# under "Where the time goes") and profiles (cProfile) of whole commands.
WHY = {
    "first_sync_s": "no stage dominates (see “Where the time goes”): interpreter start and "
    "imports, graph build, layout and note keys, rendering on both cores, the durability "
    "barrier, pack and commit; git's floor renders nothing",
    "noop_sync_s": "interpreter start and imports (about 0.1 s of modules before the first "
    "stat), then a stat of every vault file and of the stores",
    "noop_after_first_sync_s": "every note is inside the racy window of the sync that wrote "
    "it: each is read and its blob id compared (git's racy rule), on top of the steady no-op",
    "noop_after_one_fact_s": "the steady no-op's costs, plus reading the few files that sync "
    "wrote (inside its racy window)",
    "build_cold_s": "the first build parses every document (title, summary, links)",
    "build_warm_s": "reading graph.db and building every frozen node and link again",
    "one_fact_sync_s": "no stage dominates (see “Where the time goes” and the sampled profile "
    "below: no line near a tenth of the time): each stage still reads, builds, keys, plans or "
    "writes every note once, the documents (most of the notes) though none changed, and loads "
    "and saves its memo of them (tens of MB each at 100,000 notes); the goal needs the "
    "documents' part carried over whole while no context changes",
    "peak_memory_mib": "the stages' memos (the stores' masked records, the graph's patch "
    "state, the notes' keys) are held at once beside the graph and the rendered batch: see "
    "the peak memory after each stage under “Where the time goes”",
    "peak_one_fact_mib": "the previous build's memos are loaded beside the new ones, and a "
    "helper forked for the scan copies each page of the heap it reads (a reference count is a "
    "write)",
    "watch_over_quiet_s": "the watcher works the sync out from the moment a file event shows "
    "the change, and where that takes longer than the quiet period (the notes built and planned: "
    "the profile below, as a one-fact sync), the rest of it follows the quiet period, then the "
    "plan's writes and commit",
}
WHY["one_document_sync_s"] = WHY["one_fact_sync_s"]
WHY["check_s"] = WHY["status_s"] = (
    "in sync, the answer is the last sync's record behind the no-op's stat proof: the steady "
    "no-op's costs plus importing the report code (git's answers are kept while its files "
    "are unchanged)"
)


def _applies(goal: Goal, row: dict[str, Any]) -> bool:
    size = int(row["notes"])
    return size == goal.notes or (goal.notes >= 100_000 <= size)


def _amount(value: float, unit: str) -> str:
    return f"{value:,.0f} MiB" if unit == "MiB" else f"{value:.3f} s"


def _limit(goal: Goal, row: dict[str, Any]) -> float:
    return goal.limit * row[goal.floor] if goal.floor else goal.limit


def _met(goal: Goal, row: dict[str, Any]) -> bool:
    return goal.key in row and bool(row[goal.key] <= _limit(goal, row))


def goal_row(goal: Goal, row: dict[str, Any]) -> str:
    """One line of the goal table: measured, goal, floors, and met or missed by how much."""
    if goal.key not in row or (goal.floor and goal.floor not in row):
        return f"| {row['notes']:,} | {goal.label} | — | | | not measured |"
    value = row[goal.key]
    limit = _limit(goal, row)
    goal_text = f"≤ {_amount(limit, goal.unit)}"
    if goal.floor:
        goal_text = f"≤ {goal.limit:g}× {FLOOR_NAMES[goal.floor]} = {_amount(limit, goal.unit)}"
    floors = [
        f"{FLOOR_NAMES[name]} {_amount(row[name], 's')}"
        for name in (goal.floor, *goal.also)
        if name and name in row
    ]
    verdict = (
        "met" if value <= limit else f"missed by {value / limit:.1f}×: {WHY.get(goal.key, '')}"
    )
    return (
        f"| {row['notes']:,} | {goal.label} | {_amount(value, goal.unit)} | {goal_text} "
        f"| {'; '.join(floors) or '—'} | {verdict} |"
    )


def goal_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The goals beside what this run measured and the floors of the same run."""
    lines = [
        "", "## Goals", "",
        "Each measure of this run beside its goal and, where the goal is relative, the floor "
        "measured in the same run (median of the same number of runs).", "",
        "| notes | measure | measured | goal | floor (same run) | verdict |",
        "|---|---|---|---|---|---|",
    ]  # fmt: skip
    lines += [goal_row(goal, row) for row in rows for goal in GOALS if _applies(goal, row)]
    lines += [
        f"\n{row['notes']:,} notes: caps raised ({', '.join(RAISED_CAPS)})."
        for row in rows
        if row["caps_raised"]
    ]
    return lines


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    columns = [
        ("notes", "notes", "{:,}"), ("links", "links", "{:,}"), ("documents", "docs", "{:,}"),
        ("extract_s", "extract", "{:.3f} s"), ("build_cold_s", "build cold", "{:.3f} s"),
        ("build_rebuild_s", "rebuild", "{:.3f} s"),
        ("build_warm_s", "build warm", "{:.4f} s"), ("graph_db_bytes", "graph.db", "{:,} B"),
        ("keys_s", "specs + keys", "{:.3f} s"), ("render_s", "render all", "{:.3f} s"),
        ("keys_over_render", "keys/render", "{:.2f}×"),
        ("first_sync_s", "first sync", "{:.2f} s"), ("git_floor_s", "git floor", "{:.2f} s"),
        ("durable_floor_s", "durable floor", "{:.2f} s"),
        ("first_sync_over_durable_floor", "first/durable floor", "{:.2f}×"),
        ("noop_sync_s", "no-op sync", "{:.3f} s"),
        ("noop_after_first_sync_s", "no-op after first", "{:.3f} s"),
        ("noop_after_one_fact_s", "no-op after 1 fact", "{:.3f} s"),
        ("git_status_s", "git status", "{:.3f} s"), ("python_start_s", "python start", "{:.3f} s"),
        ("noop_over_floor", "no-op/(start+status)", "{:.2f}×"),
        ("one_fact_sync_s", "1 fact", "{:.2f} s"), ("one_document_sync_s", "1 document", "{:.2f} s"),
        ("check_s", "check", "{:.3f} s"), ("status_s", "status", "{:.3f} s"),
        ("watch_commit_s", "watch change→commit", "{:.2f} s"),
        ("peak_rss_mib", "peak RSS", "{:.0f} MiB"),
        ("peak_tree_pss_mib", "peak PSS, all processes", "{:.0f} MiB"),
        ("peak_one_fact_mib", "peak, 1 fact", "{:.0f} MiB"),
    ]  # fmt: skip
    lines = [
        f"# vaultsync benchmark, {meta['date']}",
        "",
        f"Machine: {meta['machine']}, {meta['cpus']} CPUs, Python {meta['python']}"
        + (f", load average {meta['load']}" if "load" in meta else "")
        + _speed_text(meta)
        + ". "
        f"Whole commands, wall time, median of {meta['runs']} runs, the file system flushed "
        "(`sync`) before each.",
        "",
        "| " + " | ".join(label for _, label, _ in columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for row in rows:
        cells = (fmt.format(row[key]) if key in row else "—" for key, _, fmt in columns)
        lines.append("| " + " | ".join(cells) + " |")
    lines += _phase_table(rows)
    lines += _redaction_lines(meta.get("redaction"))
    lines += goal_lines(rows)
    lines += profile_lines(rows)
    return "\n".join(lines) + "\n"


PROFILED_AS = {"watch_over_quiet_s": "one_fact_sync_s"}
"""A goal explained by another measure's profile: what ``watch`` runs after the quiet period
is the one-fact sync, in its own process."""


def profile_lines(rows: list[dict[str, Any]]) -> list[str]:
    """For every whole-command goal missed, where one profiled run of it spent its time."""
    lines = []
    for row in rows:
        for goal in GOALS:
            found = row.get("profiles", {}).get(PROFILED_AS.get(goal.key, goal.key))
            measured = goal.key in row and _applies(goal, row)
            if found is None or not measured or _met(goal, row):
                continue
            lines += ["", f"### {row['notes']:,} notes, {goal.label}: profile", "",
                      f"`{' '.join(found['command'][:2])} …` under cProfile "
                      f"({found['profiled_s']:.2f} s profiled; vaultsync's functions by "
                      "cumulative time, so nested ones overlap).", "",
                      "| function | calls | cumulative | share |", "|---|---|---|---|"]  # fmt: skip
            lines += _function_rows(found["top"])
            if found.get("own"):
                lines += ["", "The same run by time spent in a function itself (any module):",
                          "", "| function | calls | own time | share |", "|---|---|---|---|",
                          *_function_rows(found["own"])]  # fmt: skip
            lines += sampled_lines(found.get("sampled"))
    if lines:
        lines = ["", "## Profiles of the missed goals", *lines]
    return lines


def sampled_lines(found: dict[str, Any] | None) -> list[str]:
    """The same change sampled by py-spy (``bench/sample_command.py``), or why it was not."""
    if found is None:
        return []
    if "problem" in found:
        return ["", f"Not sampled from outside: {found['problem']}."]
    return [
        "", f"The same change again, sampled by py-spy from outside ({found['sampled_s']:.2f} s "
        "sampled, wall clock: freeing and C calls included, the process paused only to read "
        "its stack): vaultsync's functions by the seconds they were on the stack, so nested "
        "ones overlap.", "",
        "| function | on the stack | share |", "|---|---|---|",
        *_sampled_rows(found["top"]),
        "", "The vaultsync line deepest on the stack in each sample: where our code ran, or "
        "waited on a C call (a parse, a write, git) or on freeing what it made.", "",
        "| line | seconds | share |", "|---|---|---|",
        *_sampled_rows(found["deepest"]),
    ]  # fmt: skip


def _sampled_rows(functions: list[dict[str, Any]]) -> list[str]:
    return [f"| `{f['function']}` | {f['seconds']:.3f} s | {f['share']:.0%} |" for f in functions]


def _function_rows(functions: list[dict[str, Any]]) -> list[str]:
    return [
        f"| `{f['function']}` | {f['calls']:,} | {f['seconds']:.3f} s | {f['share']:.0%} |"
        for f in functions
    ]


def _speed_text(meta: dict[str, Any]) -> str:
    """The machine's speed: a fixed Python loop here and on the reference machine."""
    if "loop_s" not in meta:
        return ""
    return (
        f", a 10M-iteration Python loop {meta['loop_s']:.2f} s "
        f"({meta['loop_s'] / CALIBRATION_REFERENCE_S:.1f}× the reference machine's "
        f"{CALIBRATION_REFERENCE_S:.2f} s)"
    )


def _redaction_lines(figures: dict[str, float] | None) -> list[str]:
    """Masking secrets, rules preloaded: 1 MB of lines, and one long line at two lengths."""
    if not figures:
        return []
    return [
        "", "## Redaction", "",
        "Secret masking of text holding one token at its very end, rules already loaded, best "
        "of 3. The time of one long line must grow linearly with its length.", "",
        "| 1 MB in lines | one 100 KB line | one 1 MB line | 1 MB / 100 KB |", "|---|---|---|---|",
        f"| {figures['redact_lines_1mb_s']:.3f} s | {figures['redact_one_line_100kb_s']:.4f} s "
        f"| {figures['redact_one_line_1mb_s']:.3f} s | {figures['one_line_1mb_over_100kb']:.1f}× |",
    ]  # fmt: skip


def _phase_table(rows: list[dict[str, Any]]) -> list[str]:
    """Where the time of a first sync and of a one-fact sync goes (``bench/phases.py``)."""
    timed_rows = [row for row in rows if "phases_first" in row]
    if not timed_rows:
        return []
    header = ["stage"]
    names = [name for name in _stages(timed_rows) if name != PEAK_RSS]
    for row in timed_rows:
        header += [f"{row['notes']:,}: first sync", f"{row['notes']:,}: one fact"]
    lines = ["", "## Where the time goes", "",
             "One sync in-process, wall seconds per stage (`bench/phases.py`); the total "
             "includes interpreter start.", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]  # fmt: skip
    lines += _stage_rows(timed_rows, names, lambda phases, name: f"{phases.get(name, 0.0):.3f}")
    return lines + _memory_table(timed_rows, header)


def _stage_rows(
    rows: list[dict[str, Any]], names: list[str], cell: Callable[[dict[str, Any], str], str]
) -> list[str]:
    """One table line per stage: its name, then ``cell`` of each row's first and one-fact run."""
    lines = []
    for name in names:
        cells = [name]
        for row in rows:
            cells += [cell(row[key], name) for key in ("phases_first", "phases_one_fact")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


PEAK_RSS = "peak_rss_mib"


def _stages(rows: list[dict[str, Any]], within: str = "") -> dict[str, None]:
    """The stages timed in any run, in order: a first sync hands no cache to a helper."""
    found: dict[str, None] = {}
    for row in rows:
        for key in ("phases_first", "phases_one_fact"):
            timed = row.get(key, {})
            found.update(dict.fromkeys(timed.get(within, {}) if within else timed))
    return found


def _memory_table(rows: list[dict[str, Any]], header: list[str]) -> list[str]:
    """Peak RSS once each stage ended (``bench/phases.py``): where a sync's memory peaks."""
    if PEAK_RSS not in rows[0]["phases_first"]:
        return []
    names = list(_stages(rows, PEAK_RSS))
    lines = ["", "Peak memory (RSS of the process or of a finished child, MiB) once each stage "
             "ended, same runs:", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]  # fmt: skip
    return lines + _stage_rows(
        rows, names, lambda phases, name: f"{phases.get(PEAK_RSS, {}).get(name, 0.0):,.0f}"
    )


EXTRAS: dict[str, tuple[str, list[str]]] = {
    # name: (script, extra arguments) — each reads the synced 10,000-note vault.
    "knowledge": ("bench/knowledge_bench.py", []),
    "search": ("bench/search_bench.py", []),
}


def run_extras(vault: Path) -> tuple[dict[str, Any], str]:
    """The knowledge-model and search benchmarks on the same vault, as JSON and Markdown."""
    figures: dict[str, Any] = {}
    report = ""
    for name, (script, extra) in EXTRAS.items():
        if not (ROOT / script).exists():
            continue
        print(f"bench: {name} on {vault}…", file=sys.stderr)
        target = OUT / f"{name}-bench.json"
        result = subprocess.run(
            [sys.executable, str(ROOT / script), str(vault), "--json", str(target), *extra],
            capture_output=True, text=True, check=False, cwd=ROOT,
        )  # fmt: skip
        if result.returncode != 0:
            figures[name] = {"error": result.stderr.strip().splitlines()[-1:]}
            report += f"\n## {name}\n\nFailed: {result.stderr.strip()[-300:]}\n"
            continue
        figures[name] = json.loads(target.read_text())
        report += f"\n{result.stdout.strip()}\n"
    return figures, report


def with_bytecode() -> None:
    """Compile vaultsync's modules once and let every measured command read their bytecode.

    An installed package has its ``.pyc`` files; ``PYTHONDONTWRITEBYTECODE`` in a developer's
    shell would make every command compile every module again (0.05-0.1 s of a 0.2 s no-op).
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for folder in ("pipeline", "renderers"):
        compileall.compile_dir(ROOT / folder, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2800,10000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--no-extras", action="store_true", help="skip knowledge and search")
    parser.add_argument("--no-watch", action="store_true", help="skip bench/watch.py")
    parser.add_argument("--report", type=Path, help="rewrite the .md of a results .json")
    args = parser.parse_args()
    if args.report:
        document = json.loads(args.report.read_text())
        report = args.report.with_suffix(".md")
        kept = report.read_text().split("\n## Knowledge model", 1)
        extra = "\n## Knowledge model" + kept[1] if len(kept) == 2 else ""
        report.write_text(markdown(document["rows"], document["meta"]) + extra)
        return
    sys.path.insert(0, str(ROOT))
    with_bytecode()
    rows = []
    speed = calibration()
    start_load = os.getloadavg()[0]  # other work on the machine: the figures scale with it
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"bench: {size:,} notes…", file=sys.stderr)
        watch = not args.no_watch and (size == 2800 or size >= 100_000)  # the goals' sizes
        rows.append(bench_size(size, args.runs, watch=watch))
    meta = {"date": datetime.now(UTC).date().isoformat(), "machine": platform.machine(),
            "load": f"{start_load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end",
            "cpus": os.cpu_count(), "python": platform.python_version(), "runs": args.runs,
            "loop_s": round(speed, 3), "redaction": redaction(dict(os.environ))}  # fmt: skip
    extras: dict[str, Any] = {}
    extra_report = ""
    ten_k = OUT / "n10000" / "vault-0"
    if not args.no_extras and ten_k.is_dir():
        extras, extra_report = run_extras(ten_k)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / meta["date"]
    document = {"meta": meta, "rows": rows, **extras}
    stem.with_suffix(".json").write_text(json.dumps(document, indent=2) + "\n")
    report = markdown(rows, meta) + extra_report
    stem.with_suffix(".md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()

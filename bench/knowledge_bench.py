"""Benchmark: read a vault into the knowledge model, cold and warm, next to obsidiantools.

Usage::

    .venv/bin/python bench/knowledge_bench.py [VAULT] [--synced N | --generate N]
                                              [--json FILE] [--no-obsidiantools]

VAULT is a vault folder.  Without it, the script writes ``vaultsync.synthetic``'s 10,000-note
store (seed 7, as ``make bench``) and syncs it with ``vaultsync sync`` into ``bench/out/``
(``--synced N`` for another size), or with ``--generate N`` writes N notes directly in the
shape vaultsync writes (front matter, about 300 words, wikilinks in the text, a ``## Links``
section), a tenth of them user notes with inline fields, states and claims.

Figures (in-process, best of several runs, plus the first cold run and whole-process runs):

* ``cold_s``: ``load_model`` with no cache file (walk, read, hash, parse, resolve, write the
  cache); ``warm_s``: the same with the cache in place (stat only, nothing read or parsed);
* ``obsidiantools_s``: ``Vault(dir).connect()`` of obsidiantools, run in its own virtual
  environment (``bench/out/obsidiantools-venv``, created on first use) so its pins do not touch
  the project's; if it cannot run, the reason is reported instead;
* a comparison of the ``[[wikilinks]]`` each tool finds and resolves, with examples of links
  where they differ.  (obsidiantools ignores Markdown links and embeds: only plain wikilinks are
  compared.)

The script prints a Markdown report and, with ``--json``, writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vaultsync.knowledge.idea import LinkForm  # noqa: E402
from vaultsync.knowledge.scan import CACHE_NAME, load_model  # noqa: E402

OUT = ROOT / "bench" / "out"
OT_VENV = OUT / "obsidiantools-venv"
OT_TIMEOUT_S = 1800
COLD_RUNS = 3
WARM_RUNS = 7
EXAMPLES = 5

WORDS = (
    "gateway",
    "batch",
    "retry",
    "kafka",
    "span",
    "collector",
    "ledger",
    "invoice",
    "postgres",
    "vacuum",
    "cert",
    "rotation",
    "deploy",
    "canary",
    "window",
    "sampling",
    "trace",
    "budget",
    "partition",
    "ordering",
    "producer",
    "consumer",
    "offset",
    "replica",
    "leader",
    "quorum",
    "timeout",
    "backoff",
    "jitter",
    "schema",
    "migration",
    "rollback",
    "index",
    "table",
    "query",
    "plan",
    "cache",
    "latency",
    "throughput",
    "pager",
    "runbook",
    "incident",
    "review",
    "handover",
    "weekly",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "for",
    "on",
    "with",
    "is",
    "was",
    "be",
    "by",
    "as",
    "at",
    "from",
    "that",
    "this",
    "it",
    "not",
    "are",
)
FACT_GROUPS = ("gotcha", "pattern", "general", "project", "personal")
RELATIONS = ("in project", "about", "mentions", "links to", "part of", "same day")
SEMANTIC = ("supports", "contradicts", "expands", "inspired-by", "question", "example")
STATES = ("fleeting", "literature", "permanent", "developing", "evergreen", "archived")


# ---------------------------------------------------------------------------------------------
# A synthetic vault in vaultsync's shape


def _paths(count: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """``(path, title, kind)`` for every note; some titles repeat across folders."""
    notes: list[tuple[str, str, str]] = []
    for index in range(count):
        roll = rng.random()
        title = " ".join(rng.choice(WORDS[:40]) for _ in range(4)).capitalize()
        tag = f"{index:05x}"
        if roll < 0.45:
            group = rng.choice(FACT_GROUPS)
            notes.append((f"Facts/{group}/{title} ({tag}).md", title, "fact"))
        elif roll < 0.70:
            notes.append(
                (f"Episodes/2026/2026-{index % 12 + 1:02d} {title} ({tag}).md", title, "episode")
            )
        elif roll < 0.85:
            folder = f"Contexts/handbook/{rng.choice(('guide', 'ops', 'reference'))}"
            notes.append((f"{folder}/{title.lower().replace(' ', '-')}-{tag}.md", title, "doc"))
        elif roll < 0.90:
            notes.append((f"Topics/{title} {tag}.md", title, "topic"))
        else:
            notes.append((f"Notes/{title} {tag}.md", title, "user"))
    return notes


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def _engine_note(
    note: tuple[str, str, str], picks: list[tuple[str, str, str]], rng: random.Random
) -> str:
    path, title, kind = note
    links = "\n".join(f"- {rng.choice(RELATIONS)} → [[{p[:-3]}|{t}]]" for p, t, _ in picks[:4])
    body_links = " ".join(f"[[{p[:-3]}|{t}]]" for p, t, _ in picks[4:6])
    return (
        "---\n"
        f'vaultsync_id: "{kind}:{zlib.crc32(path.encode()):08x}"\n'
        f'kind: "{kind}"\n'
        f'aliases:\n  - "{title}"\n'
        f'tags:\n  - "{rng.choice(WORDS[:20])}"\n'
        f'created: "2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z"\n'
        "---\n\n"
        f"# {title}\n\n{_words(rng, 140)} {body_links}.\n\n{_words(rng, 140)}\n\n"
        f"## Links\n\n{links}\n"
    )


def _user_note(
    note: tuple[str, str, str], picks: list[tuple[str, str, str]], rng: random.Random
) -> str:
    _, title, _ = note
    names = [t for _, t, _ in picks]
    fields = "\n".join(f"- {rng.choice(SEMANTIC)}:: [[{name}]]" for name in names[:2])
    missing = f" and [[Missing {rng.randint(1, 50)}]]" if rng.random() < 0.2 else ""
    return (
        "---\n"
        f"state: {rng.choice(STATES)}\n"
        f'sources: ["[[{names[2]}]]", "doi:10.{rng.randint(1000, 9999)}/x"]\n'
        "---\n"
        f"# {title}\n\n{_words(rng, 130)} [[{names[3]}]]{missing}.\n\n"
        f"{fields}\n- [claim:: {_words(rng, 6)}] [source:: [[{names[4]}]]]\n"
        f"- claim:: {_words(rng, 5)}\n\n{_words(rng, 130)}\n"
    )


def generate_vault(root: Path, count: int, seed: int = 4) -> Path:
    """Write a synthetic vault of ``count`` notes into ``root`` (replaced if present)."""
    rng = random.Random(seed)
    if root.exists():
        shutil.rmtree(root)
    notes = _paths(count, rng)
    for note in notes:
        picks = rng.sample(notes, 6)
        text = _user_note(note, picks, rng) if note[2] == "user" else _engine_note(note, picks, rng)
        target = root / note[0]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


# ---------------------------------------------------------------------------------------------
# Our figures


def _drop_cache(vault: Path) -> None:
    (vault / CACHE_NAME).unlink(missing_ok=True)


def _process_seconds(vault: Path) -> float:
    """One whole process: interpreter start, imports, load_model."""
    script = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[2]);"
        "from vaultsync.knowledge.scan import load_model; load_model(Path(sys.argv[1]))"
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", script, str(vault), str(ROOT)], check=True)
    return time.perf_counter() - started


def measure_ours(vault: Path) -> dict[str, Any]:
    """Cold and warm model builds of ``vault`` (the cache file is removed for cold runs)."""
    cold: list[float] = []
    for _ in range(COLD_RUNS):
        _drop_cache(vault)
        started = time.perf_counter()
        loaded = load_model(vault)
        cold.append(time.perf_counter() - started)
    warm: list[float] = []
    for _ in range(WARM_RUNS):
        started = time.perf_counter()
        loaded = load_model(vault)
        warm.append(time.perf_counter() - started)
    if loaded.stats.parsed:
        raise SystemExit("bench: a warm run parsed notes")
    _drop_cache(vault)
    cold_process = _process_seconds(vault)
    warm_process = _process_seconds(vault)
    model = loaded.model
    return {
        "notes": loaded.stats.notes,
        "files": loaded.stats.files,
        "edges": sum(len(edges) for edges in model.outgoing.values()),
        "cold_first_s": round(cold[0], 3),
        "cold_s": round(min(cold), 3),
        "warm_s": round(min(warm), 3),
        "warm_median_s": round(statistics.median(warm), 3),
        "cold_process_s": round(cold_process, 3),
        "warm_process_s": round(warm_process, 3),
        "model": model,
    }


# ---------------------------------------------------------------------------------------------
# obsidiantools, in its own environment

OT_SCRIPT = r"""
import importlib.metadata, json, sys, time
from pathlib import Path
from obsidiantools.api import Vault
vault = Path(sys.argv[1])
started = time.perf_counter()
connected = Vault(vault).connect()
seconds = time.perf_counter() - started
json.dump({
    "seconds": seconds,
    "version": importlib.metadata.version("obsidiantools"),
    "files": {key: str(path.as_posix()) for key, path in connected.md_file_index.items()},
    "links": connected.wikilinks_index,
    "nonexistent": sorted(connected.nonexistent_notes),
}, sys.stdout)
"""


def _ot_python() -> tuple[Path | None, str]:
    """The obsidiantools environment's python, created on first use, or why it is missing."""
    python = OT_VENV / "bin" / "python"
    if python.exists():
        return python, ""
    try:
        subprocess.run([sys.executable, "-m", "venv", str(OT_VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, "obsidiantools"], check=True, capture_output=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as err:
        shutil.rmtree(OT_VENV, ignore_errors=True)
        return None, f"could not install obsidiantools in {OT_VENV}: {err}"
    return python, ""


def measure_obsidiantools(vault: Path) -> dict[str, Any]:
    """``Vault(dir).connect()`` timed inside the obsidiantools environment."""
    python, why = _ot_python()
    if python is None:
        return {"error": why}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(OT_SCRIPT)
    try:
        done = subprocess.run(
            [str(python), script.name, str(vault)],
            capture_output=True,
            text=True,
            timeout=OT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"obsidiantools did not finish within {OT_TIMEOUT_S} s"}
    finally:
        Path(script.name).unlink()
    if done.returncode != 0 and "numpy" in done.stderr.lower() and "NaN" in done.stderr:
        # obsidiantools 0.10 uses np.NaN, removed in NumPy 2: pin and retry once.
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "numpy<2"], check=False)
        return measure_obsidiantools(vault)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"error": "obsidiantools failed: " + " | ".join(tail)}
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# ---------------------------------------------------------------------------------------------
# Which wikilinks each resolves


def _name(target: str) -> str:
    return target[:-3] if target.lower().endswith(".md") else target


class _Agreement:
    """How many wikilinks fall in each kind of (dis)agreement, with a few examples of each."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}

    def note(self, kind: str, text: str = "") -> None:
        self.kinds[kind] += 1
        if text and len(self.examples.setdefault(kind, [])) < EXAMPLES:
            self.examples[kind].append(text)


def _verdict(link: str, mine: str | None, other: str | None) -> tuple[str, str]:
    """The kind of agreement on one wikilink both tools found, and an example line."""
    if mine is not None and other is None:
        return "resolved by vaultsync only", f"{link} → {mine}"
    if mine is None and other is not None:
        return "resolved by obsidiantools only", f"{link} → {other}"
    if mine is not None and other is not None and mine != other:
        return "resolved to different notes", f"{link} → {mine} / {other}"
    return "same answer", ""


def _compare_source(
    source: str, ours: list[Any], theirs: list[str], files: dict[str, str], agreement: _Agreement
) -> None:
    """Pair one note's wikilinks by target name, then judge each pair and each leftover."""
    pool = Counter(_name(target) for target in theirs)
    for link in ours:
        key = _name(link.target)
        if pool[key] <= 0:
            agreement.note("found by vaultsync only", f"{source}: [[{link.target}]]")
            continue
        pool[key] -= 1
        agreement.note(*_verdict(f"{source}: [[{link.target}]]", link.path, files.get(key)))
    for key, left in pool.items():
        for _ in range(left):
            agreement.note("found by obsidiantools only", f"{source}: [[{key}]]")


def compare_links(model: Any, ot: dict[str, Any]) -> dict[str, Any]:
    """Counts of wikilinks found and resolved by each tool, and examples where they differ."""
    files: dict[str, str] = ot["files"]
    ours_found = ours_resolved = theirs_found = theirs_resolved = 0
    agreement = _Agreement()
    theirs_by_source = {files[key]: links for key, links in ot["links"].items() if key in files}
    for source in model.ideas:
        ours = [
            link for link in model.links(source) if link.form is LinkForm.WIKILINK and link.target
        ]
        theirs = list(theirs_by_source.get(source, []))
        ours_found += len(ours)
        theirs_found += len(theirs)
        ours_resolved += sum(1 for link in ours if link.path is not None)
        theirs_resolved += sum(1 for target in theirs if target in files)
        _compare_source(source, ours, theirs, files, agreement)
    return {
        "vaultsync": {"wikilinks": ours_found, "resolved": ours_resolved},
        "obsidiantools": {"wikilinks": theirs_found, "resolved": theirs_resolved},
        "agreement": dict(sorted(agreement.kinds.items())),
        "examples": agreement.examples,
    }


# ---------------------------------------------------------------------------------------------
# Report


def run(vault: Path, *, obsidiantools: bool = True) -> dict[str, Any]:
    """Every figure of the benchmark for ``vault`` as a dict."""
    ours = measure_ours(vault)
    model = ours.pop("model")
    figures: dict[str, Any] = {"vault": str(vault), "vaultsync": ours}
    if obsidiantools:
        ot = measure_obsidiantools(vault)
        if "error" in ot:
            figures["obsidiantools"] = {"error": ot["error"]}
        else:
            figures["obsidiantools"] = {
                "version": ot["version"],
                "connect_s": round(ot["seconds"], 3),
                "speedup_cold": round(ot["seconds"] / ours["cold_s"], 1),
                "speedup_warm": round(ot["seconds"] / ours["warm_s"], 1),
            }
            figures["links"] = compare_links(model, ot)
    speedup = figures.get("obsidiantools", {}).get("speedup_cold")
    figures["targets"] = {
        "cold_at_most_3_s": ours["cold_s"] <= 3.0,
        "warm_at_most_0.5_s": ours["warm_s"] <= 0.5,
        "at_least_20x_obsidiantools": None if speedup is None else speedup >= 20,
    }
    return figures


def report(figures: dict[str, Any]) -> str:
    """The figures as Markdown."""
    ours = figures["vaultsync"]
    lines = [
        f"## Knowledge model: {ours['notes']} notes, {ours['edges']} edges ({figures['vault']})",
        "",
        "| reader | cold | warm |",
        "|---|---|---|",
        f"| vaultsync `load_model` (in process, best) | {ours['cold_s']} s "
        f"(first {ours['cold_first_s']} s) | {ours['warm_s']} s "
        f"(median {ours['warm_median_s']} s) |",
        f"| vaultsync, whole process (start + imports) | {ours['cold_process_s']} s "
        f"| {ours['warm_process_s']} s |",
    ]
    ot = figures.get("obsidiantools")
    if ot is None:
        lines.append("| obsidiantools `Vault(dir).connect()` | not run | |")
    elif "error" in ot:
        lines.append(f"| obsidiantools `Vault(dir).connect()` | could not run: {ot['error']} | |")
    else:
        lines.append(
            f"| obsidiantools {ot['version']} `Vault(dir).connect()` | {ot['connect_s']} s "
            f"(vaultsync {ot['speedup_cold']}x faster cold, {ot['speedup_warm']}x warm) | — |"
        )
    targets = figures.get("targets", {})
    lines += [
        "",
        "Targets: "
        + ", ".join(
            f"{name.replace('_', ' ')}: {'n/a' if met is None else 'met' if met else 'MISSED'}"
            for name, met in targets.items()
        ),
    ]
    links = figures.get("links")
    if links:
        lines += [
            "",
            "| wikilinks | found | resolved |",
            "|---|---|---|",
            f"| vaultsync | {links['vaultsync']['wikilinks']} | {links['vaultsync']['resolved']} |",
            f"| obsidiantools | {links['obsidiantools']['wikilinks']} "
            f"| {links['obsidiantools']['resolved']} |",
            "",
            "| per link | count |",
            "|---|---|",
        ]
        lines += [f"| {kind} | {count} |" for kind, count in links["agreement"].items()]
        for kind, shown in links["examples"].items():
            lines += ["", f"{kind}, e.g.:"] + [f"- `{text}`" for text in shown]
    return "\n".join(lines)


def synced_vault(notes: int) -> Path:
    """The vault ``vaultsync sync`` writes from ``vaultsync.synthetic``'s store (as ``make bench``).

    Reused when already there (``bench/out/knowledge-synced-N/vault``).
    """
    from vaultsync.synthetic import generate_store  # only for this mode

    work = OUT / f"knowledge-synced-{notes}"
    vault = work / "vault"
    if (vault / ".vaultsync").is_dir():
        return vault
    shutil.rmtree(work, ignore_errors=True)
    generate_store(work / "state", notes=notes, seed=7)
    names = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost"}
    env = {**os.environ, **names, "GIT_COMMITTER_NAME": "bench"}
    env["GIT_COMMITTER_EMAIL"] = "bench@localhost"
    command = [sys.executable, "-m", "pipeline", "sync", "--state", str(work / "state")]
    subprocess.run([*command, "--vault", str(vault)], check=True, cwd=ROOT, env=env)
    return vault


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", nargs="?", type=Path, help="vault folder (else synced)")
    parser.add_argument(
        "--synced",
        type=int,
        default=10_000,
        metavar="N",
        help="without VAULT: sync vaultsync.synthetic's N-note store and read that vault",
    )
    parser.add_argument(
        "--generate",
        type=int,
        metavar="N",
        help="without VAULT: write N notes in vaultsync's shape instead (no sync needed)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write figures as JSON")
    parser.add_argument("--no-obsidiantools", action="store_true")
    args = parser.parse_args()
    vault = args.vault
    if vault is None and args.generate:
        vault = generate_vault(OUT / f"knowledge-vault-{args.generate}", args.generate)
    elif vault is None:
        vault = synced_vault(args.synced)
    figures = run(vault, obsidiantools=not args.no_obsidiantools)
    print(report(figures))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

"""Where one sync's time goes: ``python bench/phases.py STATE VAULT [--json FILE]``.

Runs one ``vaultsync sync`` in this process (``app.sync``, as the command does) with a
wall-clock timer around each stage — imports, the stores' digest, the vault's records (manifest,
journal, stat cache), extract, the graph patch state's load, graph build (patched), graph.db,
the notes' keys memo load, layout and note keys, the vault scan and plan,
render, then ``vault.apply``'s steps: journal, write, manifest, commit, index, cache — and the
caches' save (into a vault synced before, handed to helpers that write them while the sync
goes on: then the handing over is timed, not the save itself), and prints
them (or writes JSON), with the peak memory (RSS, this process and its finished children) once
each stage ended: where a sync's peak memory is reached.  The stages are timed by wrapping their
functions by name (``vault.sync`` and ``vault.apply`` call them through their modules), so the
pipeline itself carries no timing code; the total is the whole sync, and "between stages" is
what no stage accounts for (the sync's own steps between them).  A stage the sync skipped (a
no-op sync writes no journal) prints as "not run".
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402 - imports are part of what is measured
import functools  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from vaultsync.app.sync import SyncRequest  # noqa: E402
from vaultsync.app.sync import sync as app_sync  # noqa: E402
from vaultsync.app.workspace import open_workspace  # noqa: E402
from vaultsync.core import cachefile, process  # noqa: E402
from vaultsync.graph import build as graph  # noqa: E402
from vaultsync.graph import cache, graphdb, load  # noqa: E402
from vaultsync.render import keycache  # noqa: E402
from vaultsync.render import specs as render  # noqa: E402
from vaultsync.vault import apply, decide, quick  # noqa: E402

IMPORTS = time.perf_counter() - T0
STAGES: list[tuple[str, Any, str]] = [
    ("stores' digest", quick, "sync_inputs"),
    ("vault's records read", decide, "read_controls"),  # the manifest, journal and stat cache
    ("extract", load, "_read"),  # the stores read and masked (what load.build calls)
    ("graph state load", cache, "load_patch_state"),
    ("graph build", graph, "patch_graph"),
    ("graph.db", graphdb, "save_graph"),
    ("keys memo load", keycache, "load_specs_memo"),
    ("layout + keys", render, "note_specs"),
    ("scan + plan", decide, "plan_vault"),
    ("render", decide, "render"),
    ("journal", apply, "write_journal"),
    ("write", apply, "write_notes"),
    ("manifest", apply, "write_manifest"),
    ("commit", apply, "commit_changes"),
    ("index", apply, "sync_index"),
    ("cache", apply, "save_cache"),
    ("graph state save", cache, "save_patch_state"),
    # a sync into a vault synced before: the stages' caches handed to helpers (twice)
    ("caches handed aside", cachefile, "hand_over"),
]


PEAK_RSS_MIB: dict[str, float] = {}
"""Per stage, the peak RSS (MiB) of this process or of any finished child once it ended."""

BETWEEN = "between stages"
"""The time no stage accounts for: the sync's own steps between them."""


def peak_rss_mib() -> float:
    """The larger of this process's and its waited-for children's peak RSS (Linux: KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


@dataclass
class Clock:
    """The seconds spent in each stage, and in all of them with a nested stage counted once."""

    seconds: dict[str, float]
    running: int = 0
    """How many stages are running now, one inside another."""
    outermost: float = 0.0

    def timed(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function``, its time added to stage ``name``."""

        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            self.running += 1
            try:
                return function(*args, **kwargs)
            finally:
                self.running -= 1
                spent = time.perf_counter() - start
                self.seconds[name] = self.seconds.get(name, 0.0) + spent
                if not self.running:
                    self.outermost += spent
                PEAK_RSS_MIB[name] = peak_rss_mib()

        return run


def measure(state: Path, vault: Path) -> dict[str, float]:
    """Seconds per stage of one sync of ``state`` into ``vault``, plus ``total``."""
    clock = Clock(seconds={"imports": IMPORTS})
    for name, owner, attribute in STAGES:
        setattr(owner, attribute, clock.timed(name, getattr(owner, attribute)))
    # load and render imported these by name: point their names at the timed ones too.
    for target, module, name in (
        (load, graph, "patch_graph"),
        (load, cache, "load_patch_state"),
        (load, cache, "save_patch_state"),
        (load, graphdb, "save_graph"),
        (render, load, "build"),
        (render, keycache, "load_specs_memo"),
    ):
        setattr(target, name, getattr(module, name))
    process.one_shot = True  # as the command: a big run freezes its heap
    app_sync(open_workspace(str(state), str(vault)), SyncRequest())
    total = time.perf_counter() - T0
    return {**clock.seconds, BETWEEN: total - IMPORTS - clock.outermost, "total": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("state", type=Path)
    parser.add_argument("vault", type=Path)
    parser.add_argument("--json", type=Path, help="write the figures here instead of printing")
    args = parser.parse_args()
    times = measure(args.state, args.vault)
    if args.json:
        figures = {**times, "peak_rss_mib": PEAK_RSS_MIB}
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        return
    for name in ["imports", *(stage for stage, _owner, _attribute in STAGES), BETWEEN, "total"]:
        seconds, rss = times.get(name), PEAK_RSS_MIB.get(name)
        print(f"{name:20} " + ("not run" if seconds is None else f"{seconds:8.3f} s")
              + ("" if rss is None else f"  peak RSS {rss:6.0f} MiB"))  # fmt: skip


if __name__ == "__main__":
    main()

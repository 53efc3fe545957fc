"""``bench/phases.py``: one sync's time by stage, adding up to the whole."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from helpers import invoke

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def test_a_stage_inside_another_counts_once_toward_the_stages() -> None:
    """Nested stages each get their seconds, and the time in stages counts the outer one only."""
    clock = bench_module("phases").Clock(seconds={})
    inner = clock.timed("inner", lambda: sum(range(10_000)))
    outer = clock.timed("outer", lambda: inner() + inner())
    outer()
    assert set(clock.seconds) == {"inner", "outer"}
    assert clock.outermost == clock.seconds["outer"] > clock.seconds["inner"]


def test_a_one_fact_syncs_stages_and_the_time_between_add_up_to_its_total(
    demo_state: Path, tmp_path: Path
) -> None:
    """The table a one-fact sync prints has no hole and counts nothing twice."""
    vault, out = tmp_path / "vault", tmp_path / "phases.json"
    assert invoke("sync", "--state", str(demo_state), "--vault", str(vault)).returncode == 0
    bench_module("run").change_one_fact(demo_state, 1)
    subprocess.run([sys.executable, str(BENCH / "phases.py"), str(demo_state), str(vault),
                    "--json", str(out)], check=True, capture_output=True)  # fmt: skip
    seconds = json.loads(out.read_text())
    total, _peaks = seconds.pop("total"), seconds.pop("peak_rss_mib")
    stages = seconds  # with the imports and the time between stages
    assert {"vault's records read", "keys memo load", "graph build"} <= set(stages)
    assert stages["between stages"] >= 0
    assert abs(sum(stages.values()) - total) < 1e-6

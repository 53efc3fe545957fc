"""``bench/run.py``'s goal table: each measure beside its goal and its same-run floor."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

RUN = Path(__file__).resolve().parents[2] / "bench" / "run.py"


def bench_run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", RUN)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def row(**figures: Any) -> dict[str, Any]:
    return {"notes": 2800, "caps_raised": False, **figures}


class TestGoalRow:
    def test_a_relative_goal_is_judged_against_the_floor_of_the_same_run(self) -> None:
        """No-op 0.3 s against 2× a 0.1 s floor is missed by 1.5×."""
        run = bench_run()
        goal = next(g for g in run.GOALS if g.key == "noop_sync_s" and g.notes == 2800)
        line = run.goal_row(goal, row(noop_sync_s=0.3, noop_floor_s=0.1))
        assert "≤ 2× `python -c pass` + `git status` = 0.200 s" in line
        assert "missed by 1.5×" in line

    def test_a_measure_within_its_goal_is_met(self) -> None:
        """A warm graph build of 8 ms meets its 10 ms goal."""
        run = bench_run()
        goal = next(g for g in run.GOALS if g.key == "build_warm_s")
        assert run.goal_row(goal, row(build_warm_s=0.008)).endswith("| met |")

    def test_a_measure_the_run_did_not_take_is_said_so(self) -> None:
        """Without the watch benchmark, its goal reads "not measured"."""
        run = bench_run()
        lines = run.goal_lines([row(build_warm_s=0.008)])
        watch = [line for line in lines if "watch" in line]
        assert watch
        assert all(line.endswith("not measured |") for line in watch)

    def test_the_large_goals_apply_from_100000_notes(self) -> None:
        """A 120,000-note row is judged by the 100,000-note goals, not the 2,800-note ones."""
        run = bench_run()
        lines = run.goal_lines([{"notes": 120_000, "caps_raised": True, "one_fact_sync_s": 2.5}])
        assert any("one fact changed" in line and line.endswith("| met |") for line in lines)
        assert not any("graph build" in line for line in lines)

    def test_a_one_fact_syncs_peak_memory_is_a_goal_of_its_own(self) -> None:
        """Its helpers beside a full heap: 1,300 MiB misses the 1 GiB of the first sync's row."""
        run = bench_run()
        lines = run.goal_lines([{"notes": 100_000, "caps_raised": True, "peak_memory_mib": 900.0,
                                 "peak_one_fact_mib": 1300.0}])  # fmt: skip
        one_fact = [line for line in lines if "one-fact sync, all processes" in line]
        assert len(one_fact) == 1 and "missed by 1.3×" in one_fact[0]
        assert any("peak memory, all processes" in line and line.endswith("| met |")
                   for line in lines)  # fmt: skip


PROFILE: dict[str, Any] = {
    "command": ["vaultsync", "sync", "--state", "s", "--vault", "v"],
    "profiled_s": 2.0,
    "top": [{"function": "vaultsync/graph/build.py:55 build_graph", "calls": 1,
             "seconds": 1.2, "share": 0.6}],
}  # fmt: skip


def profiled(notes: int, measure: str, value: float, profile: dict[str, Any]) -> str:
    """The profile section ``bench/run.py`` prints for one row holding a one-fact profile."""
    row = {"notes": notes, "caps_raised": notes > 10_000, measure: value,
           "profiles": {"one_fact_sync_s": profile}}  # fmt: skip
    return "\n".join(bench_run().profile_lines([row]))


class TestProfiles:
    def test_a_missed_goal_is_explained_by_its_profile(self) -> None:
        """A one-fact sync over its goal prints its profile's functions and their shares."""
        text = profiled(100_000, "one_fact_sync_s", 9.0, PROFILE)
        assert "### 100,000 notes, one fact changed: profile" in text
        assert "| `vaultsync/graph/build.py:55 build_graph` | 1 | 1.200 s | 60% |" in text

    def test_a_profile_also_lists_the_functions_by_their_own_time(self) -> None:
        """Under the cumulative table, the functions that spent the time themselves."""
        own = [{"function": "<built-in method _pickle.load>", "calls": 3, "seconds": 0.9,
                "share": 0.45}]  # fmt: skip
        text = profiled(100_000, "one_fact_sync_s", 9.0, {**PROFILE, "own": own})
        assert "| `<built-in method _pickle.load>` | 3 | 0.900 s | 45% |" in text

    def test_a_watch_miss_is_explained_by_the_one_fact_sync_profile(self) -> None:
        """What watch runs past its quiet period is a one-fact sync: that profile is shown."""
        text = profiled(2800, "watch_over_quiet_s", 0.8, PROFILE)
        assert "### 2,800 notes, watch: store change → commit, past the quiet period" in text
        assert "`vaultsync/graph/build.py:55 build_graph`" in text

    def test_a_sampled_run_follows_the_profile(self) -> None:
        """The same change sampled from outside: its functions and its deepest lines."""
        line = {"function": "vaultsync/app/sync.py:261 _local_sync", "seconds": 0.29,
                "share": 0.04}  # fmt: skip
        sampled = {"sampled_s": 7.5, "top": [], "deepest": [line]}
        text = profiled(100_000, "one_fact_sync_s", 9.0, {**PROFILE, "sampled": sampled})
        assert "sampled by py-spy from outside (7.50 s sampled" in text
        assert "| `vaultsync/app/sync.py:261 _local_sync` | 0.290 s | 4% |" in text

    def test_a_run_that_could_not_be_sampled_says_why(self) -> None:
        """No py-spy (or no leave to trace): one line saying so, the profile as before."""
        sampled = {"command": ["vaultsync"], "problem": "py-spy is not installed"}
        text = profiled(100_000, "one_fact_sync_s", 9.0, {**PROFILE, "sampled": sampled})
        assert "Not sampled from outside: py-spy is not installed." in text
        assert "`vaultsync/graph/build.py:55 build_graph`" in text

    def test_a_met_goal_prints_no_profile(self) -> None:
        """Within its goal, the same profile is left out of the report."""
        run = bench_run()
        met = {"notes": 100_000, "caps_raised": True, "one_fact_sync_s": 2.0,
               "profiles": {"one_fact_sync_s": PROFILE}}  # fmt: skip
        assert run.profile_lines([met]) == []

    def test_the_machine_speed_is_in_the_header(self) -> None:
        """The results name the calibration loop's time and its ratio to the reference."""
        run = bench_run()
        meta = {"date": "2026-12-04", "machine": "x86_64", "cpus": 2, "python": "3.11",
                "runs": 1, "loop_s": 1.1}  # fmt: skip
        header = run.markdown([], meta).splitlines()[2]
        assert (
            f"a 10M-iteration Python loop 1.10 s ({1.1 / run.CALIBRATION_REFERENCE_S:.1f}×"
            in header
        )


class TestPhases:
    def test_the_peak_memory_after_each_stage_is_a_table_of_its_own(self) -> None:
        """Per-stage peak RSS is printed under the stage times, not as a row of them."""
        run = bench_run()
        phases = {"graph build": 2.0, "total": 3.0,
                  "peak_rss_mib": {"graph build": 512.0, "render": 900.4}}  # fmt: skip
        lines = run._phase_table([row(phases_first=phases, phases_one_fact=phases)])
        assert "| graph build | 2.000 | 2.000 |" in lines
        assert not any(line.startswith("| peak_rss_mib") for line in lines)
        assert "| render | 900 | 900 |" in lines


def test_the_search_scale_bench_fills_the_index_schema_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``search_quality.scale`` inserts rows the search index's tables take, then searches."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # the script puts the checkout first
    path = RUN.with_name("search_quality.py")
    spec = importlib.util.spec_from_file_location("bench_search_quality", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from vaultsync.search.embed import load_embedder

    found = module.scale(load_embedder(), 20)
    assert (found["notes"], found["chunks"]) == (20, 22)

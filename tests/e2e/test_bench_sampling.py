"""``bench/sample_command.py``: a command sampled by py-spy, its wall-clock profile."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import DEMO_STORE

BENCH = Path(__file__).resolve().parents[2] / "bench"
SAMPLER = BENCH / "sample_command.py"
SYNC = "/work/pipeline/app/sync.py"


def sampler() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # it reads profile_command beside it, as run from there
    spec = importlib.util.spec_from_file_location("bench_sample_command", SAMPLER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_function_is_counted_once_per_sample_it_is_on_the_stack() -> None:
    """A function twice on one stack (recursion) counts that sample's seconds once."""
    stacks = [
        f"<module> (/x/vaultsync:8);sync ({SYNC}:10);sync ({SYNC}:12) 4",
        f"<module> (/x/vaultsync:8);sync ({SYNC}:10) 6",
    ]
    found = sampler().summarize(stacks, rate=100)
    assert found["sampled_s"] == 0.1
    assert found["top"] == [{"function": "vaultsync/app/sync.py sync", "seconds": 0.1,
                             "share": 1.0}]  # fmt: skip


def test_the_deepest_line_of_ours_takes_the_samples_below_it() -> None:
    """Time in a library or C call is charged to the vaultsync line that made it."""
    stacks = [
        f"plan ({SYNC}:20);loads (/usr/lib/python3.11/json/__init__.py:346) 3",
        f"plan ({SYNC}:20);apply ({SYNC}:30) 1",
        "<module> (/usr/lib/python3.11/runpy.py:1) 1",
    ]
    deepest = sampler().summarize(stacks, rate=10)["deepest"]
    assert deepest == [
        {"function": "vaultsync/app/sync.py:20 plan", "seconds": 0.3, "share": 0.6},
        {"function": "vaultsync/app/sync.py:30 apply", "seconds": 0.1, "share": 0.2},
    ]


def test_lines_that_are_not_samples_are_skipped() -> None:
    """A line without a count (a torn write) is no sample."""
    assert sampler().summarize(["", f"sync ({SYNC}:10) many"])["sampled_s"] == 0.0


@pytest.mark.external
@pytest.mark.skipif(
    not (shutil.which("py-spy") or Path(sys.executable).with_name("py-spy").exists()),
    reason="py-spy is not installed (the dev extra installs it)",
)
def test_a_real_sync_is_sampled_down_to_vaultsyncs_own_functions(tmp_path: Path) -> None:
    """py-spy samples a real sync of the demo store: the sync's functions are on the stack."""
    state = tmp_path / "state"
    shutil.copytree(DEMO_STORE, state)
    found = sampler().sampled(["sync", "--state", str(state), "--vault", str(tmp_path / "v")])
    assert "problem" not in found, found
    assert found["sampled_s"] > 0
    functions = {row["function"] for row in found["top"]}
    assert "vaultsync/app/sync.py _full_sync" in functions
    assert (tmp_path / "v" / "Home.md").is_file()

"""``core.process``: the collector's pauses around the state a command builds."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import outlived
from vaultsync.core import cachefile, process


@pytest.fixture(autouse=True)
def collecting() -> Iterator[None]:
    """Every test starts and ends with the collector on."""
    gc.enable()
    yield
    gc.enable()


def test_a_pause_ends_with_its_block() -> None:
    """Outside a deferring block, the collector resumes when the pause ends."""
    with process.paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_inside_a_deferring_block_lasts_to_the_blocks_end() -> None:
    """Inside ``collector_resumes_at_end``, a pause outlives its block until that one ends."""
    with process.collector_resumes_at_end():
        with process.paused_gc():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_deferring_block_without_a_pause_leaves_the_collector_on() -> None:
    """No pause inside: the collector runs all along (a full build keeps it on)."""
    with process.collector_resumes_at_end():
        assert gc.isenabled()
    assert gc.isenabled()


def test_a_collector_off_before_stays_off() -> None:
    """Neither block turns on a collector that was off when it began."""
    gc.disable()
    with process.collector_resumes_at_end(), process.paused_gc():
        pass
    assert not gc.isenabled()


def test_after_a_big_run_a_pause_freezes_what_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot big run leaving fast: objects made in a pause are frozen, never walked."""
    monkeypatch.setattr(process, "leave_fast", True)
    before = gc.get_freeze_count()
    try:
        with process.paused_gc():
            made = [[index] for index in range(5000)]
        assert gc.get_freeze_count() >= before + len(made)
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_pause_of_another_run_freezes_nothing() -> None:
    """Without a big run (a watcher, a test), a pause leaves the heap to the collector."""
    before = gc.get_freeze_count()
    with process.paused_gc():
        made = [[index] for index in range(5000)]
    assert gc.get_freeze_count() == before
    assert len(made) == 5000


def test_after_a_big_run_what_outlives_is_kept_to_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot big run: a value given to ``outlive`` is not freed when dropped."""
    assert outlived(monkeypatch)() is not None


def test_without_a_big_run_nothing_outlives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a big run (a test, a command on a small vault), a dropped value is freed."""
    assert outlived(monkeypatch, big_run=False)() is None


def test_in_a_resident_process_nothing_outlives(monkeypatch: pytest.MonkeyPatch) -> None:
    """A watcher's big sync: a dropped value is freed, its next sync may come before tidying."""
    with cachefile.resident():
        assert outlived(monkeypatch)() is None


def test_letting_go_frees_what_outlived(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another run begins in this process: what the last one kept is freed."""
    seen = outlived(monkeypatch)
    process.let_go()
    assert seen() is None


def test_ending_a_big_run_gives_the_heap_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """``end_big_run`` (a watcher after its sync): the heap unfrozen, a normal exit."""
    monkeypatch.setattr(process, "leave_fast", True)
    gc.freeze()
    try:
        process.end_big_run()
        assert gc.get_freeze_count() == 0
        assert not process.leave_fast
    finally:
        gc.unfreeze()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="no /proc")
def test_resident_memory_grows_with_what_the_process_holds() -> None:
    """``resident_mib`` reads this process's memory now: 64 MiB more held, about 64 more."""
    before = process.resident_mib()
    held = b"\x01" * (64 << 20)  # written, so every page of it is resident
    after = process.resident_mib()
    assert before is not None and after is not None
    assert 48 < after - before < 80, (before, after)
    del held


def test_resident_memory_is_none_where_it_cannot_be_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without ``/proc`` (macOS, the BSDs) the answer is ``None``: unknown, never a guess."""
    monkeypatch.setattr(process, "STATM", tmp_path / "statm")
    assert process.resident_mib() is None

"""``core.parallel.split_map``: the same answers as a plain loop, whatever the helper does."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import assert_reaped, wait_for_pid
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.core import parallel
from vaultsync.core.errors import ConfigError, TemplateError


@pytest.fixture(autouse=True)
def default_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from this platform's default, whatever the caller's environment."""
    monkeypatch.delenv("VAULTSYNC_JOBS", raising=False)


def test_results_in_order() -> None:
    """Every item's result comes back at the item's place."""
    items = list(range(1000))
    assert parallel.split_map(lambda n: n * n, items) == [n * n for n in items]


def test_helper_does_every_other_block() -> None:
    """A long list is shared by blocks of ``BLOCK``: the odd blocks run in another process."""
    size = parallel.BLOCK
    pids = parallel.split_map(lambda _n: os.getpid(), range(16 * size + 5), min_items=10)
    blocks = [set(pids[start : start + size]) for start in range(0, len(pids), size)]
    assert blocks[0::2] == [{os.getpid()}] * 9
    helpers = set().union(*blocks[1::2])
    assert len(helpers) == 1
    assert os.getpid() not in helpers


def test_short_list_shared_in_smaller_blocks() -> None:
    """A list shorter than sixteen blocks still gives the helper work (blocks of a sixteenth)."""
    pids = parallel.split_map(lambda _n: os.getpid(), range(64), min_items=10)
    assert set(pids[0:4]) == {os.getpid()}
    assert os.getpid() not in set(pids[4:8])


@settings(max_examples=25)
@given(count=st.integers(min_value=2, max_value=600))
def test_any_length_in_order(count: int) -> None:
    """Through a real helper, whatever the length, each result is at its item's place."""
    assert parallel.split_map(lambda n: n * 3, range(count), min_items=2) == [
        n * 3 for n in range(count)
    ]


_LENGTHS = [
    *range(2, 300),
    *(k * parallel.BLOCK + r for k in range(15, 20) for r in (0, 1, parallel.BLOCK - 1)),
]


@pytest.mark.parametrize("count", _LENGTHS)
def test_blocks_put_back_in_order(count: int) -> None:
    """The two shares hold each item once, and merged they give each result at its place."""
    items = list(range(count))
    mine, theirs = parallel._blocks(items, 0), parallel._blocks(items, 1)
    assert sorted(mine + theirs) == items
    merged = parallel._in_order(lambda n: -n, items, [-n for n in mine], [-n for n in theirs])
    assert merged == [-n for n in items]


@pytest.mark.parametrize("count", [2, 35, 17 * parallel.BLOCK + 5])
def test_helper_share_lost_is_done_here(count: int) -> None:
    """With none of the helper's results, the parent's own merge does its share."""
    items = list(range(count))
    mine = [-n for n in parallel._blocks(items, 0)]
    assert parallel._in_order(lambda n: -n, items, mine, []) == [-n for n in items]


def test_short_lists_stay_in_process() -> None:
    """Below ``min_items`` nothing is forked."""
    assert set(parallel.split_map(lambda _n: os.getpid(), range(50), min_items=100)) == {
        os.getpid()
    }


def test_error_in_helper_is_raised_by_parent() -> None:
    """An item failing in the helper is redone by the parent, which raises its own error."""

    def work(n: int) -> int:
        if n == 330:  # blocks of 25: items 325-349 are the helper's
            raise TemplateError(f"template failed for note {n}")
        return n

    with pytest.raises(TemplateError, match="note 330"):
        parallel.split_map(work, range(400), min_items=10)


def test_helper_failing_only_in_helper_is_redone() -> None:
    """A result the helper could not produce is computed by the parent."""
    parent = os.getpid()

    def work(n: int) -> int:
        if os.getpid() != parent and n == 7:
            raise RuntimeError("helper only")
        return n + 1

    assert parallel.split_map(work, range(20), min_items=2) == [n + 1 for n in range(20)]


def test_killed_helper_share_done_by_parent() -> None:
    """A helper killed mid-way changes nothing but time: the parent does its share."""
    parent = os.getpid()

    def work(n: int) -> int:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return -n

    assert parallel.split_map(work, range(300), min_items=2) == [-n for n in range(300)]


def test_unpicklable_results_are_redone() -> None:
    """A result that cannot cross the pipe is computed by the parent."""

    def closure(n: int) -> Callable[[], int]:
        return lambda: n

    results = parallel.split_map(closure, range(300), min_items=2)
    assert [make() for make in results] == list(range(300))


def test_parent_error_kills_helper() -> None:
    """When the parent's share fails, the error propagates and no helper is left behind."""

    def work(n: int) -> int:
        if n == 0:
            raise ValueError("parent share")
        return n

    with pytest.raises(ValueError, match="parent share"):
        parallel.split_map(work, range(300), min_items=2)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_first_failure_in_item_order_is_raised() -> None:
    """When items of both shares fail, the error is the plain loop's: the first in order."""

    def work(n: int) -> int:
        if n in (20, 40):  # blocks of 18: 20 is the helper's, 40 the parent's
            raise ValueError(f"item {n}")
        return n

    with pytest.raises(ValueError, match="item 20"):
        parallel.split_map(work, range(300), min_items=2)


def test_stuck_helper_is_killed_and_its_share_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper that never finishes is killed past the deadline; the results are complete."""
    parent = os.getpid()

    def work(n: int) -> int:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGSTOP)
        return n

    monkeypatch.setattr(parallel, "MIN_WAIT", 0.2)
    assert parallel.split_map(work, range(300), min_items=2) == list(range(300))


class TestJobs:
    def test_one_job_never_forks(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """``VAULTSYNC_JOBS=1``: every item runs in this process, however long the list."""
        monkeypatch.setenv("VAULTSYNC_JOBS", "1")
        assert set(parallel.split_map(lambda _n: os.getpid(), range(400), min_items=10)) == {
            os.getpid()
        }

    def test_two_jobs_fork_the_helper(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """``VAULTSYNC_JOBS=2`` on Linux: the second block runs in the helper."""
        monkeypatch.setenv("VAULTSYNC_JOBS", "2")
        pids = parallel.split_map(lambda _n: os.getpid(), range(400), min_items=10)
        assert set(pids[0:25]) == {os.getpid()}
        assert os.getpid() not in set(pids[25:50])

    @pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
    def test_other_values_are_a_config_error(
        self, monkeypatch: pytest.MonkeyPatch, value: str
    ) -> None:
        """A value that is not a positive integer is refused (exit 3), not guessed at."""
        monkeypatch.setenv("VAULTSYNC_JOBS", value)
        with pytest.raises(ConfigError, match="VAULTSYNC_JOBS"):
            parallel.split_map(lambda n: n, range(400), min_items=10)

    @pytest.mark.parametrize(
        ("environ", "platform", "can_fork", "allowed"),
        [
            ({}, "linux", True, True),
            ({}, "freebsd14", True, True),
            ({}, "darwin", True, False),
            ({"VAULTSYNC_JOBS": "2"}, "darwin", True, True),
            ({"VAULTSYNC_JOBS": "1"}, "linux", True, False),
            ({"VAULTSYNC_JOBS": "01"}, "linux", True, False),
            ({"VAULTSYNC_JOBS": "2"}, "win32", False, False),
            ({}, "win32", False, False),
        ],
    )
    def test_where_the_helper_is_used(
        self, environ: dict[str, str], platform: str, can_fork: bool, allowed: bool
    ) -> None:
        """Linux and the BSDs fork by default, macOS only when asked, no ``fork`` never."""
        assert parallel.helper_allowed(environ, platform=platform, can_fork=can_fork) is allowed


class TestInBackground:
    """``in_background``: work begun in a helper, whose value (or error) the parent gets."""

    def test_value_comes_from_the_helper(self) -> None:
        """Enough work: it runs in another process, and its value crosses the pipe."""
        pending = parallel.in_background(lambda: (os.getpid(), "x" * 100_000), min_items=1000)
        pid, text = pending.result()
        assert pid != os.getpid()
        assert text == "x" * 100_000

    @pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="no anonymous memory files")
    def test_a_helper_leaves_once_its_value_is_written(self, tmp_path: Path) -> None:
        """A value bigger than a pipe holds does not keep the helper alive until it is asked for."""
        marker = tmp_path / "helper"

        def work() -> str:
            marker.write_text(str(os.getpid()))
            return "v" * 1_000_000

        pending = parallel.in_background(work, min_items=1000)
        _wait_ended(wait_for_pid(marker))
        assert pending.result() == "v" * 1_000_000

    def test_without_memory_files_the_value_crosses_the_pipe(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Where no anonymous file can be made, the helper's value still reaches the parent."""
        monkeypatch.setattr(parallel, "_value_file", lambda: -1)
        pending = parallel.in_background(lambda: (os.getpid(), "y" * 1_000_000), min_items=1000)
        pid, text = pending.result()
        assert (pid != os.getpid(), text) == (True, "y" * 1_000_000)

    def test_a_helper_slow_to_leave_still_gives_its_value(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Its value sent, a helper still on its way out is waited for, not killed."""
        leave = os._exit

        def slow_exit(code: int) -> None:
            time.sleep(0.2)  # between closing its pipe and leaving
            leave(code)

        monkeypatch.setattr(os, "_exit", slow_exit)
        assert parallel.in_background(os.getpid, min_items=1000).result() != os.getpid()

    def test_little_work_stays_in_process(self) -> None:
        """Below ``MIN_ITEMS`` nothing is forked: the parent does the work when asked."""
        assert parallel.in_background(os.getpid, min_items=10).result() == os.getpid()

    def test_one_job_never_forks(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """``VAULTSYNC_JOBS=1``: the work runs in this process."""
        monkeypatch.setenv("VAULTSYNC_JOBS", "1")
        assert parallel.in_background(os.getpid, min_items=1000).result() == os.getpid()

    def test_error_is_the_parents_own(self) -> None:
        """Work that fails fails again in the parent: the error raised is the plain call's."""
        parent = os.getpid()

        def work() -> int:
            raise TemplateError(f"failed in {'the parent' if os.getpid() == parent else 'x'}")

        pending = parallel.in_background(work, min_items=1000)
        with pytest.raises(TemplateError, match="failed in the parent"):
            pending.result()

    def test_killed_helper_leaves_the_work_to_the_parent(self) -> None:
        """A helper that dies changes nothing but time: the parent does the work."""
        parent = os.getpid()

        def work() -> int:
            if os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)
            return os.getpid()

        assert parallel.in_background(work, min_items=1000).result() == parent

    def test_stuck_helper_is_killed(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """A helper that never finishes is killed past the deadline; the parent answers."""
        parent, marker = os.getpid(), tmp_path / "helper"

        def work() -> int:
            if os.getpid() != parent:
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGSTOP)
            return os.getpid()

        monkeypatch.setattr(parallel, "MIN_WAIT", 0.2)
        assert parallel.in_background(work, min_items=1000).result() == parent
        assert_reaped(int(marker.read_text()))

    def test_discarded_work_leaves_no_process(self, tmp_path: Path) -> None:
        """Work nobody asks for any more is stopped, its helper reaped."""
        marker = tmp_path / "helper"

        def work() -> None:
            marker.write_text(str(os.getpid()))
            signal.pause()

        pending = parallel.in_background(work, min_items=1000)
        helper = wait_for_pid(marker)
        pending.discard()
        assert_reaped(helper)


def _wait_ended(pid: int) -> None:
    """Until ``pid`` has ended (a zombie its parent has not waited for yet); a minute at most.

    A guard against a hang, not a measure of speed.
    """
    give_up = time.monotonic() + 60
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        if time.monotonic() > give_up:
            pytest.fail(f"helper {pid} is still running")
        time.sleep(0.01)

"""``core.parallel.split_map``: the same answers as a plain loop, whatever the helper does."""

from __future__ import annotations

import os
import signal

import pytest
from vaultsync.core import parallel
from vaultsync.core.errors import TemplateError


def test_results_in_order() -> None:
    """Every item's result comes back at the item's place."""
    items = list(range(1000))
    assert parallel.split_map(lambda n: n * n, items) == [n * n for n in items]


def test_helper_does_every_other_item() -> None:
    """A list of at least ``min_items`` is shared: the odd items run in another process."""
    pids = parallel.split_map(lambda _n: os.getpid(), range(400), min_items=10)
    assert set(pids[0::2]) == {os.getpid()}
    assert len(set(pids[1::2])) == 1
    assert pids[1] != os.getpid()


def test_short_lists_stay_in_process() -> None:
    """Below ``min_items`` nothing is forked."""
    assert set(parallel.split_map(lambda _n: os.getpid(), range(50), min_items=100)) == {
        os.getpid()
    }


def test_error_in_helper_is_raised_by_parent() -> None:
    """An item failing in the helper is redone by the parent, which raises its own error."""

    def work(n: int) -> int:
        if n == 301:
            raise TemplateError(f"template failed for note {n}")
        return n

    with pytest.raises(TemplateError, match="note 301"):
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
    results = parallel.split_map(lambda n: lambda: n, range(300), min_items=2)
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
        if n in (7, 10):
            raise ValueError(f"item {n}")
        return n

    with pytest.raises(ValueError, match="item 7"):
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

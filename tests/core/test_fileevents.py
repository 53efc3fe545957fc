"""``core.fileevents``: file-system events as a wake-up for a polling loop, and remembered."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from vaultsync.core.fileevents import Wakeups


class _Never:
    """A stop never asked for."""

    def is_set(self) -> bool:
        return False

    def wait(self, seconds: float) -> bool:
        threading.Event().wait(seconds)
        return False


class _Asked(_Never):
    """A stop asked for already."""

    def is_set(self) -> bool:
        return True


def _keep_writing(path: Path, done: threading.Event) -> threading.Thread:
    """Write ``path`` every 0.2 s until ``done``: the first write may precede the listening."""

    def write() -> None:
        count = 0
        while not done.wait(0.2):
            count += 1
            path.write_text(f"{count}\n", encoding="utf-8")

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_relevant_change_wakes_the_sleeper(tmp_path: Path) -> None:
    """A file written under a watched folder ends the sleep early (a minute is only a guard)."""
    (tmp_path / "memory").mkdir()
    events = Wakeups([tmp_path], lambda path: path.endswith(".json")).start()
    done = threading.Event()
    writer = _keep_writing(tmp_path / "memory" / "index.json", done)
    try:
        assert events.sleep(60, _Never())
        assert not events.failure
    finally:
        done.set()
        writer.join()
        events.close()


def test_a_change_it_filters_out_does_not_wake_it(tmp_path: Path) -> None:
    """Only relevant paths count: a stray file's changes leave the sleep to its end."""
    events = Wakeups([tmp_path], lambda path: path.endswith(".json")).start()
    done = threading.Event()
    writer = _keep_writing(tmp_path / "notes.log", done)
    try:
        assert not events.sleep(1.0, _Never())
    finally:
        done.set()
        writer.join()
        events.close()


def test_a_stop_ends_the_sleep_at_once(tmp_path: Path) -> None:
    """A stop asked for wakes the sleeper, which says no change woke it."""
    events = Wakeups([tmp_path], lambda path: True).start()
    try:
        assert not events.sleep(60, _Asked())
    finally:
        events.close()


def test_no_folder_to_watch_is_said(tmp_path: Path) -> None:
    """Missing folders give no events, and the failure says so: the caller polls."""
    events = Wakeups([tmp_path / "missing"], lambda path: True).start()
    assert events.failure == "no folder to watch"
    assert not events.sleep(0, _Never())
    events.close()


def _listening(events: Wakeups) -> int:
    """Wait (a minute at most) until ``events`` vouch for every change; that moment."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        moment = time.monotonic_ns()
        if events.changed_since(moment) is not None:
            return moment
        time.sleep(0.05)
    raise AssertionError("the events never came")


def _heard(events: Wakeups, since: int, path: Path) -> frozenset[str]:
    """What changed since ``since``, once ``path`` is among it (a minute at most)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = events.changed_since(since)
        if found is not None and os.fspath(path.resolve()) in found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{path} was never heard")


def test_remembered_changes_are_named_since_a_moment(tmp_path: Path) -> None:
    """Each relevant path changed since a moment is named, by its resolved absolute path."""
    events = Wakeups([tmp_path], lambda path: path.endswith(".md"), remember=True).start()
    try:
        moment = _listening(events)
        (tmp_path / "a.md").write_text("a", encoding="utf-8")
        (tmp_path / "skip.log").write_text("x", encoding="utf-8")
        found = _heard(events, moment, tmp_path / "a.md")
        assert os.fspath((tmp_path / "skip.log").resolve()) not in found
        time.sleep(0.5)  # every event of that write came (watchfiles groups them over 50 ms)
        later = time.monotonic_ns()
        (tmp_path / "b.md").write_text("b", encoding="utf-8")
        since_later = _heard(events, later, tmp_path / "b.md")
        assert os.fspath((tmp_path / "a.md").resolve()) not in since_later
    finally:
        events.close()


def test_a_moment_before_listening_or_forgotten_is_not_vouched_for(tmp_path: Path) -> None:
    """Changes from before the events began, or from before what was forgotten, are unknown."""
    before = time.monotonic_ns()
    events = Wakeups([tmp_path], lambda path: path.endswith(".md"), remember=True).start()
    try:
        moment = _listening(events)
        assert events.changed_since(before) is None
        (tmp_path / "a.md").write_text("a", encoding="utf-8")
        _heard(events, moment, tmp_path / "a.md")
        later = time.monotonic_ns()
        events.forget_before(later)
        assert events.changed_since(moment) is None
        assert events.changed_since(later) == frozenset()
    finally:
        events.close()


def test_failed_events_vouch_for_nothing(tmp_path: Path) -> None:
    """With no folder to watch, no moment is vouched for: every note is looked at."""
    events = Wakeups([tmp_path / "missing"], lambda path: True, remember=True).start()
    assert events.changed_since(time.monotonic_ns()) is None
    events.close()

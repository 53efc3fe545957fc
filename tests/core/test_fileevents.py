"""``core.fileevents``: file-system events as a wake-up for a polling loop."""

from __future__ import annotations

import threading
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

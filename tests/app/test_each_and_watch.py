"""``app.each`` and ``app.watch``: the long-running use cases, in-process."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from vaultsync.app.each import plan_each, sync_each
from vaultsync.app.sync import SyncOutcome, SyncRequest, sync
from vaultsync.app.watch import Watcher, _Ahead, store_events
from vaultsync.app.workspace import open_workspace
from vaultsync.core import debounce
from vaultsync.vault.config import save_setting


def small_store(state: Path) -> None:
    """A state directory with one fact (a gateway sender's): what is synced is not the point."""
    (state / "memory").mkdir(parents=True)
    fact = {"id": "a" * 24, "content": "prefers short answers", "category": "preference",
            "created_at": "2026-11-01T10:00:00Z", "last_accessed": "2026-11-02T10:00:00Z",
            "access_count": 1, "score": 1.0}  # fmt: skip
    (state / "memory" / "memory_index.json").write_text(json.dumps([fact]), encoding="utf-8")


def test_each_vault_comes_back_as_its_sync_outcome(tmp_path: Path) -> None:
    """Every state directory is synced into its own vault; the parent holds each report."""
    root = tmp_path / "root"
    for name in ("alice", "bob"):
        small_store(root / name)
    plan = plan_each(root, None)
    outcomes = list(sync_each(plan, SyncRequest()))
    assert [o.name for o in outcomes] == ["alice", "bob"]
    for outcome in outcomes:
        assert outcome.ok and outcome.changed and outcome.commit
        assert outcome.synced is not None and outcome.synced.report is not None
        assert (root / outcome.name / "vault" / "Home.md").is_file()
    again = list(sync_each(plan, SyncRequest()))
    assert all(o.quick for o in again)


class _StopAfterFirstSync:
    """A stop that is set once the watcher has synced once."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def is_set(self) -> bool:
        return self.event.is_set()

    def wait(self, seconds: float) -> bool:
        return self.event.wait(min(seconds, 0.05))


def test_the_watcher_syncs_and_hands_over_the_outcome(demo_state: Path, tmp_path: Path) -> None:
    """Its first sync comes due, runs in-process and is handed to the adapter."""
    vault = tmp_path / "vault"
    vault.mkdir()
    save_setting(vault, "watch.first_s", "0.05", commit=False)
    ws = open_workspace(str(demo_state), str(vault))
    stop = _StopAfterFirstSync()
    seen: list[SyncOutcome] = []

    def synced(outcome: SyncOutcome) -> None:
        seen.append(outcome)
        stop.event.set()

    Watcher(ws, synced=synced, warn=lambda line: None).run(stop)
    assert len(seen) == 1 and seen[0].changed


class _ChangeThenStop:
    """After the watcher's first sync, a fact of the store changes; after its second, it stops."""

    def __init__(self, state: Path) -> None:
        self.state, self.event = state, threading.Event()
        self.seen: list[SyncOutcome] = []

    def synced(self, outcome: SyncOutcome) -> None:
        self.seen.append(outcome)
        if len(self.seen) == 1:
            path = self.state / "memory" / "memory_index.json"
            facts = json.loads(path.read_text(encoding="utf-8"))
            facts[0]["content"] = "orbital speaks OTLP over HTTP now"
            path.write_text(json.dumps(facts), encoding="utf-8")
        else:
            self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()

    def wait(self, seconds: float) -> bool:
        return self.event.wait(min(seconds, 0.05))


def test_the_watcher_works_a_sync_out_while_the_stores_are_quiet(
    demo_state: Path, tmp_path: Path
) -> None:
    """A change seen before its sync is due is planned then; the due sync applies that plan."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for key, value in (("watch.first_s", "0.05"), ("watch.poll_s", "0.05"),
                       ("watch.debounce_s", "2")):  # fmt: skip
        save_setting(vault, key, value, commit=False)
    ws = open_workspace(str(demo_state), str(vault))
    stop = _ChangeThenStop(demo_state)
    Watcher(ws, synced=stop.synced, warn=lambda line: None).run(stop)
    first, second = stop.seen
    assert first.changed
    assert second.changed and second.planned_ahead


class _StopWhen:
    """A stop that is set once ``done()`` says so (looked at each time the watcher asks)."""

    def __init__(self, done: Callable[[], bool]) -> None:
        self.done = done

    def is_set(self) -> bool:
        return self.done()

    def wait(self, seconds: float) -> bool:
        time.sleep(min(seconds, 0.02))
        return self.done()


def watcher_on(state: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Run a watcher of ``state`` until it warmed up, or idled half a second after its first
    sync (its first idle look would have warmed it up); the vaults warmed up."""
    from vaultsync.app import sync as app_sync

    save_setting(vault, "watch.first_s", "0.05", commit=False)
    ws = open_workspace(str(state), str(vault))
    warmed: list[Path] = []
    monkeypatch.setattr(app_sync, "warm", lambda ws: warmed.append(ws.vault))
    synced_at: list[float] = []

    def done() -> bool:
        return bool(warmed) or (bool(synced_at) and time.monotonic() > synced_at[0] + 0.5)

    watcher = Watcher(ws, synced=lambda _: synced_at.append(time.monotonic()), warn=pytest.fail)
    watcher.run(_StopWhen(done))
    return warmed


def test_a_watcher_started_on_a_vault_in_sync_warms_up_once(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its first sync had nothing to do: the notes are built once while nothing is pending."""
    vault = tmp_path / "vault"
    sync(open_workspace(str(demo_state), str(vault)), SyncRequest())
    assert watcher_on(demo_state, vault, monkeypatch) == [vault]


def test_a_watcher_whose_first_sync_built_does_not_warm_up(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first sync that built the notes holds them already: no second build."""
    vault = tmp_path / "vault"
    vault.mkdir()
    assert watcher_on(demo_state, vault, monkeypatch) == []


def test_a_burst_of_changes_is_planned_for_a_bounded_number_of_times() -> None:
    """Each new fingerprint is worth a plan until the burst's budget is spent."""
    ahead = _Ahead()
    pending = debounce.Schedule(seen="a", burst_from=0.0, due_at=5.0)
    assert ahead.worth_planning(pending)
    ahead.planned("a", None)
    assert not ahead.worth_planning(pending)  # planned for these stores already
    assert ahead.worth_planning(replace(pending, seen="b"))
    ahead.planned("b", None)
    assert not ahead.worth_planning(replace(pending, seen="c"))  # the budget is spent


def test_nothing_is_planned_when_no_sync_is_pending_or_after_a_failure() -> None:
    """No sync pending, or a retry waiting out its back-off: nothing is worked out ahead."""
    ahead = _Ahead()
    assert not ahead.worth_planning(debounce.Schedule(seen="a"))
    failing = debounce.Schedule(seen="a", burst_from=0.0, due_at=5.0, failures=1)
    assert not ahead.worth_planning(failing)


def test_the_watcher_wakes_for_store_files_only(demo_state: Path, tmp_path: Path) -> None:
    """Memory, sessions, contexts, skills and the board wake it; other files of the folder not."""
    events = store_events(open_workspace(str(demo_state), str(tmp_path / "vault")))
    real = demo_state.resolve()
    assert events.roots == (real,)
    for rel in ("memory/memory_index.json", "memory/memory_index.json.tmp", "board.json",
                "sessions/a.json", "contexts/c.json", "skills/deploy/SKILL.md"):  # fmt: skip
        assert events.relevant(str(real / rel)), rel
    for rel in ("history.log", "config.json", "memory-old/index.json"):
        assert not events.relevant(str(real / rel)), rel


def test_stores_reached_through_a_relative_or_linked_path_still_wake_it(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events name files by their real absolute path: so are the folders they are matched to."""
    (tmp_path / "link").symlink_to(demo_state)
    monkeypatch.chdir(tmp_path)
    events = store_events(open_workspace("link", str(tmp_path / "vault")))
    assert events.roots == (demo_state.resolve(),)
    assert events.relevant(str(demo_state.resolve() / "memory" / "memory_index.json"))

"""``app.each`` and ``app.watch``: the long-running use cases, in-process."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from vaultsync.app.each import plan_each, sync_each
from vaultsync.app.sync import SyncOutcome, SyncRequest
from vaultsync.app.watch import Watcher
from vaultsync.app.workspace import open_workspace
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

"""The rule for a person's changes in git: vaultsync commits the files it writes, never yours."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import open_workspace

NOTE = "Topics/telemetry.md"


def porcelain(vault: Path) -> list[str]:
    done = subprocess.run(
        ["git", "status", "--porcelain"], cwd=vault, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def _mentions(state: Path, count: int) -> None:
    topics = state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    next(t for t in data if t["name"] == "telemetry")["mentions"] = count
    topics.write_text(json.dumps(data))


def test_an_edit_of_yours_is_left_for_you_to_commit(demo_state: Path, tmp_path: Path) -> None:
    """An edited note the stores did not change: kept, and left uncommitted."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    note = ws.vault / NOTE
    note.write_text(note.read_text() + "\nMine.\n")
    (demo_state / "memory" / "projects.json").write_text("[]")  # something else to sync
    sync(ws, SyncRequest())
    assert f" M {NOTE}" in porcelain(ws.vault)


def test_a_note_you_deleted_is_left_for_you_to_commit(demo_state: Path, tmp_path: Path) -> None:
    """A deleted note stays deleted, and the deletion stays yours to commit."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    (ws.vault / NOTE).unlink()
    _mentions(demo_state, 99)
    sync(ws, SyncRequest())
    assert not (ws.vault / NOTE).exists()
    assert f" D {NOTE}" in porcelain(ws.vault)


def test_a_merge_vaultsync_writes_is_in_its_commit(demo_state: Path, tmp_path: Path) -> None:
    """The stores' changes merged into your edit: vaultsync wrote that file, so it commits it."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    note = ws.vault / NOTE
    note.write_text(note.read_text() + "\nMine.\n")
    then = time.time() - 60
    os.utime(note, (then, then))
    _mentions(demo_state, 99)
    report = sync(ws, SyncRequest()).report
    assert report is not None and report.merged == (NOTE,)
    assert not [line for line in porcelain(ws.vault) if line.endswith(NOTE)]

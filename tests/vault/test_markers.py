"""Git's conflict markers in a note: never an edit to merge into, and check stays red."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from click.testing import CliRunner
from vaultsync.app.sync import SyncRequest, check, status, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.cli.main import cli

NOTE = "Topics/telemetry.md"


def _summary(state: Path, text: str) -> None:
    topics = state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    next(t for t in data if t["name"] == "telemetry")["summary"] = text
    topics.write_text(json.dumps(data))


def _saved_a_minute_ago(note: Path) -> None:
    """An edit an editor finished saving (a file written seconds ago waits for the next sync)."""
    then = time.time() - 60
    os.utime(note, (then, then))


def _conflicted(demo_state: Path, vault: Path) -> None:
    """The user and the stores rewrote the same line: a merge conflict waits on resolve."""
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    note = vault / NOTE
    lines = note.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("OTLP pipeline"))
    lines[at] = "My own summary of telemetry.\n"
    note.write_text("".join(lines))
    _saved_a_minute_ago(note)
    _summary(demo_state, "The stores' new summary.")
    outcome = sync(ws, SyncRequest())
    assert outcome.report is not None
    assert [c.path for c in outcome.report.conflicts] == [NOTE]


def _markers(demo_state: Path, vault: Path) -> None:
    where = ["--state", str(demo_state), "--vault", str(vault)]
    result = CliRunner().invoke(cli, ["resolve", NOTE, "--markers", *where])
    assert result.exit_code == 0, result.stderr
    assert "<<<<<<<" in (vault / NOTE).read_text()
    _saved_a_minute_ago(vault / NOTE)


def test_check_stays_red_while_markers_are_in_a_note(demo_state: Path, tmp_path: Path) -> None:
    """After resolve --markers, check exits 1 naming the note, and its hint is resolve."""
    vault = tmp_path / "vault"
    _conflicted(demo_state, vault)
    _markers(demo_state, vault)
    ws = open_workspace(str(demo_state), str(vault))
    assert any(line.startswith(f"conflict {NOTE}") for line in check(ws).differences)
    assert NOTE in [c.path for c in status(ws).report.conflicts]
    where = ["--state", str(demo_state), "--vault", str(vault)]
    result = CliRunner().invoke(cli, ["check", *where])
    assert result.exit_code == 1
    assert "vaultsync resolve" in result.stderr


def test_a_note_with_markers_is_never_merged_into(demo_state: Path, tmp_path: Path) -> None:
    """The stores change again: the marked note is left as it is and listed as a conflict."""
    vault = tmp_path / "vault"
    _conflicted(demo_state, vault)
    _markers(demo_state, vault)
    before = (vault / NOTE).read_bytes()
    topics = demo_state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    next(t for t in data if t["name"] == "telemetry")["mentions"] = 99  # apart from the markers
    topics.write_text(json.dumps(data))
    outcome = sync(open_workspace(str(demo_state), str(vault)), SyncRequest())
    assert (vault / NOTE).read_bytes() == before
    assert outcome.report is not None
    assert NOTE in [c.path for c in outcome.report.conflicts]


def _marked_then_resolved(demo_state: Path, tmp_path: Path, choice: str) -> tuple[Path, str]:
    """A conflict settled with ``--markers``, then ``resolve`` ``choice``: the vault, its output."""
    vault = tmp_path / "vault"
    _conflicted(demo_state, vault)
    _markers(demo_state, vault)
    where = ["--state", str(demo_state), "--vault", str(vault)]
    result = CliRunner().invoke(cli, ["resolve", NOTE, choice, *where])
    assert result.exit_code == 0, result.stderr
    return vault, result.stdout


def test_ours_settles_the_markers_with_your_side(demo_state: Path, tmp_path: Path) -> None:
    """The hint is true: resolve --ours keeps your side of each block, and check goes green."""
    vault, _ = _marked_then_resolved(demo_state, tmp_path, "--ours")
    text = (vault / NOTE).read_text()
    assert "My own summary of telemetry." in text
    assert "<<<<<<<" not in text
    assert "The stores' new summary." not in text
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    assert (vault / NOTE).read_text() == text
    assert check(ws).differences == ()


def test_theirs_settles_the_markers_with_the_stores_version(
    demo_state: Path, tmp_path: Path
) -> None:
    """resolve --theirs takes the stores' version whole, committed, and check goes green."""
    vault, _ = _marked_then_resolved(demo_state, tmp_path, "--theirs")
    text = (vault / NOTE).read_text()
    assert "The stores' new summary." in text
    assert "My own summary" not in text
    assert "<<<<<<<" not in text
    ws = open_workspace(str(demo_state), str(vault))
    assert check(ws).differences == ()
    assert NOTE not in [c.path for c in status(ws).report.conflicts]


def test_show_prints_the_marked_file_beside_the_stores_version(
    demo_state: Path, tmp_path: Path
) -> None:
    """resolve --show on a marked note shows your file and the stores' version."""
    _, shown = _marked_then_resolved(demo_state, tmp_path, "--show")
    assert "=== your file now ===\n" in shown
    assert "<<<<<<<" in shown
    assert "The stores' new summary." in shown

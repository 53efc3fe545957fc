"""The vault's own files (``.vaultsync/…``) replaced by something hostile: one line, no hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import clean_env, invoke

COMMANDS = (["sync", "--dry-run"], ["status"], ["check"], ["sync"])
CONTROL_FILES = ("manifest.json", "cache.json", "journal.json")


def _synced(demo_state: Path, tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    assert invoke("sync", "--state", str(demo_state), "--vault", str(vault)).returncode == 0
    return vault


def _run(demo_state: Path, vault: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """The real program: a FIFO waited on would hang it, which the timeout turns into a failure."""
    where = ["--state", str(demo_state), "--vault", str(vault)]
    return subprocess.run(
        [sys.executable, "-m", "vaultsync", *command, *where],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
        check=False,
    )


@pytest.mark.parametrize("name", CONTROL_FILES)
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_control_file_that_is_no_file_is_one_line_exit_7(
    demo_state: Path, tmp_path: Path, name: str, kind: str
) -> None:
    """Each command names the file and exits 7 at once; the notes stay as they were."""
    vault = _synced(demo_state, tmp_path)
    target = vault / ".vaultsync" / name
    target.unlink(missing_ok=True)
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    notes = sorted(vault.rglob("*.md"))
    for command in COMMANDS:
        done = _run(demo_state, vault, command)
        assert done.returncode == 7, (command, done.stderr)
        assert done.stderr.startswith(f"error: {target}: cannot read: ")
        assert "Traceback" not in done.stderr
    assert sorted(vault.rglob("*.md")) == notes


@pytest.mark.parametrize("name", ["manifest.json", "cache.json"])
def test_json_nested_past_the_parsers_depth_is_no_traceback(
    demo_state: Path, tmp_path: Path, name: str
) -> None:
    """A manifest nested 100,000 deep is unusable (said in one line); a stat cache, no cache."""
    vault = _synced(demo_state, tmp_path)
    (vault / ".vaultsync" / name).write_text("[" * 100_000 + "]" * 100_000)
    for command in COMMANDS:
        done = _run(demo_state, vault, command)
        assert done.returncode in (0, 1), (command, done.stderr)
        assert "Traceback" not in done.stderr
    assert _run(demo_state, vault, ["check"]).returncode == 0


def test_a_folder_replaced_by_a_symlink_never_answers_for_its_notes(
    demo_state: Path, tmp_path: Path
) -> None:
    """status and check see the symlink (a conflict), never an edit made outside the vault."""
    vault = _synced(demo_state, tmp_path)
    outside = tmp_path / "outside"
    (vault / "Projects").rename(outside)  # the same files: their own stat data unchanged
    (vault / "Projects").symlink_to(outside)
    with (outside / "skiff.md").open("a") as note:
        note.write("written outside the vault\n")
    status = _run(demo_state, vault, ["status"])
    assert "Projects/skiff.md: Projects is a symlink or not a folder" in status.stdout
    assert "uncommitted edit" not in status.stdout
    assert _run(demo_state, vault, ["check"]).returncode == 1

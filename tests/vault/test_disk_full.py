"""A disk that fills while git writes the commit's tree: one line, exit 7, and the next sync
finishes the work."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest
from helpers import invoke
from vaultsync.app.sync import SyncRequest, check, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.vault.vcs import VaultRepo


def test_a_full_disk_at_write_tree_is_one_line_and_the_next_sync_converges(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libgit2's ``failed to write out file`` is exit 7 in one line; then a sync is in sync."""
    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    topics = demo_state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data[0]["summary"] = "Written as the disk filled."
    topics.write_text(json.dumps(data))

    def full(*_args: object) -> object:
        raise pygit2.GitError("failed to write out file")  # what ENOSPC gives here

    with monkeypatch.context() as patched:
        patched.setattr(VaultRepo, "_tree", full)
        done = invoke("sync", "--state", str(demo_state), "--vault", str(vault))
    assert done.returncode == 7
    assert "cannot write the commit's tree" in done.stderr and "Traceback" not in done.stderr
    sync(ws, SyncRequest())
    assert check(ws).in_sync

"""A git operation left unfinished in the vault: every writing command refuses, check says so.

Real git: a ``git pull`` that stops on a conflict, as one does when the phone and this
computer changed the same line.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from vaultsync.app.sync import SyncRequest, check, status, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.cli.main import cli
from vaultsync.core.errors import GitBusy


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def stopped_pull(demo_state: Path, tmp_path: Path, *, rebase: bool) -> Path:
    """A vault whose ``git pull`` stopped on a conflict in a note of the user's."""
    vault = tmp_path / "vault"
    sync(open_workspace(str(demo_state), str(vault)), SyncRequest())
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    git(vault, "remote", "add", "origin", str(remote))
    (vault / "Inbox.md").write_text("first line\n")
    git(vault, "add", "Inbox.md")
    git(vault, "commit", "--quiet", "-m", "inbox")
    git(vault, "push", "--quiet", "-u", "origin", "main")
    phone = tmp_path / "phone"
    git(tmp_path, "clone", "--quiet", str(remote), str(phone))
    (phone / "Inbox.md").write_text("written on the phone\n")
    git(phone, "commit", "--quiet", "-am", "phone")
    git(phone, "push", "--quiet")
    (vault / "Inbox.md").write_text("written here\n")
    git(vault, "commit", "--quiet", "-am", "here")
    pulled = git(vault, "pull", "--rebase" if rebase else "--no-rebase", check=False)
    assert pulled.returncode != 0 and "CONFLICT" in pulled.stdout + pulled.stderr
    return vault


@pytest.mark.parametrize("rebase", [False, True], ids=["merge", "rebase"])
def test_a_sync_during_a_stopped_pull_refuses_and_writes_nothing(
    demo_state: Path, tmp_path: Path, rebase: bool
) -> None:
    """One line naming the operation and how to end it, exit 11; HEAD and files unchanged."""
    vault = stopped_pull(demo_state, tmp_path, rebase=rebase)
    head, inbox = git(vault, "rev-parse", "HEAD").stdout, (vault / "Inbox.md").read_bytes()
    (demo_state / "memory" / "topics.json").write_text("[]")  # the stores have news
    where = ["--state", str(demo_state), "--vault", str(vault)]
    result = CliRunner().invoke(cli, ["sync", *where])
    assert result.exit_code == 11
    assert ("a rebase" if rebase else "a merge") in result.stderr
    assert "--abort" in result.stderr and "Traceback" not in result.stderr
    assert git(vault, "rev-parse", "HEAD").stdout == head
    assert (vault / "Inbox.md").read_bytes() == inbox


def test_check_and_status_say_a_merge_is_in_progress(demo_state: Path, tmp_path: Path) -> None:
    """check is red with the operation as a difference; status names it."""
    vault = stopped_pull(demo_state, tmp_path, rebase=False)
    ws = open_workspace(str(demo_state), str(vault))
    assert check(ws).differences[0].startswith("git a merge is in progress")
    assert status(ws).git_busy is not None


def test_release_refuses_too_and_an_aborted_merge_frees_the_vault(
    demo_state: Path, tmp_path: Path
) -> None:
    """Every writing command refuses, not only sync; once the merge ends, syncs go on."""
    from vaultsync.app.notes import release

    vault = stopped_pull(demo_state, tmp_path, rebase=False)
    with pytest.raises(GitBusy):
        release(vault, "Topics/Go.md")
    git(vault, "merge", "--abort")
    sync(open_workspace(str(demo_state), str(vault)), SyncRequest())  # ended: syncs again

"""Git hooks vaultsync's commits skip: real repositories, real hooks, ``vaultsync status``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import DEMO_STORE
from vaultsync.cli.main import cli
from vaultsync.vault.hooks import skipped_hooks


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; its stdout."""
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def hook(folder: Path, name: str, marker: Path, *, executable: bool = True) -> Path:
    """A hook that leaves ``marker`` behind when git runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    path.chmod(0o755 if executable else 0o644)
    return path


def vaultsync(*args: str) -> str:
    """Run the CLI in this process; its output (exit 0 required)."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def larger(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A larger repository with one commit, the demo store, and a vault folder inside it."""
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("work\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "start")
    state = tmp_path / "state"
    shutil.copytree(DEMO_STORE, state)
    vault = repo / "notes" / "vault"
    vault.mkdir(parents=True)
    return repo, state, vault


class TestStatus:
    def test_pre_commit_not_run_and_named(self, larger: tuple[Path, Path, Path]) -> None:
        """A sync's commit skips the larger repository's pre-commit; status names it."""
        repo, state, vault = larger
        marker = repo.parent / "ran"
        hook(repo / ".git" / "hooks", "pre-commit", marker)
        where = ("--state", str(state), "--vault", str(vault))
        vaultsync("sync", *where)
        assert "Vaultsync-Sync" in git(repo, "log", "-1", "--format=%B")
        assert not marker.exists()
        text = vaultsync("status", *where)
        assert (
            "git hooks not run for vaultsync's commits: pre-commit "
            f"(in {repo / '.git' / 'hooks'}); to run them, `vaultsync sync --no-commit`"
        ) in text
        data = json.loads(vaultsync("status", *where, "--json"))
        assert data["hooks_not_run"] == {
            "names": ["pre-commit"],
            "folder": str(repo / ".git" / "hooks"),
        }

    def test_no_commit_then_git_commit_runs_them(self, larger: tuple[Path, Path, Path]) -> None:
        """The README's way through: ``sync --no-commit``, then the user's commit runs the hook."""
        repo, state, vault = larger
        marker = repo.parent / "ran"
        hook(repo / ".git" / "hooks", "pre-commit", marker)
        vaultsync("sync", "--no-commit", "--state", str(state), "--vault", str(vault))
        git(repo, "add", "notes/vault")
        git(repo, "commit", "-q", "-m", "notes")
        assert marker.exists()
        assert git(repo, "status", "--porcelain", "notes/vault") == ""

    def test_own_repository_without_hooks_says_nothing(self, tmp_path: Path) -> None:
        """The repository vaultsync makes for a vault of its own has no hook to mention."""
        state = tmp_path / "state"
        shutil.copytree(DEMO_STORE, state)
        where = ("--state", str(state), "--vault", str(tmp_path / "vault"))
        vaultsync("sync", *where)
        assert "hooks" not in vaultsync("status", *where)
        assert json.loads(vaultsync("status", *where, "--json"))["hooks_not_run"] is None


class TestSkippedHooks:
    def test_hooks_path_relative_to_the_work_tree(self, larger: tuple[Path, Path, Path]) -> None:
        """``core.hooksPath`` replaces ``.git/hooks`` and is taken from the work tree's top."""
        repo, _, vault = larger
        git(repo, "config", "core.hooksPath", ".githooks")
        hook(repo / ".git" / "hooks", "pre-commit", repo / "x")
        hook(repo / ".githooks", "commit-msg", repo / "x")
        hook(repo / ".githooks", "pre-commit", repo / "x")
        found = skipped_hooks(vault)
        assert found is not None
        assert (found.folder, found.names) == (repo / ".githooks", ("pre-commit", "commit-msg"))

    def test_samples_and_plain_files_are_not_hooks(self, larger: tuple[Path, Path, Path]) -> None:
        """A ``.sample`` or a hook file without the executable bit is not run by git either."""
        repo, _, vault = larger
        hook(repo / ".git" / "hooks", "pre-commit.sample", repo / "x")
        hook(repo / ".git" / "hooks", "commit-msg", repo / "x", executable=False)
        hook(repo / ".git" / "hooks", "pre-push", repo / "x")  # not a commit hook
        assert skipped_hooks(vault) is None

    def test_linked_worktree_shares_the_main_hooks(
        self, larger: tuple[Path, Path, Path], tmp_path: Path
    ) -> None:
        """In a linked worktree the hooks are the main repository's."""
        repo, _, _ = larger
        hook(repo / ".git" / "hooks", "post-commit", repo / "x")
        linked = tmp_path / "linked"
        git(repo, "worktree", "add", "-q", str(linked))
        vault = linked / "vault"
        vault.mkdir()
        found = skipped_hooks(vault)
        assert found is not None
        assert (found.folder.resolve(), found.names) == (
            (repo / ".git" / "hooks").resolve(),
            ("post-commit",),
        )

    def test_no_repository_yet(self, tmp_path: Path) -> None:
        """A vault folder in no repository, or not made yet, has no hooks to skip."""
        assert skipped_hooks(tmp_path / "missing") is None
        assert skipped_hooks(tmp_path) is None

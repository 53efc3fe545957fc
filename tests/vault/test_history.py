"""vaultsync.vault.history: secrets in the vault's git history found and purged (real git)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest
from syncdriver import make_spec
from vaultsync.core.errors import UsageError
from vaultsync.core.redact import mask
from vaultsync.vault.history import BACKUP_PREFIX, purge, scan
from vaultsync.vault.manifest import MANIFEST, load_manifest
from vaultsync.vault.sync import sync_vault
from vaultsync.vault.vcs import VaultRepo

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"  # noqa: S105 - planted, not a credential
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def everything(repo: pygit2.Repository, tip: pygit2.Oid | str) -> bytes:
    """Every file of every commit from ``tip``, names and bytes."""
    out = []
    for commit in repo.walk(tip):
        stack = [("", commit.tree)]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                out.append(f"{prefix}{entry.name}".encode())
                if isinstance(entry, pygit2.Tree):
                    stack.append((f"{prefix}{entry.name}/", entry))
                elif isinstance(entry, pygit2.Blob):
                    out.append(entry.data)
    return b"\n".join(out)


@pytest.fixture
def leaked(tmp_path: Path) -> Path:
    """A vault whose first sync wrote a secret in a note and in a file name, later masked."""
    vault = tmp_path / "vault"
    sync_vault(
        vault, [make_spec(f"Facts/{SECRET}.md", f"token {SECRET}\n"), make_spec("a.md", "a\n")]
    )
    sync_vault(
        vault, [make_spec("Facts/masked.md", f"token {mask(SECRET)}\n"), make_spec("a.md", "a2\n")]
    )
    return vault


def test_scan_names_the_commit_that_wrote_the_secret(leaked: Path) -> None:
    """The first sync's commit holds the secret, in a file name and in bytes; the second not."""
    repo = VaultRepo.open(leaked, create=False)
    assert repo is not None
    found = scan(repo, [SECRET])
    git = pygit2.Repository(str(leaked))
    first = list(git.walk(git.head.target))[-1]
    assert [e.commit for e in found] == [str(first.id)]
    assert f"Facts/{SECRET}.md" in found[0].paths


def test_purge_rewrites_every_commit_and_keeps_a_backup(leaked: Path) -> None:
    """After the purge no commit of the branch holds the secret; the backup still does."""
    repo = VaultRepo.open(leaked, create=False)
    assert repo is not None
    old_tip = repo.repo.head.target
    done = purge(leaked, repo, [SECRET], now=NOW)
    git = pygit2.Repository(str(leaked))
    assert done.commits == 2 and done.backup.startswith(BACKUP_PREFIX)
    assert SECRET.encode() not in everything(git, git.head.target)
    assert mask(SECRET).encode() in everything(git, git.head.target)
    assert git.references[done.backup].target == old_tip
    assert scan(VaultRepo.open(leaked, create=False), [SECRET]) == ()  # type: ignore[arg-type]


def test_purge_keeps_manifests_pointing_at_the_rewritten_blobs(leaked: Path) -> None:
    """Each rewritten commit's manifest names blobs its own tree holds."""
    repo = VaultRepo.open(leaked, create=False)
    assert repo is not None
    purge(leaked, repo, [SECRET], now=NOW)
    git = pygit2.Repository(str(leaked))
    for commit in git.walk(git.head.target):
        blob = commit.tree[MANIFEST]
        assert isinstance(blob, pygit2.Blob)
        manifest = load_manifest(blob.data)
        for path, entry in manifest.entries.items():
            assert str(commit.tree[path].id) == entry.blob, path
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=leaked, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""


def test_purge_refuses_a_larger_repository(tmp_path: Path) -> None:
    """A vault inside a bigger repository: its history is not vaultsync's to rewrite."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    vault = tmp_path / "notes"
    sync_vault(vault, [make_spec("a.md", f"token {SECRET}\n")])
    repo = VaultRepo.open(vault, create=False)
    assert repo is not None and repo.prefix == "notes/"
    assert scan(repo, [SECRET])
    with pytest.raises(UsageError, match="larger repository"):
        purge(vault, repo, [SECRET], now=NOW)


@pytest.fixture
def named(tmp_path: Path) -> Path:
    """A vault whose current note still holds the secret in its file name and its text."""
    vault = tmp_path / "vault"
    sync_vault(vault, [make_spec(f"Facts/{SECRET}.md", f"token {SECRET}\n")])
    return vault


def test_purge_of_a_file_name_secret_leaves_git_status_clean(named: Path) -> None:
    """A purged file name: history, work tree and index agree (no staged rename back)."""
    repo = VaultRepo.open(named, create=False)
    assert repo is not None
    purge(named, repo, [SECRET], now=NOW)
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=named, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
    git = pygit2.Repository(str(named))
    assert SECRET.encode() not in everything(git, git.head.target)
    on_disk = [p.relative_to(named).as_posix() for p in named.rglob("*") if ".git" not in p.parts]
    assert not [p for p in on_disk if SECRET in p]
    texts = b"".join(
        p.read_bytes() for p in named.rglob("*") if p.is_file() and ".git" not in p.parts
    )
    assert SECRET.encode() not in texts

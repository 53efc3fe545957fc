"""A manifest is bound to its vault (issue 34, item 5): a copied one is refused, clones are not.

Real git and real commands: two vaults from two stores, one's manifest copied into the other;
a clone on a second device that syncs with ``--pull --push``; a history purge.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from helpers import invoke
from syncdriver import make_spec
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.core.redact import mask
from vaultsync.vault.history import purge
from vaultsync.vault.manifest import MANIFEST
from vaultsync.vault.sync import check_vault, sync_vault
from vaultsync.vault.vcs import VaultRepo

SECRET = "ghp_" + "R8vK2mQ9xL4tW7nZ3pB6" + "yH1cF5dJ0sG2aE8uXk4i"


def git(cwd: Path, *args: str) -> str:
    """Plain git, as a person runs it."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def synced(state: Path, vault: Path, **asked: bool) -> None:
    """One ``sync`` of ``state`` into ``vault`` (``pull``/``push`` as asked)."""
    request = SyncRequest(pull=asked.get("pull", False), push=asked.get("push", False))
    sync(open_workspace(str(state), str(vault)), request)


def other_store(demo_state: Path, tmp_path: Path) -> Path:
    """The demo store with one topic less: another vault's stores."""
    other = tmp_path / "other-state"
    shutil.copytree(demo_state, other)
    topics = other / "memory" / "topics.json"
    topics.write_text(json.dumps(json.loads(topics.read_text())[1:]))
    return other


def test_a_manifest_copied_from_another_vault_is_refused(demo_state: Path, tmp_path: Path) -> None:
    """sync, check and status exit 7 in one line naming the manifest and what to do; no write."""
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    synced(demo_state, mine)
    synced(other_store(demo_state, tmp_path), theirs)
    shutil.copyfile(theirs / MANIFEST, mine / MANIFEST)
    before = (mine / MANIFEST).read_bytes()
    head = git(mine, "rev-parse", "HEAD")
    where = ["--state", str(demo_state), "--vault", str(mine)]
    for command in ("sync", "check", "status"):
        done = invoke(command, *where)
        assert done.returncode == 7, (command, done.stderr)
        first = done.stderr.splitlines()[0]
        assert MANIFEST in first and "not this vault's manifest" in first, done.stderr
        assert "Traceback" not in done.stderr
    assert (mine / MANIFEST).read_bytes() == before
    assert git(mine, "rev-parse", "HEAD") == head


def test_deleting_the_copied_manifest_recovers_the_vault(demo_state: Path, tmp_path: Path) -> None:
    """What the refusal says to do works: the next sync rebuilds it from history, check green."""
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    synced(demo_state, mine)
    synced(other_store(demo_state, tmp_path), theirs)
    shutil.copyfile(theirs / MANIFEST, mine / MANIFEST)
    (mine / MANIFEST).unlink()
    where = ["--state", str(demo_state), "--vault", str(mine)]
    assert invoke("sync", *where).returncode == 0
    assert invoke("check", *where).returncode == 0


def test_a_clone_on_another_device_is_its_own_vault(demo_state: Path, tmp_path: Path) -> None:
    """A clone syncs, pulls and pushes; the first device pulls the result and syncs again."""
    remote, laptop = tmp_path / "remote.git", tmp_path / "laptop"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    synced(demo_state, laptop)
    git(laptop, "remote", "add", "origin", str(remote))
    git(laptop, "push", "--quiet", "-u", "origin", "main")
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "--quiet", str(remote), str(desktop))
    topics = demo_state / "memory" / "topics.json"
    topics.write_text(json.dumps(json.loads(topics.read_text())[1:]))
    synced(demo_state, desktop, pull=True, push=True)
    synced(demo_state, laptop, pull=True, push=True)
    where = ["--state", str(demo_state), "--vault", str(laptop)]
    assert invoke("check", *where).returncode == 0


def test_a_purged_history_keeps_its_vault_accepted(tmp_path: Path) -> None:
    """After ``history --purge`` rewrote every commit, the vault's own manifest is accepted."""
    vault = tmp_path / "vault"
    sync_vault(vault, [make_spec(f"F/{SECRET}.md", f"t {SECRET}\n"), make_spec("a.md", "a\n")])
    masked = [make_spec("F/masked.md", f"t {mask(SECRET)}\n"), make_spec("a.md", "a2\n")]
    sync_vault(vault, masked)
    repo = VaultRepo.open(vault, create=False)
    assert repo is not None
    purge(vault, repo, [SECRET], now=datetime(2026, 12, 4, 12, 0, tzinfo=UTC))
    sync_vault(vault, masked)
    assert check_vault(vault, masked) == ()


def test_a_manifest_of_an_older_vaultsync_is_adopted(tmp_path: Path) -> None:
    """A vault whose history holds no manifest (none to bind to) syncs as before."""
    vault = tmp_path / "vault"
    sync_vault(vault, [make_spec("a.md", "a\n")])
    git(vault, "rm", "--quiet", "--cached", MANIFEST)
    git(vault, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "--quiet", "-m", "old")
    sync_vault(vault, [make_spec("a.md", "a2\n")])
    assert check_vault(vault, [make_spec("a.md", "a2\n")]) == ()

"""The vault's own repository has its loose objects packed once they pass a bound (real git)."""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import wait_for_packer
from vaultsync.app.sync import SyncRequest, pack_git_objects, packing_problem, status, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.core.background import record_started
from vaultsync.core.fsio import file_lock
from vaultsync.vault import housekeeping
from vaultsync.vault.gitcli import GitFailed
from vaultsync.vault.housekeeping import (
    loose_bytes,
    pack_job,
    pack_loose_objects,
    packing_failure,
    start_packing,
)
from vaultsync.vault.vcs import VaultRepo


def git(vault: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(vault), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def objects(vault: Path) -> Path:
    return vault / ".git" / "objects"


def manifest_versions(count: int, lines: int = 3000) -> Iterator[bytes]:
    """Successive versions of a manifest-like file: random ids (deflate keeps them big), one
    line changed per version."""
    rng = random.Random(7)
    rows = [f'"n{i}.md": "{rng.getrandbits(160):040x}"\n' for i in range(lines)]
    for version in range(count):
        rows[version * 7 % lines] = f'"n{version}.md": "{rng.getrandbits(160):040x}"\n'
        yield "".join(rows).encode()


def synced_history(vault: Path, versions: int) -> VaultRepo:
    """A vault's own repository with one commit per manifest version (loose, as a sync's)."""
    repo = VaultRepo.open(vault, create=True)
    assert repo is not None
    for number, data in enumerate(manifest_versions(versions)):
        repo.commit(
            {".vaultsync/manifest.json": data, "note.md": f"{number}\n".encode()}, fingerprint="x"
        )
    return repo


def test_packs_loose_objects_past_the_bound(tmp_path: Path) -> None:
    """Past the bound, every loose object goes into a pack and the history reads as before."""
    synced_history(tmp_path, 4)
    before = git(tmp_path, "log", "-p", "--format=%H %T")
    packed = pack_loose_objects(tmp_path, at_kib=1)
    assert packed > 0
    assert loose_bytes(objects(tmp_path)) == 0
    git(tmp_path, "fsck", "--strict", "--no-dangling")
    assert git(tmp_path, "log", "-p", "--format=%H %T") == before


def test_leaves_objects_below_the_bound(tmp_path: Path) -> None:
    """Below the bound nothing is packed, nothing moves."""
    synced_history(tmp_path, 2)
    loose = loose_bytes(objects(tmp_path))
    assert pack_loose_objects(tmp_path, at_kib=loose // 1024 + 1) == 0
    assert loose_bytes(objects(tmp_path)) == loose
    assert not list((objects(tmp_path) / "pack").glob("*.pack"))


def test_manifests_pack_as_deltas(tmp_path: Path) -> None:
    """Six manifests a line apart take about one manifest's room once packed."""
    synced_history(tmp_path, 6)
    loose = loose_bytes(objects(tmp_path))
    pack_loose_objects(tmp_path, at_kib=1)
    packed = sum(p.stat().st_size for p in (objects(tmp_path) / "pack").glob("*.pack"))
    assert packed < loose / 3


def test_leaves_a_larger_repository_alone(tmp_path: Path) -> None:
    """A vault inside a larger work tree: that repository is its owner's to maintain."""
    git(tmp_path, "init", "-q")
    vault = tmp_path / "notes"
    vault.mkdir()
    synced_history(vault, 2)
    loose = loose_bytes(tmp_path / ".git" / "objects")
    assert loose > 0
    assert pack_loose_objects(vault, at_kib=1) == 0
    assert loose_bytes(tmp_path / ".git" / "objects") == loose


def test_packs_stay_private(tmp_path: Path) -> None:
    """The packs git writes into the vault's own repository are the owner's alone."""
    synced_history(tmp_path, 2)
    old = os.umask(0o022)
    try:
        pack_loose_objects(tmp_path, at_kib=1)
    finally:
        os.umask(old)
    made = [*(objects(tmp_path) / "pack").iterdir()]
    assert made
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in made)


def test_no_git_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a git program to pack with, the failure is one line and the objects stay."""
    synced_history(tmp_path, 2)
    loose = loose_bytes(objects(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    with pytest.raises(GitFailed, match="cannot run git"):
        pack_loose_objects(tmp_path, at_kib=1)
    assert loose_bytes(objects(tmp_path)) == loose


def control_folder(vault: Path) -> Path:
    (vault / ".vaultsync").mkdir(exist_ok=True)
    return vault / ".vaultsync"


def test_a_detached_packer_packs_every_loose_object(tmp_path: Path) -> None:
    """Past the bound, a packer is started in its own process and packs every loose object."""
    synced_history(tmp_path, 4)
    control_folder(tmp_path)
    before = git(tmp_path, "log", "-p", "--format=%H %T")
    assert start_packing(tmp_path, at_kib=1)
    wait_for_packer(tmp_path)
    assert loose_bytes(objects(tmp_path)) == 0
    assert packing_failure(tmp_path) is None
    assert git(tmp_path, "log", "-p", "--format=%H %T") == before


def test_no_packer_starts_below_the_bound(tmp_path: Path) -> None:
    """Below the bound no process is started."""
    synced_history(tmp_path, 2)
    control_folder(tmp_path)
    assert not start_packing(tmp_path, at_kib=loose_bytes(objects(tmp_path)) // 1024 + 1)
    assert not pack_job(tmp_path).status.exists()


def test_one_packer_at_a_time(tmp_path: Path) -> None:
    """While a packer holds its lock, no second one is started."""
    synced_history(tmp_path, 2)
    with file_lock(control_folder(tmp_path) / "git-pack.lock", timeout=0.0):
        assert not start_packing(tmp_path, at_kib=1)
    assert not pack_job(tmp_path).status.exists()


def test_a_failed_packing_is_said_until_one_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A packer that fails leaves its reason: the next sync says it, and starts another."""
    synced_history(tmp_path, 2)
    control_folder(tmp_path)
    monkeypatch.setattr(housekeeping, "PACK_AT_KIB", 1)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))  # the packer finds no git
    assert pack_git_objects(tmp_path) == ""
    wait_for_packer(tmp_path)
    said = packing_problem(tmp_path)
    assert said.startswith("the background packing failed (exit 1: cannot run git")
    assert said.endswith("; see .vaultsync/git-pack.log")
    monkeypatch.undo()
    monkeypatch.setattr(housekeeping, "PACK_AT_KIB", 1)
    assert pack_git_objects(tmp_path) == said  # said once more, as another one starts
    wait_for_packer(tmp_path)
    assert packing_problem(tmp_path) == ""
    assert loose_bytes(objects(tmp_path)) == 0


def test_a_sync_does_not_wait_for_the_packer(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync that starts a packer returns while it still runs; it packs once let go."""
    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    gate = tmp_path / "gate"
    monkeypatch.setenv(
        "PATH", f"{held_git(tmp_path / 'bin', gate)}{os.pathsep}{os.environ['PATH']}"
    )
    monkeypatch.setattr(housekeeping, "PACK_AT_KIB", 1)
    topics = demo_state / "memory" / "topics.json"
    topics.write_text(json.dumps([*json.loads(topics.read_text()), {"name": "packing"}]))
    assert sync(ws, SyncRequest()).report is not None
    pid = json.loads(pack_job(vault).status.read_bytes())["pid"]
    assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # still running: held at the gate
    gate.write_text("go\n")
    os.waitpid(pid, 0)
    assert loose_bytes(objects(vault)) == 0
    assert status(ws).packing_failed == ""


def held_git(folder: Path, gate: Path) -> Path:
    """A ``git`` that waits for ``gate`` to exist before a repack, then runs the real git."""
    real = shutil.which("git")
    folder.mkdir()
    script = folder / "git"
    script.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do [ "$arg" = repack ] && while [ ! -e '
        f'"{gate}" ]; do sleep 0.05; done; done\n'
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return folder


def test_a_link_where_the_packers_log_goes_is_not_followed(tmp_path: Path) -> None:
    """A symlink planted as the packer's log: its target is left whole, the packing not started
    and its failure said."""
    synced_history(tmp_path, 2)
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    pack_job(tmp_path).log.parent.mkdir(exist_ok=True)
    pack_job(tmp_path).log.symlink_to(target)
    assert not start_packing(tmp_path, at_kib=1)
    assert target.read_text() == "keep me\n"
    failure = packing_failure(tmp_path)
    assert failure is not None and failure.error.startswith("cannot start the background job")


def test_a_link_where_the_packers_record_is_read_is_not_followed(tmp_path: Path) -> None:
    """A symlink planted as the packer's log is not read back into what status says."""
    synced_history(tmp_path, 2)
    secret = tmp_path / "id_key"
    secret.write_text("-----BEGIN KEY-----\nAAAAsecretline\n")
    job = pack_job(tmp_path)
    job.log.parent.mkdir(exist_ok=True)
    job.log.symlink_to(secret)
    record_started(job, 2**22 + 7)  # above the kernel's pid_max: a job that died unheard
    failure = packing_failure(tmp_path)
    assert failure is not None and "secretline" not in failure.describe()

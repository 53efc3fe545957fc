"""The workspace a use case runs on: resolved once, and refused where it is unsafe."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.cli.main import cli
from vaultsync.core.errors import UsageError


def _synced(demo_state: Path, tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    sync(open_workspace(str(demo_state), str(vault)), SyncRequest())
    return vault


def test_a_store_folder_linked_into_the_vault_is_refused(demo_state: Path, tmp_path: Path) -> None:
    """``state/skills`` a symlink to the vault's Skills folder: refused, naming the path."""
    vault = _synced(demo_state, tmp_path)
    shutil.rmtree(demo_state / "skills", ignore_errors=True)
    (demo_state / "skills").symlink_to(vault / "Skills", target_is_directory=True)
    with pytest.raises(UsageError, match="inside the vault"):
        open_workspace(str(demo_state), str(vault))


def test_a_state_directory_inside_the_vault_is_refused(demo_state: Path, tmp_path: Path) -> None:
    """``--state`` naming a folder of the vault is refused before anything is read."""
    vault = _synced(demo_state, tmp_path)
    inside = vault / "stores"
    shutil.copytree(demo_state, inside)
    with pytest.raises(UsageError, match="inside the vault"):
        open_workspace(str(inside), str(vault))


def test_the_refusal_is_one_line_and_exit_2(demo_state: Path, tmp_path: Path) -> None:
    """The command line says it in one error line, exits 2 and writes nothing."""
    vault = _synced(demo_state, tmp_path)
    before = sorted(p.relative_to(vault) for p in vault.rglob("*") if ".git" not in p.parts)
    (demo_state / "skills").rename(tmp_path / "old-skills")
    (demo_state / "skills").symlink_to(vault / "Skills", target_is_directory=True)
    result = CliRunner().invoke(cli, ["sync", "--state", str(demo_state), "--vault", str(vault)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") <= 2 and "inside the vault" in result.stderr
    after = sorted(p.relative_to(vault) for p in vault.rglob("*") if ".git" not in p.parts)
    assert after == before


def test_the_default_vault_inside_the_state_directory_is_fine(demo_state: Path) -> None:
    """``<state>/vault`` holds none of the entries the stores are read from."""
    ws = open_workspace(str(demo_state))
    assert ws.vault == demo_state / "vault"

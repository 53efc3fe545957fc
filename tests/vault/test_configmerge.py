"""The saved config's merge driver: per setting, three-way; a clash is a person's to settle."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from vaultsync.core.config import edit_config, read_config
from vaultsync.vault.configmerge import merge_configs

BASE = b'# my settings\n[render]\ntimezone = "UTC"\n'


def test_two_devices_changing_different_settings_merge() -> None:
    """One device sets the zone, the other a cap: both kept, this side's comment too."""
    ours = edit_config(BASE, "render.timezone", "Europe/Lisbon")
    theirs = edit_config(BASE, "caps.episodes", "500")
    merged = merge_configs(BASE, ours, theirs)
    assert merged is not None and merged.startswith(b"# my settings")
    assert read_config(merged) == {"render.timezone": "Europe/Lisbon", "caps.episodes": 500}


def test_a_setting_both_changed_differently_is_a_conflict() -> None:
    """Two zones chosen on two devices: only a person can say which."""
    ours = edit_config(BASE, "render.timezone", "Europe/Lisbon")
    theirs = edit_config(BASE, "render.timezone", "Asia/Tokyo")
    assert merge_configs(BASE, ours, theirs) is None


def test_a_setting_removed_on_one_side_is_removed(tmp_path: Path) -> None:
    """A device removed the zone the other left alone: it is gone."""
    ours = edit_config(BASE, "caps.episodes", "500")
    theirs = edit_config(BASE, "render.timezone", None)
    merged = merge_configs(BASE, ours, theirs)
    assert merged is not None and read_config(merged) == {"caps.episodes": 500}


def test_git_uses_the_driver_the_vault_registers(tmp_path: Path) -> None:
    """A real git merge of neighbouring settings (a line conflict for git) ends merged."""
    from vaultsync.vault.remote import install_merge_driver

    repo = tmp_path / "vault"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    install_merge_driver(repo)
    config = repo / ".vaultsync" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(BASE + b"\n[caps]\nepisodes = 300\nsessions = 50\n")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "other")
    config.write_bytes(edit_config(config.read_bytes(), "caps.episodes", "500"))
    git("commit", "-qam", "other")
    git("checkout", "-q", "main")
    config.write_bytes(edit_config(config.read_bytes(), "caps.sessions", "80"))
    git("commit", "-qam", "main")
    git("merge", "-q", "--no-edit", "other")
    assert read_config(config.read_bytes()) == {
        "render.timezone": "UTC",
        "caps.episodes": 500,
        "caps.sessions": 80,
    }
    assert shutil.which("git")

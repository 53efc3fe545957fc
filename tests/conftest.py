"""Shared fixtures: an isolated git environment and a fresh copy of the demo store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import demo_builder


@pytest.fixture(autouse=True)
def isolated_git(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every test sees the same git identity and no user or system git configuration."""
    home = tmp_path_factory.mktemp("home")
    config = home / ".gitconfig"
    config.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in (
        "VAULTSYNC_STATE_DIR",
        "CHATCLI_STATE_DIR",
        "VAULTSYNC_VAULT_DIR",
        "CHATCLI_MEMORY_VAULT_DIR",
        "VAULTSYNC_JOBS",
        "VAULTSYNC_CACHE_DIR",
        "XDG_CACHE_HOME",
        "CHATCLI_BOARD_PATH",
        "VAULTSYNC_SKILLS_EXTRA_FOLDERS",
    ):
        monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture
def demo_state(tmp_path: Path) -> Path:
    """A fresh copy of the demo store, rebuilt by its script (a test may change it)."""
    target = tmp_path / "demo-state"
    demo_builder().main(["--out", str(target), "--quiet"])
    return target

"""Shared fixtures: an isolated git environment and paths to bundled and shared data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_STORE = ROOT / "fixtures" / "stores" / "demo"
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test sees the same git identity and no user or system git configuration."""
    home = tmp_path_factory.mktemp("home")
    config = home / ".gitconfig"
    config.write_text("[user]\n\tname = Test User\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("VAULTSYNC_STATE_DIR", "CHATCLI_STATE_DIR", "VAULTSYNC_VAULT_DIR", "CHATCLI_MEMORY_VAULT_DIR"):
        monkeypatch.delenv(var, raising=False)
    yield


def corpus(name: str) -> Path:
    """A third-party corpus from ../shared/corpora, or skip the test when it is absent."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(f"corpus {name} not available (../shared is absent)")
    return path

"""Shared fixtures: an isolated git environment and paths to bundled and shared data."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_STORE = ROOT / "fixtures" / "stores" / "demo"
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"


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
    ):
        monkeypatch.delenv(var, raising=False)
    yield


@functools.cache
def _demo_builder() -> ModuleType:
    path = ROOT / "fixtures" / "stores" / "build_demo.py"
    spec = importlib.util.spec_from_file_location("build_demo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def demo_state(tmp_path: Path) -> Path:
    """A fresh copy of the demo store with its recorded mtimes (git does not keep them)."""
    target = tmp_path / "demo-state"
    _demo_builder().main(["--out", str(target), "--quiet"])
    return target


def corpus(name: str) -> Path:
    """A third-party corpus from ../shared/corpora, or skip the test when it is absent."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(f"corpus {name} not available (../shared is absent)")
    return path


def build_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``{relpath: text or bytes}`` under ``root`` and return ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def dumps(value: object) -> str:
    """Indented JSON, as ChatCLI writes its stores."""
    return json.dumps(value, indent=2)

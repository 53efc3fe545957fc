"""The environment is read in one module, and its variables keep their precedence."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import ROOT
from vaultsync.core.environment import read_environment
from vaultsync.core.settings import state_dir, vault_dir

READER = ROOT / "pipeline" / "core" / "environment.py"


def _reads_environment(path: Path) -> bool:
    """Whether a module names ``os.environ``, ``os.getenv`` or ``environ`` imported from os."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(_names_environment(node) for node in ast.walk(tree))


def _names_environment(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv", "environb"}:
        return isinstance(node.value, ast.Name) and node.value.id == "os"
    if isinstance(node, ast.ImportFrom) and node.module == "os":
        return any(alias.name in {"environ", "getenv"} for alias in node.names)
    return False


def test_only_one_module_reads_the_environment() -> None:
    """No module of the package but ``core.environment`` touches ``os.environ``."""
    readers = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "pipeline").rglob("*.py")
        if _reads_environment(path)
    )
    assert readers == [READER.relative_to(ROOT).as_posix()]


def test_the_vaultsync_name_wins_over_chatclis() -> None:
    """``VAULTSYNC_STATE_DIR`` over ``CHATCLI_STATE_DIR``; a flag over both."""
    env = {"VAULTSYNC_STATE_DIR": "/a", "CHATCLI_STATE_DIR": "/b"}
    assert state_dir(None, env) == Path("/a")
    assert state_dir(None, {"CHATCLI_STATE_DIR": "/b"}) == Path("/b")
    assert state_dir("/flag", env) == Path("/flag")


def test_the_vault_defaults_inside_the_state_directory() -> None:
    """No flag and no variable: ``<state>/vault``."""
    assert vault_dir(None, Path("/s"), {}) == Path("/s/vault")
    assert vault_dir(None, Path("/s"), {"CHATCLI_MEMORY_VAULT_DIR": "/v"}) == Path("/v")


def test_a_saved_settings_variable_is_read_by_name() -> None:
    """An option's own variable (``VAULTSYNC_CAP_*``) reaches the settings by its name."""
    env = read_environment({"VAULTSYNC_CAP_EPISODES": "7", "HOME": "/h"})
    assert env.get("VAULTSYNC_CAP_EPISODES") == "7"
    assert env.get("HOME") == ""  # only vaultsync's and ChatCLI's own are kept

"""What every command shares: its options, the workspace it runs on, how it prints data.

:func:`workspace` resolves the workspace once (``app.workspace``: flags, environment, saved
settings, defaults) and says its notices on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from vaultsync.app.workspace import Workspace, open_workspace

__all__ = ["Workspace", "emit", "json_option", "state_option", "templates_option", "vault_option",
           "workspace"]  # fmt: skip

F = TypeVar("F", bound=Callable[..., Any])


def workspace(
    state: str | None, vault: str | None = None, *, templates: Path | None = None
) -> Workspace:
    """The command's workspace (``app.workspace.open_workspace``), its notices said on stderr."""
    ws = open_workspace(state, vault, templates=templates)
    for notice in ws.notices:
        click.echo(notice, err=True)
    return ws


def state_option(command: F) -> F:
    """``--state DIR``: the ChatCLI state directory (else env, else ``~/.chatcli``)."""
    return click.option(
        "--state",
        "state",
        metavar="DIR",
        help="ChatCLI state directory [env VAULTSYNC_STATE_DIR, CHATCLI_STATE_DIR; ~/.chatcli]",
    )(command)


def vault_option(command: F) -> F:
    """``--vault DIR``: the vault (else env, else ``<state>/vault``)."""
    return click.option(
        "--vault",
        "vault",
        metavar="DIR",
        help="Vault folder [env VAULTSYNC_VAULT_DIR, CHATCLI_MEMORY_VAULT_DIR; <state>/vault]",
    )(command)


def templates_option(command: F) -> F:
    """``--templates DIR``: templates that override the built-in ones by name."""
    return click.option(
        "--templates",
        "templates",
        metavar="DIR",
        type=click.Path(path_type=Path),  # checked by the workspace: one line, exit 3
        help="Folder of Jinja templates overriding the built-in ones (same file names); "
        "save it with `vaultsync config set render.templates DIR`.",
    )(command)


def json_option(command: F) -> F:
    """``--json``: print plain data instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(command)


def emit(as_json: bool, data: Callable[[], Any], text: Callable[[], str]) -> None:
    """Print ``data()`` as JSON, or ``text()``."""
    if as_json:
        click.echo(json.dumps(data(), ensure_ascii=False, indent=2))
    else:
        click.echo(text())

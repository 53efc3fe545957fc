"""``vaultsync mcp``: serve the vault to AI assistants (the server is :mod:`vaultsync.mcp`)."""

from __future__ import annotations

import click
from vaultsync.cli.options import state_option, vault_option, workspace
from vaultsync.core.errors import ConfigError, UsageError


@click.command(name="mcp")
@state_option
@vault_option
def mcp_command(state: str | None, vault: str | None) -> None:
    """Serve the vault to AI assistants over MCP (stdio): search, read, neighbors, link.

    Configure your MCP client to run `vaultsync mcp` (with --vault/--state as needed).
    Needs the mcp extra: pip install 'vaultsync[mcp]'.
    """
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise ConfigError(
            "vaultsync mcp needs the MCP SDK", hint="pip install 'vaultsync[mcp]'"
        ) from None
    from vaultsync.mcp.server import build_server

    ws = workspace(state, vault)
    if not ws.vault.is_dir():
        raise UsageError(f"{ws.vault}: no vault yet", hint="run `vaultsync sync` first")
    build_server(ws).run("stdio")

"""The MCP adapter: the vault's tools for AI assistants, each calling :mod:`vaultsync.app`."""

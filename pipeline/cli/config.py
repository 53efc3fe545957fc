"""``vaultsync config``: show the settings a sync runs with, and save or remove one."""

from __future__ import annotations

from typing import Any

import click
from vaultsync.cli.options import emit, json_option, state_option, vault_option, workspace
from vaultsync.core.config import CONFIG, OPTIONS, Settings


class _ConfigGroup(click.Group):
    """``vaultsync config`` alone shows the settings; ``set`` and ``unset`` change them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_ConfigGroup)
def config() -> None:
    """Show the vault's settings (where each value comes from), or save one with the vault.

    Saved settings live in .vaultsync/config.toml, committed with the vault, so every clone,
    hook and CI job renders the same notes. A flag, then an environment variable, wins over
    the saved value (and says so); relative paths in the file are relative to the vault.
    """


@config.command(name="show")
@state_option
@vault_option
@json_option
def config_show(state: str | None, vault: str | None, as_json: bool) -> None:
    """Every setting, its value and where the value comes from."""
    ws = workspace(state, vault)
    emit(as_json, lambda: _settings_json(ws.settings), lambda: _settings_text(ws.settings))


@config.command(name="set")
@click.argument("key", type=click.Choice(sorted(OPTIONS)), metavar="KEY")
@click.argument("value")
@state_option
@vault_option
@click.option("--no-commit", is_flag=True, help="Write the file but leave it uncommitted.")
def config_set(key: str, value: str, state: str | None, vault: str | None, no_commit: bool) -> None:
    """Save KEY = VALUE in the vault's config (lists: comma-separated)."""
    _save(state, vault, key, value, commit=not no_commit)


@config.command(name="unset")
@click.argument("key", type=click.Choice(sorted(OPTIONS)), metavar="KEY")
@state_option
@vault_option
@click.option("--no-commit", is_flag=True, help="Write the file but leave it uncommitted.")
def config_unset(key: str, state: str | None, vault: str | None, no_commit: bool) -> None:
    """Remove KEY from the vault's config: its default applies again."""
    _save(state, vault, key, None, commit=not no_commit)


def _save(
    state: str | None, vault: str | None, key: str, value: str | None, *, commit: bool
) -> None:
    from vaultsync.app.workspace import save_setting

    target, sha = save_setting(state, vault, key, value, commit=commit)
    what = f"{key} = {value}" if value is not None else f"{key} removed"
    click.echo(f"saved {what} in {target / CONFIG}" + (f" (commit {sha[:10]})" if sha else ""))


def _settings_json(settings: Settings) -> dict[str, Any]:
    return {
        "settings": {
            key: {"value": _plain(chosen.value), "source": chosen.source}
            for key, chosen in settings.chosen.items()
        },
        "notices": list(settings.notices),
    }


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def _settings_text(settings: Settings) -> str:
    width = max(len(key) for key in settings.chosen)
    lines = []
    for key, chosen in settings.chosen.items():
        value = _plain(chosen.value)
        shown = ", ".join(value) if isinstance(value, list) else ("" if value is None else value)
        lines.append(f"{key:<{width}}  {shown!s:<24} ({chosen.source})")
    return "\n".join(lines)

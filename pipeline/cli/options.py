"""What every command shares: its options, the workspace it runs on, how it prints data.

:func:`workspace` is the one place a command learns where the stores and the vault are and
which settings apply: the flags given, the environment, then the vault's saved config
(``.vaultsync/config.toml``, see :mod:`vaultsync.core.config`), then the defaults.  A flag or
variable that overrides a saved value is said once on stderr.  It also fixes, once, the
store folders read besides the state directory's own (``Caps.sources``): ChatCLI's home
``contexts/`` and ``sessions/`` when the state directory came from ``CHATCLI_STATE_DIR``, and
the ``skills.extra_folders``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import click
from vaultsync.core.config import Settings
from vaultsync.core.errors import ConfigError, UsageError
from vaultsync.core.settings import Caps, chatcli_home, state_dir, vault_dir

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace:
    """The state directory, the vault and the settings one command runs with."""

    state: Path
    vault: Path
    settings: Settings
    home: Path | None = None
    """ChatCLI's home, read too when the state directory came from ``CHATCLI_STATE_DIR``."""

    @property
    def caps(self) -> Caps:
        """The graph's caps, with every store folder to read (``Caps.sources``)."""
        caps = self.settings.caps
        return replace(caps, sources=replace(caps.sources, home=self.home))

    @property
    def templates(self) -> Path | None:
        """The template overrides folder, if any."""
        return self.settings.templates


def workspace(
    state: str | None, vault: str | None = None, *, templates: Path | None = None
) -> Workspace:
    """Resolve the state directory, the vault and the settings (flag, env, saved, default).

    Raises:
        ConfigError: the saved config or a variable is malformed, or the templates folder
            or an extra skills folder is missing.
        UsageError: the vault path names a file.
    """
    root, home = state_dir(state), chatcli_home(state)
    target = vault_dir(vault, root)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target}: not a folder (the vault is a folder of notes)")
    from vaultsync.vault.config import load_settings

    flags = {"render.templates": str(templates) if templates is not None else None}
    settings = load_settings(target, flags=flags)
    _check_folders(settings)
    for notice in settings.notices:
        click.echo(f"note: {notice}", err=True)
    if settings.templates is not None:
        _warn_stray_templates(settings.templates)
    return _with_outside(Workspace(state=root, vault=target, settings=settings, home=home))


def _check_folders(settings: Settings) -> None:
    """The templates folder and every extra skill folder exist (exit 3 otherwise).

    A missing skill folder is refused rather than read as empty: its skills' notes would be
    removed by a sync run where the folder is not (a clone, an unmounted disk).
    """
    found = settings.templates
    if found is not None and not found.is_dir():
        source = settings.chosen["render.templates"].source
        raise ConfigError(f"templates folder {found} (from {source}): not a folder")
    for folder in settings.skill_folders:
        if not folder.is_dir():
            source = settings.chosen["skills.extra_folders"].source
            raise ConfigError(f"skills folder {folder} (from {source}): not a folder")


def _with_outside(ws: Workspace) -> Workspace:
    """``ws`` whose settings' key holds the stat digest of the store files outside the state."""
    from vaultsync.extract.sources import outside_fingerprint

    stamp = outside_fingerprint(ws.state, ws.caps.sources)
    return replace(ws, settings=replace(ws.settings, outside=stamp)) if stamp else ws


def _warn_stray_templates(folder: Path) -> None:
    """One warning per template file of ``folder`` that matches no kind (a misspelt name).

    A name starting with ``_`` is a part another template may include, never stray.
    """
    import importlib.resources  # only with --templates: it imports tempfile and shutil

    builtin = {entry.name for entry in importlib.resources.files("vaultsync.templates").iterdir()}
    for name in sorted(path.name for path in folder.glob("*.j2")):
        if name in builtin or name.startswith("_"):
            continue
        click.echo(
            f"warning: {folder / name}: no note uses this template "
            "(`vaultsync templates list` names them)",
            err=True,
        )


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
        type=click.Path(exists=True, file_okay=False, path_type=Path),
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

"""The workspace a use case runs on: the stores, the vault and the settings, resolved once.

:func:`open_workspace` is the one place where a run learns where the stores and the vault are
and which settings apply: the flags given, the environment, then the vault's saved config
(``.vaultsync/config.toml``, see :mod:`vaultsync.core.config`), then the defaults.  What the
resolution has to say (a flag or variable overriding a saved value, a template file no note
uses) comes back as :attr:`Workspace.notices` for the adapter to print: this layer prints
nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from vaultsync.core.config import Settings
from vaultsync.core.errors import ConfigError, UsageError
from vaultsync.core.settings import Caps, state_dir, vault_dir


@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace:
    """The state directory, the vault and the settings one run works with."""

    state: Path
    vault: Path
    settings: Settings
    notices: tuple[str, ...] = ()
    """What resolving it had to say (``note: …`` and ``warning: …`` lines), for stderr."""

    @property
    def caps(self) -> Caps:
        """The graph's caps, with every store folder to read (``Caps.sources``)."""
        return self.settings.caps

    @property
    def templates(self) -> Path | None:
        """The template overrides folder, if any."""
        return self.settings.templates


def open_workspace(
    state: str | None, vault: str | None = None, *, templates: Path | None = None
) -> Workspace:
    """Resolve the state directory, the vault and the settings (flag, env, saved, default).

    Raises:
        ConfigError: the saved config or a variable is malformed, or the templates folder
            or an extra skills folder is missing.
        UsageError: the vault path names a file.
    """
    root = state_dir(state)
    target = _vault_folder(root, vault)
    from vaultsync.vault.config import load_settings

    flags = {"render.templates": str(templates) if templates is not None else None}
    settings = load_settings(target, flags=flags)
    problems = settings.folder_problems()
    if problems:
        raise ConfigError(next(iter(problems.values())))
    notices = [f"note: {notice}" for notice in settings.notices]
    if settings.templates is not None:
        notices += _stray_templates(settings.templates)
    ws = Workspace(state=root, vault=target, settings=settings, notices=tuple(notices))
    _refuse_stores_in_vault(ws)
    return _with_outside(ws)


def _vault_folder(state: Path, vault: str | None) -> Path:
    """The vault's folder (flag, else variable, else ``<state>/vault``), which may not exist yet.

    Raises:
        UsageError: the path names a file.
    """
    target = vault_dir(vault, state)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target}: not a folder (the vault is a folder of notes)")
    return target


def save_setting(
    state: str | None, vault: str | None, key: str, value: str | None, *, commit: bool
) -> tuple[Path, str]:
    """Save ``key = value`` in the vault's config (``None``: remove it); the vault, the commit.

    Only the vault is resolved, not the settings saved so far: a setting that stops every
    other command (a skills folder gone) can still be changed or removed here.

    Raises:
        ConfigError: unknown key, bad value, or a folder that is not there (nothing saved).
        UsageError: the vault path names a file.
    """
    from vaultsync.vault.config import save_setting as save

    target = _vault_folder(state_dir(state), vault)
    return target, save(target, key, value, commit=commit)


STORE_ROOTS = ("memory", "sessions", "skills", "contexts", "board.json")
"""The state directory's entries vaultsync reads (``extract.sources``): none may be in the vault."""


def _refuse_stores_in_vault(ws: Workspace) -> None:
    """Refuse a store path that resolves inside the vault: its notes would be read back as data.

    Say ``state/skills`` is a symlink to ``vault/Skills``, or ``--state vault/x``.  The vault
    inside the state directory (the default ``<state>/vault``) is fine: it is none of the
    entries read.

    Raises:
        UsageError: the state directory, one of its store entries or an extra skill folder
            resolves to the vault or below it.
    """
    vault = os.path.realpath(ws.vault)
    given = (ws.state, *(ws.state / name for name in STORE_ROOTS), *ws.caps.sources.skills)
    for path in given:
        real = os.path.realpath(path)
        if real == vault or real.startswith(vault.rstrip(os.sep) + os.sep):
            raise UsageError(
                f"{path}: a store path inside the vault {ws.vault} (vaultsync would read its "
                "own notes back as store data)",
                hint="keep the ChatCLI state directory and its folders outside the vault",
            )


def _with_outside(ws: Workspace) -> Workspace:
    """``ws`` whose settings' key holds the stat digest of the store files outside the state."""
    from vaultsync.extract.sources import keys_stamp, outside_fingerprint

    keys = keys_stamp(ws.caps.seal_keys)  # a key set since: read what it opens
    stamp = " ".join(
        part for part in (outside_fingerprint(ws.state, ws.caps.sources), keys) if part
    )
    return replace(ws, settings=replace(ws.settings, outside=stamp)) if stamp else ws


def _stray_templates(folder: Path) -> list[str]:
    """One warning per template file of ``folder`` that matches no kind (a misspelt name).

    A name starting with ``_`` is a part another template may include, never stray.
    """
    import importlib.resources  # only with templates: it imports tempfile and shutil

    builtin = {entry.name for entry in importlib.resources.files("vaultsync.templates").iterdir()}
    return [
        f"warning: {folder / name}: no note uses this template "
        "(`vaultsync templates list` names them)"
        for name in sorted(path.name for path in folder.glob("*.j2"))
        if name not in builtin and not name.startswith("_")
    ]


def vault_relative(vault: Path, given: str) -> str:
    """A note path as given (vault-relative, or a file path under the vault) → vault path."""
    candidate = Path(given)
    if candidate.exists() or candidate.is_absolute():
        try:
            return candidate.absolute().relative_to(vault.absolute()).as_posix()
        except ValueError:
            pass
    return Path(given).as_posix()

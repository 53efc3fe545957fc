"""The vault's saved config on disk: read it (never through a symlink), save and commit a change.

The rules of the file (options, precedence, validation) are :mod:`vaultsync.core.config`'s;
this module only moves its bytes, through :class:`~vaultsync.vault.write.VaultFS` like every
other engine file of the vault.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from vaultsync.core.config import CONFIG, Settings, edit_config, read_config, resolve
from vaultsync.core.errors import ConfigError
from vaultsync.vault.write import LOCK_TIMEOUT, VaultFS


def saved_config(vault: Path) -> bytes | None:
    """The config file's bytes, or ``None`` when the vault or the file does not exist."""
    if not vault.is_dir():
        return None
    with VaultFS(vault) as fs:
        found = fs.read_control_file(CONFIG)
    return found.data if found is not None else None


def load_settings(
    vault: Path,
    *,
    flags: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """The settings a command on ``vault`` runs with (flag, variable, saved, default).

    Raises:
        ConfigError: the saved file or a variable is malformed.
    """
    saved = read_config(saved_config(vault), where=str(vault / CONFIG))
    return resolve(saved, vault=vault, flags=flags, environ=environ)


def save_setting(vault: Path, key: str, raw: str | None, *, commit: bool = True) -> str:
    """Set (``raw``) or remove (``None``) one saved setting; commit it unless ``commit=False``.

    Returns the commit id, or ``""`` when nothing was committed.

    Raises:
        ConfigError: unknown key, bad value, or a folder that is not there (nothing written).
        VaultWriteError: the file or the commit cannot be written.
    """
    with VaultFS(vault, create=True) as fs, fs.lock(timeout=LOCK_TIMEOUT):
        found = fs.read_control_file(CONFIG)
        data = edit_config(found.data if found is not None else None, key, raw)
        if raw is not None:
            _refuse_missing_folder(vault, key, data)
        fs.write_control(CONFIG, data)
        if not commit:
            return ""
        from vaultsync.vault.vcs import VaultRepo  # noqa: PLC0415 - pygit2 only when committing

        repo = VaultRepo.open(vault, create=True)
        assert repo is not None  # noqa: S101 - create=True never gives None
        what = f"{key} = {raw}" if raw is not None else f"{key} unset"
        # Not a sync: no Vaultsync-Sync trailer, so ownership proofs read past this commit.
        sha = repo.commit({CONFIG: data}, fingerprint=None, subject=f"config {what}") or ""
        # git's index follows, or `git status` shows the file deleted and untracked at once.
        repo.sync_index({CONFIG: data})
        return sha


def _refuse_missing_folder(vault: Path, key: str, data: bytes) -> None:
    """A folder saved under ``key`` must be there: every command would refuse it afterwards.

    Raises:
        ConfigError: it is not (nothing is saved).
    """
    saved = resolve(read_config(data, where=str(vault / CONFIG)), vault=vault, environ={})
    problem = saved.folder_problems().get(key)
    if problem is not None:
        raise ConfigError(f"{problem}; nothing saved")

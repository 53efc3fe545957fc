"""The environment: the one module of vaultsync that reads it.

Every ``VAULTSYNC_*`` and ``CHATCLI_*`` variable vaultsync honours, and the few others it must
know (``XDG_CACHE_HOME``, ``GIT_OBJECT_DIRECTORY``, git's own with ``HOME`` and
``XDG_CONFIG_HOME``), are read here by :func:`read_environment` into one frozen
:class:`Environment`; the rest of the code takes values from it.  The saved
settings' own variables (``VAULTSYNC_CAP_*``, ``VAULTSYNC_TIMEZONE``…, one per option of
:data:`vaultsync.core.config.OPTIONS`) are read by name through :meth:`Environment.get`, so an
option added there needs nothing here.  Precedence everywhere: a flag, then a variable, then
the vault's saved config, then the default.

A child process vaultsync starts gets this process's environment through
:func:`child_environment`, with the overrides it needs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

OFF_VALUES = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """Every variable vaultsync reads, as text (empty: not set)."""

    state_dir: str = ""
    """``VAULTSYNC_STATE_DIR``: where ChatCLI's stores are (else ``~/.chatcli``)."""
    chatcli_state_dir: str = ""
    """``CHATCLI_STATE_DIR``: an older spelling of ``VAULTSYNC_STATE_DIR`` (it yields to it)."""
    vault_dir: str = ""
    """``VAULTSYNC_VAULT_DIR``: the vault (else ``<state>/vault``)."""
    chatcli_vault_dir: str = ""
    """``CHATCLI_MEMORY_VAULT_DIR``: ChatCLI's name for the vault folder (yields to the above)."""
    memory_vault: str = ""
    """``CHATCLI_MEMORY_VAULT``: ``false`` turns automatic syncs (``watch``) off."""
    board_path: str = ""
    """``CHATCLI_BOARD_PATH``: where ChatCLI keeps the board (else ``<state>/board.json``)."""
    cache_dir: str = ""
    """``VAULTSYNC_CACHE_DIR``: vaultsync's caches (else ``$XDG_CACHE_HOME/vaultsync``)."""
    xdg_cache_home: str = ""
    """``XDG_CACHE_HOME``: the user's cache folder (else ``~/.cache``)."""
    jobs: str = ""
    """``VAULTSYNC_JOBS``: processes a sync renders in (1 or 2)."""
    embed_model: str = ""
    """``VAULTSYNC_EMBED_MODEL``: a static embedding model's folder for semantic search."""
    embed_background: str = ""
    """``VAULTSYNC_EMBED_BACKGROUND``: ``0`` keeps the semantic index job from starting."""
    api_token: str = ""
    """``VAULTSYNC_API_TOKEN``: the HTTP API's token (else the vault's own)."""
    git_object_directory: str = ""
    """``GIT_OBJECT_DIRECTORY``: git's object store moved elsewhere (pack writes then differ)."""
    git: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    """Every ``GIT_*`` variable, ``HOME`` and ``XDG_CONFIG_HOME``: where git and libgit2 find
    the repository and their config files (``vault.gitfacts`` keys its answers by them)."""
    variables: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )  # never shown: ChatCLI's encryption key is among them
    """Every variable, for the saved settings' own (``VAULTSYNC_CAP_*`` …), by name."""

    def get(self, name: str, default: str = "") -> str:
        """The variable ``name`` (a saved setting's), or ``default`` when it is not set."""
        return self.variables.get(name, default)

    @property
    def seal_keys(self) -> tuple[str, ...]:
        """ChatCLI's at-rest keys (``CHATCLI_ENCRYPTION_KEY``, then each retired one)."""
        return sealing_keys(self.variables)

    @property
    def automatic_sync_off(self) -> bool:
        """``CHATCLI_MEMORY_VAULT`` says automatic syncs are off."""
        return self.memory_vault.strip().lower() in OFF_VALUES


_NAMES = {
    "state_dir": "VAULTSYNC_STATE_DIR",
    "chatcli_state_dir": "CHATCLI_STATE_DIR",
    "vault_dir": "VAULTSYNC_VAULT_DIR",
    "chatcli_vault_dir": "CHATCLI_MEMORY_VAULT_DIR",
    "memory_vault": "CHATCLI_MEMORY_VAULT",
    "board_path": "CHATCLI_BOARD_PATH",
    "cache_dir": "VAULTSYNC_CACHE_DIR",
    "xdg_cache_home": "XDG_CACHE_HOME",
    "jobs": "VAULTSYNC_JOBS",
    "embed_model": "VAULTSYNC_EMBED_MODEL",
    "embed_background": "VAULTSYNC_EMBED_BACKGROUND",
    "api_token": "VAULTSYNC_API_TOKEN",
    "git_object_directory": "GIT_OBJECT_DIRECTORY",
}


_OWN = ("VAULTSYNC_", "CHATCLI_")

SEAL_KEY = "CHATCLI_ENCRYPTION_KEY"
SEAL_PREVIOUS = "CHATCLI_ENCRYPTION_KEY_PREVIOUS"


def sealing_keys(variables: Mapping[str, str]) -> tuple[str, ...]:
    """The current key then each retired one (comma separated, blanks skipped), as ChatCLI does.

    No current key means none: ChatCLI needs it set to open anything.
    """
    current = variables.get(SEAL_KEY, "")
    if not current:
        return ()
    previous = (s.strip() for s in variables.get(SEAL_PREVIOUS, "").split(","))
    return (current, *(s for s in previous if s))


def read_environment(environ: Mapping[str, str] | None = None) -> Environment:
    """The environment now (``environ``: another mapping, as tests pass one)."""
    env = os.environ if environ is None else environ
    own = {
        name: value for name, value in env.items() if name.startswith(("VAULTSYNC_", "CHATCLI_"))
    }
    values = {attr: env.get(name, "") for attr, name in _NAMES.items()}
    git = {
        name: value
        for name, value in env.items()
        if name.startswith("GIT_") or name in ("HOME", "XDG_CONFIG_HOME")
    }
    return Environment(**values, git=MappingProxyType(git), variables=MappingProxyType(own))


def child_environment(*, dropping: str = "", **overrides: str) -> dict[str, str]:
    """This process's environment for a child it starts, with ``overrides``.

    ``dropping``: a prefix; the variables whose names start with it are left out.
    """
    kept = {k: v for k, v in os.environ.items() if not dropping or not k.startswith(dropping)}
    return {**kept, **overrides}

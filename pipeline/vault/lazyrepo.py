"""The vault's repository, opened on first use; edge (git).

Kept apart from ``vault.vcs`` so that holding one costs no import of git's bindings: a clean
no-op sync, ``check`` and ``status`` in sync never open the repository.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vaultsync.vault.vcs import VaultRepo


class LazyRepo:
    """The vault's repository, opened on first use: a clean no-op sync never touches git."""

    def __init__(self, vault: Path | None) -> None:
        self.vault = vault
        self._repo: VaultRepo | None = None
        self._opened = vault is None

    def get(self, *, create: bool = False) -> VaultRepo | None:
        """The repository (``None``: there is none, and not ``create``)."""
        if self.vault is not None and (not self._opened or (create and self._repo is None)):
            from vaultsync.vault.vcs import VaultRepo  # noqa: PLC0415 - git only when used

            self._repo = VaultRepo.open(self.vault, create=create)
            self._opened = True
        return self._repo

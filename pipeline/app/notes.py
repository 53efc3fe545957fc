"""One note's hand-offs between vaultsync and its owner: ``resolve`` a conflict, ``release`` it."""

from __future__ import annotations

from pathlib import Path

from vaultsync.app.workspace import vault_relative
from vaultsync.core.errors import UsageError
from vaultsync.core.settings import state_dir, vault_dir
from vaultsync.vault.gitstate import refuse_while_busy

CHOICES = ("show", "ours", "theirs", "markers")


def vault_folder(state: str | None, vault: str | None) -> Path:
    """The vault folder as flags and environment name it (no settings are read)."""
    return vault_dir(vault, state_dir(state))


def resolve(vault: Path, note: str, choice: str | None) -> str:
    """End the merge conflict on ``note``: show the three versions, or keep ours/theirs/markers.

    Returns what to say (with ``show``, the three versions themselves).

    Raises:
        UsageError: no choice given.
    """
    from vaultsync.vault.resolve import Choice
    from vaultsync.vault.resolve import resolve as settle

    if choice is None:
        raise UsageError("say how: --show, --ours, --theirs or --markers")
    if choice != "show":
        refuse_while_busy(vault)
    return settle(vault, vault_relative(vault, note), Choice(choice))


def release(vault: Path, note: str) -> str:
    """Make ``note`` fully the user's: vaultsync never writes or removes it again."""
    from vaultsync.vault.resolve import release as hand_over

    refuse_while_busy(vault)
    return hand_over(vault, vault_relative(vault, note))

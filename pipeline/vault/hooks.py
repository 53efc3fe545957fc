"""The git hooks vaultsync's commits skip, for ``vaultsync status`` to say so; reads only.

vaultsync commits through libgit2, which never runs a repository's hooks.  For a vault inside
a larger repository whose hooks matter (a secret scanner in ``pre-commit``), the user must
know: :func:`skipped_hooks` names the commit hooks ``git commit`` would run in the repository
vaultsync commits to (as :meth:`vaultsync.vault.vcs.VaultRepo.open` finds it, the vault's own
or a larger one): ``pre-commit``, ``prepare-commit-msg``, ``commit-msg`` and ``post-commit``,
each an executable file in ``core.hooksPath`` (``~`` expanded, relative to the work tree's
top) or else in the common git folder's ``hooks/`` (a linked worktree shares its main
repository's).  ``*.sample`` files and files not executable are not hooks, as for git.

The way through them is ``vaultsync sync --no-commit``, then the user's own ``git commit``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pygit2

__all__ = [
    "COMMIT_HOOKS",
    "SkippedHooks",
    "hooks_folder",
    "hooks_in",
    "hooks_json",
    "hooks_text",
    "skipped_hooks",
]

COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")
"""The hooks ``git commit`` runs, in the order it runs them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedHooks:
    """The commit hooks of the vault's repository that vaultsync's commits do not run."""

    folder: Path
    names: tuple[str, ...]


def _hooks_folder(repo: pygit2.Repository) -> Path:
    """Where ``git commit`` looks for hooks: ``core.hooksPath``, else ``<common dir>/hooks``."""
    git_dir = Path(repo.path)
    try:
        configured = str(repo.config["core.hooksPath"]).strip()
    except KeyError:
        configured = ""
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_absolute() else Path(repo.workdir or git_dir) / path
    try:
        common = git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        common = git_dir
    return common / "hooks"


def skipped_hooks(vault: Path) -> SkippedHooks | None:
    """The commit hooks vaultsync's commits skip in ``vault``'s repository; ``None`` if none."""
    return hooks_in(hooks_folder(vault))


def hooks_folder(vault: Path) -> Path | None:
    """The folder ``git commit`` takes hooks from in ``vault``'s repository (``None``: none)."""
    from vaultsync.vault.vcs import VaultRepo  # noqa: PLC0415 - libgit2 costs status ~40 ms

    found = VaultRepo.open(vault, create=False) if vault.is_dir() else None
    return None if found is None else _hooks_folder(found.repo)


def hooks_in(folder: Path | None) -> SkippedHooks | None:
    """The commit hooks in ``folder``; ``None`` when there are none (or no folder)."""
    if folder is None:
        return None
    names = tuple(
        name
        for name in COMMIT_HOOKS
        if (folder / name).is_file() and os.access(folder / name, os.X_OK)
    )
    return SkippedHooks(folder=folder, names=names) if names else None


def hooks_text(hooks: SkippedHooks | None) -> str:
    """The ``status`` line about skipped hooks (empty when there are none)."""
    if hooks is None:
        return ""
    return (
        f"git hooks not run for vaultsync's commits: {', '.join(hooks.names)} (in {hooks.folder});"
        " to run them, `vaultsync sync --no-commit`, then commit with git yourself"
    )


def hooks_json(hooks: SkippedHooks | None) -> dict[str, Any]:
    """``status --json``'s ``hooks_not_run``: the hook names and their folder, or ``None``."""
    data = None if hooks is None else {"names": list(hooks.names), "folder": str(hooks.folder)}
    return {"hooks_not_run": data}

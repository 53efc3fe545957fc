"""Whether a git operation is unfinished in the vault's repository; a few ``stat`` calls.

A ``git pull`` (a merge or a rebase), a cherry-pick or a revert that stopped on a conflict
leaves git's markers in the files and its own state in the git folder.  While it does, every
command that writes refuses (:func:`refuse_while_busy`): a sync would read the markers as an
edit, merge into them and commit them on top of the unfinished operation.  No repository is
opened and nothing of git's is imported, so the no-op sync stays cheap.
"""

from __future__ import annotations

from pathlib import Path

from vaultsync.core.errors import GitBusy

_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge", "git merge"),
    ("rebase-merge", "a rebase", "git rebase"),
    ("rebase-apply", "a rebase", "git rebase"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick"),
    ("REVERT_HEAD", "a revert", "git revert"),
)


def git_folder(vault: Path) -> Path | None:
    """The git folder of the repository the vault is in (a worktree's own), or ``None``."""
    start = vault.absolute()
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():  # a linked worktree or a submodule: "gitdir: <path>"
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                return (folder / text.removeprefix("gitdir:").strip()).resolve()
            return None
    return None


def operation_in_progress(vault: Path) -> tuple[str, str] | None:
    """The unfinished operation (``"a merge"``…) and how to end it; ``None`` when there is none."""
    found = git_folder(vault) if vault.exists() else None
    if found is None:
        return None
    for name, what, command in _IN_PROGRESS:
        if (found / name).exists():
            return what, f"finish it (`{command} --continue`) or drop it (`{command} --abort`)"
    return None


def refuse_while_busy(vault: Path) -> None:
    """Raise :class:`GitBusy` when a git operation is unfinished in the vault's repository."""
    busy = operation_in_progress(vault)
    if busy is not None:
        what, how = busy
        raise GitBusy(
            f"{vault}: {what} is in progress in the vault's git repository; nothing written",
            hint=f"{how} in the vault, then run vaultsync again",
        )

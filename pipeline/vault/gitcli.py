"""The ``git`` program, run in a vault: its output, or one line saying why it failed; I/O.

For what the user's own git must do (``vault.remote``: credentials, merge drivers) or does
better than libgit2 (``vault.housekeeping``: packing objects with deltas;
``vault.indexproof``: which work-tree files changed, by the index's stat data); everything
else talks to git through pygit2 (``vault.vcs``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from vaultsync.core.environment import child_environment

PRIVATE_UMASK = 0o077
"""The umask of every write into the vault's own repository (see ``vault.vcs``)."""
TIMEOUT_S = 120
"""Seconds a git command may take before it fails (a remote that does not answer)."""


class GitFailed(Exception):
    """A git command failed; ``line`` is the first line of what it said."""

    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def run_git(vault: Path, *args: str, timeout: float | None = TIMEOUT_S, umask: int = -1) -> str:
    """Run ``git -C VAULT ARGS``; its output as text, or :class:`GitFailed` with its first line."""
    return run_git_bytes(vault, *args, timeout=timeout, umask=umask).decode("utf-8", "replace")


def run_git_bytes(
    vault: Path,
    *args: str,
    timeout: float | None = TIMEOUT_S,
    umask: int = -1,
    own_repository: bool = False,
) -> bytes:
    """Run ``git -C VAULT ARGS``; its output as bytes (a blob is bytes), or :class:`GitFailed`.

    ``timeout``: ``None`` for a command that must end on its own (a kill would leave its
    children running); ``umask``: the child's (``-1``: this process's); ``own_repository``:
    see :func:`start_git`.
    """
    process = start_git(vault, *args, umask=umask, own_repository=own_repository)
    return finish_git(process, args[0], timeout)


def start_git(
    vault: Path, *args: str, umask: int = -1, own_repository: bool = False
) -> subprocess.Popen[bytes]:
    """Start ``git -C VAULT ARGS``, to be finished by :func:`finish_git`; or :class:`GitFailed`.

    ``own_repository``: the vault's own ``.git`` and work tree, whatever git's variables name
    (a hook sets ``GIT_DIR`` and ``GIT_INDEX_FILE`` for its own repository).
    """
    # never wait for a password
    env = child_environment(
        dropping="GIT_" if own_repository else "", GIT_TERMINAL_PROMPT="0", LC_ALL="C"
    )
    # absolute: git resolves a relative --git-dir after -C moved it into the vault
    root = vault.absolute()
    named = ("--git-dir", str(root / ".git"), "--work-tree", str(root)) if own_repository else ()
    try:
        return subprocess.Popen(
            ["git", "-C", str(vault), *named, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            stdin=subprocess.DEVNULL,
            umask=umask,
        )
    except OSError as error:
        raise GitFailed(f"cannot run git: {error.strerror or error}") from None


def finish_git(process: subprocess.Popen[bytes], command: str, timeout: float | None) -> bytes:
    """What a started git ``command`` printed, once it ended; or :class:`GitFailed`.

    Past ``timeout`` seconds it is killed (and waited for).
    """
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise GitFailed(f"git {command} took longer than {timeout:.0f} s") from None
    if process.returncode != 0:
        text = (stderr + stdout).decode("utf-8", "replace")
        said = [line.strip() for line in text.splitlines() if line.strip()]
        raise GitFailed(_first_meaningful(said) or f"git {command} exited {process.returncode}")
    return stdout


def _first_meaningful(lines: list[str]) -> str:
    for line in lines:
        if line.startswith(("fatal:", "error:", "!")):
            return line
    return lines[0] if lines else ""

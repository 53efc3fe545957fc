"""The ``git`` program, run in a vault: its output, or one line saying why it failed; I/O.

For what the user's own git must do (``vault.remote``: credentials, merge drivers) or does
better than libgit2 (``vault.housekeeping``: packing objects with deltas); everything else
talks to git through pygit2 (``vault.vcs``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from vaultsync.core.environment import child_environment

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
    vault: Path, *args: str, timeout: float | None = TIMEOUT_S, umask: int = -1
) -> bytes:
    """Run ``git -C VAULT ARGS``; its output as bytes (a blob is bytes), or :class:`GitFailed`.

    ``timeout``: ``None`` for a command that must end on its own (a kill would leave its
    children running); ``umask``: the child's (``-1``: this process's).
    """
    env = child_environment(GIT_TERMINAL_PROMPT="0", LC_ALL="C")  # never wait for a password
    try:
        done = subprocess.run(
            ["git", "-C", str(vault), *args],
            capture_output=True,
            env=env,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            umask=umask,
        )
    except subprocess.TimeoutExpired:
        raise GitFailed(f"git {args[0]} took longer than {timeout:.0f} s") from None
    except OSError as error:
        raise GitFailed(f"cannot run git: {error.strerror or error}") from None
    if done.returncode != 0:
        text = (done.stderr + done.stdout).decode("utf-8", "replace")
        said = [line.strip() for line in text.splitlines() if line.strip()]
        raise GitFailed(_first_meaningful(said) or f"git {args[0]} exited {done.returncode}")
    return done.stdout


def _first_meaningful(lines: list[str]) -> str:
    for line in lines:
        if line.startswith(("fatal:", "error:", "!")):
            return line
    return lines[0] if lines else ""

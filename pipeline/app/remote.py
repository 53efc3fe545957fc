"""One vault on every device: pull the remote's commits before a sync, push after it.

What another device committed (a phone's edit through obsidian-git, another engine's sync) is
integrated before the sync (``vault.remote.integrate``), so the sync sees it as it sees any
edit made in this vault: kept, and merged three-way with the stores' changes.  After the sync,
its commit is pushed; a push the remote rejects (another device pushed meanwhile) is followed
by a pull, a sync and a push again, at most :data:`PUSH_TRIES` times.  Never a forced push.
A remote that cannot be reached leaves the sync local: the next run catches up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.app.workspace import Workspace
from vaultsync.core.errors import RemoteFailed

if TYPE_CHECKING:
    from vaultsync.vault.gitfacts import GitFacts

PUSH_TRIES = 3
"""Pushes tried after a sync (each rejected one is followed by a pull and a sync)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteOutcome:
    """What the remote steps of one sync did."""

    upstream: str = ""
    """``remote/branch`` (empty: none is set)."""
    pulled: int = 0
    """The remote's commits integrated."""
    taken: tuple[str, ...] = ()
    """Notes where the other device's version was taken over vaultsync's own render."""
    pushed: bool = False
    ahead: int = 0
    behind: int = 0
    problem: str = ""
    """Why a pull or push did not happen (the sync itself still ran)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteState:
    """``status``: where this vault stands against its upstream, as of the last fetch."""

    upstream: str
    ahead: int
    behind: int

    @property
    def pull_needed(self) -> bool:
        """The remote has commits this vault lacks."""
        return self.behind > 0


def _remote_setting(ws: Workspace) -> str:
    return str(ws.settings.value("git.remote") or "")


def pull(ws: Workspace) -> RemoteOutcome:
    """Fetch the upstream and integrate its new commits (under the vault's lock)."""
    from vaultsync.vault import remote
    from vaultsync.vault.gitcli import GitFailed
    from vaultsync.vault.write import LOCK_TIMEOUT, VaultFS

    if not (ws.vault / ".git").exists():
        return RemoteOutcome()
    up = remote.upstream(ws.vault, _remote_setting(ws))
    if up is None:
        return RemoteOutcome(problem=_NO_UPSTREAM)
    try:
        remote.install_merge_driver(ws.vault)
        remote.fetch(ws.vault, up)
        with VaultFS(ws.vault) as fs, fs.lock(timeout=LOCK_TIMEOUT):
            done = remote.integrate(ws.vault, up)
    except GitFailed as failed:
        return RemoteOutcome(upstream=up.name, problem=f"pull from {up.name}: {failed.line}")
    problem = ""
    if done.refused:
        problem = (
            f"pull from {up.name} left for you: both sides changed {', '.join(done.refused[:3])}"
            " (`git pull` in the vault, settle it, then sync)"
        )
    elif done.blocked:
        problem = f"pull from {up.name} not done: {done.blocked}"
    return RemoteOutcome(upstream=up.name, pulled=done.commits, taken=done.taken, problem=problem)


def push(ws: Workspace, resync: Callable[[], object]) -> RemoteOutcome:
    """Push HEAD; a rejected push is followed by a pull and ``resync()``, then tried again."""
    from vaultsync.vault import remote
    from vaultsync.vault.gitcli import GitFailed

    up = remote.upstream(ws.vault, _remote_setting(ws))
    if up is None:
        return RemoteOutcome(problem=_NO_UPSTREAM)
    if marked := remote.marked_notes(ws.vault):
        where = ", ".join(marked[:3])
        problem = f"not pushed to {up.name}: conflict markers in {where} (`vaultsync resolve`)"
        return RemoteOutcome(upstream=up.name, problem=problem)
    said = ""
    for _ in range(PUSH_TRIES):
        try:
            remote.push(ws.vault, up)
            return RemoteOutcome(upstream=up.name, pushed=True)
        except GitFailed as failed:
            said = failed.line
        pulled = pull(ws)
        if pulled.problem:
            return replace(pulled, problem=f"push to {up.name}: {said}; {pulled.problem}")
        resync()
    return RemoteOutcome(upstream=up.name, problem=f"push to {up.name}: {said}")


def remote_state(ws: Workspace, facts: GitFacts | None = None) -> RemoteState | None:
    """Ahead/behind of the upstream as of the last fetch; ``None`` when there is none.

    ``facts``: the upstream as kept there while git's files are unchanged (``status``).
    """
    if not (ws.vault / ".git").exists():
        return None
    setting = _remote_setting(ws)
    ask = partial(_upstream, ws.vault, setting)
    named = ask() if facts is None else facts.upstream(setting, ask)
    if named is None:
        return None
    from vaultsync.vault import remote

    up = remote.Upstream(remote=named[0], branch=named[1])
    found = remote.counts(ws.vault, up)
    if found is None:
        return None
    return RemoteState(upstream=up.name, ahead=found[0], behind=found[1])


def _upstream(vault: Path, setting: str) -> list[str] | None:
    """The upstream as ``[remote, branch]`` (``None``: none)."""
    from vaultsync.vault import remote

    up = remote.upstream(vault, setting)
    return None if up is None else [up.remote, up.branch]


def raise_problem(outcome: RemoteOutcome) -> None:
    """The remote's problem as the run's error (exit 10), once the local sync is done."""
    if outcome.problem:
        raise RemoteFailed(f"{outcome.problem}; the vault was synced here, the next run catches up")


_NO_UPSTREAM = "no upstream to pull or push (set one once: git push -u origin main)"

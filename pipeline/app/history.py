"""``history``: the vault's commits that hold a secret or private value, and their purge."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING

from vaultsync.app.workspace import Workspace
from vaultsync.core.errors import UsageError
from vaultsync.core.text import plural
from vaultsync.vault.gitstate import refuse_while_busy

if TYPE_CHECKING:
    from vaultsync.vault.gitfacts import GitFacts
    from vaultsync.vault.history import Exposure, Purged
    from vaultsync.vault.vcs import Change, VaultRepo

LISTED = 5
"""Commits named in the exposure warning (the rest are counted)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Exposed:
    """The commits of the vault's history holding a value of ``values``, newest first."""

    found: tuple[Exposure, ...]
    values: frozenset[str]


EXPOSURE = "history-exposure.cache"
"""The last history check's answer, in the state's cache folder, keyed by what it read."""


def exposed_commits(ws: Workspace, *, inputs: str = "", facts: GitFacts | None = None) -> list[str]:
    """The commits of the vault's history that hold a secret or private value, newest first.

    The answer is kept with what it depends on — the commit at HEAD and the sync's inputs (the
    stores' stat data, the settings, the templates and vaultsync's own code) — so ``status``
    walks the history once per new commit or changed store, never on every run.  ``inputs``:
    ``vault.quick.sync_inputs`` of ``ws`` when the caller has them already (stat per store
    file costs ~80 ms at 100,000 notes); ``facts``: the commit at HEAD as kept there.
    """
    if not ws.vault.is_dir():
        return []
    head = facts.head(partial(_head, ws)) if facts is not None else _head(ws)
    key = _exposure_key(ws, head, inputs) if head else ""
    if key and (known := _known_exposure(ws, key)) is not None:
        return known
    repo = _repo(ws)
    if repo is None:
        return []
    found = [e.commit for e in _scan(ws, repo)[0]]
    if key:
        _keep_exposure(ws, key, found)
    return found


def _head(ws: Workspace) -> str:
    """The commit at the vault's HEAD (empty: no repository, or no commit yet)."""
    repo = _repo(ws)
    try:
        return str(repo.repo.head.target) if repo is not None else ""
    except Exception:  # an unborn or broken HEAD: no commit to key by
        return ""


def _exposure_key(ws: Workspace, head: str, inputs: str) -> str:
    """What the exposure check read, as one digest."""
    from vaultsync.core.digest import inputs_digest
    from vaultsync.vault.quick import sync_inputs

    # The sync's inputs cover all the check reads: every store file (those of extra source
    # folders and the at-rest keys' count through the settings' key), the settings, the code.
    inputs = inputs or sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
    return inputs_digest((head, inputs))


EXPOSURE_VERSION = 2


def _exposure_head(key: str) -> bytes:
    from vaultsync.core import cachefile

    return cachefile.envelope("history-exposure", EXPOSURE_VERSION, key)


def _known_exposure(ws: Workspace, key: str) -> list[str] | None:
    """The kept answer for ``key``; ``None`` when there is none (any doubt: no answer)."""
    import json

    from vaultsync.core import cachefile

    payload = cachefile.read(cachefile.cache_dir(ws.state) / EXPOSURE, _exposure_head(key))
    try:
        commits = json.loads(payload) if payload is not None else None
    except ValueError:
        return None
    if not isinstance(commits, list) or not all(isinstance(c, str) for c in commits):
        return None
    return commits


def _keep_exposure(ws: Workspace, key: str, commits: list[str]) -> None:
    """Remember the answer; a cache that cannot be written is only a slower next status."""
    import json

    from vaultsync.core import cachefile

    path = cachefile.cache_dir(ws.state) / EXPOSURE
    cachefile.write(path, _exposure_head(key), json.dumps(commits).encode("utf-8"), durable=False)


def history_check_due(ws: Workspace) -> bool:
    """Whether a sync masked a text for the first time, so history is worth a look (consumed)."""
    from vaultsync.graph.cache import take_history_check

    return take_history_check(ws.state)


def exposure_warning(ws: Workspace) -> str:
    """The warning line for the exposed commits of the vault's history; empty when none."""
    return exposure_text(exposed_commits(ws))


def exposure_text(commits: list[str] | tuple[str, ...]) -> str:
    """``commits`` said in one warning line (empty when none)."""
    if not commits:
        return ""
    named = ", ".join(c[:10] for c in commits[:LISTED]) + (" …" if len(commits) > LISTED else "")
    return (
        f"warning: a secret or private value of the stores is in {plural(len(commits), 'commit')} "
        f"of the vault's history ({named}): `vaultsync history` lists them, `--purge` removes them"
    )


def history(ws: Workspace) -> Exposed:
    """The commits of the vault's history that hold a secret or private value of the stores.

    Raises:
        UsageError: the vault has no repository.
    """
    repo = _repo(ws)
    if repo is None:
        raise UsageError(f"{ws.vault}: no git repository (nothing committed yet)")
    found, values = _scan(ws, repo)
    return Exposed(found=found, values=values)


def purge(ws: Workspace, exposed: Exposed) -> Purged:
    """The branch rewritten with every exposed value masked (the old one kept as a backup).

    Raises:
        UsageError: the vault has no repository.
    """
    from vaultsync.vault.history import purge as rewrite
    from vaultsync.vault.write import LOCK_TIMEOUT, VaultFS

    repo = _repo(ws)
    if repo is None:
        raise UsageError(f"{ws.vault}: no git repository (nothing committed yet)")
    refuse_while_busy(ws.vault)
    with VaultFS(ws.vault) as fs, fs.lock(timeout=LOCK_TIMEOUT):
        return rewrite(ws.vault, repo, exposed.values, now=datetime.now(UTC))


def _repo(ws: Workspace) -> VaultRepo | None:
    from vaultsync.vault.vcs import VaultRepo

    return VaultRepo.open(ws.vault, create=False) if ws.vault.is_dir() else None


def _scan(ws: Workspace, repo: VaultRepo) -> tuple[tuple[Exposure, ...], frozenset[str]]:
    from vaultsync.graph.load import exposed
    from vaultsync.vault.history import scan

    values = exposed(ws.state, ws.caps)
    return tuple(scan(repo, values)), values


def recent_changes(ws: Workspace, limit: int) -> tuple[Change, ...]:
    """The vault's newest commits (syncs and the user's), each with the notes it changed."""
    repo = _repo(ws)
    return repo.recent_changes(max(1, min(limit, 100))) if repo is not None else ()

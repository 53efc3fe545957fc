"""``sync --each ROOT``: every ChatCLI state directory under ROOT, one vault each.

The contract (docs, "Many vaults"):

* **What is synced.**  A *state directory* is a folder under ROOT that holds a ``memory/``
  folder, the store every ChatCLI state directory has (a gateway sender's included).  ROOT is
  walked in name order; hidden folders (``.name``), symlinks and the inside of a state
  directory are never entered, so ``ROOT/<sender>/`` and ``ROOT/<platform>/<chat>/`` layouts
  both work.  A state directory's *name* is its path relative to ROOT, with ``/``.
* **Tenants.**  A ChatCLI state root with a ``tenants/`` folder (the gateway's
  ``CHATCLI_HUB_ISOLATE``), ROOT itself or one found in the walk, is one state directory per
  tenant (:func:`vaultsync.extract.tenants.state_sets`), named ``…/tenants/<slug>-<hex>``, plus
  the root's own when it has stores of its own (ROOT's own is named ``.``).  A tenant's sealed
  stores open bound to its slug and its skills and board are read from the state root, as
  ChatCLI does: both follow from its path.
* **Where each vault is.**  ``<state>/vault``, the default of a plain ``sync --state``; each
  vault keeps its own saved settings.
* **Shards.**  ``--shard K/N`` (0 ≤ K < N, K 0-based like a Kubernetes Job's
  ``JOB_COMPLETION_INDEX``) takes the names whose stable hash is K modulo N: the first 8 bytes
  of SHA-256 of the name (UTF-8), big-endian.  The same name lands in the same shard on every
  machine and whatever the other names, so N shards cover every state directory exactly once
  and a new sender moves no other.
* **One process per vault.**  A vault that nothing changed since its last sync is answered
  here by the sync's own quick check (stat data only, no lock, nothing written).  Any other
  vault is synced by :func:`vaultsync.app.sync.sync` in a forked child (the parent has loaded
  the pipeline once, so a fork costs milliseconds): a crash, an out-of-memory kill or a leak
  stays in that vault's process, and the child's vault lock is released when it ends.  Vaults
  run one after the other: parallelism is the shards' business (cron, a CI matrix, an Indexed
  Job), not vaultsync's.  Without ``os.fork`` (and on macOS, see ``core.parallel``) each vault
  runs in this process.
* **Failures.**  A vault that fails is reported in its :class:`Outcome` and the others go on.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import pickle
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from vaultsync.app.sync import SyncOutcome, SyncRequest
from vaultsync.core import stopping
from vaultsync.core.errors import UsageError, VaultsyncError
from vaultsync.extract.tenants import TENANTS, state_sets

MARKER = "memory"
"""The folder that makes a folder a ChatCLI state directory."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Shard:
    """``--shard K/N``: this run's share, ``index`` (0-based) of ``count``."""

    index: int
    count: int

    def takes(self, name: str) -> bool:
        """Whether the state directory called ``name`` (relative to ROOT) is in this shard."""
        return shard_of(name, self.count) == self.index


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """One vault's sync, as the summary reports it."""

    name: str
    state: str
    vault: str
    exit_code: int
    """0 when synced; else the exit code a plain ``sync`` of it would have ended with."""
    error: str | None
    synced: SyncOutcome | None = None
    """The sync's own outcome (``None`` when it failed)."""
    lines: tuple[str, ...] = ()
    """What its sync had to say on stderr (notices, warnings), in order."""

    @property
    def ok(self) -> bool:
        """Synced without error."""
        return self.exit_code == 0

    @property
    def changed(self) -> bool:
        """The sync changed (or, dry, would change) the vault."""
        return self.synced is not None and self.synced.changed

    @property
    def quick(self) -> bool:
        """Answered from stat data alone."""
        return self.synced is not None and self.synced.quick

    @property
    def commit(self) -> str | None:
        """The sync's commit, if it made one."""
        report = self.synced.report if self.synced is not None else None
        return report.commit or None if report is not None else None

    @property
    def conflicts(self) -> int:
        """Notes of this vault waiting on its owner (conflicts and merges to review)."""
        report = self.synced.report if self.synced is not None else None
        return 0 if report is None else len(report.conflicts) + len(report.merge_waiting)


@dataclass(frozen=True, slots=True, kw_only=True)
class EachPlan:
    """The state directories under ROOT, and the ones this shard syncs."""

    root: Path
    shard: Shard | None
    found: tuple[str, ...]
    chosen: tuple[str, ...]


def shard_of(name: str, count: int) -> int:
    """The shard (0 … count-1) of a state directory's name: stable on every machine."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str) -> Shard:
    """``K/N`` → :class:`Shard`; a malformed value is a usage error (exit 2)."""
    index, slash, count = text.partition("/")
    if not (slash and index.strip().isdigit() and count.strip().isdigit()):
        raise UsageError(f"--shard {text!r}: expected K/N, e.g. 0/4 (K counts from 0)")
    shard = Shard(index=int(index), count=int(count))
    if shard.count < 1 or shard.index >= shard.count:
        raise UsageError(f"--shard {text}: K must be 0 … N-1 (K counts from 0, like a Job's index)")
    return shard


def state_dirs(root: Path) -> tuple[str, ...]:
    """The names (paths relative to ROOT, ``/``-separated) of its state directories, sorted."""
    if _holds_tenants(root):
        return tuple(sorted(_tenant_sets(root, "")))
    return tuple(sorted(_walk(root, "")))


def _holds_tenants(folder: Path) -> bool:
    """A ChatCLI state root with tenants, or a ``tenants/`` folder itself."""
    return folder.name == TENANTS or (folder / TENANTS).is_dir()


def _tenant_sets(folder: Path, prefix: str) -> Iterator[str]:
    """The store sets of a state root with tenants: its own (named by ``prefix``) and each one's."""
    for found in state_sets(folder):
        rel = found.stores.relative_to(folder).as_posix()
        name = f"{prefix}{rel}" if rel != "." else prefix.rstrip("/") or "."
        yield name


def _walk(folder: Path, prefix: str) -> Iterator[str]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return  # unreadable: nothing below it can be synced either
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        name = f"{prefix}{entry.name}"
        if _holds_tenants(Path(entry.path)):
            yield from _tenant_sets(Path(entry.path), f"{name}/")
        elif Path(entry.path, MARKER).is_dir():
            yield name
        else:
            yield from _walk(Path(entry.path), f"{name}/")


def plan_each(root: Path, shard: Shard | None) -> EachPlan:
    """The state directories of ROOT, and those of this shard.

    Raises:
        UsageError: ROOT is not a folder, or holds no state directory at all.
    """
    if not root.is_dir():
        raise UsageError(f"--each {root}: not a folder")
    found = state_dirs(root)
    if not found:
        raise UsageError(
            f"--each {root}: no ChatCLI state directory under it "
            f"(a folder holding {MARKER}/, or a {TENANTS}/ folder)"
        )
    chosen = tuple(name for name in found if shard is None or shard.takes(name))
    return EachPlan(root=root, shard=shard, found=found, chosen=chosen)


def sync_each(plan: EachPlan, request: SyncRequest) -> Iterator[Outcome]:
    """Each chosen vault's outcome in name order: the quick answer here, else a sync in a child.

    The caller may stop iterating between two vaults (a signal): no other vault starts.
    """
    run: Runner | None = None  # forks only once a vault needs a full sync
    for name in plan.chosen:
        state = plan.root / name
        outcome = None if request.dry_run else unchanged(name, state)
        if outcome is None:
            run = run or _runner()
            outcome = run(functools.partial(sync_one, name, state, request), name, state)
        yield outcome


def unchanged(name: str, state: Path) -> Outcome | None:
    """The quick answer of a sync (``vault.quick``), here, without a fork; else ``None``.

    Most runs of a cron change few vaults: a stat-only check in this process answers for the
    others (about a millisecond each, against some 10 ms for a fork).  Anything it cannot
    settle (an error included) goes to a full sync in a child, which reports it.
    """
    from vaultsync.app.workspace import open_workspace
    from vaultsync.vault.quick import sync_inputs, unchanged_since_last_sync

    try:
        ws = open_workspace(str(state), str(state / "vault"))
        inputs = sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
        if not unchanged_since_last_sync(ws.vault, inputs):
            return None
    except (VaultsyncError, OSError):
        return None
    return Outcome(
        name=name, state=str(state), vault=str(ws.vault), exit_code=0, error=None,
        synced=SyncOutcome(vault=ws.vault, report=None), lines=ws.notices,
    )  # fmt: skip


def sync_one(name: str, state: Path, request: SyncRequest) -> Outcome:
    """Sync ``STATE`` into ``STATE/vault`` here; a failure becomes the outcome's error."""
    from vaultsync.app.sync import sync
    from vaultsync.app.workspace import open_workspace

    vault = state / "vault"
    base = functools.partial(Outcome, name=name, state=str(state), vault=str(vault))
    lines: tuple[str, ...] = ()
    try:
        ws = open_workspace(str(state), str(vault))
        lines = ws.notices
        synced = sync(ws, request)
    except VaultsyncError as failure:
        return base(exit_code=failure.exit_code, error=failure.message, lines=lines)
    except Exception as failure:  # one vault's bug must not stop the others
        traceback.print_exc()  # a bug, not bad input: its traceback goes to stderr
        error = f"unexpected {type(failure).__name__}: {failure}"
        return base(exit_code=1, error=error, lines=lines)
    return base(exit_code=0, error=None, synced=synced, lines=(*lines, *synced.warnings))


Runner = Callable[[Callable[[], Outcome], str, Path], Outcome]


def _runner() -> Runner:
    """A forked child per vault where forking is safe (``core.parallel``), else this process."""
    from vaultsync.core.parallel import helper_allowed

    if not helper_allowed():
        return lambda one, _name, _state: one()
    _preload()
    gc.freeze()  # the children's collections never walk (and so never copy) the parent's heap
    return in_child


def _preload() -> None:
    """Load the sync's modules, digest the code and parse the templates once, here.

    Every child inherits them, so no vault pays for them again.
    """
    import vaultsync.search.database
    import vaultsync.vault.config
    import vaultsync.vault.quick
    import vaultsync.vault.sync  # noqa: F401
    from vaultsync.core.digest import code_fingerprint
    from vaultsync.core.redact import redact
    from vaultsync.render import specs

    code_fingerprint()
    specs.code_fingerprint()
    # The secret scanner's rules take about a second to load; loading them starts no thread,
    # so each child inherits them loaded (a text with a context word makes redact load them).
    redact("Authorization: Basic dmF1bHRzeW5jOnByZWxvYWQ=")
    env = specs.make_environment()
    for name in env.list_templates():
        try:
            specs.template_fingerprint(env, name)
            env.get_template(name)  # compiled once, for every child
        except VaultsyncError:  # pragma: no cover - a built-in template that does not parse
            continue  # the vaults using it report it


def in_child(one: Callable[[], Outcome], name: str, state: Path) -> Outcome:
    """``one()`` in a forked child; its outcome comes back pickled through a pipe.

    A child that dies without answering (killed, out of memory) is a failed vault.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(read)
        stopping.ignore_stop_signals()  # the parent lets this vault finish, then stops
        _die_with_parent()  # a run stopped (Ctrl-C, a pod deleted) leaves no vault syncing
        code = 1
        try:
            data = pickle.dumps(one())
            with os.fdopen(write, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if data:
        answer: Outcome = pickle.loads(data)  # noqa: S301 - our own child's answer
        return answer
    return Outcome(
        name=name, state=str(state), vault=str(state / "vault"), exit_code=1,
        error=f"the sync's process ended without an answer ({_how_it_ended(status)})",
    )  # fmt: skip


def _die_with_parent() -> None:
    from vaultsync.core.parallel import _die_with_parent as die  # one prctl, shared

    die()


def _how_it_ended(status: int) -> str:
    code = os.waitstatus_to_exitcode(status)
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

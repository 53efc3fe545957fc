"""``vaultsync sync --each ROOT``: every ChatCLI state directory under ROOT, one vault each.

The contract (README, "Many vaults: ``sync --each``"):

* **What is synced.**  A *state directory* is a folder under ROOT that holds a ``memory/``
  folder, the store every ChatCLI state directory has (a gateway sender's included).  ROOT is
  walked in name order; hidden folders (``.name``), symlinks and the inside of a state
  directory are never entered, so ``ROOT/<sender>/`` and ``ROOT/<platform>/<chat>/`` layouts
  both work.  A state directory's *name* is its path relative to ROOT, with ``/``.
* **Where each vault is.**  ``<state>/vault``, the default of a plain ``sync --state``;
  ``--vault`` and the vault variables (``VAULTSYNC_VAULT_DIR``, ``CHATCLI_MEMORY_VAULT_DIR``)
  name one vault, so they are refused or ignored here.  Each vault keeps its own saved
  settings.
* **Shards.**  ``--shard K/N`` (0 ≤ K < N, K 0-based like a Kubernetes Job's
  ``JOB_COMPLETION_INDEX``) takes the names whose stable hash is K modulo N: the first 8 bytes
  of SHA-256 of the name (UTF-8), big-endian.  The same name lands in the same shard on every
  machine and whatever the other names, so N shards cover every state directory exactly once
  and a new sender moves no other.
* **One process per vault.**  A vault that nothing changed since its last sync is answered
  here by ``sync``'s own quick check (stat data only, no lock, nothing written).  Any other
  vault is synced by the ``sync`` command itself in a forked
  child (the parent has loaded the pipeline once, so a fork costs milliseconds): a crash, an
  out-of-memory kill or a leak stays in that vault's process, and the child's vault lock
  (``vault.write``) is released when it ends.  Vaults run one after the other: parallelism
  is the shards' business (cron, a CI matrix, an Indexed Job), not vaultsync's.  Without
  ``os.fork`` (and on macOS, see ``core.parallel``) each vault runs in this process.
* **Failures.**  A vault that fails is reported (its ``error: …`` line, prefixed with its
  name) and the others go on; the run then exits 9 (:class:`VaultsFailed`).  ``--json``
  prints one summary object (schema ``cli.schemas.SYNC_EACH``) either way.
* **Stopping.**  SIGTERM (a Kubernetes pod stopped, a CronJob's deadline) or SIGINT lets the
  vault being synced finish (its child ignores both), starts no other, reports the vaults not
  started and exits 9: the next run syncs them.  A second signal ends the run at once; the
  vault then being synced is left as a killed sync leaves it (its next sync finishes it).
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click
from vaultsync.cli import stopping
from vaultsync.cli.schemas import SCHEMA_VERSION
from vaultsync.core.errors import UsageError, VaultsFailed, VaultsyncError
from vaultsync.core.text import plural

MARKER = "memory"
"""The folder that makes a folder a ChatCLI state directory."""

STOPPING = "{signal}: stopping once the vault being synced is done (again: stop now)"
"""Said on stderr when the first SIGTERM/SIGINT arrives."""

LISTED_FAILURES = 5
"""Failed vaults named in the closing error line (the rest are counted)."""


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
    changed: bool = False
    quick: bool = False
    commit: str | None = None
    conflicts: int = 0
    """Notes of this vault waiting on its owner (conflicts and merges to review)."""
    said: tuple[str, ...] = ()
    """What the summary says of it in text mode: what changed, each conflict."""
    lines: tuple[str, ...] = ()
    """What its sync wrote on stderr (warnings, notes), in order."""

    @property
    def ok(self) -> bool:
        """Synced without error."""
        return self.exit_code == 0


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
    return tuple(sorted(_walk(root, "")))


def _walk(folder: Path, prefix: str) -> Iterator[str]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return  # unreadable: nothing below it can be synced either
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        name = f"{prefix}{entry.name}"
        if Path(entry.path, MARKER).is_dir():
            yield name
        else:
            yield from _walk(Path(entry.path), f"{name}/")


@dataclass(frozen=True, slots=True)
class Stopped:
    """A run ended early by a signal: which one, and how many chosen vaults were not started."""

    signal_name: str
    not_started: int


def run_each(
    each: str | None,
    shard: str | None,
    *,
    given: Mapping[str, object],
    paths: tuple[str, ...],
    dry_run: bool,
    no_commit: bool,
    verbose: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """``sync --each ROOT``'s entry from the ``sync`` command: its options checked, then run.

    Raises:
        UsageError: ``--shard`` without ``--each``, or with an option that names one vault.
    """
    if each is None:
        raise UsageError("--shard is given only with --each ROOT")
    refused = [flag for flag, value in given.items() if value] + (["PATHS"] if paths else [])
    if refused:
        raise UsageError(
            f"--each syncs every state directory's own vault: {', '.join(refused)} not allowed",
            hint="a vault's saved settings (vaultsync config set) apply with --each",
        )
    sync_each(
        click.get_current_context(), Path(each).expanduser(),
        shard=None if shard is None else parse_shard(shard),
        dry_run=dry_run, no_commit=no_commit, verbose=verbose, quiet=quiet, as_json=as_json,
    )  # fmt: skip


def sync_each(
    ctx: click.Context,
    root: Path,
    *,
    shard: Shard | None,
    dry_run: bool,
    no_commit: bool,
    verbose: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Sync every state directory of ROOT (of this shard), report, exit 9 if any failed.

    Raises:
        UsageError: ROOT is not a folder, or holds no state directory at all.
        VaultsFailed: one or more vaults failed (each was reported).
    """
    if not root.is_dir():
        raise UsageError(f"--each {root}: not a folder")
    found = state_dirs(root)
    if not found:
        raise UsageError(
            f"--each {root}: no ChatCLI state directory under it (a folder holding {MARKER}/)"
        )
    chosen = [name for name in found if shard is None or shard.takes(name)]
    outcomes: list[Outcome] = []
    with stopping.stop_on_signals(second_ends_now=True, say=STOPPING) as stop:
        for outcome in _sync_all(ctx, root, chosen, dry_run=dry_run, no_commit=no_commit):
            outcomes.append(outcome)
            _say(outcome, verbose=verbose, quiet=quiet, as_json=as_json)
            if stop.is_set():
                break
    stopped = Stopped(stop.signal_name, len(chosen) - len(outcomes)) if stop.is_set() else None
    _summarise(root, shard, len(found), outcomes, stopped, dry_run=dry_run, verbose=verbose,
               quiet=quiet, as_json=as_json)  # fmt: skip


def _summarise(
    root: Path,
    shard: Shard | None,
    found: int,
    outcomes: list[Outcome],
    stopped: Stopped | None,
    *,
    dry_run: bool,
    verbose: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """The closing line or ``--json`` object; exit 9 when a vault failed or a stop left some out."""
    if as_json:
        data = summary_json(root, shard, found, outcomes, dry_run=dry_run, stopped=stopped)
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    elif stopped or (not quiet and (verbose or any(o.changed or not o.ok for o in outcomes))):
        click.echo(summary_line(root, shard, found, outcomes, stopped=stopped))
    _raise_failures(outcomes, stopped)


def _sync_all(
    ctx: click.Context, root: Path, names: list[str], *, dry_run: bool, no_commit: bool
) -> Iterator[Outcome]:
    """Each vault's outcome in name order: the quick answer here, else a sync in a child."""
    run: Runner | None = None  # forks only once a vault needs a full sync
    for name in names:
        state = root / name

        def one(state: Path = state, name: str = name) -> Outcome:
            return sync_one(ctx, name, state, dry_run=dry_run, no_commit=no_commit)

        outcome = None if dry_run else unchanged(name, state)
        if outcome is None:
            run = run or _runner()
            outcome = run(one, name, state)
        yield outcome


def unchanged(name: str, state: Path) -> Outcome | None:
    """The quick answer of ``sync`` (``vault.quick``), here, without a fork; else ``None``.

    Most runs of a cron change few vaults: a stat-only check in this process answers for the
    others (about a millisecond each, against some 10 ms for a fork).  It is the check ``sync``
    makes first, with the same inputs; anything it cannot settle (an error included) goes to
    a full sync in a child, which reports it.
    """
    from vaultsync.cli.options import workspace
    from vaultsync.vault.quick import sync_inputs, unchanged_since_last_sync

    err = io.StringIO()
    try:
        with redirect_stderr(err):
            ws = workspace(str(state), str(state / "vault"))
            inputs = sync_inputs(ws.state, ws.settings.as_key(), ws.templates)
            if not unchanged_since_last_sync(ws.vault, inputs):
                return None
    except (VaultsyncError, OSError):
        return None
    return Outcome(
        name=name, state=str(state), vault=str(ws.vault), exit_code=0, error=None, quick=True,
        lines=tuple(err.getvalue().splitlines()),
    )  # fmt: skip


def sync_one(
    ctx: click.Context, name: str, state: Path, *, dry_run: bool, no_commit: bool
) -> Outcome:
    """Run ``sync --state STATE --vault STATE/vault --json`` here, its output caught."""
    from vaultsync.cli.vault import sync

    vault = state / "vault"
    out, err = io.StringIO(), io.StringIO()
    code, error = 0, None
    with redirect_stdout(out), redirect_stderr(err):
        try:
            ctx.invoke(
                sync, state=str(state), vault=str(vault), dry_run=dry_run, no_commit=no_commit,
                as_json=True,
            )  # fmt: skip
        except VaultsyncError as failure:
            code, error = failure.exit_code, failure.message
        except Exception as failure:  # one vault's bug must not stop the others
            code, error = 1, f"unexpected {type(failure).__name__}: {failure}"
            traceback.print_exc()  # a bug, not bad input: its traceback goes to stderr
    lines = tuple(err.getvalue().splitlines())
    base = Outcome(name=name, state=str(state), vault=str(vault), exit_code=code, error=error)
    return _with_report(base, out.getvalue(), lines) if code == 0 else _replace_lines(base, lines)


def _with_report(base: Outcome, printed: str, lines: tuple[str, ...]) -> Outcome:
    """The outcome of a sync that succeeded, read from its ``--json`` answer."""
    try:
        report: dict[str, Any] = json.loads(printed)
    except ValueError:  # not the sync's JSON: synced, but nothing more is known of it
        return _replace_lines(base, (*lines, *printed.splitlines()))
    waiting = [*report.get("conflicts", ()), *report.get("merge_waiting", ())]
    said = [f"conflict: {c['path']} ({c['reason']})" for c in waiting]
    if report["changed"]:
        counts = ", ".join(f"{len(report[k])} {k}" for k in ("created", "updated", "removed"))
        commit = report.get("commit")
        verb = "would sync" if report.get("dry_run") else "synced"
        said.insert(0, f"{verb}: {counts}" + (f" (commit {commit[:10]})" if commit else ""))
    return Outcome(
        **_fields(base),
        said=tuple(said),
        lines=lines,
        changed=bool(report["changed"]),
        quick=bool(report.get("quick", False)),
        commit=report.get("commit"),
        conflicts=len(waiting),
    )


def _fields(outcome: Outcome) -> dict[str, Any]:
    return {"name": outcome.name, "state": outcome.state, "vault": outcome.vault,
            "exit_code": outcome.exit_code, "error": outcome.error}  # fmt: skip


def _replace_lines(outcome: Outcome, lines: tuple[str, ...]) -> Outcome:
    return Outcome(**{**_fields(outcome), "lines": lines})


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
    import vaultsync.cli.progress
    import vaultsync.cli.views
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
    """``one()`` in a forked child; its outcome comes back as JSON through a pipe.

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
            data = json.dumps(asdict(one())).encode()
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
        fields = json.loads(data)
        return Outcome(**{**fields, "said": tuple(fields["said"]), "lines": tuple(fields["lines"])})
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


def _say(outcome: Outcome, *, verbose: bool, quiet: bool, as_json: bool) -> None:
    """One vault's lines, each prefixed with its name; its stderr and its error on stderr.

    ``--json`` keeps stdout for the summary; ``-q`` keeps only what needs someone.
    """
    for line in outcome.lines:
        click.echo(f"{outcome.name}: {line}", err=True)
    if not outcome.ok:
        click.echo(f"error: {outcome.name}: {outcome.error}", err=True)
    if as_json:
        return
    for line in outcome.said:
        if not quiet or line.startswith("conflict:"):
            click.echo(f"{outcome.name}: {line}")
    if verbose and outcome.ok and not outcome.said:
        click.echo(f"{outcome.name}: {'unchanged' if outcome.quick else 'in sync'}")


def summary_line(
    root: Path,
    shard: Shard | None,
    found: int,
    outcomes: list[Outcome],
    *,
    stopped: Stopped | None = None,
) -> str:
    """``sync --each``'s closing line: how many vaults, changed, failed (, not started)."""
    share = f" (shard {shard.index}/{shard.count} of {found:,})" if shard else ""
    changed = sum(o.changed for o in outcomes)
    failed = sum(not o.ok for o in outcomes)
    line = (
        f"{root}: {plural(len(outcomes), 'vault')}{share}: {changed} changed, "
        f"{len(outcomes) - failed} ok, {failed} failed"
    )
    if stopped is not None:
        line += f"; stopped by {stopped.signal_name}, {stopped.not_started} not started"
    return line


def summary_json(
    root: Path,
    shard: Shard | None,
    found: int,
    outcomes: list[Outcome],
    *,
    dry_run: bool,
    stopped: Stopped | None = None,
) -> dict[str, Any]:
    """The summary as plain data (schema: ``cli.schemas.SYNC_EACH``)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "root": str(root),
        "shard": None if shard is None else {"index": shard.index, "count": shard.count},
        "found": found,
        "dry_run": dry_run,
        "synced": sum(o.ok for o in outcomes),
        "changed": sum(o.changed for o in outcomes),
        "failed": sum(not o.ok for o in outcomes),
        "stopped_by": None if stopped is None else stopped.signal_name,
        "not_started": 0 if stopped is None else stopped.not_started,
        "vaults": [
            {
                "name": o.name,
                "state": o.state,
                "vault": o.vault,
                "ok": o.ok,
                "exit_code": o.exit_code,
                "error": o.error,
                "changed": o.changed,
                "quick": o.quick,
                "commit": o.commit,
                "conflicts": o.conflicts,
            }
            for o in outcomes
        ],
    }


def _raise_failures(outcomes: list[Outcome], stopped: Stopped | None = None) -> None:
    failed = [o.name for o in outcomes if not o.ok]
    if stopped is not None:
        vaults = plural(stopped.not_started, "vault")
        raise VaultsFailed(
            f"stopped by {stopped.signal_name}: {vaults} not started, {len(failed)} failed",
            hint="the next run syncs them",
        )
    if not failed:
        return
    named = ", ".join(failed[:LISTED_FAILURES]) + (" …" if len(failed) > LISTED_FAILURES else "")
    raise VaultsFailed(
        f"{len(failed)} of {plural(len(outcomes), 'vault')} failed: {named}",
        hint="each failure is reported above; `vaultsync sync --state ROOT/NAME` retries one",
    )

"""Detached jobs that never fail silently: started, left to run, their outcome kept on disk.

A command that starts a job does not wait for it: the job runs as ``python -P -m MODULE
ARGS`` in a session of its own, stdin and stdout closed, stderr to the job's log (``-P``
keeps the current folder off ``sys.path``: run from a clone of this repository, ``python -m``
would import its ``vaultsync/`` folder instead of the installed package).

Its outcome is kept in a small JSON file, written by the project's atomic writer:
``{"state": "started", "pid": N}`` once started, ``{"state": "failed", "exit": N, "error":
"last error line"}`` when it ended badly, nothing once it succeeded.  :func:`job_failure`
reads it back, so whoever looks next (a sync, ``status``, a search) says what went wrong; a
job that died before its own code ran (an interpreter or import failure) is told by its log's
last line.  The semantic index's embedder (``search.embedjob``) and the packing of the vault's
git objects (``vault.housekeeping``) are such jobs.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vaultsync.core.environment import child_environment
from vaultsync.core.fsio import atomic_write, read_regular

__all__ = ["JobFailure", "JobFiles", "finish", "job_failure", "record_failure", "record_started"]

_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True, kw_only=True)
class JobFailure:
    """How the last job ended badly: its exit status (None: unknown) and last error line."""

    exit_code: int | None
    error: str

    def describe(self) -> str:
        """One line: ``exit 1: ModuleNotFoundError: …``."""
        code = "unknown exit" if self.exit_code is None else f"exit {self.exit_code}"
        return f"{code}: {self.error}" if self.error else code


@dataclass(frozen=True, slots=True)
class JobFiles:
    """Where one job keeps its outcome (``status``, JSON) and its stderr (``log``)."""

    status: Path
    log: Path


def spawn(files: JobFiles, module: str, *args: str) -> bool:
    """Start ``python -P -m module args`` detached; whether it started (if not, it is recorded)."""
    import subprocess  # noqa: PLC0415 - only to start one: ``status`` reads outcomes without it

    command = [sys.executable, "-P", "-m", module, *args]
    try:
        # no symlink followed: a link planted where the log goes would truncate its target
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW
        log = os.open(files.log, flags, 0o600)
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
                env=child_environment(),
            )
        finally:
            os.close(log)
    except OSError as err:
        with contextlib.suppress(OSError):
            record_failure(files, 127, f"cannot start the background job: {err.strerror or err}")
        return False
    # The child's own record comes after its interpreter starts: this one is written first.
    record_started(files, process.pid)
    return True


def _write_status(files: JobFiles, status: dict[str, object]) -> None:
    data = json.dumps(status, ensure_ascii=False, sort_keys=True).encode() + b"\n"
    atomic_write(files.status, data, durable=False)


def record_started(files: JobFiles, pid: int) -> None:
    """Note that the job ``pid`` was started."""
    _write_status(files, {"state": "started", "pid": pid})


def record_failure(files: JobFiles, exit_code: int, error: str) -> None:
    """Note that the job ended with ``exit_code``, ``error`` being its last error line."""
    _write_status(files, {"state": "failed", "exit": exit_code, "error": error[:_ERROR_CHARS]})


def finish(files: JobFiles, work: Callable[[], tuple[int, str]]) -> int:
    """In the job: ``work()``'s ``(exit status, last error line)``, recorded; the exit status.

    An exception ``work`` lets through is a failure too: its traceback goes to the log.
    """
    try:
        code, error = work()
    except Exception as err:
        traceback.print_exc()
        code, error = 1, traceback.format_exception_only(err)[-1].strip()
    with contextlib.suppress(OSError):
        if code == 0:
            files.status.unlink(missing_ok=True)
        else:
            record_failure(files, code, error)
    return code


def job_failure(files: JobFiles) -> JobFailure | None:
    """How the last job failed, or None (it succeeded, runs, or never started)."""
    data = read_regular(files.status)  # a symlink planted there is not followed
    try:
        status = json.loads(data) if data is not None else None
    except ValueError:
        return None
    if not isinstance(status, dict):
        return None
    if status.get("state") == "failed":
        code = status.get("exit")
        return JobFailure(
            exit_code=code if isinstance(code, int) else None, error=str(status.get("error", ""))
        )
    pid = status.get("pid")
    if status.get("state") == "started" and isinstance(pid, int) and not _alive(pid):
        # Died before its own code could say why: its stderr's last line is all there is.
        return JobFailure(exit_code=None, error=_last_line(files.log))
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _last_line(path: Path) -> str:
    data = read_regular(path)  # a symlink planted there is not followed
    lines = data.decode("utf-8", "replace").splitlines() if data is not None else []
    found = [line.strip() for line in lines if line.strip()]
    return found[-1][:_ERROR_CHARS] if found else ""

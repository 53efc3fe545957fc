"""``python -P -m vaultsync.search.embedjob VAULT``: embed what the semantic index lacks, then exit.

Started detached by ``vectors.start_background`` (a search, a sync or ``watch``), so the
command that started it never waits for the embedding.  ``-P`` keeps the current folder off
``sys.path``: run from a clone of this repository, ``python -m`` would import its
``vaultsync/`` folder instead of the installed package.

The job never fails silently.  Its outcome is kept in ``search.db.embed.json`` beside the
index (written by the project's atomic writer): ``{"state": "started", "pid": N}`` when it is
started, ``{"state": "failed", "exit": N, "error": "last error line"}`` when it ends badly,
nothing once it succeeds.  Its stderr goes to ``search.db.embed.log`` so that a job that dies
before its own code runs (an interpreter or import failure) still leaves its last line.
``job_failure(db)`` reads the outcome; ``index_notice(db, done, total)`` is what ``search`` and
``status`` say of an incomplete semantic index.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from vaultsync.core.environment import read_environment
from vaultsync.core.fsio import atomic_write

__all__ = [
    "ENV_BACKGROUND",
    "JobFailure",
    "background_allowed",
    "index_notice",
    "job_failure",
    "job_log",
    "main",
    "record_failure",
    "record_started",
]

ENV_BACKGROUND = "VAULTSYNC_EMBED_BACKGROUND"
"""``0`` keeps the job from starting (tests that did not ask for it); anything else allows it."""
_STATUS_SUFFIX = ".embed.json"
_LOG_SUFFIX = ".embed.log"
_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True, kw_only=True)
class JobFailure:
    """How the last background job ended badly: its exit status (None: unknown) and last error."""

    exit_code: int | None
    error: str

    def describe(self) -> str:
        """One line: ``exit 1: ModuleNotFoundError: …``."""
        code = "unknown exit" if self.exit_code is None else f"exit {self.exit_code}"
        return f"{code}: {self.error}" if self.error else code


def background_allowed() -> bool:
    """Whether the environment lets the job start (the one place ``ENV_BACKGROUND`` is read)."""
    return read_environment().embed_background.strip() != "0"


def _status_path(db: Path) -> Path:
    return db.with_name(db.name + _STATUS_SUFFIX)


def job_log(db: Path) -> Path:
    """Where the job's stderr goes: beside the index, inside the vault's control folder."""
    return db.with_name(db.name + _LOG_SUFFIX)


def _write_status(db: Path, status: dict[str, object]) -> None:
    data = json.dumps(status, ensure_ascii=False, sort_keys=True).encode() + b"\n"
    atomic_write(_status_path(db), data, durable=False)


def record_started(db: Path, pid: int) -> None:
    """Note that the job ``pid`` was started for the index ``db``."""
    _write_status(db, {"state": "started", "pid": pid})


def record_failure(db: Path, exit_code: int, error: str) -> None:
    """Note that the job ended with ``exit_code``, ``error`` being its last error line."""
    _write_status(db, {"state": "failed", "exit": exit_code, "error": error[:_ERROR_CHARS]})


def _record_success(db: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        _status_path(db).unlink()


def job_failure(db: Path) -> JobFailure | None:
    """How the last job for ``db`` failed, or None (it succeeded, runs, or never started)."""
    try:
        status = json.loads(_status_path(db).read_bytes())
    except (OSError, ValueError):
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
        return JobFailure(exit_code=None, error=_last_line(job_log(db)))
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
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    found = [line.strip() for line in lines if line.strip()]
    return found[-1][:_ERROR_CHARS] if found else ""


def index_notice(db: Path, done: int, total: int) -> str:
    """What a search says of an index with ``done`` of ``total`` notes embedded ("" if whole)."""
    if done >= total:
        return ""
    counted = f"semantic index: {done} of {total} notes embedded"
    failure = job_failure(db)
    if failure is not None:
        return f"{counted}; the background job failed ({failure.describe()})"
    return f"{counted}, the rest is being built in the background"


def main(argv: list[str]) -> int:
    """Embed the pending notes of the vault ``argv[0]``; the exit status, recorded if not 0."""
    if len(argv) != 1:
        return 2
    from vaultsync.search.paths import index_path  # noqa: PLC0415

    db = index_path(Path(argv[0]))
    code, error = _run(Path(argv[0]))
    if code == 0:
        _record_success(db)
    else:
        with contextlib.suppress(OSError):
            record_failure(db, code, error)
    return code


def _run(vault: Path) -> tuple[int, str]:
    """Embed, and say how it went: ``(exit status, last error line)``."""
    from vaultsync.core.errors import VaultsyncError  # noqa: PLC0415

    try:
        from vaultsync.search.embed import load_embedder  # noqa: PLC0415
        from vaultsync.search.vectors import embed_pending  # noqa: PLC0415

        embed_pending(vault, load_embedder())
    except VaultsyncError as err:
        return err.exit_code, str(err).splitlines()[0] if str(err) else type(err).__name__
    except Exception as err:
        traceback.print_exc()
        return 1, traceback.format_exception_only(err)[-1].strip()
    return 0, ""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

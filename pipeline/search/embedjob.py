"""``python -P -m vaultsync.search.embedjob VAULT``: embed what the semantic index lacks, then exit.

Started detached by ``vectors.start_background`` (a search, a sync or ``watch``), so the
command that started it never waits for the embedding: a job of :mod:`vaultsync.core.background`,
so it never fails silently.  Its outcome is kept in ``search.db.embed.json`` beside the index,
its stderr in ``search.db.embed.log``.  ``job_failure(db)`` reads the outcome;
``index_notice(db, done, total)`` is what ``search`` and ``status`` say of an incomplete
semantic index.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vaultsync.core import background
from vaultsync.core.background import JobFailure, JobFiles
from vaultsync.core.environment import read_environment

__all__ = [
    "ENV_BACKGROUND",
    "JobFailure",
    "background_allowed",
    "index_notice",
    "job_failure",
    "job_files",
    "job_log",
    "main",
    "record_failure",
    "record_started",
]

ENV_BACKGROUND = "VAULTSYNC_EMBED_BACKGROUND"
"""``0`` keeps the job from starting (tests that did not ask for it); anything else allows it."""


def background_allowed() -> bool:
    """Whether the environment lets the job start (the one place ``ENV_BACKGROUND`` is read)."""
    return read_environment().embed_background.strip() != "0"


def job_files(db: Path) -> JobFiles:
    """Where the job for the index ``db`` keeps its outcome and its stderr: beside the index."""
    return JobFiles(status=db.with_name(db.name + ".embed.json"), log=job_log(db))


def job_log(db: Path) -> Path:
    """Where the job's stderr goes: beside the index, inside the vault's control folder."""
    return db.with_name(db.name + ".embed.log")


def record_started(db: Path, pid: int) -> None:
    """Note that the job ``pid`` was started for the index ``db``."""
    background.record_started(job_files(db), pid)


def record_failure(db: Path, exit_code: int, error: str) -> None:
    """Note that the job ended with ``exit_code``, ``error`` being its last error line."""
    background.record_failure(job_files(db), exit_code, error)


def job_failure(db: Path) -> JobFailure | None:
    """How the last job for ``db`` failed, or None (it succeeded, runs, or never started)."""
    return background.job_failure(job_files(db))


def index_notice(db: Path, done: int, total: int) -> str:
    """What a search says of an index with ``done`` of ``total`` notes embedded ("" if whole)."""
    if done >= total:
        return ""
    counted = f"semantic index: {done} of {total} notes embedded"
    failure = job_failure(db)
    if failure is not None:
        return f"{counted}; the background job failed ({failure.describe()})"
    if not background_allowed():
        return f"{counted}; {ENV_BACKGROUND}=0 keeps the rest from being built"
    return f"{counted}, the rest is being built in the background"


def main(argv: list[str]) -> int:
    """Embed the pending notes of the vault ``argv[0]``; the exit status, recorded if not 0."""
    if len(argv) != 1:
        return 2
    from vaultsync.search.paths import index_path  # noqa: PLC0415

    vault = Path(argv[0])
    return background.finish(job_files(index_path(vault)), lambda: _run(vault))


def _run(vault: Path) -> tuple[int, str]:
    """Embed, and say how it went: ``(exit status, last error line)``."""
    from vaultsync.core.errors import VaultsyncError  # noqa: PLC0415

    try:
        from vaultsync.search.embed import load_embedder  # noqa: PLC0415
        from vaultsync.search.vectors import embed_pending  # noqa: PLC0415

        embed_pending(vault, load_embedder())
    except VaultsyncError as err:
        return err.exit_code, str(err).splitlines()[0] if str(err) else type(err).__name__
    return 0, ""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Stage 1, extract: a ChatCLI state directory → ``Records``; reads files, writes nothing.

``read_state`` reads every store that feeds the graph (chatcli-stores.md) and returns frozen,
deterministically sorted records.  A missing store is empty; a malformed one raises
``StoreError`` (one line: file, ``line:column`` or field path, what is wrong); a sealed one
raises ``SealedStoreError``.  ``store_fingerprint`` tells, from ``stat`` alone, whether any of
those files changed since the last run.

Per-item stores (a session, a skill, a context, a daily note, ``board.json``) that cannot be
read are skipped, not fatal (:mod:`.skips`): ``Records.skipped`` lists them and the item's
last good value, from ``last_good``, takes its place.  Every file is opened only if it is a
regular file no larger than ``limit`` bytes.

``memory/links.json`` is not read here (its own module owns it), but it is part of the
fingerprint, so an edited link invalidates the graph like any other store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from vaultsync.core.errors import StoreError
from vaultsync.core.model import Records
from vaultsync.extract import contexts, journal, memory, workspace
from vaultsync.extract.jsonio import DEFAULT_LIMIT, size_limit
from vaultsync.extract.skips import Reading

__all__ = [
    "DEFAULT_LIMIT",
    "LINKS",
    "read_state",
    "read_state_keeping",
    "source_files",
    "store_fingerprint",
]

LINKS = "memory/links.json"


def read_state(
    state_dir: Path, *, last_good: Mapping[str, Any] | None = None, limit: int = DEFAULT_LIMIT
) -> Records:
    """Read every store under ``state_dir`` into ``Records`` (``links`` left empty).

    Raises:
        StoreError: a store that is not a per-item store is malformed (the memory index, the
            tombstones, topics, projects, profile, episodes); the message names the file and
            the place.
        SealedStoreError: a store is encrypted at rest and cannot be read without ChatCLI.
    """
    return read_state_keeping(state_dir, last_good=last_good, limit=limit)[0]


def read_state_keeping(
    state_dir: Path, *, last_good: Mapping[str, Any] | None = None, limit: int = DEFAULT_LIMIT
) -> tuple[Records, dict[str, Any]]:
    """``read_state``, and the good value of every per-item source (the next ``last_good``)."""
    if state_dir.exists() and not state_dir.is_dir():
        raise StoreError(path=str(state_dir), what="not a directory")
    reading = Reading(state_dir, last_good=last_good or {})
    with size_limit(limit):
        records = Records(
            facts=memory.read_facts(state_dir),
            topics=memory.read_topics(state_dir),
            projects=memory.read_projects(state_dir),
            profile=memory.read_profile(state_dir),
            episodes=memory.read_episodes(state_dir),
            journal=journal.read_journal(state_dir, reading),
            sessions=workspace.read_sessions(state_dir, reading),
            skills=workspace.read_skills(state_dir, reading),
            cards=workspace.read_board(state_dir, reading),
            contexts=contexts.read_contexts(state_dir, reading),
            skipped=tuple(sorted(reading.skipped, key=lambda s: s.source)),
        )
    return records, reading.good


def source_files(state_dir: Path) -> Iterator[Path]:
    """Every file whose content can change ``Records`` or the links, existing or not."""
    yield from memory.source_files(state_dir)
    yield state_dir / LINKS
    yield from journal.source_files(state_dir)
    yield from workspace.session_files(state_dir)
    yield from workspace.skill_tree(state_dir)
    yield workspace.board_file(state_dir)
    yield from contexts.source_files(state_dir)


def store_fingerprint(state_dir: Path) -> str:
    """SHA-256 hex over the sorted ``relpath|size|mtime_ns`` lines of every source file.

    Only ``stat`` is called, never ``open``; a file that is edited, added or removed changes
    the result, and nothing else does.
    """
    lines = []
    for path in source_files(state_dir):
        try:
            stat = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            continue
        rel = (
            path.relative_to(state_dir).as_posix() if path.is_relative_to(state_dir) else str(path)
        )
        lines.append(f"{rel}|{stat.st_size}|{stat.st_mtime_ns}")
    lines.sort()
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()

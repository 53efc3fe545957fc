"""Stage 1, extract: a ChatCLI state directory → ``Records``; reads files, writes nothing.

``read_state`` reads every store that feeds the graph (chatcli-stores.md) and returns frozen,
deterministically sorted records.  A missing store is empty; a malformed one raises
``StoreError`` (one line: file, ``line:column`` or field path, what is wrong); a sealed one
raises ``SealedStoreError``.  ``store_fingerprint`` tells, from ``stat`` alone, whether any of
those files changed since the last run.

``memory/links.json`` is not read here (its own module owns it), but it is part of the
fingerprint, so an edited link invalidates the graph like any other store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from vaultsync.core.errors import StoreError
from vaultsync.core.model import Records
from vaultsync.extract import contexts, journal, memory, workspace

__all__ = ["LINKS", "read_state", "source_files", "store_fingerprint"]

LINKS = "memory/links.json"


def read_state(state_dir: Path) -> Records:
    """Read every store under ``state_dir`` into ``Records`` (``links`` left empty).

    Raises:
        StoreError: a store is malformed; the message names the file and the place.
        SealedStoreError: a store is encrypted at rest and cannot be read without ChatCLI.
    """
    if state_dir.exists() and not state_dir.is_dir():
        raise StoreError(path=str(state_dir), what="not a directory")
    return Records(
        facts=memory.read_facts(state_dir),
        topics=memory.read_topics(state_dir),
        projects=memory.read_projects(state_dir),
        profile=memory.read_profile(state_dir),
        episodes=memory.read_episodes(state_dir),
        journal=journal.read_journal(state_dir),
        sessions=workspace.read_sessions(state_dir),
        skills=workspace.read_skills(state_dir),
        cards=workspace.read_board(state_dir),
        contexts=contexts.read_contexts(state_dir),
    )


def source_files(state_dir: Path) -> Iterator[Path]:
    """Every file whose content can change ``Records`` or the links, existing or not."""
    yield from memory.source_files(state_dir)
    yield state_dir / LINKS
    yield from journal.source_files(state_dir)
    yield from workspace.session_files(state_dir)
    yield from workspace.skill_tree(state_dir)
    yield state_dir / workspace.BOARD
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
        rel = path.relative_to(state_dir).as_posix()
        lines.append(f"{rel}|{stat.st_size}|{stat.st_mtime_ns}")
    lines.sort()
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()

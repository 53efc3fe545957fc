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

The folders read besides the state directory's own — ChatCLI's home ``contexts/`` and
``sessions/`` when the state directory came from ``CHATCLI_STATE_DIR``, the
``skills.extra_folders`` scanned before ``<state>/skills`` — come in one frozen
:class:`~vaultsync.core.settings.Sources` (``Caps.sources``), chosen by the CLI; nothing here
reads the environment to find them.

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
from vaultsync.core.settings import Sources
from vaultsync.extract import contexts, journal, memory, workspace
from vaultsync.extract.jsonio import DEFAULT_LIMIT, size_limit
from vaultsync.extract.skips import Reading

__all__ = [
    "DEFAULT_LIMIT",
    "LINKS",
    "outside_fingerprint",
    "read_state",
    "read_state_keeping",
    "source_files",
    "store_fingerprint",
]

LINKS = "memory/links.json"


def read_state(
    state_dir: Path,
    *,
    sources: Sources | None = None,
    last_good: Mapping[str, Any] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> Records:
    """Read every store under ``state_dir`` into ``Records`` (``links`` left empty).

    ``sources`` names the folders read besides the state directory's own (ChatCLI's home
    ``contexts/`` and ``sessions/``, extra skill folders); chosen by the caller, never here.

    Raises:
        StoreError: a store that is not a per-item store is malformed (the memory index, the
            tombstones, topics, projects, profile, episodes); the message names the file and
            the place.
        SealedStoreError: a store is encrypted at rest and cannot be read without ChatCLI.
    """
    return read_state_keeping(state_dir, sources=sources, last_good=last_good, limit=limit)[0]


def read_state_keeping(
    state_dir: Path,
    *,
    sources: Sources | None = None,
    last_good: Mapping[str, Any] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> tuple[Records, dict[str, Any]]:
    """``read_state``, and the good value of every per-item source (the next ``last_good``)."""
    if state_dir.exists() and not state_dir.is_dir():
        raise StoreError(path=str(state_dir), what="not a directory")
    extra = sources or Sources()
    reading = Reading(state_dir, last_good=last_good or {})
    with size_limit(limit):
        records = Records(
            facts=memory.read_facts(state_dir),
            topics=memory.read_topics(state_dir),
            projects=memory.read_projects(state_dir),
            profile=memory.read_profile(state_dir),
            episodes=memory.read_episodes(state_dir),
            journal=journal.read_journal(state_dir, reading),
            sessions=workspace.read_sessions(state_dir, reading, home=extra.home),
            skills=workspace.read_skills(state_dir, reading, extra=extra.skills),
            cards=workspace.read_board(state_dir, reading),
            contexts=contexts.read_contexts(state_dir, reading, home=extra.home),
            skipped=tuple(sorted(reading.skipped, key=lambda s: s.source)),
        )
    return records, reading.good


def source_files(state_dir: Path, sources: Sources | None = None) -> Iterator[Path]:
    """Every file whose content can change ``Records`` or the links, existing or not."""
    extra = sources or Sources()
    yield from memory.source_files(state_dir)
    yield state_dir / LINKS
    yield from journal.source_files(state_dir)
    yield from workspace.session_files(state_dir, extra.home)
    yield from workspace.skill_tree(state_dir, extra.skills)
    yield workspace.board_file(state_dir)
    yield from contexts.source_files(state_dir, extra.home)


def outside_files(state_dir: Path, sources: Sources) -> Iterator[Path]:
    """The source files in ``sources``' folders outside the state directory."""
    for path in source_files(state_dir, sources):
        if not path.is_relative_to(state_dir):
            yield path


def store_fingerprint(state_dir: Path, sources: Sources | None = None) -> str:
    """SHA-256 hex over the sorted ``relpath|size|mtime_ns`` lines of every source file.

    Only ``stat`` is called, never ``open``; a file that is edited, added or removed changes
    the result, and nothing else does.  ``sources``' folders count too (see ``read_state``).
    """
    return _fingerprint(state_dir, source_files(state_dir, sources))


def outside_fingerprint(state_dir: Path, sources: Sources) -> str:
    """``store_fingerprint`` of the files outside the state directory only; ``""`` if none.

    The CLI adds it to the settings' key, so the no-op sync (which fingerprints the state
    directory alone) sees an extra skill folder or ``~/.chatcli/sessions`` change.
    """
    if not sources.outside(state_dir):
        return ""
    return _fingerprint(state_dir, outside_files(state_dir, sources))


def _fingerprint(state_dir: Path, paths: Iterator[Path]) -> str:
    lines = []
    for path in paths:
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

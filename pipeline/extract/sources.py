"""Which files each store reads, and their stat fingerprint; lists folders, opens no file.

The one place that knows where the stores' files are: the readers (:mod:`.memory`,
:mod:`.journal`, :mod:`.workspace`, :mod:`.contexts`) list their files through it, and
``store_fingerprint`` stats the very same list.  It imports no reader and nothing beyond the
standard library and :mod:`vaultsync.core.settings`, so the no-op sync (``vault.quick``) can
fingerprint the stores for the price of the ``stat`` calls alone.

``source_paths`` yields every file whose content can change ``Records`` or the links, existing
or not (a missing fixed-name store is yielded too; the fingerprint skips what ``stat`` does not
find), as path text: the walk makes no ``Path`` object, whose parsing cost the no-op sync more
than the ``stat`` calls (``source_files`` gives the same files as paths).
``store_fingerprint`` is the SHA-256 hex of the sorted ``relpath|size|mtime_ns`` lines of
those files: a file edited, added or removed changes it, nothing else does.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.core.environment import read_environment
from vaultsync.core.settings import Sources
from vaultsync.extract.tenants import shared_root

if TYPE_CHECKING:
    from vaultsync.core.model import JournalPeriod

__all__ = [
    "LINKS",
    "board_file",
    "context_files",
    "context_folders",
    "journal_files",
    "memory_files",
    "outside_fingerprint",
    "session_files",
    "session_folders",
    "skill_folders",
    "skill_tree",
    "source_files",
    "source_paths",
    "store_fingerprint",
    "store_places",
    "visible_entries",
]

# The memory stores (store formats §1-§8); ``memory/links.json`` is read by its own module.
INDEX = "memory/memory_index.json"
TOMBSTONES = "memory/memory_tombstones.json"
TOPICS = "memory/topics.json"
PROJECTS = "memory/projects.json"
PROFILE = "memory/user_profile.json"
EPISODES = "memory/episodes.json"
STORES = (INDEX, TOMBSTONES, TOPICS, PROJECTS, PROFILE, EPISODES)
LINKS = "memory/links.json"

MEMORY = "memory"
WEEKLY = "weekly"
MONTHLY = "monthly"
SESSIONS = "sessions"
SKILLS = "skills"
BOARD = "board.json"
CONTEXTS = "contexts"


def visible_entries(folder: str | Path) -> list[os.DirEntry[str]]:
    """Entries of ``folder`` not starting with ``.``, sorted by name; none if it is missing."""
    try:
        entries = list(os.scandir(folder))
    except OSError:  # missing, or unreadable (the readers report that: ``skips.Reading``)
        return []
    return sorted((e for e in entries if not e.name.startswith(".")), key=lambda e: e.name)


# ---------------------------------------------------------------------------------------------
# Memory stores


def memory_files(state_dir: Path) -> Iterator[str]:
    """Every memory store file (whether or not it exists), as path text."""
    for rel in STORES:
        yield os.fspath(state_dir / rel)


# ---------------------------------------------------------------------------------------------
# Journal: memory/YYYYMM/YYYYMMDD.md, memory/weekly/YYYY-Www.md, memory/monthly/YYYY-MM.md


def _is_number(text: str, size: int) -> bool:
    return len(text) == size and text.isascii() and text.isdigit()


def _month_label(year: str, month: str) -> str | None:
    """``2026-07`` for a real month, else ``None``."""
    if _is_number(year, 4) and _is_number(month, 2) and 1 <= int(month) <= 12:
        return f"{year}-{month}"
    return None


def daily_label(folder: str, stem: str) -> str | None:
    """``2026-07-03`` for ``202607/20260703``; ``None`` when the names are not such a date."""
    if not (_is_number(folder, 6) and _is_number(stem, 8) and stem.startswith(folder)):
        return None
    try:
        day = date(int(stem[:4]), int(stem[4:6]), int(stem[6:]))
    except ValueError:
        return None
    return day.isoformat()


def weekly_label(stem: str) -> str | None:
    """``2026-W27`` for a real ISO week, else ``None``."""
    year, sep, week = stem.partition("-W")
    if not (sep and _is_number(year, 4) and _is_number(week, 2)):
        return None
    try:
        date.fromisocalendar(int(year), int(week), 1)
    except ValueError:
        return None
    return stem


def monthly_label(stem: str) -> str | None:
    """``2026-06`` for a real month, else ``None``."""
    year, sep, month = stem.partition("-")
    return _month_label(year, month) if sep else None


def is_journal_folder(name: str) -> bool:
    """Whether a folder of ``memory/`` with this name holds journal notes (by name alone)."""
    return name in (WEEKLY, MONTHLY) or _is_number(name, 6)


def _markdown(folder: str) -> Iterator[tuple[str, str]]:
    """``(stem, path text)`` of each visible ``*.md`` file directly in ``folder``."""
    try:
        entries = list(os.scandir(folder))
    except OSError:  # missing or unreadable (an unreadable month keeps nothing: see README)
        return
    for entry in entries:
        name = entry.name
        if name.endswith(".md") and not name.startswith(".") and not entry.is_dir():
            yield name[:-3], entry.path


def journal_files(state_dir: Path) -> Iterator[tuple[JournalPeriod, str, str]]:
    """``(period, label, path text)`` of every journal note, in no particular order."""
    memory = state_dir / MEMORY
    try:
        entries = list(os.scandir(memory))
    except OSError:
        return
    for entry in entries:
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        if entry.name == WEEKLY:
            for stem, path in _markdown(entry.path):
                if label := weekly_label(stem):
                    yield "weekly", label, path
        elif entry.name == MONTHLY:
            for stem, path in _markdown(entry.path):
                if label := monthly_label(stem):
                    yield "monthly", label, path
        elif _is_number(entry.name, 6):
            for stem, path in _markdown(entry.path):
                if label := daily_label(entry.name, stem):
                    yield "daily", label, path


# ---------------------------------------------------------------------------------------------
# Sessions, skills, board


def is_session(entry: os.DirEntry[str]) -> bool:
    """A ``*.json`` entry that is not a folder (stray ``*.tmp`` files are not sessions)."""
    return entry.name.endswith(".json") and not entry.is_dir()


def session_folders(state_dir: Path) -> tuple[Path, ...]:
    """``<state>/sessions``: the one folder sessions are read from (no second home)."""
    return (state_dir / SESSIONS,)


def session_files(state_dir: Path) -> Iterator[str]:
    """Every ``sessions/*.json`` file as path text (stray ``*.tmp`` files are not sessions)."""
    for folder in session_folders(state_dir):
        for entry in visible_entries(folder):
            if is_session(entry):
                yield entry.path


def skill_folders(state_dir: Path, extra: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """The skill folders in scan order: ``extra`` (the setting), then ``<state>/skills``.

    A tenant's skills are the state root's, as ChatCLI reads them (:mod:`.tenants`).
    """
    return (*extra, shared_root(state_dir) / SKILLS)


def skill_tree(state_dir: Path, extra: tuple[Path, ...] = ()) -> Iterator[str]:
    """Every visible file under the skill folders, recursively, as path text (fingerprint)."""
    stack: list[str | Path] = list(skill_folders(state_dir, extra))
    while stack:
        for entry in visible_entries(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_file():
                yield entry.path


def board_file(state_dir: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where ChatCLI keeps the board: ``$CHATCLI_BOARD_PATH``, else ``<state>/board.json``.

    A tenant's board is the state root's, as ChatCLI reads it (:mod:`.tenants`).
    """
    chosen = read_environment(environ).board_path.strip()
    return Path(chosen).expanduser() if chosen else shared_root(state_dir) / BOARD


# ---------------------------------------------------------------------------------------------
# Contexts


def is_context(entry: os.DirEntry[str]) -> bool:
    """A ``*.json`` entry that is not a folder (``*.tmp`` and ``*.corrupt`` files are not)."""
    return entry.name.endswith(".json") and not entry.is_dir()


def context_folders(state_dir: Path) -> tuple[Path, ...]:
    """``<state>/contexts``: the one folder contexts are read from (no second home)."""
    return (state_dir / CONTEXTS,)


def context_files(state_dir: Path) -> Iterator[str]:
    """Every ``contexts/*.json`` file as path text (``*.tmp`` and ``*.corrupt`` are skipped)."""
    for folder in context_folders(state_dir):
        for entry in visible_entries(folder):
            if is_context(entry):
                yield entry.path


# ---------------------------------------------------------------------------------------------
# All of them, and their fingerprint


def source_paths(state_dir: Path, sources: Sources | None = None) -> Iterator[str]:
    """Every file whose content can change ``Records`` or the links, existing or not (text)."""
    extra = sources or Sources()
    yield from memory_files(state_dir)
    yield os.fspath(state_dir / LINKS)
    for _, _, path in journal_files(state_dir):
        yield path
    yield from session_files(state_dir)
    yield from skill_tree(state_dir, extra.skills)
    yield os.fspath(board_file(state_dir))
    yield from context_files(state_dir)


def source_files(state_dir: Path, sources: Sources | None = None) -> Iterator[Path]:
    """The files of :func:`source_paths`, as ``Path`` objects."""
    return map(Path, source_paths(state_dir, sources))


def store_places(state_dir: Path, sources: Sources | None = None) -> tuple[tuple[Path, ...], Path]:
    """The folders every source file lies in or under, and the board file (which may not).

    What a change to the stores can touch, for a watcher's file events: a file under one of
    these folders (skills nest) or the board; :func:`source_files` says which files count.
    """
    extra = sources or Sources()
    folders = (
        state_dir / MEMORY,
        *session_folders(state_dir),
        *skill_folders(state_dir, extra.skills),
        *context_folders(state_dir),
    )
    return folders, board_file(state_dir)


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
    return _fingerprint(state_dir, source_paths(state_dir, sources))


def outside_fingerprint(state_dir: Path, sources: Sources) -> str:
    """``store_fingerprint`` of the files outside the state directory only; ``""`` if none.

    The CLI adds it to the settings' key, so the no-op sync (which fingerprints the state
    directory alone) sees an extra skill folder change.
    """
    if not sources.outside(state_dir):
        return ""
    return _fingerprint(state_dir, map(os.fspath, outside_files(state_dir, sources)))


# ---------------------------------------------------------------------------------------------
# ChatCLI's at-rest keys (here, not in ``.atrest``: the no-op sync must not import cryptography)


def keys_stamp(keys: tuple[str, ...]) -> str:
    """How many at-rest keys are set, never what they are: a key added makes the next sync read.

    Part of the no-op sync's inputs, so stores a missing key left closed are read once it is set.
    """
    count = len(keys)
    return f"sealing-keys={count}" if count else ""


def _fingerprint(state_dir: Path, paths: Iterator[str]) -> str:
    # The paths are the state directory's own joined with names, so "relative to it" is a
    # prefix of their text: pathlib's relative_to took half the no-op's fingerprint time.
    root = os.fspath(state_dir)
    prefix = "" if root == "." else root if root.endswith("/") else f"{root}/"
    lines = []
    for text in paths:
        try:
            stat = os.stat(text)  # noqa: PTH116 - a Path per file cost more than the stat
        except (FileNotFoundError, NotADirectoryError):
            continue
        rel = text[len(prefix) :] if prefix and text.startswith(prefix) else text
        lines.append(f"{rel}|{stat.st_size}|{stat.st_mtime_ns}")
    lines.sort()
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()

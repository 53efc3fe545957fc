r"""State dir → daily notes and weekly/monthly digests; reads files.

Daily notes live in ``memory/YYYYMM/YYYYMMDD.md``, digests in ``memory/weekly/YYYY-Www.md`` and
``memory/monthly/YYYY-MM.md`` (chatcli-stores.md §9).  A file is a journal note only when its
name is a real date, ISO week or month (and a daily note sits in its own month's folder);
anything else in those folders is ignored, as are names starting with ``.``.  The text is kept
as written except that ``\r\n`` and ``\r`` line endings become ``\n``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from vaultsync.core.model import JournalNote, JournalPeriod
from vaultsync.extract.jsonio import read_text
from vaultsync.extract.skips import Reading

MEMORY = "memory"
WEEKLY = "weekly"
MONTHLY = "monthly"


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


def _markdown(folder: Path) -> Iterator[tuple[str, Path]]:
    """``(stem, path)`` of each visible ``*.md`` file directly in ``folder``."""
    try:
        entries = list(os.scandir(folder))
    except OSError:  # missing or unreadable (an unreadable month keeps nothing: see README)
        return
    for entry in entries:
        name = entry.name
        if name.endswith(".md") and not name.startswith(".") and not entry.is_dir():
            yield name[:-3], Path(entry.path)


def journal_files(state_dir: Path) -> Iterator[tuple[JournalPeriod, str, Path]]:
    """``(period, label, path)`` of every journal note, in no particular order."""
    memory = state_dir / MEMORY
    try:
        entries = list(os.scandir(memory))
    except OSError:
        return
    for entry in entries:
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        if entry.name == WEEKLY:
            for stem, path in _markdown(Path(entry.path)):
                if label := weekly_label(stem):
                    yield "weekly", label, path
        elif entry.name == MONTHLY:
            for stem, path in _markdown(Path(entry.path)):
                if label := monthly_label(stem):
                    yield "monthly", label, path
        elif _is_number(entry.name, 6):
            for stem, path in _markdown(Path(entry.path)):
                if label := daily_label(entry.name, stem):
                    yield "daily", label, path


def source_files(state_dir: Path) -> Iterator[Path]:
    """Every file this module reads."""
    for _, _, path in journal_files(state_dir):
        yield path


def read_journal(state_dir: Path, reading: Reading | None = None) -> tuple[JournalNote, ...]:
    """Daily notes and digests sorted by (period, label).

    A note that cannot be read (not UTF-8, not a regular file, over the size limit) is skipped
    through ``reading``, which answers its last good text.
    """
    reading = reading or Reading(state_dir)
    notes = [
        note for folder in _unreadable(state_dir, reading) for note in reading.kept_under(folder)
    ]
    for period, label, path in journal_files(state_dir):

        def read(p: Path, period: JournalPeriod = period, label: str = label) -> JournalNote | None:
            return _note(p, period, label, state_dir)

        note = reading.item(path, read)
        if note is not None:
            notes.append(note)
    notes.sort(key=lambda n: (n.period, n.label))
    return tuple(notes)


def _unreadable(state_dir: Path, reading: Reading) -> Iterator[Path]:
    """The journal folders that cannot be listed (each skipped: its notes are kept)."""
    for entry in reading.entries(state_dir / MEMORY) or ():
        name = entry.name
        journal_folder = name in (WEEKLY, MONTHLY) or _is_number(name, 6)
        if journal_folder and entry.is_dir() and reading.entries(Path(entry.path)) is None:
            yield Path(entry.path)


def _note(path: Path, period: JournalPeriod, label: str, state_dir: Path) -> JournalNote | None:
    text = read_text(path)
    if text is None:  # removed while we were listing
        return None
    return JournalNote(
        period=period,
        label=label,
        text=text.replace("\r\n", "\n").replace("\r", "\n"),
        source_path=path.relative_to(state_dir).as_posix(),
    )

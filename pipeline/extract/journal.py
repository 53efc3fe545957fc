r"""State dir → daily notes and weekly/monthly digests; reads files.

Daily notes live in ``memory/YYYYMM/YYYYMMDD.md``, digests in ``memory/weekly/YYYY-Www.md`` and
``memory/monthly/YYYY-MM.md`` (store formats §9).  A file is a journal note only when its
name is a real date, ISO week or month (and a daily note sits in its own month's folder);
anything else in those folders is ignored, as are names starting with ``.``.  The text is kept
as written except that ``\r\n`` and ``\r`` line endings become ``\n``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from vaultsync.core.model import JournalNote, JournalPeriod
from vaultsync.extract.jsonio import read_text
from vaultsync.extract.skips import Reading
from vaultsync.extract.sources import MEMORY, is_journal_folder, journal_files


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

        note = reading.item(Path(path), read)
        if note is not None:
            notes.append(note)
    notes.sort(key=lambda n: (n.period, n.label))
    return tuple(notes)


def _unreadable(state_dir: Path, reading: Reading) -> Iterator[Path]:
    """The journal folders that cannot be listed (each skipped: its notes are kept)."""
    for entry in reading.entries(state_dir / MEMORY) or ():
        name = entry.name
        journal_folder = is_journal_folder(name)
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

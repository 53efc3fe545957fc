"""State dir → sessions, skills and board cards; reads files.

* **Sessions** (``sessions/<name>.json``, store formats §10): the name is the file name
  without ``.json``, the title the v2 ``title`` (legacy bare arrays have none).  The file is
  parsed to validate it and find the title; no message is kept.  **The file's mtime is never
  read**: git does not keep it, so a clone (every mtime "now") would render another vault.  A
  saved session holds no time either (ChatCLI v1.188's ``SessionData`` is ``version``,
  ``title`` and the histories; a ``Message`` has no time), so the only time is the one ChatCLI
  writes into an autosave's name, ``autosave-YYYYMMDD-HHMMSS`` (its local wall clock,
  ``cli_session_autosave.go``): that is ``Session.saved``, read later in the vault's
  ``render.timezone``.  Every other session (named by the user, ``mcp-<id>`` mirrors) has no
  time.  Only ``<state>/sessions`` is read.
* **Skills** (§11): ``skills/<name>/SKILL.md`` and legacy ``skills/<name>.md``; entries whose
  name starts with ``.`` are skipped, and so is a folder without ``SKILL.md``.  Front matter is
  split and read by :mod:`vaultsync.core.notes` (``---`` … ``---`` or ``...``; YAML 1.2 by
  ruamel) as leniently as ChatCLI's loader (Go's yaml.v3 into its ``Skill`` struct, §18):

  - keys are exact (``Name`` is not ``name``), and every scalar is the text written, as Go
    fills a string field (``1.10`` stays ``1.10``, a date stays as written, ``null`` is empty);
  - ``triggers`` and ``tags`` take a YAML list or a comma-separated string; a mapping there
    becomes empty;
  - a skill ChatCLI would not load is skipped (ChatCLI logs it at debug level; here it is one
    ``Records.skipped`` entry, so the user is told once): invalid YAML, a key written twice,
    front matter that is not a mapping, a list or mapping where text belongs, a list item that
    is not text;
  - a file without front matter is a skill named after its folder or file (so is one whose
    opening ``---`` is never closed, which ChatCLI reads whole as YAML and usually skips).

  Skill folders are scanned in ChatCLI's order: the ``skills.extra_folders`` setting's
  folders first (a project's ``.agent/skills``, say), in order, then ``<state>/skills``.  When
  two skills claim one name, the first folder wins, and in one folder the entry that sorts
  first by file name, as ChatCLI's scan keeps the first one it reads.
* **Board** (``board.json``, §12): columns go through ChatCLI's alias table.  An empty column is
  ``backlog`` (where a new card starts); an unknown one is kept, trimmed and lowercased.
  The board is where ChatCLI keeps it: ``$CHATCLI_BOARD_PATH`` when set (board.go), else
  ``<state>/board.json``.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path

from vaultsync.core.model import Card, CardMove, CardNote, Session, Skill
from vaultsync.core.notes import load_yaml, split_front_matter
from vaultsync.extract.jsonio import (
    JSONObject,
    as_object,
    fail,
    get_id,
    get_int,
    get_str,
    get_time,
    join,
    load_json,
    objects,
    read_text,
    time_key,
    unique_sorted,
    wrong,
)
from vaultsync.extract.skips import Reading
from vaultsync.extract.sources import board_file, is_session, session_folders, skill_folders

SKILL_FILE = "SKILL.md"

COLUMNS = ("backlog", "doing", "review", "blocked", "done")
COLUMN_ALIASES = {
    **{column: column for column in COLUMNS},
    "todo": "backlog",
    "pending": "backlog",
    "in_progress": "doing",
    "inprogress": "doing",
    "wip": "doing",
    "dev": "doing",
    "develop": "doing",
    "reviewing": "review",
    "qa": "review",
    "waiting": "blocked",
    "parked": "blocked",
    "completed": "done",
    "delivered": "done",
    "closed": "done",
}
"""Every column spelling ChatCLI accepts (lowercased, ``-`` and spaces as ``_``) → its column."""

_DIGITS = re.compile(r"(\d+)")
_AUTOSAVE = re.compile(r"autosave-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})")
"""ChatCLI's autosave name: ``autosave-`` + Go's ``20060102-150405`` of its local time."""


# ---------------------------------------------------------------------------------------------
# Sessions


def read_sessions(state_dir: Path, reading: Reading | None = None) -> tuple[Session, ...]:
    """Sessions sorted by name: name, title and the time in an autosave name, never the messages.

    A session
    that cannot be read (torn, not JSON, too deep, not a regular file) is skipped through
    ``reading``, which answers its last good record.
    """
    reading = reading or Reading(state_dir)
    found: dict[str, Session] = {}
    for folder in session_folders(state_dir):
        for session in _folder_sessions(folder, reading):
            found.setdefault(session.name, session)
    return tuple(found[name] for name in sorted(found))


def _folder_sessions(folder: Path, reading: Reading) -> list[Session]:
    """The sessions of one folder, by name (its last good ones when it cannot be listed)."""
    entries = reading.entries(folder)
    if entries is None:
        return sorted(reading.kept_under(folder), key=lambda s: s.name)
    sessions = []
    for entry in entries:
        if is_session(entry):
            session = reading.item(Path(entry.path), _session)
            if session is not None:
                sessions.append(session)
    return sessions


def saved_time(name: str) -> datetime | None:
    """The wall-clock time in an ``autosave-YYYYMMDD-HHMMSS`` name (naive); else ``None``."""
    match = _AUTOSAVE.fullmatch(name)
    if match is None:
        return None
    try:
        year, month, day, hour, minute, second = map(int, match.groups())
        return datetime(year, month, day, hour, minute, second)  # naive: a wall clock
    except ValueError:  # not a real date or time
        return None


SESSION_VERSION = 2
"""The newest saved-session ``version`` read; ChatCLI itself refuses a newer one."""


def _known_version(raw: JSONObject, path: Path) -> None:
    """Refuse a session newer than this reader: skipped like any bad item, its note kept."""
    version = get_int(raw, "version", path, "")
    if version > SESSION_VERSION:
        fail(path, "version", f"session version {version} is newer than {SESSION_VERSION}")


def _session(path: Path) -> Session | None:
    if not os.path.lexists(path):  # removed while we were listing
        return None
    raw = load_json(path)
    if isinstance(raw, dict):
        _known_version(raw, path)
        title = get_str(raw, "title", path, "")
    elif raw is None or isinstance(raw, list):
        title = ""
    else:
        wrong(path, "", "an object (v2 session) or an array (legacy session)", raw)
    name = path.name[: -len(".json")]
    return Session(name=name, title=title, saved=saved_time(name))


# ---------------------------------------------------------------------------------------------
# Skills


def read_skills(
    state_dir: Path, reading: Reading | None = None, *, extra: tuple[Path, ...] = ()
) -> tuple[Skill, ...]:
    """Skills sorted by name; on a name clash the first folder, then the first file, wins.

    The ``extra`` folders are scanned first, in order, then ``<state>/skills`` (ChatCLI scans
    a project's ``.agent/skills`` before ``~/.chatcli/skills``).  A skill ChatCLI would not
    load (see the module doc), or whose file or folder cannot be read, is skipped through
    ``reading``, which answers its last good record.
    """
    reading = reading or Reading(state_dir)
    skills: dict[str, Skill] = {}
    for folder in skill_folders(state_dir, extra):
        for skill in _skill_items(folder, reading):
            skills.setdefault(skill.name, skill)
    return tuple(skills[name] for name in sorted(skills))


def _skill_items(folder: Path, reading: Reading) -> Iterator[Skill]:
    """Every skill of one skill folder read (or kept), in file-name order."""
    entries = reading.entries(folder)
    if entries is None:
        yield from reading.kept_under(folder)
        return
    for entry in entries:
        path = Path(entry.path)
        if entry.is_dir():
            if reading.entries(path) is None:
                yield from reading.kept_under(path)
                continue
            path = path / SKILL_FILE
            if not os.path.lexists(path):
                continue
        elif not entry.name.endswith(".md"):
            continue
        default_name = entry.name[: -len(".md")] if entry.name.endswith(".md") else entry.name
        skill = reading.item(
            path, functools.partial(_read_skill, name=default_name, root=folder.parent)
        )
        if skill is not None:
            yield skill


def _read_skill(path: Path, *, name: str, root: Path) -> Skill | None:
    text = read_text(path)
    if text is None:  # removed while we were listing
        return None
    block = split_front_matter(text)
    instructions = text[block.body_start :] if block is not None else text
    return _skill(front_matter(text, path), name, path, root, instructions=instructions)


def front_matter(text: str, path: Path | str = "SKILL.md") -> Mapping[object, object]:
    """A ``SKILL.md``'s front-matter mapping (``{}`` when absent).

    Raises:
        StoreError: ChatCLI would skip the skill (invalid YAML, a repeated key, not a mapping).
    """
    block = split_front_matter(text)
    if block is None:
        return {}
    data, problem = load_yaml(
        block.yaml, first_line=block.first_line, text_scalars=True, unique_keys=True
    )
    if problem is not None:
        fail(
            path,
            f"{problem.line}:{problem.column}",
            f"invalid YAML front matter: {problem.message}",
        )
    if data is None:
        return {}
    if not isinstance(data, dict):
        fail(path, f"{block.first_line}:1", "front matter is not a mapping")
    return data


class _NotText(Exception):
    """A value Go's yaml.v3 cannot put in a string field: ChatCLI skips the skill."""


def _text(value: object) -> str:
    """A scalar as text (every scalar already is: read with ``text_scalars``); null is ``""``."""
    if value is None:
        return ""
    if isinstance(value, list | dict):
        raise _NotText
    return str(value).strip()


def _text_list(value: object) -> tuple[str, ...]:
    """ChatCLI's ``StringList``: a YAML list, or a comma-separated string; a mapping is empty."""
    if isinstance(value, dict):
        return ()
    if isinstance(value, list):
        texts = [_text(item) for item in value]
    else:
        texts = [part.strip() for part in _text(value).split(",")]
    return tuple(text for text in texts if text)


def _skill(
    meta: Mapping[object, object], default_name: str, path: Path, root: Path, *, instructions: str
) -> Skill:
    field_name = "name"
    try:
        name = _text(meta.get("name")) or default_name
        field_name = "description"
        description = _text(meta.get("description"))
        field_name = "triggers"
        triggers = _text_list(meta.get("triggers"))
        field_name = "tags"
        tags = _text_list(meta.get("tags"))
        field_name = "category"
        category = _text(meta.get("category"))
    except _NotText:
        fail(path, field_name, "a list or mapping where ChatCLI expects text")
    return Skill(
        name=name,
        description=description,
        triggers=triggers,
        tags=tags,
        category=category,
        source_path=path.relative_to(root).as_posix(),
        instructions=instructions,
    )


# ---------------------------------------------------------------------------------------------
# Board


def normalize_column(column: str) -> str:
    """ChatCLI's column for an alias; ``backlog`` when empty; else trimmed and lowercased."""
    written = column.strip().lower()
    if not written:
        return "backlog"
    return COLUMN_ALIASES.get(written.replace("-", "_").replace(" ", "_"), written)


def card_sort_key(card_id: str) -> tuple[tuple[str | int, ...], str]:
    """Numbers inside an id compare as numbers: ``card-2`` sorts before ``card-10``."""
    parts = _DIGITS.split(card_id)
    return tuple(int(p) if i % 2 else p for i, p in enumerate(parts)), card_id


def _history(card: JSONObject, path: Path, at: str) -> tuple[CardMove, ...]:
    """A card's column moves ``[{from, to, by, at}]`` in the store's order."""
    return tuple(
        CardMove(
            from_column=get_str(move, "from", path, move_at),
            to_column=get_str(move, "to", path, move_at),
            by=get_str(move, "by", path, move_at),
            at=get_time(move, "at", path, move_at),
        )
        for move_at, move in objects(card.get("history"), path, join(at, "history"))
    )


def read_board(state_dir: Path, reading: Reading | None = None) -> tuple[Card, ...]:
    """Cards of the work board sorted by id (numbers compared as numbers).

    A board that cannot be read is skipped through ``reading`` (ChatCLI drops its cards), which
    answers the last good cards.
    """
    reading = reading or Reading(state_dir)
    return reading.item(board_file(state_dir), _board) or ()


def _board(path: Path) -> tuple[Card, ...]:
    board = as_object(load_json(path), path, "")
    cards = []
    for at, obj in objects(board.get("cards"), path, "cards"):
        ident = get_id(obj, path, at)
        if not ident:
            fail(path, join(at, "id"), "missing")
        notes = tuple(
            CardNote(
                author=get_str(note, "author", path, note_at),
                text=get_str(note, "text", path, note_at),
                at=get_time(note, "at", path, note_at),
            )
            for note_at, note in objects(obj.get("notes"), path, join(at, "notes"))
        )
        cards.append(
            Card(
                id=ident,
                title=get_str(obj, "title", path, at),
                column=normalize_column(get_str(obj, "column", path, at)),
                description=get_str(obj, "description", path, at),
                assignee=get_str(obj, "assignee", path, at),
                notes=notes,
                history=_history(obj, path, at),
                created_at=get_time(obj, "created_at", path, at),
                updated_at=get_time(obj, "updated_at", path, at),
            )
        )
    return unique_sorted(
        cards,
        key=lambda c: c.id,
        sort_key=lambda c: card_sort_key(c.id),
        rank=lambda c: time_key(c.updated_at),
    )

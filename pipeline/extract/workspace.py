"""State dir → sessions, skills and board cards; reads files.

* **Sessions** (``sessions/<name>.json``, chatcli-stores.md §10): the name is the file name
  without ``.json``, the title the v2 ``title`` (legacy bare arrays have none), the time the
  file's mtime.  The file is parsed to validate it and find the title; no message is kept.
* **Skills** (§11): ``skills/<name>/SKILL.md`` and legacy ``skills/<name>.md``; entries whose
  name starts with ``.`` are skipped, and so is a folder without ``SKILL.md``.  Front matter is
  YAML between ``---`` lines; a file without it is a skill named after its folder or file.
  YAML scalars (numbers, dates, booleans) become text.  When two skills claim one name, the
  entry that sorts first by file name wins, as ChatCLI's scan keeps the first one it reads.
* **Board** (``board.json``, §12): columns go through ChatCLI's alias table.  An empty column is
  ``backlog`` (where a new card starts); an unknown one is kept, trimmed and lowercased.
  ``$CHATCLI_BOARD_PATH`` is not consulted: only the state directory is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from vaultsync.core.model import Card, CardNote, Session, Skill
from vaultsync.extract.jsonio import (
    as_object,
    describe,
    fail,
    get_str,
    get_time,
    join,
    load_json,
    mtime,
    objects,
    read_text,
    time_key,
    unique_sorted,
    visible_entries,
    wrong,
)

SESSIONS = "sessions"
SKILLS = "skills"
SKILL_FILE = "SKILL.md"
BOARD = "board.json"

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


# ---------------------------------------------------------------------------------------------
# Sessions


def session_files(state_dir: Path) -> Iterator[Path]:
    """Every ``sessions/*.json`` file (stray ``*.tmp`` files are not sessions)."""
    for entry in visible_entries(state_dir / SESSIONS):
        if entry.name.endswith(".json") and entry.is_file():
            yield Path(entry.path)


def read_sessions(state_dir: Path) -> tuple[Session, ...]:
    """Sessions sorted by name: name, title and modification time, never the messages."""
    sessions = []
    for path in session_files(state_dir):
        try:
            modified = mtime(path)
        except FileNotFoundError:  # removed while we were listing
            continue
        raw = load_json(path)
        if isinstance(raw, dict):
            title = get_str(raw, "title", path, "")
        elif raw is None or isinstance(raw, list):
            title = ""
        else:
            wrong(path, "", "an object (v2 session) or an array (legacy session)", raw)
        sessions.append(Session(name=path.name[: -len(".json")], title=title, modified=modified))
    return tuple(sorted(sessions, key=lambda s: s.name))


# ---------------------------------------------------------------------------------------------
# Skills


def skill_files(state_dir: Path) -> Iterator[tuple[str, Path]]:
    """``(default name, path)`` of every skill file, in file-name order."""
    for entry in visible_entries(state_dir / SKILLS):
        if entry.is_dir():
            skill = Path(entry.path) / SKILL_FILE
            if skill.is_file():
                yield entry.name, skill
        elif entry.name.endswith(".md") and entry.is_file():
            yield entry.name[: -len(".md")], Path(entry.path)


def skill_tree(state_dir: Path) -> Iterator[Path]:
    """Every visible file under the skills folder, recursively (for the fingerprint)."""
    stack = [state_dir / SKILLS]
    while stack:
        for entry in visible_entries(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file():
                yield Path(entry.path)


def read_skills(state_dir: Path) -> tuple[Skill, ...]:
    """Skills sorted by name; on a name clash the first file (by file name) wins."""
    skills: dict[str, Skill] = {}
    for default_name, path in skill_files(state_dir):
        text = read_text(path)
        if text is None:  # removed while we were listing
            continue
        skill = _skill(front_matter(text, path), default_name, path, state_dir)
        skills.setdefault(skill.name, skill)
    return tuple(skills[name] for name in sorted(skills))


def front_matter(text: str, path: Path) -> dict[str, Any]:
    """The YAML mapping between the opening and closing ``---`` lines; ``{}`` when absent."""
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != "---":
        return {}
    end = next((i for i, line in enumerate(lines) if i and line.rstrip() in {"---", "..."}), 0)
    if not end:
        return {}
    try:
        data = YAML(typ="safe", pure=True).load("\n".join(lines[1:end]))
    except MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{mark.line + 2}:{mark.column + 1}" if mark else ""
        fail(path, where, f"invalid YAML front matter: {err.problem or err.context}")
    except YAMLError as err:
        fail(path, "", f"invalid YAML front matter: {err}")
    if data is None:
        return {}
    if not isinstance(data, dict):
        fail(path, "front matter", f"expected a mapping, got {_yaml_kind(data)}")
    return data


def _yaml_kind(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return describe(value)


def _yaml_text(value: object, path: Path, where: str) -> str:
    """A YAML scalar as text: ``1.5`` → ``"1.5"``, a date → ISO, ``null`` → ``""``."""
    if isinstance(value, list | dict):
        fail(path, where, f"expected a string, got {_yaml_kind(value)}")
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    return str(value).strip()


def _yaml_list(value: object, path: Path, where: str) -> tuple[str, ...]:
    """A YAML list or a comma-separated string, trimmed, empty items dropped."""
    if isinstance(value, list):
        texts = (_yaml_text(item, path, f"{where}[{i}]") for i, item in enumerate(value))
    elif isinstance(value, dict):
        fail(path, where, "expected a list or a comma-separated string, got a mapping")
    else:
        texts = (part.strip() for part in _yaml_text(value, path, where).split(","))
    return tuple(text for text in texts if text)


def _skill(meta: dict[str, Any], default_name: str, path: Path, state_dir: Path) -> Skill:
    return Skill(
        name=_yaml_text(meta.get("name"), path, "name") or default_name,
        description=_yaml_text(meta.get("description"), path, "description"),
        triggers=_yaml_list(meta.get("triggers"), path, "triggers"),
        tags=_yaml_list(meta.get("tags"), path, "tags"),
        category=_yaml_text(meta.get("category"), path, "category"),
        source_path=path.relative_to(state_dir).as_posix(),
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


def read_board(state_dir: Path) -> tuple[Card, ...]:
    """Cards of the work board sorted by id (numbers compared as numbers)."""
    path = state_dir / BOARD
    board = as_object(load_json(path), path, "")
    cards = []
    for at, obj in objects(board.get("cards"), path, "cards"):
        ident = get_str(obj, "id", path, at)
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

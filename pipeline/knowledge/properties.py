"""A note's front matter (Obsidian's "properties"): split it off and read it; pure, never raises.

Contract: ``read_properties(text)`` returns the front-matter mapping (keys case folded), where
the body starts, and a problem message when the block is there but unusable.

* The block opens with a ``---`` first line (a BOM before it is ignored) and closes with the
  next ``---`` line; without a closing line there is no front matter and the whole text is the
  body, as in Obsidian.
* YAML is read with PyYAML's safe loader (its C version when built, about 30 µs for a note's
  block; ruamel.yaml's pure-Python safe loader takes about 0.5 ms, too slow for a 10,000-note
  vault read in seconds).  Safe loading runs no code; aliases are kept shared, not expanded.
* **Fast path.** A block written exactly as :mod:`~vaultsync.render.yamlfm` writes it — plain keys,
  JSON-compatible double-quoted strings, ``[]``, block lists of quoted strings, integers,
  ``true``/``false`` — is read line by line without the YAML loader (the engine's notes are
  most of a synced vault).  It accepts nothing the loader would read differently (property
  tested); anything else goes to the loader.
* Bad YAML, or a block that is a list or a scalar, gives an empty mapping and a problem; the
  block still is not body text (its lines are neither links nor inline fields).
* Keys are case folded (``Title`` and ``title`` are one property); the first spelling wins.
* ``property_strings(value)`` flattens a value into its strings, bounded against YAML alias
  bombs, and turns the nested list that an unquoted ``[[X]]`` becomes in YAML back into the text
  ``[[X]]``, so ``supports: [[X]]`` counts like ``supports: "[[X]]"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]  # PyYAML ships no stubs here

__all__ = ["Properties", "property_strings", "property_text", "read_properties"]

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = re.compile(r"---[ \t]*\n")
_CLOSE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_MAX_STRINGS = 1000
_MAX_DEPTH = 6
_EMPTY: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Properties:
    """The front matter of one note and where its body starts."""

    values: Mapping[str, object] = field(default_factory=lambda: _EMPTY)
    """Case-folded key → value as YAML read it."""
    body_start: int = 0
    """Offset of the body in the text (after the closing ``---`` line)."""
    body_line: int = 1
    """1-based line number of the body's first line."""
    problem: str | None = None
    """Why a present block was not read (bad YAML, not a mapping), else None."""


def read_properties(text: str) -> Properties:
    """Split and read the front matter of ``text`` (LF line endings).

    Args:
        text: a whole note.

    Returns:
        The properties; an empty mapping when there is no block or it is unusable.
    """
    offset = 1 if text.startswith("\ufeff") else 0
    opening = _OPEN.match(text, offset)
    if opening is None:
        return Properties(body_start=offset)
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        return Properties(body_start=offset)
    body_start = closing.end() + 1 if closing.end() < len(text) else closing.end()
    body_line = text.count("\n", 0, body_start) + 1
    values, problem = _load(text[opening.end() : closing.start()])
    return Properties(values=values, body_start=body_start, body_line=body_line, problem=problem)


_QUICK_LINE = re.compile(
    r'(?:(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?: (?P<value>[^\n]*))?|[ ]{0,4}- (?P<item>"[^\n]*"))'
)
_QUICK_INT = re.compile(r"0|-?[1-9][0-9]{0,17}")
# Characters YAML refuses or reads as line breaks (NEL, LS, PS) where JSON keeps them.
_NOT_QUICK = re.compile(
    "[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
_YAML_WORDS = frozenset(["y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"])
"""Plain scalars YAML 1.1 reads as booleans or null (keys too): left to the loader."""


def _quoted(raw: str) -> str | None:
    """A double-quoted scalar read as JSON; None when JSON cannot read it alone."""
    if "\\" not in raw:
        inner = raw[1:-1]
        return inner if len(raw) > 1 and raw[-1] == '"' and '"' not in inner else None
    if "\\u" in raw:  # JSON joins surrogate pairs, YAML does not
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _scalar_value(raw: str) -> object:
    """A one-line value of the fast path, or None when it is not one."""
    raw = raw.rstrip(" ")
    if raw.startswith('"'):
        return _quoted(raw)
    if raw == "[]":
        return []
    if raw in ("true", "false"):
        return raw == "true"
    if _QUICK_INT.fullmatch(raw):
        return int(raw)
    return None


def _quick(block: str) -> dict[str, object] | None:
    """The mapping of a block in :mod:`vaultsync.render.yamlfm`'s exact shape, else None."""
    if _NOT_QUICK.search(block):
        return None
    values: dict[str, object] = {}
    listed: list[object] | None = None
    block_lists: list[str] = []
    for line in block.split("\n"):
        if not line:
            continue
        match = _QUICK_LINE.fullmatch(line)
        if match is None:
            return None
        if match["item"] is not None:
            text = _quoted(match["item"])
            if text is None or listed is None:
                return None
            listed.append(text)
            continue
        key = match["key"]
        if key in values or key.lower() in _YAML_WORDS:
            return None
        if match["value"] is None:
            listed = []
            values[key] = listed
            block_lists.append(key)
            continue
        listed = None
        value = _scalar_value(match["value"])
        if value is None:
            return None
        values[key] = value
    for key in block_lists:
        if not values[key]:
            values[key] = None  # ``key:`` and nothing under it is null in YAML
    return values


def _load(block: str) -> tuple[Mapping[str, object], str | None]:
    """The case-folded mapping of a YAML block, or an empty one and why."""
    if not block.strip():
        return _EMPTY, None
    loaded: object = _quick(block)
    if loaded is None:
        try:
            loaded = yaml.load(block, Loader=_LOADER)  # noqa: S506 - a safe loader
        except Exception as err:  # any YAML failure: no usable front matter
            first = str(err).strip().splitlines()
            reason = first[0] if first else type(err).__name__
            return _EMPTY, f"front matter is not valid YAML ({reason}); read as none"
    if loaded is None:
        return _EMPTY, None
    if not isinstance(loaded, dict):
        return _EMPTY, f"front matter is a {type(loaded).__name__}, not a mapping of properties"
    values: dict[str, object] = {}
    for key, value in loaded.items():
        values.setdefault(str(key).strip().casefold(), value)
    return values, None


def _scalar(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, int | float):
        return str(value)
    return None


def property_strings(value: object) -> Iterator[str]:
    """The strings of a property value, lists flattened, at most 1,000 of them.

    Numbers and dates become text; an unquoted ``[[X]]`` (YAML reads ``[["X"]]``) becomes
    ``"[[X]]"``; mappings are skipped.
    """
    budget = [_MAX_STRINGS]

    def walk(item: object, depth: int) -> Iterator[str]:
        if budget[0] <= 0 or depth > _MAX_DEPTH:
            return
        if isinstance(item, list | tuple):
            if len(item) == 1 and isinstance(item[0], list) and len(item[0]) == 1:
                inner = _scalar(item[0][0])
                if inner is not None:
                    budget[0] -= 1
                    yield f"[[{inner}]]"
                    return
            for element in item:
                if isinstance(element, list) and len(element) == 1:
                    inner = _scalar(element[0])
                    if inner is not None:
                        budget[0] -= 1
                        yield f"[[{inner}]]"
                        continue
                yield from walk(element, depth + 1)
            return
        text = _scalar(item)
        if text is not None:
            budget[0] -= 1
            yield text

    return walk(value, 0)


def property_text(value: object) -> str | None:
    """A single-text property (``title``, ``state``, ``created``): the first string, trimmed."""
    for text in property_strings(value):
        if text.strip():
            return text.strip()
    return None

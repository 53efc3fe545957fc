"""A note's text → its front matter (a mapping) and its body; pure, never raises.

Contract: ``split_front_matter(text)`` returns ``(fields, body)``.  A note has front matter when
its first line is ``---`` and a later line is ``---`` (Obsidian's rule); ``body`` is everything
after the closing line.  Without it, ``fields`` is empty and ``body`` is the whole text.

Two readers, one answer:

* **The engine's own shape** (``render.yamlfm``: every string double-quoted, lists as block
  items of double-quoted strings, ``[]``, bare numbers and booleans) is read line by line with
  ``json.loads``: about a hundred times faster than a YAML parser, which matters when ten
  thousand notes are indexed at once.
* **Anything else** (the notes people write: flow lists, plain scalars, comments) goes to
  ruamel's safe loader.  YAML that does not parse, or that is not a mapping, gives no fields:
  a broken property block must not keep a note out of the index.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

__all__ = ["split_front_matter", "string_list", "string_value"]

_BLOCK = re.compile(r"\A---[ \t]*\r?\n(?P<yaml>(?:.*?\r?\n)??)---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_KEY_LINE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?: (?P<value>.*))?")
_ITEM_LINE = re.compile(r"  - (?P<value>\".*\")")
_BARE = re.compile(r"-?\d+(?:\.\d+)?|true|false|\[\]")
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _fast(yaml_text: str) -> dict[str, Any] | None:
    """The fields when ``yaml_text`` is in the engine's shape, else None."""
    fields: dict[str, Any] = {}
    current: list[str] | None = None
    try:
        for line in yaml_text.splitlines():
            item = _ITEM_LINE.fullmatch(line)
            if item is not None and current is not None:
                current.append(json.loads(item["value"]))
                continue
            match = _KEY_LINE.fullmatch(line)
            if match is None or match["key"] in fields:
                return None
            value = (match["value"] or "").strip()
            if not value:
                current = fields[match["key"]] = []
            elif value.startswith('"') and value.endswith('"') and len(value) > 1:
                fields[match["key"]], current = json.loads(value), None
            elif _BARE.fullmatch(value):
                fields[match["key"]], current = ([] if value == "[]" else value), None
            else:
                return None
    except ValueError:  # an escape JSON lacks (\N, \L, \P) or a malformed string
        return None
    return fields


def _slow(yaml_text: str) -> Mapping[str, Any]:
    try:
        data = YAML(typ="safe", pure=True).load(yaml_text)
    except (YAMLError, ValueError, TypeError, RecursionError):
        return _EMPTY
    return data if isinstance(data, dict) else _EMPTY


def split_front_matter(text: str) -> tuple[Mapping[str, Any], str]:
    """``(fields, body)`` of a note; see the module docstring."""
    match = _BLOCK.match(text)
    if match is None:
        return _EMPTY, text
    yaml_text = match["yaml"]
    fields = _fast(yaml_text)
    return (_slow(yaml_text) if fields is None else fields), text[match.end() :]


def string_value(fields: Mapping[str, Any], key: str) -> str:
    """``fields[key]`` when it is a non-blank string (trimmed), else ``""``."""
    value = fields.get(key)
    return value.strip() if isinstance(value, str) else ""


def string_list(fields: Mapping[str, Any], key: str, *, split: bool = False) -> tuple[str, ...]:
    """``fields[key]`` as strings: a list's string and number items, or one string.

    Args:
        fields: the front matter.
        key: ``aliases`` or ``tags``.
        split: also split a single string at commas and spaces (Obsidian reads ``tags: a, b``
            as two tags); a leading ``#`` is dropped.

    Returns:
        The non-empty values, trimmed, first occurrence kept, in order.
    """
    value = fields.get(key)
    raw: list[str] = []
    if isinstance(value, str):
        raw = re.split(r"[,\s]+", value) if split else [value]
    elif isinstance(value, list | tuple):
        raw = [
            str(v) for v in value if isinstance(v, str | int | float) and not isinstance(v, bool)
        ]
    cleaned = (v.strip().lstrip("#").strip() if split else v.strip() for v in raw)
    return tuple(dict.fromkeys(v for v in cleaned if v))

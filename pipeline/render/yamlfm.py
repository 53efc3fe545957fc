r"""Front-matter values → YAML text that every reader reads back unchanged; pure.

Contract: a value written with :func:`yaml_scalar` reads back as the same value in YAML 1.1
(PyYAML, Obsidian's older parsers) and YAML 1.2 (ruamel.yaml, Obsidian today).

* **Every string is double-quoted** (``json.dumps`` with ``ensure_ascii=False``), so ``yes``,
  ``on``, ``12:30``, ``007``, ``null``, ``~``, ``[[X]]``, ``#tag`` and a leading ``-``/``?``/``:``
  stay strings.  JSON's escapes are a subset of YAML's double-quoted escapes; what JSON leaves
  raw but YAML would mangle is escaped too: NEL, LS and PS become ``\N``, ``\L``, ``\P`` (a raw
  one is read as a line break, then folded to a space), and the characters YAML does not allow
  raw (DEL, C1 controls, BOM, noncharacters, lone surrogates) become ``\uXXXX``.
* Integers and floats are written bare — only values that *are* numbers; ``bool`` as
  ``true``/``false``; datetimes by :func:`property_time`, quoted (a bare timestamp reads back
  as a ``datetime`` in one parser and a string in another).
* **Times are typed properties** (:func:`property_time`): ``2026-10-20T08:31:12`` — the wall
  clock in ``render.timezone`` (UTC unless configured), whole seconds, no zone suffix.  That is
  the form Obsidian's *Date & time* property stores (it has no zone) and a form Dataview's date
  grammar (luxon ISO, at most 3 fraction digits, whole value) reads as a date; both read a
  zone-less time as the viewer's local time, so set ``render.timezone`` to yours.  Calendar
  days (``date`` of journal notes and episodes) are ``YYYY-MM-DD`` (:func:`property_date`).
* :func:`clean_fields` drops empty values (``None``, ``""``, empty lists, the zero time) so the
  templates never write ``key: ""``; the list-valued keys ``aliases`` and ``tags`` are kept,
  empty or not, as Obsidian's default properties.

The values are emitted by a Jinja filter (``yaml``) from ``templates/_macros.j2``: a template
call is about 25 times faster than dumping with ruamel (measured).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, tzinfo

from vaultsync.core.model import ZERO_TIME, in_zone

__all__ = [
    "ALWAYS_KEPT",
    "FieldValue",
    "clean_fields",
    "is_yaml_list",
    "property_date",
    "property_time",
    "yaml_scalar",
    "yaml_str",
]

Scalar = str | int | float | bool | datetime
FieldValue = Scalar | Sequence[str] | None
"""What a renderer may put in a front-matter field."""

ALWAYS_KEPT = frozenset({"aliases", "tags"})
"""List fields written even when empty (``[]``)."""

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RAW_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufdd0-\ufdef\ufffe\uffff\ud800-\udfff]")
_NAMED = {"\x85": "\\N", "\u2028": "\\L", "\u2029": "\\P"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or f"\\u{ord(char):04x}"


def property_time(moment: datetime, zone: tzinfo = UTC) -> str:
    """``moment`` as a Date & time property: ``YYYY-MM-DDTHH:MM:SS`` in ``zone``, no suffix.

    The fraction is dropped (Obsidian stores none; Dataview reads at most 3 digits).
    """
    shown = in_zone(moment, zone) if moment.tzinfo is not None else moment
    return shown.replace(tzinfo=None, microsecond=0).isoformat(timespec="seconds")


def property_date(moment: datetime | date, zone: tzinfo = UTC) -> str:
    """The calendar day of ``moment`` (in ``zone`` for a time) as a Date property."""
    if isinstance(moment, datetime):
        moment = (in_zone(moment, zone) if moment.tzinfo is not None else moment).date()
    return moment.isoformat()


def yaml_str(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that reads back identically in 1.1 and 1.2."""
    quoted = json.dumps(text, ensure_ascii=False)
    if _RAW_UNSAFE.search(quoted):
        quoted = _RAW_UNSAFE.sub(_escape, quoted)
    return quoted


def yaml_scalar(value: object) -> str:
    """One front-matter value as YAML text (the ``yaml`` Jinja filter)."""
    if isinstance(value, str):
        return yaml_str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return yaml_str(repr(value))
        return repr(value)
    if isinstance(value, datetime):
        return yaml_str(property_time(value))
    msg = f"not a front-matter scalar: {type(value).__name__}"
    raise TypeError(msg)


def is_yaml_list(value: object) -> bool:
    """Whether a field is written as a block list (the ``yaml_list`` Jinja test)."""
    return isinstance(value, list | tuple)


def _is_empty(value: FieldValue) -> bool:
    if value is None:
        return True
    if isinstance(value, str | list | tuple):
        return not value
    return isinstance(value, datetime) and value == ZERO_TIME


def clean_fields(fields: Iterable[tuple[str, FieldValue]]) -> tuple[tuple[str, FieldValue], ...]:
    """The fields worth writing, in order: empty values dropped, lists as tuples of strings.

    Raises:
        ValueError: a key is not a plain identifier or appears twice (Obsidian requires unique
            property names).
    """
    kept: list[tuple[str, FieldValue]] = []
    seen: set[str] = set()
    for key, raw in fields:
        if not _KEY.fullmatch(key) or key in seen:
            msg = f"invalid or repeated front-matter key {key!r}"
            raise ValueError(msg)
        seen.add(key)
        value = tuple(str(i) for i in raw if str(i)) if isinstance(raw, list | tuple) else raw
        if _is_empty(value) and key not in ALWAYS_KEPT:
            continue
        kept.append((key, () if value is None else value))
    return tuple(kept)

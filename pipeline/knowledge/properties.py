"""A note's front matter (Obsidian's "properties") as the knowledge model reads it; pure.

Splitting and YAML are :func:`vaultsync.core.notes.read_front_matter`'s (YAML 1.2, keys case
folded, the engine's own shape read without the loader); this module adds the knowledge
model's coercion and its wording of problems:

* ``read_properties(text)`` returns the front matter and a problem message when the block is
  there but unusable (bad YAML, or a list or a scalar); the block still is not body text (its
  lines are neither links nor inline fields).
* ``property_strings(value)`` flattens a value into its strings, bounded against YAML alias
  bombs, and turns the nested list that an unquoted ``[[X]]`` becomes in YAML back into the text
  ``[[X]]``, so ``supports: [[X]]`` counts like ``supports: "[[X]]"``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime

from vaultsync.core.notes import FrontMatter, read_front_matter

__all__ = ["Properties", "property_strings", "property_text", "read_properties"]

_MAX_STRINGS = 1000
_MAX_DEPTH = 6


@dataclass(frozen=True, slots=True, kw_only=True)
class Properties:
    """The front matter of one note and, when it could not be used, why."""

    front: FrontMatter
    problem: str | None = None
    """Why a present block was not read (bad YAML, not a mapping), else None."""


def read_properties(text: str) -> Properties:
    """Split and read the front matter of ``text`` (LF line endings).

    Args:
        text: a whole note.

    Returns:
        The properties; an empty mapping when there is no block or it is unusable.
    """
    front = read_front_matter(text)
    if front.problem is None:
        return Properties(front=front)
    where = f"line {front.problem.line}, column {front.problem.column}"
    return Properties(
        front=front,
        problem=f"front matter is not usable YAML ({where}: {front.problem.message}); read as none",
    )


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

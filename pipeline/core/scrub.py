"""Store records → the same records with every string's secrets masked; pure.

This is the one redaction boundary (issue 14): :mod:`vaultsync.graph.load`, the only way from
the stores to anything vaultsync writes or serves, passes what it read through :func:`scrub`
— the records, the hand-drawn links, the skipped-file warnings and the last good records it
caches.  So titles, names, aliases, tags, folder and file names, link labels, ``Home.md``, the
manifest, git trees, the graph cache and export, the search index and the API never see a
secret: they only ever see the masked text.

The walk is generic, so a field added to a record later is covered without a change here:
every ``str`` inside a frozen dataclass, a tuple or a list goes through
:func:`~vaultsync.core.redact.redact`; other values (times, numbers, flags) are kept.  Two
shapes are judged *with their key*, since ``api_key: k8Rk2…`` is a secret where ``k8Rk2…``
alone may not look like one:

* a ``(key, text)`` pair, the form every store map takes (profile maps, project and context
  metadata): the text is masked as the line ``key: text`` would be;
* a :class:`~vaultsync.core.model.ProfileField` whose value is one string.

The key itself is masked alone, like any string, so a private entry's key in
``ProfileField.private_entries`` stays equal to the key of its pair.  Masking is stable
(:func:`~vaultsync.core.redact.mask`): the same store text gives the same masked text, so a
masked title gives the same file name on every sync, and a drawn link's end still names its
note.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from vaultsync.core.model import ProfileField
from vaultsync.core.redact import redact

__all__ = ["scrub", "scrub_keyed"]

T = TypeVar("T")


def scrub(value: T) -> T:
    """``value`` with every string inside it masked (see the module docstring)."""
    return _scrub(value)  # type: ignore[no-any-return]


def scrub_keyed(key: str, text: str) -> str:
    """``text`` masked as it reads after its key (``api_key: k8Rk2…`` → ``api_key: ‹secret-…›``)."""
    prefix = f"{key}: "
    masked = redact(prefix + text)
    if masked.startswith(prefix):
        return redact(masked[len(prefix) :])
    return redact(text)  # the key itself held a secret: the value is judged alone


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, tuple):
        return tuple(_scrub_item(item) for item in value)
    if isinstance(value, list):
        return [_scrub_item(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _scrub_record(value)
    return value


def _scrub_item(item: Any) -> Any:
    """One element of a collection: a ``(key, text)`` pair is judged with its key."""
    if _is_pair(item):
        key, text = item
        return (redact(key), scrub_keyed(key, text))
    return _scrub(item)


def _is_pair(item: Any) -> bool:
    return (
        isinstance(item, tuple)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], str)
    )


def _scrub_record(record: Any) -> Any:
    """A dataclass with every init field scrubbed; the same object when nothing changed."""
    changes = {}
    for field in dataclasses.fields(record):
        if not field.init:
            continue
        old = getattr(record, field.name)
        new = _scrub(old)
        if isinstance(record, ProfileField) and field.name == "value" and isinstance(old, str):
            new = scrub_keyed(record.key, old)
        if new != old:
            changes[field.name] = new
    return dataclasses.replace(record, **changes) if changes else record

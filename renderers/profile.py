"""Profile node → ``profile.md.j2`` context: every field, private ones hidden; pure.

A field flagged private (``sensitive`` in the store, or a key naming personal data) shows
``PRIVATE`` (``private`` in angle quotes) instead of its value; so does a private entry of a
map (``preferences.bank_account``), which is listed, not dropped, so the reader sees that
ChatCLI holds it.  The name is the graph's title, already ``user`` when the name is private.
Values are masked for secrets like any other text.  A milestone dated with Go's zero time has
no date.
"""

from __future__ import annotations

from typing import TypedDict

from vaultsync.core.model import Node, Profile, ProfileField
from vaultsync.core.redact import redact
from vaultsync.renderers.base import (
    PRIVATE,
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    one_line,
)

TEMPLATE = "profile.md.j2"
_ZERO_DATE = "0001-01-01"
"""How Go writes its zero time, ``time.Time{}``: no date at all."""


class ProfileEntry(TypedDict):
    """One field: a text value, or a list of ``(key, text)`` items (maps, milestones)."""

    key: str
    value: str
    pairs: list[tuple[str, str]]
    private: bool


class ProfileContext(NoteContext):
    """The profile's fields in the store's order."""

    entries: list[ProfileEntry]


def _entry(field: ProfileField) -> ProfileEntry:
    if field.private:
        return ProfileEntry(key=field.key, value=PRIVATE, pairs=[], private=True)
    value = field.value
    if isinstance(value, str):
        return ProfileEntry(key=field.key, value=redact(one_line(value)), pairs=[], private=False)
    if all(isinstance(item, str) for item in value):
        text = ", ".join(one_line(str(item)) for item in value)
        return ProfileEntry(key=field.key, value=redact(text), pairs=[], private=False)
    items = [
        _pair(pair[0], pair[1], hidden=pair[0] in field.private_entries)
        for pair in value
        if isinstance(pair, tuple)
    ]
    return ProfileEntry(key=field.key, value="", pairs=items, private=False)


def _pair(key: str, text: str, *, hidden: bool) -> tuple[str, str]:
    """One map entry or milestone as ``(key, text)``; a zero-time date key is left out."""
    shown = PRIVATE if hidden else redact(one_line(text))
    key = "" if key.startswith(_ZERO_DATE) else one_line(key)
    return key, shown


def context(node: Node, inputs: RenderInputs) -> ProfileContext:
    """Front matter: updated (the profile's last update)."""
    profile = inputs.records.get(node.id, Profile) or Profile()
    base = base_context(node, inputs, [("updated", profile.last_updated)])
    return ProfileContext(**base, entries=[_entry(field) for field in profile.fields])


RENDERER = Renderer(template=TEMPLATE, context=context)

"""Note lifecycle: six states and the twelve allowed moves between them; pure.

Contract (as ZettelFlow's ``lifecycle/machine.ts``):

* States, in lifecycle order: ``fleeting → literature → permanent → developing → evergreen →
  archived``.
* ``parse_state(raw)`` reads a declared value: a leading emoji (or any other run of symbols and
  spaces) and case are tolerated (``🌱 Fleeting`` is ``fleeting``); anything else, or nothing,
  gives ``None`` and the note reads as :data:`FALLBACK_STATE` (``fleeting``).
* ``can_move(a, b)`` is true for exactly the twelve pairs of :data:`TRANSITIONS`; staying in the
  same state is not a move.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

__all__ = [
    "FALLBACK_STATE",
    "STATE_EMOJI",
    "TRANSITIONS",
    "State",
    "can_move",
    "next_states",
    "parse_state",
]


class State(StrEnum):
    """A lifecycle state; the value is the token written in a note's ``state`` field."""

    FLEETING = "fleeting"
    LITERATURE = "literature"
    PERMANENT = "permanent"
    DEVELOPING = "developing"
    EVERGREEN = "evergreen"
    ARCHIVED = "archived"


FALLBACK_STATE = State.FLEETING
"""The state of a note that declares none, or one that is not a state."""

STATE_EMOJI: Mapping[State, str] = MappingProxyType(
    {
        State.FLEETING: "🌱",
        State.LITERATURE: "📝",
        State.PERMANENT: "💡",
        State.DEVELOPING: "🔬",
        State.EVERGREEN: "📚",
        State.ARCHIVED: "🪦",
    }
)
"""ZettelFlow's display emoji; a note may carry one before the token."""

TRANSITIONS: Mapping[State, frozenset[State]] = MappingProxyType(
    {
        State.FLEETING: frozenset({State.LITERATURE, State.PERMANENT, State.ARCHIVED}),
        State.LITERATURE: frozenset({State.PERMANENT, State.ARCHIVED}),
        State.PERMANENT: frozenset({State.DEVELOPING, State.ARCHIVED}),
        State.DEVELOPING: frozenset({State.EVERGREEN, State.ARCHIVED}),
        State.EVERGREEN: frozenset({State.DEVELOPING, State.ARCHIVED}),
        State.ARCHIVED: frozenset({State.FLEETING}),
    }
)
"""The allowed moves: from a state to the states it may become."""

_BY_TOKEN = {state.value: state for state in State}


def parse_state(raw: object) -> State | None:
    """The state a declared value names, or None when it names none.

    Args:
        raw: the value of the note's ``state`` field (any type; only text can name a state).

    Returns:
        The state, ignoring case, surrounding space and leading non-letters (an emoji).
    """
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    start = 0
    while start < len(text) and not text[start].isalpha():
        start += 1
    return _BY_TOKEN.get(text[start:].strip().casefold())


def can_move(current: State, target: State) -> bool:
    """Whether a note in ``current`` may move to ``target`` (one of the twelve transitions)."""
    return target in TRANSITIONS[current]


def next_states(current: State) -> tuple[State, ...]:
    """The states ``current`` may move to, in lifecycle order."""
    allowed = TRANSITIONS[current]
    return tuple(state for state in State if state in allowed)

"""Lifecycle: the six states, the twelve transitions, tolerant reading of declared states."""

from __future__ import annotations

import itertools

import pytest
from vaultsync.knowledge.lifecycle import (
    FALLBACK_STATE,
    TRANSITIONS,
    State,
    can_move,
    next_states,
    parse_state,
)

ALLOWED = {
    ("fleeting", "literature"),
    ("fleeting", "permanent"),
    ("fleeting", "archived"),
    ("literature", "permanent"),
    ("literature", "archived"),
    ("permanent", "developing"),
    ("permanent", "archived"),
    ("developing", "evergreen"),
    ("developing", "archived"),
    ("evergreen", "developing"),
    ("evergreen", "archived"),
    ("archived", "fleeting"),
}


class TestTransitions:
    def test_twelve(self) -> None:
        """Exactly twelve moves are allowed."""
        assert sum(len(targets) for targets in TRANSITIONS.values()) == 12

    @pytest.mark.parametrize(
        ("current", "target"),
        list(itertools.product(State, State)),
        ids=lambda state: state.value,
    )
    def test_all_36_pairs(self, current: State, target: State) -> None:
        """Each of the 36 state pairs is allowed exactly when it is one of the twelve."""
        assert can_move(current, target) is ((current.value, target.value) in ALLOWED)

    def test_next_states_in_lifecycle_order(self) -> None:
        """A fleeting note may become literature, permanent or archived, in that order."""
        assert next_states(State.FLEETING) == (State.LITERATURE, State.PERMANENT, State.ARCHIVED)


class TestParseState:
    @pytest.mark.parametrize(
        ("raw", "state"),
        [
            ("permanent", State.PERMANENT),
            ("Evergreen", State.EVERGREEN),
            ("  LITERATURE ", State.LITERATURE),
            ("🌱 fleeting", State.FLEETING),
            ("🪦Archived", State.ARCHIVED),
            ("🔬 Developing", State.DEVELOPING),
        ],
    )
    def test_tolerant(self, raw: str, state: State) -> None:
        """Case, surrounding space and a leading emoji are tolerated."""
        assert parse_state(raw) is state

    @pytest.mark.parametrize("raw", [None, "", "draft", "permanently", 3, ["permanent"], True])
    def test_unknown_is_none(self, raw: object) -> None:
        """Anything that names no state gives None (read as fleeting)."""
        assert parse_state(raw) is None

    def test_fallback_is_fleeting(self) -> None:
        """A note without a state is fleeting."""
        assert FALLBACK_STATE is State.FLEETING

"""``vault.markers.take_side``: one side of each conflict block, or ``None`` for broken markers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.vault.markers import has_conflict_markers, take_side

BLOCK = b"a\n<<<<<<< yours\nmine\n=======\nstores\n>>>>>>> vaultsync\nz\n"
DIFF3 = b"<<<<<<< yours\nmine\n||||||| base\nold\n=======\nstores\n>>>>>>> vaultsync\n"


@pytest.mark.parametrize(
    ("data", "side", "expected"),
    [
        (BLOCK, "yours", b"a\nmine\nz\n"),
        (BLOCK, "vaultsync", b"a\nstores\nz\n"),
        (DIFF3, "yours", b"mine\n"),
        (DIFF3, "vaultsync", b"stores\n"),
        (BLOCK + BLOCK, "yours", b"a\nmine\nz\na\nmine\nz\n"),
    ],
)
def test_each_block_gives_one_side(data: bytes, side: str, expected: bytes) -> None:
    """The lines outside blocks stay; inside, only the side asked for (git's diff3 base never)."""
    assert take_side(data, side) == expected


@pytest.mark.parametrize(
    "data",
    [
        b"<<<<<<< yours\nmine\n",  # never closed
        b"<<<<<<< yours\n<<<<<<< yours\nx\n=======\ny\n>>>>>>> vaultsync\n",  # one inside another
        b"x\n=======\ny\n>>>>>>> vaultsync\n",  # closed, never opened
    ],
)
def test_markers_not_in_gits_form_give_none(data: bytes) -> None:
    """A block never closed, or not opened, or inside another: no side is taken."""
    assert take_side(data, "yours") is None


@given(st.lists(st.sampled_from([b"text\n", b"== heading\n", b"<<<< short\n", b"\n"])))
def test_text_without_markers_is_left_as_it_is(lines: list[bytes]) -> None:
    """Lines that are no marker (a short run of < or =) pass through either side unchanged."""
    data = b"".join(lines)
    assert not has_conflict_markers(data)
    assert take_side(data, "yours") == take_side(data, "vaultsync") == data

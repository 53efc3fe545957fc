"""A sealed store that does not open is skipped, whatever its kind; its last good value stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_tree, dumps
from vaultsync.extract import read_state
from vaultsync.extract.atrest import SealKeys
from vaultsync.extract.jsonio import Unsealing
from vaultsync.extract.read import read_state_keeping

SEALED = b"CHATCLI_ENC_v2\n" + b"\0" * 40
"""A payload no key opens (its tag does not match)."""
LONG = "0123456789abcdef0123456789abcdef-long-key"
FACTS = dumps([{"id": "f1", "content": "a plain fact", "category": "note"}])

EVERY_KIND = [
    "memory/memory_index.json",
    "memory/memory_tombstones.json",
    "memory/user_profile.json",
    "memory/topics.json",
    "memory/projects.json",
    "memory/episodes.json",
    "memory/202607/20260703.md",
    "memory/weekly/2026-W27.md",
    "memory/monthly/2026-06.md",
    "sessions/chat.json",
    "contexts/ctx.json",
    "board.json",
    "skills/deploy/SKILL.md",
]


@pytest.mark.parametrize("rel", EVERY_KIND)
@pytest.mark.parametrize(
    "how",
    [
        pytest.param(lambda s: None, id="no-unsealing"),
        pytest.param(lambda s: Unsealing(keys=SealKeys(), root=s), id="no-key"),
        pytest.param(lambda s: Unsealing(keys=SealKeys((LONG,)), root=s), id="wrong-key"),
        pytest.param(
            lambda s: Unsealing(keys=SealKeys((LONG,)), root=s, enabled=False), id="setting-off"
        ),
    ],
)
def test_every_store_kind_is_skipped_in_one_line(tmp_path: Path, rel: str, how: object) -> None:
    """Each kind of store, sealed and not opening, is one skipped line; the rest is read."""
    index = "memory/memory_index.json"
    other = "memory/episodes.json" if rel == index else index
    plain = "[]" if other.endswith("episodes.json") else FACTS
    state = build_tree(tmp_path, {rel: SEALED, other: plain})
    records = read_state(state, unseal=how(state))  # type: ignore[operator]
    assert [s.source for s in records.skipped] == [rel]
    line = records.skipped[0].what
    assert "CHATCLI_ENCRYPTION_KEY" in line or "stores.open_sealed" in line
    assert LONG not in repr(records)
    if not rel.startswith("memory/memory"):  # the facts need both index and tombstones
        assert [f.content for f in records.facts] == ["a plain fact"]


def test_no_key_names_the_key_to_set(tmp_path: Path) -> None:
    """Without the key, the line says which variable to set."""
    state = build_tree(tmp_path, {"memory/topics.json": SEALED})
    records = read_state(state, unseal=Unsealing(keys=SealKeys(), root=state))
    assert "CHATCLI_ENCRYPTION_KEY" in records.skipped[0].what


def test_the_setting_off_names_the_setting(tmp_path: Path) -> None:
    """With the setting off, the line names ``stores.open_sealed``."""
    state = build_tree(tmp_path, {"memory/topics.json": SEALED})
    how = Unsealing(keys=SealKeys((LONG,)), root=state, enabled=False)
    records = read_state(state, unseal=how)
    assert "stores.open_sealed" in records.skipped[0].what


def test_a_sealed_fixed_store_keeps_its_last_good_value(tmp_path: Path) -> None:
    """The facts read well before stand in for a memory index that is now sealed."""
    state = build_tree(tmp_path, {"memory/memory_index.json": FACTS})
    first, good = read_state_keeping(state)
    (state / "memory/memory_index.json").write_bytes(SEALED)
    records = read_state(state, last_good=good, unseal=Unsealing(keys=SealKeys(), root=state))
    assert records.facts == first.facts
    assert [s.source for s in records.skipped] == ["memory/memory_index.json"]


def test_a_sealed_profile_keeps_its_last_good_value(tmp_path: Path) -> None:
    """The profile read well before stands in for a profile that is now sealed."""
    state = build_tree(tmp_path, {"memory/user_profile.json": dumps({"name": "Ada"})})
    first, good = read_state_keeping(state)
    (state / "memory/user_profile.json").write_bytes(SEALED)
    records = read_state(state, last_good=good)
    assert records.profile == first.profile


def test_a_malformed_fixed_store_still_stops_the_read(tmp_path: Path) -> None:
    """Only sealing is skipped in a fixed store: a broken memory index is still an error."""
    from vaultsync.core.errors import StoreError

    state = build_tree(tmp_path, {"memory/memory_index.json": "{not json"})
    with pytest.raises(StoreError):
        read_state(state)

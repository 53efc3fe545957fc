"""Store fields ChatCLI shows and the vault renders, read from ChatCLI v1.188's own bytes (#13 §3).

The state directory is ``fixtures/stores/chatcli-v1188`` (written by ``build_chatcli.py`` from
ChatCLI's Go types); each store is read with its own reader, so one unreadable item elsewhere
in the fixture does not hide these fields.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import ROOT
from vaultsync.core.errors import StoreError
from vaultsync.core.model import CardMove
from vaultsync.core.privacy import is_private_key
from vaultsync.extract.contexts import read_contexts
from vaultsync.extract.jsonio import get_str_map
from vaultsync.extract.memory import read_profile, read_projects
from vaultsync.extract.workspace import read_board
from vaultsync.graph.load import read_records

V1188 = ROOT / "fixtures" / "stores" / "chatcli-v1188"


def test_project_priority_and_metadata() -> None:
    """priority is kept as written (0 included) and metadata as sorted pairs."""
    found = {p.name: (p.priority, p.metadata) for p in read_projects(V1188)}
    assert found["tidewater"] == (1, (("jira", "DATA"), ("owner", "lena")))
    assert found["heron"] == (0, ())


def test_card_history_in_store_order() -> None:
    """A card's moves keep ChatCLI's order, with the offset time it wrote."""
    card = next(c for c in read_board(V1188) if c.id == "card-1")
    assert [(m.from_column, m.to_column, m.by) for m in card.history] == [
        ("backlog", "doing", "orchestrator"),
        ("doing", "review", "architect"),
        ("review", "done", "user"),
    ]
    assert card.history[0].at == datetime(2026, 9, 29, 8, 5, 0, 100000, tzinfo=UTC)


def test_context_metadata() -> None:
    """A docs-flatten knowledge base keeps kb.repo_url and kb.commit; null metadata is empty."""
    found = {c.name: dict(c.metadata) for c in read_contexts(V1188)}
    assert found["lantern-handbook"]["kb.repo_url"] == "https://github.com/kranich-mobility/lantern"
    assert found["lantern-handbook"]["kb.commit"] == "9f3c2e1d7b6a5f4e3d2c1b0a99887766554433aa"
    assert found["heron-api"] == {}


def test_private_map_entries_are_listed() -> None:
    """preferences.bank_account, health_* and family_* are listed as private entries."""
    profile = read_profile(V1188)
    assert profile is not None
    (preferences,) = [f for f in profile.fields if f.key == "preferences"]
    assert preferences.private_entries == ("bank_account", "family_kids", "health_allergies")
    assert all(is_private_key(key) for key in preferences.private_entries)


def test_private_map_entries_reach_no_masked_record() -> None:
    """The stores as a sync reads them (masked) hold no private entry's text."""
    profile = read_records(V1188).profile
    assert profile is not None
    (preferences,) = [f for f in profile.fields if f.key == "preferences"]
    pairs = [item for item in preferences.value if isinstance(item, tuple)]
    hidden = {key: text for key, text in pairs if key in preferences.private_entries}
    assert hidden == {"bank_account": "", "family_kids": "", "health_allergies": ""}


def test_a_zero_time_move_has_no_time(tmp_path: Path) -> None:
    """A move at Go's zero time reads as a move without a time."""
    move = {"from": "backlog", "to": "doing", "by": "u", "at": "0001-01-01T00:00:00Z"}
    card = {"id": "card-1", "title": "t", "column": "doing", "history": [move]}
    (tmp_path / "board.json").write_text(json.dumps({"schema_version": 1, "cards": [card]}))
    (found,) = read_board(tmp_path)
    assert found.history == (CardMove(from_column="backlog", to_column="doing", by="u", at=None),)


def test_metadata_must_be_text() -> None:
    """A metadata value that is not a string is refused with where it is, as Go would fail."""
    with pytest.raises(StoreError, match=r"metadata\.n"):
        get_str_map({"metadata": {"n": 1}}, "metadata", V1188 / "memory/projects.json", "[0]")

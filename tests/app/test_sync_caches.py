"""``app.sync`` and the caches it leaves: those written aside are this sync's, whole."""

from __future__ import annotations

import json
from pathlib import Path

from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import Workspace, open_workspace
from vaultsync.core import parallel
from vaultsync.graph.build import patch_graph
from vaultsync.graph.cache import load_last_good, load_patch_state
from vaultsync.graph.load import read_records
from vaultsync.synthetic import generate_store


def _large_vault(tmp_path: Path) -> Workspace:
    """A synced vault of more notes than a helper process is forked for."""
    state = tmp_path / "state"
    generate_store(state, notes=parallel.MIN_ITEMS + 50)
    ws = open_workspace(str(state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    return ws


def _change_a_fact(state: Path) -> None:
    path = state / "memory" / "memory_index.json"
    facts = json.loads(path.read_text())
    facts[0]["content"] += " and the kettle"
    path.write_text(json.dumps(facts))


def test_the_graph_state_a_sync_leaves_is_its_own_build(tmp_path: Path) -> None:
    """After a sync whose caches a helper wrote, the patch state describes the stores now."""
    ws = _large_vault(tmp_path)
    _change_a_fact(ws.state)
    outcome = sync(ws, SyncRequest())
    assert outcome.report is not None and outcome.report.updated
    kept = load_patch_state(ws.state, ws.caps)
    assert kept is not None
    fresh = patch_graph(read_records(ws.state, ws.caps), ws.caps, None)[1]
    tables = ("nodes", "records", "sources", "names")
    assert [getattr(kept, t) for t in tables] == [getattr(fresh, t) for t in tables]


def test_the_last_good_records_a_sync_leaves_are_the_stores_now(tmp_path: Path) -> None:
    """The last good records written aside hold the fact changed by that very sync."""
    ws = _large_vault(tmp_path)
    _change_a_fact(ws.state)
    sync(ws, SyncRequest())
    facts = load_last_good(ws.state)["memory/memory_index.json"]
    assert any("and the kettle" in str(fact) for fact in facts)

"""``app.sync`` and the search index: a sync updates what it changed, a search the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from vaults import index_state, rebuilt_index_state
from vaultsync.app.search import VaultIndex
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import Workspace, open_workspace
from vaultsync.search import index as index_module
from vaultsync.search.index import update_index
from vaultsync.search.registry import scan_vault


def _indexed_vault(demo_state: Path, tmp_path: Path) -> Workspace:
    """The demo vault synced, with a search index."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    update_index(ws.vault)
    return ws


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record each walk of a vault the index makes from now on."""
    walked: list[Path] = []

    def counted(vault: Path) -> object:
        walked.append(vault)
        return scan_vault(vault)

    monkeypatch.setattr(index_module, "scan_vault", counted)
    return walked


def _change_a_topic(state: Path) -> None:
    """A topic renamed in the stores: a note goes, one comes, the notes linking it change."""
    path = state / "memory" / "topics.json"
    topics = json.loads(path.read_text())
    topics[0]["name"] = "renamed-topic"
    path.write_text(json.dumps(topics))


def test_a_sync_updates_the_index_without_walking_the_vault(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a sync that changed notes, the index is what a build gives, and nothing walked."""
    ws = _indexed_vault(demo_state, tmp_path)
    walked = _walks(monkeypatch)
    _change_a_topic(demo_state)
    outcome = sync(ws, SyncRequest())
    assert outcome.report is not None and outcome.report.created and outcome.report.removed
    assert walked == []
    assert index_state(ws.vault) == rebuilt_index_state(ws.vault, tmp_path)


def test_an_edit_before_the_sync_is_found_by_the_next_search(
    demo_state: Path, tmp_path: Path
) -> None:
    """A note edited by hand is not the sync's change; the search's own update indexes it."""
    ws = _indexed_vault(demo_state, tmp_path)
    edited = ws.vault / "Topics" / "Go.md"
    edited.write_text(edited.read_text() + "\nquixotic words of mine\n")
    _change_a_topic(demo_state)
    sync(ws, SyncRequest())
    with VaultIndex(ws.vault) as found:
        assert [hit.document.path for hit in found.search("quixotic").hits] == ["Topics/Go.md"]
    assert index_state(ws.vault) == rebuilt_index_state(ws.vault, tmp_path)


def test_an_index_behind_the_manifest_the_sync_read_is_walked(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index that missed a sync (its update failed) is brought up to date by a walk."""
    ws = _indexed_vault(demo_state, tmp_path)
    _change_a_topic(demo_state)
    monkeypatch.setattr("vaultsync.app.sync.refresh_search_index", lambda *_: "")
    sync(ws, SyncRequest())  # the index is left behind
    monkeypatch.undo()
    walked = _walks(monkeypatch)
    (demo_state / "memory" / "topics.json").write_text("[]")
    sync(ws, SyncRequest())
    assert walked == [ws.vault]
    assert index_state(ws.vault) == rebuilt_index_state(ws.vault, tmp_path)

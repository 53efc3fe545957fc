"""``app.history``: the exposure check walks the history once per new commit or store change."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from vaultsync.app import history
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import open_workspace


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    walks: list[int] = []
    real = history._scan

    def counted(*args: object) -> object:
        walks.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(history, "_scan", counted)
    return walks


def test_a_second_status_does_not_walk_the_history_again(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same HEAD, same stores: the kept answer, no walk."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    walks = _counting(monkeypatch)
    first = history.exposed_commits(ws)
    walks.clear()
    assert history.exposed_commits(ws) == first
    assert history.exposed_commits(ws) == first
    assert walks == []


def test_a_new_commit_or_store_change_walks_it_again(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store change, or a new commit at HEAD, invalidates the kept answer."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    walks = _counting(monkeypatch)
    history.exposed_commits(ws)
    walks.clear()
    topics = demo_state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data[0]["summary"] = "changed"
    topics.write_text(json.dumps(data))
    history.exposed_commits(ws)
    assert len(walks) == 1
    vault = tmp_path / "vault"
    (vault / "Mine.md").write_text("a note of my own\n")
    subprocess.run(["git", "add", "Mine.md"], cwd=vault, check=True)
    subprocess.run(["git", "commit", "-qm", "mine"], cwd=vault, check=True)
    history.exposed_commits(ws)
    assert len(walks) == 2


def test_status_stats_the_stores_once(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last sync's record and the history check share one look at the stores."""
    from vaultsync.app.sync import status
    from vaultsync.extract import sources

    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    looks: list[Path] = []
    real = sources._fingerprint

    def counted(state: Path, paths: Iterator[str]) -> str:
        looks.append(state)
        return real(state, paths)

    monkeypatch.setattr(sources, "_fingerprint", counted)
    status(ws)
    assert len(looks) == 1

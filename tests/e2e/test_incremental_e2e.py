"""End to end: a vault kept by incremental syncs equals one synced afresh, every step.

Each step edits the demo store as ChatCLI would (a fact retitled, a topic created that facts
mention, a document added, a project removed, a topic other notes link to renamed, a command
that builds the graph between two syncs), syncs the kept vault with its caches (the extract
memo, the graph patch state, the notes' key memo), and syncs a new vault from nothing with an
empty cache folder. Their files must be the same bytes, manifest included.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import invoke
from vaultsync.core import cachefile
from vaultsync.render import keycache

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "stores" / "demo"


def run(*args: str, cache: Path) -> str:
    """``vaultsync ARGS`` in-process, its caches in ``cache`` (only what is on disk carries over
    from one run to the next: every cache is a file); its stdout."""
    env = {"VAULTSYNC_CACHE_DIR": str(cache), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost"}  # fmt: skip
    done = invoke(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def files(vault: Path) -> dict[str, bytes]:
    """Every file of the vault but git's and the local control files, by relative path."""
    found = {}
    for path in sorted(vault.rglob("*")):
        rel = path.relative_to(vault).as_posix()
        local = rel.startswith(".vaultsync/") and rel != ".vaultsync/manifest.json"
        if path.is_file() and not rel.startswith(".git/") and not local:
            found[rel] = path.read_bytes()
    return found


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    """Rewrite a store file the way ChatCLI does: a temp file renamed over it."""
    data = change(json.loads(path.read_text(encoding="utf-8")))
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    temp.replace(path)


def retitle_fact(state: Path) -> None:
    def change(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        facts[0]["content"] = "ledger is the new billing service; " + facts[0]["content"]
        return facts

    edit_json(state / "memory" / "memory_index.json", change)


def touch_last_fact(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Another fact's text edited (a change the graph built in between has not seen)."""
    facts[-1]["content"] += " (checked again)"
    return facts


def add_mentioned_topic(state: Path) -> None:
    def change(topics: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*topics, {"name": "ledger", "mentions": 1, "summary": "billing, see [[orbital]]",
                          "first_seen": "2026-10-01T10:00:00Z",
                          "last_seen": "2026-10-02T10:00:00Z", "related_fact_ids": []}]  # fmt: skip

    edit_json(state / "memory" / "topics.json", change)


def add_document(state: Path) -> None:
    context = sorted((state / "contexts").glob("*.json"))[0]
    body = "# Ledger runbook\n\nHow [[ledger]] talks to [[orbital]]; see [the guide](gateway.md).\n"

    def change(data: dict[str, Any]) -> dict[str, Any]:
        data["files"].append({"Path": "docs/guide/ledger.md", "Content": body,
                              "Size": len(body), "Type": "Markdown"})  # fmt: skip
        return data

    edit_json(context, change)


def remove_project(state: Path) -> None:
    edit_json(state / "memory" / "projects.json", lambda projects: projects[1:])


def rename_linked_topic(state: Path) -> None:
    def change(topics: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for topic in topics:
            if topic["name"] == "telemetry":
                topic["name"] = "telemetry pipeline"
        return topics

    edit_json(state / "memory" / "topics.json", change)


STEPS: list[Callable[[Path], None]] = [
    retitle_fact,
    add_mentioned_topic,
    add_document,
    remove_project,
    rename_linked_topic,
]


@pytest.mark.skipif(not DEMO.is_dir(), reason="the demo store is not in this checkout")
def test_incremental_syncs_equal_a_fresh_sync_after_every_edit(tmp_path: Path) -> None:
    """Vault kept by incremental syncs == a vault synced from nothing, after each edit."""
    state = tmp_path / "state"
    shutil.copytree(DEMO, state)
    kept, cache = tmp_path / "kept", tmp_path / "cache"
    run("sync", "--state", str(state), "--vault", str(kept), cache=cache)
    for number, step in enumerate(STEPS):
        step(state)
        if step is add_document:  # a build between two syncs: the key memo is of an older one
            run("graph", "map", "--state", str(state), cache=cache)
            edit_json(state / "memory" / "memory_index.json", touch_last_fact)
        run("sync", "--state", str(state), "--vault", str(kept), cache=cache)
        fresh = tmp_path / f"fresh-{number}"
        run("sync", "--state", str(state), "--vault", str(fresh), cache=tmp_path / f"c{number}")
        assert files(kept) == files(fresh), f"after {step.__name__}"


@pytest.mark.skipif(not DEMO.is_dir(), reason="the demo store is not in this checkout")
def test_a_resident_process_keeps_a_vault_equal_to_a_fresh_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Syncs that start from the state held in memory (``watch``) == a sync from nothing."""
    state = tmp_path / "state"
    shutil.copytree(DEMO, state)
    kept, cache = tmp_path / "kept", tmp_path / "cache"
    loaded: list[str] = []
    real = cachefile.load_pickle

    def counted(path: Path, head: bytes) -> object:
        loaded.append(path.name)
        return real(path, head)

    monkeypatch.setattr(cachefile, "load_pickle", counted)
    unmarshalled: list[bytes] = []
    real_memo = keycache.memo_from_bytes

    def memo_counted(data: bytes) -> keycache.SpecsMemo | None:
        unmarshalled.append(data)
        return real_memo(data)

    monkeypatch.setattr(keycache, "memo_from_bytes", memo_counted)
    after: list[tuple[Path, dict[str, bytes]]] = []
    with cachefile.resident():
        run("sync", "--state", str(state), "--vault", str(kept), cache=cache)
        loaded.clear()
        unmarshalled.clear()
        for number, step in enumerate(STEPS):
            step(state)
            if step is add_document:
                run("graph", "map", "--state", str(state), cache=cache)
                edit_json(state / "memory" / "memory_index.json", touch_last_fact)
            run("sync", "--state", str(state), "--vault", str(kept), cache=cache)
            snapshot = tmp_path / f"state-{number}"
            shutil.copytree(state, snapshot)
            after.append((snapshot, files(kept)))
    assert "graph-patch.pickle" not in loaded  # each sync started from the state held
    assert not [name for name in loaded if name.startswith("extract-memo-")]
    assert not unmarshalled  # nor the notes' layout and keys
    for number, (snapshot, kept_files) in enumerate(after):
        fresh = tmp_path / f"fresh-{number}"
        run("sync", "--state", str(snapshot), "--vault", str(fresh), cache=tmp_path / f"c{number}")
        assert kept_files == files(fresh), f"after {STEPS[number].__name__}"

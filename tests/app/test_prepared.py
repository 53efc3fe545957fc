"""``app.sync.prepare``: a sync worked out ahead of its time, applied only while it still holds."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import pygit2
import pytest
from demoedits import edit_first_fact, note_of
from vaultsync.app.sync import Prepared, SyncRequest, check, prepare, sync, warm
from vaultsync.app.workspace import Workspace, open_workspace
from vaultsync.core import cachefile
from vaultsync.vault.report import SyncReport

NOON = datetime(2026, 10, 15, 12, 0, tzinfo=UTC)


def synced(state: Path, vault: Path) -> Workspace:
    """A workspace whose vault is in sync with ``state``."""
    ws = open_workspace(str(state), str(vault))
    sync(ws, SyncRequest(), clock=lambda: NOON)
    return ws


class Planned(NamedTuple):
    """A vault in sync, then a store change, and the sync worked out for it."""

    ws: Workspace
    node: str
    """The changed fact's note."""
    prepared: Prepared | None


def planned_change(state: Path, vault: Path) -> Planned:
    """Sync ``vault``, change the store's first fact, and prepare the sync it calls for."""
    ws = synced(state, vault)
    node = edit_first_fact(state, "orbital speaks OTLP over HTTP now")
    return Planned(ws=ws, node=node, prepared=prepare(ws))


def what(report: SyncReport) -> tuple[object, ...]:
    """What a sync did to each note, its commit aside."""
    return (report.created, report.updated, report.removed, report.unchanged, report.kept_edited)


def tree(vault: Path) -> str:
    """The id of the tree the vault's HEAD commits."""
    return str(pygit2.Repository(str(vault)).head.peel(pygit2.Commit).tree_id)


def test_a_prepared_sync_commits_what_a_plain_sync_commits(
    demo_state: Path, tmp_path: Path
) -> None:
    """Applied as prepared, the sync commits the very tree and counts of working it out anew."""
    ahead, plain = synced(demo_state, tmp_path / "a"), synced(demo_state, tmp_path / "b")
    edit_first_fact(demo_state, "orbital speaks OTLP over HTTP now")
    prepared = prepare(ahead)
    assert prepared is not None
    first = sync(ahead, SyncRequest(), clock=lambda: NOON, prepared=prepared)
    second = sync(plain, SyncRequest(), clock=lambda: NOON)
    assert first.planned_ahead and not second.planned_ahead
    assert first.report is not None and second.report is not None
    assert what(first.report) == what(second.report)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    assert check(ahead).in_sync


def test_nothing_is_prepared_when_nothing_is_to_do(demo_state: Path, tmp_path: Path) -> None:
    """A vault in sync with its stores has no sync to work out."""
    assert prepare(synced(demo_state, tmp_path / "vault")) is None


def test_nothing_is_prepared_before_the_first_sync(demo_state: Path, tmp_path: Path) -> None:
    """No vault yet: the first sync is worked out when it runs, and preparing writes nothing."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    assert prepare(ws) is None
    assert not (tmp_path / "vault").exists()


def test_preparing_writes_nothing_to_the_vault(demo_state: Path, tmp_path: Path) -> None:
    """A prepared sync is read-only: the vault's HEAD and files stay as they were."""
    vault = tmp_path / "vault"
    ws = synced(demo_state, vault)
    before = tree(vault), sorted(p.read_bytes() for p in vault.rglob("*.md"))
    edit_first_fact(demo_state, "orbital speaks OTLP over HTTP now")
    assert prepare(ws) is not None
    assert (tree(vault), sorted(p.read_bytes() for p in vault.rglob("*.md"))) == before


def test_stores_changed_since_preparing_are_synced_as_they_are_now(
    demo_state: Path, tmp_path: Path
) -> None:
    """The plan was for other stores: it is set aside, and the sync works out the new one."""
    ws, _, prepared = planned_change(demo_state, tmp_path / "vault")
    node = edit_first_fact(demo_state, "orbital speaks OTLP over QUIC now")
    outcome = sync(ws, SyncRequest(), prepared=prepared)
    assert outcome.changed and not outcome.planned_ahead
    assert "QUIC" in note_of(tmp_path / "vault", node).read_text(encoding="utf-8")
    assert check(ws).in_sync


def test_a_commit_made_since_preparing_sets_the_plan_aside(
    demo_state: Path, tmp_path: Path
) -> None:
    """The vault's HEAD moved (the user committed): the sync works its plan out again."""
    vault = tmp_path / "vault"
    ws, _, prepared = planned_change(demo_state, vault)
    (vault / "mine.md").write_text("my own note\n", encoding="utf-8")
    repo = pygit2.Repository(str(vault))
    repo.index.add("mine.md")
    repo.index.write()
    who = pygit2.Signature("me", "me@localhost")
    repo.create_commit("HEAD", who, who, "mine", repo.index.write_tree(), [repo.head.target])
    outcome = sync(ws, SyncRequest(), prepared=prepared)
    assert outcome.changed and not outcome.planned_ahead
    assert (vault / "mine.md").read_text(encoding="utf-8") == "my own note\n"
    assert check(ws).in_sync


def test_a_note_edited_since_preparing_keeps_the_edit(demo_state: Path, tmp_path: Path) -> None:
    """The plan saw the note unedited; the user's save after it is never overwritten."""
    vault = tmp_path / "vault"
    ws, node, prepared = planned_change(demo_state, vault)
    note = note_of(vault, node)
    edited = note.read_text(encoding="utf-8") + "\nMy own line.\n"
    note.write_text(edited, encoding="utf-8")
    outcome = sync(ws, SyncRequest(), prepared=prepared)
    assert outcome.planned_ahead
    assert note.read_text(encoding="utf-8") == edited
    sync(ws, SyncRequest())  # the next sync sees the edit, and keeps or merges it
    assert "My own line." in note.read_text(encoding="utf-8")


def test_a_forced_sync_does_not_take_a_prepared_plan(demo_state: Path, tmp_path: Path) -> None:
    """Only a plain sync is prepared: one that asks more works itself out."""
    ws, _, prepared = planned_change(demo_state, tmp_path / "vault")
    outcome = sync(ws, SyncRequest(force=True, overwrite_edited=True), prepared=prepared)
    assert outcome.changed and not outcome.planned_ahead


def test_a_vault_synced_since_preparing_is_the_quick_answer(
    demo_state: Path, tmp_path: Path
) -> None:
    """Another sync applied the change first: the plan is set aside and nothing is redone."""
    ws, _, prepared = planned_change(demo_state, tmp_path / "vault")
    assert sync(ws, SyncRequest()).changed
    again = sync(ws, SyncRequest(), prepared=prepared)
    assert again.quick and not again.planned_ahead


def test_warmed_up_the_next_sync_loads_no_cache_file(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resident process warmed up patches its first sync from memory, not from its caches."""
    ws = synced(demo_state, tmp_path / "vault")
    with cachefile.resident():
        warm(ws)
        edit_first_fact(demo_state, "orbital speaks OTLP over HTTP now")
        loaded: list[str] = []
        read = cachefile.read

        def reading(path: Path, head: bytes) -> bytes | None:
            loaded.append(path.name)
            return read(path, head)

        monkeypatch.setattr(cachefile, "read", reading)
        report = sync(ws, SyncRequest(), clock=lambda: NOON).report
    assert report is not None and report.updated
    assert not [name for name in loaded if name.startswith(("graph-patch", "note-keys"))]


def test_warming_up_outside_a_resident_process_builds_nothing(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing would be held: a one-shot process is not made to build for nothing."""
    from vaultsync.app import sync as app_sync

    ws = synced(demo_state, tmp_path / "vault")
    monkeypatch.setattr(app_sync, "vault_notes", pytest.fail)
    warm(ws)


def tear_a_session(state: Path) -> str:
    """Cut the store's first session in half; the warning line its skip gives."""
    session = sorted((state / "sessions").glob("*.json"))[0]
    session.write_bytes(session.read_bytes()[:20])
    return f"warning: sessions/{session.name}"


@pytest.mark.parametrize("ahead", ["prepare", "warm"])
def test_a_store_file_skipped_ahead_is_still_warned_about_by_the_sync(
    demo_state: Path, tmp_path: Path, ahead: str
) -> None:
    """A build ahead of time says nothing, so it leaves each warning to the sync that says it."""
    ws = synced(demo_state, tmp_path / "vault")
    said = tear_a_session(demo_state)
    with cachefile.resident():
        assert (prepare if ahead == "prepare" else warm)(ws) is None
        warnings = sync(ws, SyncRequest(), clock=lambda: NOON).warnings
    assert [line for line in warnings if line.startswith(said)]
    edit_first_fact(demo_state, "orbital speaks OTLP over HTTP now")  # a sync that reads again
    assert not sync(ws, SyncRequest(), clock=lambda: NOON).warnings  # said once only

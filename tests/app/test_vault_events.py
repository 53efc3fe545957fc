"""A resident process's syncs built on the vault's file events: as a full scan's, or safe."""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from demoedits import TOPIC, edit_first_fact, edit_topic, note_of
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.watch import vault_events
from vaultsync.app.workspace import Workspace, open_workspace
from vaultsync.core import cachefile
from vaultsync.core.fileevents import Wakeups
from vaultsync.vault.report import SyncReport
from vaultsync.vault.vaultevents import watching
from vaultsync.vault.write import VaultFS

NOON = datetime(2026, 10, 15, 12, 0, tzinfo=UTC)


class Unheard:
    """Events that vouch for every moment and name nothing: every event lost."""

    def changed_since(self, moment_ns: int) -> frozenset[str] | None:
        return frozenset()

    def forget_before(self, moment_ns: int) -> None:
        pass


def add_a_line(note: Path, line: str) -> None:
    """The user's edit, saved a minute ago (a note saved in the last seconds is merged later)."""
    note.write_text(note.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    before = time.time_ns() - 60 * 10**9
    os.utime(note, ns=(before, before))


def synced(state: Path, vault: Path) -> Workspace:
    """A vault in sync whose notes were written a minute ago (out of any racy window)."""
    ws = open_workspace(str(state), str(vault))
    sync(ws, SyncRequest(), clock=lambda: NOON)
    before = time.time_ns() - 60 * 10**9
    for note in vault.rglob("*.md"):
        if ".git" not in note.parts:
            os.utime(note, ns=(before, before))
    return ws


def once(ws: Workspace) -> SyncReport:
    report = sync(ws, SyncRequest(), clock=lambda: NOON).report
    assert report is not None
    return report


def test_a_note_edited_unheard_is_never_overwritten(demo_state: Path, tmp_path: Path) -> None:
    """An event lost: the write planned over the edit is refused, and the next sync finds it."""
    ws = synced(demo_state, tmp_path / "vault")
    edit_first_fact(demo_state, "orbital speaks OTLP over HTTP now")
    with cachefile.resident(), watching(ws.vault, Unheard()):
        once(ws)  # no stat cache of this process yet: every note looked at, the tie made
        note = note_of(ws.vault, TOPIC)
        add_a_line(note, "my own line")
        edited = note.read_bytes()
        edit_topic(demo_state, "Traces skip the collector again")
        refused = once(ws)
        assert note.read_bytes() == edited
        assert "Topics/telemetry.md" in refused.kept_edited  # left for a later sync
        after = once(ws)  # a write refused: the events missed something, every note is looked at
    assert note.read_bytes() == edited
    assert [conflict.path for conflict in after.conflicts] == ["Topics/telemetry.md"]


def test_an_edit_heard_is_synced_as_a_full_scan_syncs_it(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the vault's real file events, a user edit is found as every note's stat finds it."""
    state_copy = tmp_path / "state-copy"
    shutil.copytree(demo_state, state_copy)
    heard_ws = synced(demo_state, tmp_path / "heard")
    plain_ws = synced(state_copy, tmp_path / "plain")
    told: list[frozenset[str] | None] = []
    scan = VaultFS.scan

    def telling(fs: VaultFS, paths: Any, cache: Any, changed: Any = None) -> Any:
        told.append(changed)
        return scan(fs, paths, cache, changed)

    monkeypatch.setattr(VaultFS, "scan", telling)
    events = vault_events(heard_ws.vault).start()
    try:
        with cachefile.resident(), watching(heard_ws.vault, events):
            wait_listening(events)  # before the scan the stat cache will be tied to
            for state in (demo_state, state_copy):
                edit_first_fact(state, "orbital speaks OTLP over HTTP now")
            once(heard_ws)  # the tie to this process's stat cache
            once(plain_ws)
            for state in (demo_state, state_copy):
                edit_topic(state, "Traces skip the collector again")
            edited_at = time.monotonic_ns()
            for ws in (heard_ws, plain_ws):
                add_a_line(note_of(ws.vault, TOPIC), "mine")
            wait_heard(events, edited_at, note_of(heard_ws.vault, TOPIC))
            told.clear()
            heard, plain = once(heard_ws), once(plain_ws)
    finally:
        events.close()
    assert told[0] is not None and "Topics/telemetry.md" in told[0]  # the events were used
    assert heard.conflicts  # found as an edit that overlaps the stores' change
    assert (heard.updated, heard.merged, heard.kept_edited, heard.conflicts) == (
        plain.updated,
        plain.merged,
        plain.kept_edited,
        plain.conflicts,
    )
    assert (
        note_of(heard_ws.vault, TOPIC).read_bytes() == note_of(plain_ws.vault, TOPIC).read_bytes()
    )


def wait_listening(events: Wakeups) -> None:
    """Wait (a minute at most) until ``events`` vouch for every change from now on."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if events.changed_since(time.monotonic_ns()) is not None:
            return
        time.sleep(0.05)
    raise AssertionError("the vault's events never came")


def wait_heard(events: Wakeups, since: int, path: Path) -> None:
    """Wait (a minute at most) until ``events`` heard of ``path``: delivery takes about 50 ms."""
    target = os.fspath(path.resolve())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = events.changed_since(since)
        if found is not None and target in found:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} was never heard")

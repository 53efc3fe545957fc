"""``app.sync``: where a sync happens, in-process, with a fixed clock."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pygit2
import pytest
from helpers import outlived, wait_for_packer
from vaultsync.app.sync import SyncRequest, check, status, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.core.errors import TemplateError
from vaultsync.vault import decide, housekeeping

NOON = datetime(2026, 10, 15, 12, 0, tzinfo=UTC)


def test_a_first_sync_creates_and_commits_at_the_clock_given(
    demo_state: Path, tmp_path: Path
) -> None:
    """The outcome counts the notes created, and the commit is dated by the clock passed."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    outcome = sync(ws, SyncRequest(), clock=lambda: NOON)
    assert outcome.report is not None and outcome.changed and outcome.report.created
    head = pygit2.Repository(str(tmp_path / "vault")).head.peel(pygit2.Commit)
    assert head.commit_time == int(NOON.timestamp())


def test_a_sync_lets_go_of_what_an_earlier_sync_kept(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync begins by freeing what a big sync before it in this process kept to the end."""
    seen = outlived(monkeypatch)
    assert seen() is not None
    sync(open_workspace(str(demo_state), str(tmp_path / "vault")), SyncRequest())
    assert seen() is None


def test_a_second_sync_is_the_quick_answer(demo_state: Path, tmp_path: Path) -> None:
    """Nothing changed since the last sync: answered from stat data, no report."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    again = sync(ws, SyncRequest())
    assert again.quick and not again.changed


def test_a_sync_reads_the_control_files_once(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moves, plan and apply share one read of the manifest, journal and cache."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    (demo_state / "memory" / "topics.json").write_text("[]")  # something to do
    reads: list[object] = []
    real = decide.read_controls

    def counted(fs: object, repo: object = None) -> decide.ControlFiles:
        reads.append(fs)
        return real(fs, repo)  # type: ignore[arg-type]

    monkeypatch.setattr(decide, "read_controls", counted)
    assert sync(ws, SyncRequest()).changed
    assert len(reads) == 1


def test_a_dry_run_reports_what_the_run_then_does(demo_state: Path, tmp_path: Path) -> None:
    """The dry run's created/updated/removed are the real run's, and it writes nothing."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    (demo_state / "memory" / "topics.json").write_text("[]")
    dry = sync(ws, SyncRequest(dry_run=True)).report
    assert check(ws).differences  # the dry run left the vault as it was
    real = sync(ws, SyncRequest()).report
    assert dry is not None and real is not None
    assert (dry.created, dry.updated, dry.removed) == (real.created, real.updated, real.removed)


def test_a_failed_sync_saves_no_setting(demo_state: Path, tmp_path: Path) -> None:
    """Templates that fail on a note: the sync fails and render.templates is not saved."""
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "fact.md.j2").write_text("{{ properties.no_such_property.deeper }}\n")
    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault), templates=templates)
    with pytest.raises(TemplateError):
        sync(ws, SyncRequest(remember_templates=True))
    assert not (vault / ".vaultsync" / "config.toml").exists()
    plain = open_workspace(str(demo_state), str(vault))
    assert plain.templates is None and sync(plain, SyncRequest()).changed


def test_status_and_check_agree_on_a_fresh_vault(demo_state: Path, tmp_path: Path) -> None:
    """Right after a sync: check finds no difference, status nothing pending."""
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    assert check(ws).in_sync
    assert status(ws).report.pending == ()


def test_status_says_the_background_embedding_failed(demo_state: Path, tmp_path: Path) -> None:
    """A semantic index job that died is named by status, with its last error line."""
    import subprocess
    import sys

    from vaultsync.search.database import index_path
    from vaultsync.search.embedjob import job_log, record_started
    from vaultsync.search.index import update_index

    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    update_index(vault)
    assert status(ws).embedding_failed == ""
    db = index_path(vault)
    job_log(db).write_text("Traceback (most recent call last):\nImportError: boom\n")
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    record_started(db, int(dead.stdout))
    assert status(ws).embedding_failed == "unknown exit: ImportError: boom"


def test_status_says_the_background_packing_failed(demo_state: Path, tmp_path: Path) -> None:
    """A packing of git objects that failed is named by status, with where its log is."""
    from vaultsync.core.background import record_failure
    from vaultsync.vault.housekeeping import pack_job

    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    assert status(ws).packing_failed == ""
    record_failure(pack_job(vault), 1, "git repack: out of disk space")
    assert status(ws).packing_failed == (
        "the background packing failed (exit 1: git repack: out of disk space); "
        "see .vaultsync/git-pack.log"
    )


def test_a_dry_run_lists_the_merges_the_sync_then_makes(demo_state: Path, tmp_path: Path) -> None:
    """An edited note the stores changed elsewhere: the dry run says merged, as the run does."""
    import os
    import time

    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    note = vault / "Topics" / "telemetry.md"
    note.write_text(note.read_text() + "\nA line of my own.\n")
    then = time.time() - 60  # saved a minute ago: no editor is writing it
    os.utime(note, (then, then))
    topics = demo_state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    next(t for t in data if t["name"] == "telemetry")["mentions"] = 99
    topics.write_text(json.dumps(data))
    objects = sorted(p.name for p in (vault / ".git" / "objects").rglob("*"))
    dry = sync(ws, SyncRequest(dry_run=True)).report
    assert sorted(p.name for p in (vault / ".git" / "objects").rglob("*")) == objects
    real = sync(ws, SyncRequest()).report
    assert dry is not None and real is not None
    assert dry.merged == real.merged == ("Topics/telemetry.md",)
    assert "Topics/telemetry.md" not in dry.kept_edited


def test_the_terminal_and_the_commit_count_a_merge_alike(demo_state: Path, tmp_path: Path) -> None:
    """A merge is counted as a merge, the same in the terminal line and the commit subject."""
    import os
    import time

    from vaultsync.cli.reports import sync_lines

    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    sync(ws, SyncRequest())
    note = vault / "Topics" / "telemetry.md"
    note.write_text(note.read_text() + "\nA line of my own.\n")
    then = time.time() - 60
    os.utime(note, (then, then))
    topics = demo_state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    next(t for t in data if t["name"] == "telemetry")["mentions"] = 99
    topics.write_text(json.dumps(data))
    report = sync(ws, SyncRequest()).report
    assert report is not None and report.merged == ("Topics/telemetry.md",)
    line = sync_lines(report, vault, verbose=False)[0]
    subject = pygit2.Repository(str(vault)).head.peel(pygit2.Commit).message.splitlines()[0]
    counted = subject.removeprefix("vaultsync: sync (").removesuffix(")")
    assert "1 merged" in counted and f": {counted}," in line


def test_status_and_check_in_sync_build_no_note(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a sync they answer from its record: no store read, no note built."""
    from vaultsync.app import sync as app_sync

    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())

    def refuse(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("built every note")

    monkeypatch.setattr(app_sync, "vault_notes", refuse)
    assert check(ws).in_sync
    assert status(ws).report.pending == ()


def test_skipped_store_files_survive_the_record(demo_state: Path, tmp_path: Path) -> None:
    """A store file the sync skipped is still listed by status and check answered from its
    record, as they list it when they plan."""
    (demo_state / "sessions").mkdir(exist_ok=True)
    (demo_state / "sessions" / "broken.json").write_text("{not json")
    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    synced = sync(ws, SyncRequest())
    assert [s.source for s in synced.skipped] == ["sessions/broken.json"]
    assert [s.source for s in check(ws).skipped] == ["sessions/broken.json"]
    assert [s.source for s in status(ws).skipped] == ["sessions/broken.json"]


def test_a_sync_freezes_its_notes_before_the_collector_resumes(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync's notes reach ``big_run`` with the collector still paused, full or patched."""
    import gc

    from vaultsync.core import process

    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    seen: list[bool] = []
    real = process.big_run

    def watched(notes: int) -> None:
        seen.append(gc.isenabled())
        real(notes)

    monkeypatch.setattr(process, "big_run", watched)
    sync(ws, SyncRequest())  # a full build
    (demo_state / "memory" / "topics.json").write_text("[]")
    sync(ws, SyncRequest())  # patched
    assert seen == [False, False]
    assert gc.isenabled()


def test_a_sync_packs_the_loose_objects_past_the_bound(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the bound, the objects a sync committed loose are packed (in the background), and
    the vault reads alike."""
    monkeypatch.setattr(housekeeping, "PACK_AT_KIB", 1)
    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    outcome = sync(ws, SyncRequest())
    assert outcome.changed and not outcome.warnings
    wait_for_packer(vault)
    assert housekeeping.loose_bytes(vault / ".git" / "objects") == 0
    subprocess.run(["git", "-C", str(vault), "fsck", "--strict"], check=True, capture_output=True)
    assert not check(ws).differences


def test_a_sync_without_a_git_program_says_its_objects_stay_loose(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git program to pack with: the syncs are done all the same; the packer's failure is
    one warning line of the next sync that commits, and of status."""
    monkeypatch.setattr(housekeeping, "PACK_AT_KIB", 1)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    vault = tmp_path / "vault"
    ws = open_workspace(str(demo_state), str(vault))
    assert sync(ws, SyncRequest()).changed
    wait_for_packer(vault)
    said = (
        "warning: git objects not packed: the background packing failed (exit 1: cannot run "
        "git: No such file or directory); see .vaultsync/git-pack.log"
    )
    assert f"warning: git objects not packed: {status(ws).packing_failed}" == said
    topics = demo_state / "memory" / "topics.json"
    topics.write_text(json.dumps([*json.loads(topics.read_text()), {"name": "packing"}]))
    outcome = sync(ws, SyncRequest())
    assert outcome.changed
    assert [w for w in outcome.warnings if "packed" in w] == [said]
    wait_for_packer(vault)
    assert sync(ws, SyncRequest()).quick


def test_a_sync_after_edits_alone_builds_no_note(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stores unchanged, a note edited in Obsidian: answered from the record, the edit kept."""
    from vaultsync.app import sync as app_sync

    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    first = sync(ws, SyncRequest()).report
    note = ws.vault / "Topics" / "Go.md"
    note.write_text(note.read_text() + "\nmy own line\n")
    built: list[object] = []
    real = app_sync.vault_notes

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(app_sync, "vault_notes", counted)
    outcome = sync(ws, SyncRequest())
    assert first is not None and outcome.report is not None and built == []
    assert outcome.report.kept_edited == ("Topics/Go.md",) and not outcome.changed
    assert outcome.report.unchanged == first.unchanged + len(first.created) - 1
    assert sync(ws, SyncRequest()).quick  # said once: the record now holds the edit

"""Stages 5-6 end to end: ``sync_vault``, ``check_vault``, ``vault_status``, real files and git."""

from __future__ import annotations

import gc
import os
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from helpers import assert_reaped, wait_for_pid
from syncdriver import FIXED_TIME, make_spec
from vaultsync.core.errors import UnsafePathError, VaultWriteError
from vaultsync.core.fsio import RACY_NS
from vaultsync.core.model import NoteSpec
from vaultsync.vault import decide
from vaultsync.vault.apply import nothing_to_write
from vaultsync.vault.decide import Asked, plan_vault, read_controls, render
from vaultsync.vault.lazyrepo import LazyRepo
from vaultsync.vault.manifest import (
    CACHE,
    JOURNAL,
    MANIFEST,
    UNPROVEN_NS,
    Entry,
    Journal,
    blob_id,
    dump_journal,
    load_manifest,
)
from vaultsync.vault.plan import FileKind
from vaultsync.vault.sync import check_vault, sync_vault, vault_session, vault_status
from vaultsync.vault.write import VaultFS


def notes(count: int, version: int = 1, calls: list[str] | None = None) -> list[NoteSpec]:
    return [
        make_spec(
            f"Facts/f{i % 40}/note {i:05d}.md",
            f"# Note {i}\n\nversion {version}\n" + "text " * 40,
            calls=calls,
        )
        for i in range(count)
    ]


def git(vault: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=vault, capture_output=True, text=True, check=True
    ).stdout


def head(vault: Path) -> pygit2.Commit:
    return pygit2.Repository(str(vault)).head.peel(pygit2.Commit)


def age(vault: Path, seconds: float = 10) -> None:
    """Pretend every file was written ``seconds`` ago (out of the racy window)."""
    past = time.time_ns() - int(seconds * 1e9)
    for path in vault.rglob("*.md"):
        os.utime(path, ns=(past, past))


class TestSync:
    def test_fresh_vault(self, tmp_path: Path) -> None:
        """Notes 0600 in 0700 folders, manifest, one commit, clean status, nothing to check."""
        vault = tmp_path / "vault"
        report = sync_vault(vault, notes(5), clock=lambda: FIXED_TIME)
        assert len(report.created) == 5
        assert report.commit
        assert stat.S_IMODE((vault / "Facts" / "f1" / "note 00001.md").stat().st_mode) == 0o600
        assert stat.S_IMODE((vault / "Facts").stat().st_mode) == 0o700
        commit = head(vault)
        assert commit.message.startswith(
            "vaultsync: sync (5 created, 0 updated, 0 removed)\n\n"
            "facts: 5 created\n\nVaultsync-Sync: "
        )
        assert commit.commit_time == int(FIXED_TIME.timestamp())
        assert MANIFEST in commit.tree
        assert git(vault, "status", "--porcelain") == ""
        assert check_vault(vault, notes(5)) == ()

    def test_noop_renders_nothing_commits_nothing_touches_no_git(self, tmp_path: Path) -> None:
        """A second sync with nothing changed calls no ``render`` and never opens git (a broken
        ``.git/HEAD`` would make any git access fail)."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(30))
        calls: list[str] = []
        before = head(vault).id
        head_file = vault / ".git" / "HEAD"
        saved = head_file.read_bytes()
        head_file.write_bytes(b"garbage\n")
        try:
            report = sync_vault(vault, notes(30, calls=calls))
        finally:
            head_file.write_bytes(saved)
        assert calls == []
        assert report.unchanged == 30
        assert not report.changed
        assert head(vault).id == before

    def test_update_and_remove(self, tmp_path: Path) -> None:
        """Changed notes are rewritten, vanished ones removed with their empty folders."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(50))
        report = sync_vault(vault, notes(45, version=2))
        assert len(report.updated) == 45
        assert len(report.removed) == 5
        assert not (vault / "Facts" / "f49").exists()
        assert (vault / "Facts" / "f1" / "note 00001.md").read_text().count("version 2") == 1
        assert git(vault, "status", "--porcelain") == ""

    def test_same_bytes_under_a_new_key_are_not_rewritten(self, tmp_path: Path) -> None:
        """A changed key whose render gives the same bytes only refreshes the manifest."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("a.md", "same", key="k1")])
        inode = (vault / "a.md").stat().st_ino
        report = sync_vault(vault, [make_spec("a.md", "same", key="k2")])
        assert report.unchanged == 1
        assert not report.changed
        assert (vault / "a.md").stat().st_ino == inode
        assert '"key": "k2"' in (vault / MANIFEST).read_text()

    def test_no_op_sync_reads_no_note(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A no-op sync of 2,800 aged notes decides from stat data: it reads no note's bytes.

        (How long it takes is measured by ``make bench``, never asserted here.)
        """
        vault = tmp_path / "vault"
        specs = notes(2800)
        sync_vault(vault, specs)
        age(vault)
        sync_vault(vault, specs)  # re-hashes the aged files once and rewrites the stat cache
        reads: list[str] = []
        original = VaultFS._read

        def counting(dir_fd: int, name: str) -> bytes:
            reads.append(name)
            return original(dir_fd, name)

        monkeypatch.setattr(VaultFS, "_read", staticmethod(counting))
        report = sync_vault(vault, specs)
        assert report.unchanged == len(specs)
        assert reads == []

    def test_dry_run_writes_nothing(self, tmp_path: Path) -> None:
        """A dry run reports the plan and creates not even the vault folder."""
        vault = tmp_path / "vault"
        report = sync_vault(vault, notes(3), dry_run=True)
        assert report.dry_run
        assert len(report.created) == 3
        assert not vault.exists()

    def test_without_commit(self, tmp_path: Path) -> None:
        """``commit=False`` writes notes and manifest, commits nothing, stores the blobs."""
        vault = tmp_path / "vault"
        report = sync_vault(vault, notes(3), commit=False)
        assert len(report.created) == 3
        assert report.commit == ""
        assert (vault / MANIFEST).exists()
        repo = pygit2.Repository(str(vault))
        assert repo.head_is_unborn
        entries = load_manifest((vault / MANIFEST).read_bytes()).entries
        assert all(e.blob in repo for e in entries.values())  # the merge bases of later syncs

    def test_unsafe_spec_writes_nothing(self, tmp_path: Path) -> None:
        """One spec path leaving the vault refuses the whole sync before any write."""
        vault = tmp_path / "vault"
        with pytest.raises(UnsafePathError):
            sync_vault(vault, [make_spec("ok.md", "x"), make_spec("../evil.md", "x")])
        assert not vault.exists()
        assert not (tmp_path / "evil.md").exists()

    def test_edit_saved_during_rendering_is_kept(self, tmp_path: Path) -> None:
        """A user save between the scan and the write wins; the note is reported as kept."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("a.md", "v1")])
        note = vault / "a.md"

        def render() -> bytes:
            note.write_text("the user saved this while we rendered\n")
            return b"v2"

        spec = NoteSpec(path="a.md", node_id="note:a.md", key="v2-key", render=render)
        report = sync_vault(vault, [spec])
        assert note.read_text() == "the user saved this while we rendered\n"
        assert report.kept_edited == ("a.md",)
        assert sync_vault(vault, [make_spec("a.md", "v3")]).kept_edited == ("a.md",)

    def test_file_appearing_during_a_forced_recreate_is_kept(self, tmp_path: Path) -> None:
        """A user file created at a path while ``--force`` re-creates it there wins: reported
        as a conflict, untouched, and the engine's old note stays in HEAD (no removal committed)."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("a.md", "ours")])
        (vault / "a.md").unlink()

        def render() -> bytes:
            (vault / "a.md").write_text("the user's new note\n")
            return b"ours again"

        spec = NoteSpec(path="a.md", node_id="note:a.md", key="k2", render=render)
        report = sync_vault(vault, [spec], force=True)
        assert [c.path for c in report.conflicts] == ["a.md"]
        assert (vault / "a.md").read_text() == "the user's new note\n"
        assert "a.md" in head(vault).tree

    def test_racy_same_size_edit_is_detected(self, tmp_path: Path) -> None:
        """An in-place edit of the same size that keeps the file's mtime, right after a sync, is
        still seen (racy files are hashed), so it is kept."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("a.md", "version 1")])
        note = vault / "a.md"
        before = note.stat()
        with note.open("r+b") as handle:
            handle.write(b"VERSION 1")
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert note.stat().st_ino == before.st_ino
        report = sync_vault(vault, [make_spec("a.md", "version 2")])
        assert report.kept_edited == ("a.md",)
        assert note.read_bytes() == b"VERSION 1"

    def test_stat_cache_is_rewritten_once_out_of_the_racy_window(self, tmp_path: Path) -> None:
        """Files hashed because they were racy get trusted stat data once the window has passed."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(3))
        cache = vault / CACHE
        later = time.time_ns() + 2 * RACY_NS
        os.utime(cache, ns=(later - 3 * RACY_NS, later - 3 * RACY_NS))
        first = cache.stat().st_mtime_ns
        sync_vault(vault, notes(3))
        assert cache.stat().st_mtime_ns != first

    def test_force(self, tmp_path: Path) -> None:
        """``force`` regenerates edited notes and re-creates deleted ones, never foreign files."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("a.md", "a"), make_spec("b.md", "b")])
        (vault / "a.md").write_text("edited")
        (vault / "b.md").unlink()
        (vault / "c.md").write_text("mine")
        specs = [make_spec("a.md", "a"), make_spec("b.md", "b"), make_spec("c.md", "c")]
        plain = sync_vault(vault, specs)
        assert (plain.kept_edited, plain.kept_deleted) == (("a.md",), ("b.md",))
        assert [c.path for c in plain.conflicts] == ["c.md"]
        forced = sync_vault(vault, specs, force=True)
        assert forced.updated == ("a.md",)
        assert forced.created == ("b.md",)
        assert [c.path for c in forced.conflicts] == ["c.md"]
        assert (vault / "a.md").read_text() == "a"
        assert (vault / "c.md").read_text() == "mine"

    def test_concurrent_syncs_are_serialized(self, tmp_path: Path) -> None:
        """Two syncs of one vault at once both finish, one after the other."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(20))
        errors: list[BaseException] = []

        def run(version: int) -> None:
            try:
                sync_vault(vault, notes(20, version=version))
            except BaseException as err:  # reported below
                errors.append(err)

        threads = [threading.Thread(target=run, args=(v,)) for v in (2, 3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert (
            check_vault(vault, notes(20, version=2)) == ()
            or check_vault(vault, notes(20, version=3)) == ()
        )
        assert git(vault, "status", "--porcelain") == ""

    def test_lock_timeout(self, tmp_path: Path) -> None:
        """A sync that cannot get the vault lock in time fails and writes nothing."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(1))
        with VaultFS(vault) as fs, fs.lock(timeout=1), pytest.raises(VaultWriteError, match="lock"):
            sync_vault(vault, notes(1, version=2), lock_timeout=0.2)
        assert "version 1" in (vault / "Facts" / "f0" / "note 00000.md").read_text()

    def test_leftover_temps_are_swept(self, tmp_path: Path) -> None:
        """After a crash, our temp files in the journal's folders go; look-alikes stay."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("F/a.md", "a")])
        stray = vault / "F" / ".vaultsync-00112233aabb.tmp"
        look_alike = vault / "F" / ".vaultsync-notours.tmp"
        stray.write_bytes(b"half")
        look_alike.write_bytes(b"user")
        journal = Journal(intents={"F/a.md": Entry(node="n", key="k", blob="0" * 40)})
        with VaultFS(vault) as fs:
            fs.write_control(JOURNAL, dump_journal(journal))
        report = sync_vault(vault, [make_spec("F/a.md", "a")])
        assert report.recovered
        assert not stray.exists()
        assert look_alike.exists()
        assert not (vault / JOURNAL).exists()

    def test_unreadable_journal_sweeps_the_vault(self, tmp_path: Path) -> None:
        """A journal that cannot be read makes the next sync sweep every note folder."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("F/G/a.md", "a")])
        stray = vault / "F" / "G" / ".vaultsync-00112233aabb.tmp"
        stray.write_bytes(b"half")
        (vault / JOURNAL).write_bytes(b"\x00 not json")
        sync_vault(vault, [make_spec("F/G/a.md", "a")])
        assert not stray.exists()


class TestCheckAndStatus:
    def test_check_lists_differences_and_is_read_only(self, tmp_path: Path) -> None:
        """``check`` names what a sync would do, renders only changed keys, writes nothing."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("a.md", "a"), make_spec("b.md", "b"), make_spec("c.md", "c")])
        (vault / ".vaultsync" / "lock").unlink()
        calls: list[str] = []
        specs = [
            make_spec("a.md", "a", calls=calls),
            make_spec("b.md", "b2", calls=calls),
            make_spec("d.md", "d", calls=calls),
        ]
        before = {p: p.stat().st_mtime_ns for p in vault.rglob("*") if ".git" not in p.parts}
        assert check_vault(vault, specs) == ("create d.md", "remove c.md", "update b.md")
        assert sorted(calls) == ["b.md", "d.md"]
        after = {p: p.stat().st_mtime_ns for p in vault.rglob("*") if ".git" not in p.parts}
        assert after == before
        missing = ("create a.md", "create b.md", "create d.md")
        assert check_vault(tmp_path / "missing", specs) == missing
        assert not (tmp_path / "missing").exists()

    def test_status(self, tmp_path: Path) -> None:
        """Edits with the commit that carried them (or uncommitted), deletions, conflicts, work."""
        vault = tmp_path / "vault"
        names = ["a.md", "b.md", "c.md", "d.md"]
        sync_vault(vault, [make_spec(n, n) for n in names])
        (vault / "a.md").write_text("committed edit")
        git(vault, "add", "a.md")
        git(vault, "commit", "-qm", "my edit of a")
        (vault / "b.md").write_text("uncommitted edit")
        (vault / "c.md").unlink()
        (vault / "e.md").write_text("mine")
        specs = [make_spec(n, n) for n in names] + [make_spec("e.md", "e"), make_spec("f.md", "f")]
        status = vault_status(vault, specs)
        by_path = {o.path: o for o in status.edited}
        assert set(by_path) == {"a.md", "b.md"}
        assert by_path["a.md"].commit == str(head(vault).id)
        assert by_path["a.md"].when is not None
        assert not by_path["a.md"].uncommitted
        assert by_path["b.md"].uncommitted
        assert by_path["b.md"].commit == ""
        assert status.deleted == ("c.md",)
        assert [c.path for c in status.conflicts] == ["e.md"]
        assert status.pending == ("create f.md",)


class TestDecide:
    def test_control_files_are_read_into_one_record(self, tmp_path: Path) -> None:
        """Manifest (with its fingerprint), journal and stat cache (with its mtime), by name."""
        vault = tmp_path / "vault"
        sync_vault(vault, [make_spec("F/a.md", "a")])
        journal = Journal(intents={"F/b.md": Entry(node="n", key="k", blob="0" * 40)})
        with VaultFS(vault) as fs:
            fs.write_control(JOURNAL, dump_journal(journal))
            controls = read_controls(fs)
        manifest_bytes = (vault / MANIFEST).read_bytes()
        assert controls.manifest_bytes == manifest_bytes
        assert controls.manifest.fingerprint == blob_id(manifest_bytes)
        assert set(controls.manifest.entries) == {"F/a.md"}
        assert controls.journal is not None
        assert dict(controls.journal.intents) == dict(journal.intents)
        assert controls.cache.written_ns == (vault / CACHE).stat().st_mtime_ns
        assert set(controls.cache.entries) == {"F/a.md"}

    def test_no_vault_reads_as_empty(self) -> None:
        """Without a vault folder there is no manifest, journal or cache."""
        controls = read_controls(None)
        assert controls.manifest_bytes is None
        assert not controls.manifest.entries
        assert controls.journal is None
        assert not controls.cache.entries

    def test_a_plan_with_nothing_to_do_writes_nothing(self, tmp_path: Path) -> None:
        """A vault in sync decides that nothing is to be written: no journal, no commit."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(3))
        with VaultFS(vault) as fs:
            decision = plan_vault(fs, LazyRepo(vault), notes(3), Asked())
        rendered = render(decision.plan)
        assert nothing_to_write(decision, rendered)
        with VaultFS(vault) as fs:
            changed = plan_vault(fs, LazyRepo(vault), notes(3, version=2), Asked())
        assert not nothing_to_write(changed, render(changed.plan))


def test_a_plan_runs_the_collector_at_most_once_per_generation(tmp_path: Path) -> None:
    """Planning 2,000 notes keeps the cyclic collector paused (it may run at the end)."""
    vault = tmp_path / "vault"
    sync_vault(vault, notes(2000))
    runs: list[str] = []

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(phase)

    changed = notes(2000, 2)
    with VaultFS(vault) as fs:
        controls = read_controls(fs)
        gc.callbacks.append(counted)
        try:
            decision = plan_vault(fs, LazyRepo(vault), changed, Asked(), controls=controls)
        finally:
            gc.callbacks.remove(counted)
    assert len(decision.plan.steps) == 2000
    assert len(runs) <= 3
    assert gc.isenabled()


def test_broken_repository_stops_the_sync_before_any_write(tmp_path: Path) -> None:
    """Garbage in .git/HEAD: one error (exit 7 class), and no note or manifest written."""
    vault = tmp_path / "vault"
    sync_vault(vault, notes(3))
    (vault / ".git" / "HEAD").write_text("garbage\n")
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file() and ".git" not in p.parts}
    with pytest.raises(VaultWriteError, match="repository is broken"):
        sync_vault(vault, notes(3, version=2))
    after = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before


class TestEarlyScan:
    """The plan's scan begun in a helper while the notes are built (``decide.begin_scan``)."""

    @pytest.fixture(autouse=True)
    def _early(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(decide, "EARLY_SCAN_MIN", 1)  # a small vault takes the path too
        monkeypatch.setenv("VAULTSYNC_JOBS", "2")

    @pytest.fixture
    def vault(self, tmp_path: Path) -> Path:
        """A vault of 300 notes, synced, every file out of the racy window."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(300))
        age(vault)
        return vault

    @staticmethod
    def _marked(monkeypatch: pytest.MonkeyPatch, marker: Path, then: Callable[[], object]) -> None:
        """The helper's scan writes its pid to ``marker``, then calls ``then``."""
        scan = decide._scan_rows

        def marked(*args: object) -> decide.Scanned:
            found = scan(*args)  # type: ignore[arg-type]
            marker.write_text(str(os.getpid()))
            then()
            return found

        monkeypatch.setattr(decide, "_scan_rows", marked)

    def test_the_plan_is_the_one_a_scan_at_plan_time_makes(
        self, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Edited, deleted, blocked, new and unchanged notes: the same disk state and steps."""
        (vault / "Facts/f1/note 00001.md").write_text("the user's words\n")
        (vault / "Facts/f2/note 00002.md").unlink()
        (vault / "Facts/f4/note 00004.md").unlink()
        (vault / "Facts/f4/note 00004.md").mkdir()  # not a file: never ours
        (vault / "Facts/f5").rename(tmp_path / "elsewhere")
        (vault / "Facts/f5").symlink_to(tmp_path / "elsewhere")  # a folder we never follow
        specs = [*notes(300, version=2)[:250], make_spec("New/new.md", "new")]
        marker = tmp_path / "scanned by"
        self._marked(monkeypatch, marker, lambda: None)
        with vault_session(vault, write=False) as session:
            session.begin_scan()
            early = session.plan(specs, Asked())
        assert int(marker.read_text()) != os.getpid()  # the helper's value was the one used
        with vault_session(vault, write=False) as session:
            late = session.plan(specs, Asked())
        assert dict(early.disk) == dict(late.disk)
        assert early.plan.steps == late.plan.steps
        kinds = {state.kind for state in early.disk.values()}
        assert kinds == {FileKind.FILE, FileKind.ABSENT, FileKind.OTHER, FileKind.BLOCKED}

    def test_an_edit_after_the_scan_is_kept(
        self, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A note saved by the user once the helper scanned it is not overwritten."""
        note = vault / "Facts/f3/note 00003.md"
        marker = tmp_path / "scanned by"
        self._marked(monkeypatch, marker, lambda: note.write_text("saved after the scan\n"))
        with vault_session(vault, write=True) as session:
            session.begin_scan()
            planned = session.plan(notes(300, version=2), Asked())
            report = session.sync(planned, clock=lambda: FIXED_TIME)
        assert note.read_text() == "saved after the scan\n"
        assert report.kept_edited == ("Facts/f3/note 00003.md",)
        assert int(marker.read_text()) != os.getpid()  # the helper did

    def test_a_file_changed_just_before_the_scan_is_read_again(
        self, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A file changed just before the scan, then again in the same timestamp, is read."""
        note = vault / "Facts/f6/note 00006.md"
        touched = time.time_ns() - 3 * 10**9
        os.utime(note, ns=(touched, touched))
        began = touched + 10**9  # a scan long before the stat cache is written
        scan = decide._scan_rows

        def earlier(*args: object) -> decide.Scanned:
            rows, racy, _ = scan(*args)  # type: ignore[arg-type]
            return rows, racy, began

        monkeypatch.setattr(decide, "_scan_rows", earlier)
        with vault_session(vault, write=True) as session:
            session.begin_scan()
            session.sync(session.plan(notes(300), Asked()), clock=lambda: FIXED_TIME)
        with VaultFS(vault) as fs:
            recorded = read_controls(fs).cache.entries
        # changed in the scan's racy window: recorded as proving nothing; the others as seen
        assert recorded["Facts/f6/note 00006.md"][0][1] == UNPROVEN_NS
        assert recorded["Facts/f7/note 00007.md"][0][1] > 0
        # The user's save within that timestamp: same size, same mtime, same inode.
        before = note.stat()
        with note.open("r+b") as handle:
            handle.write(b"!")  # was "#"
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
        sync_vault(vault, notes(300, version=2), clock=lambda: FIXED_TIME)
        assert note.read_bytes().startswith(b"! Note 6")  # seen: merged, not overwritten

    def test_a_session_that_never_plans_leaves_no_helper(
        self, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A command failing before its plan stops the scan: no process is left behind."""
        marker = tmp_path / "scanned by"
        self._marked(monkeypatch, marker, signal.pause)
        with pytest.raises(RuntimeError), vault_session(vault, write=True) as session:
            session.begin_scan()
            helper = wait_for_pid(marker)
            raise RuntimeError("the notes could not be built")
        assert_reaped(helper)

    def test_a_plan_that_fails_stops_the_scan(
        self, vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A plan failing before it took the scan leaves no helper behind either."""
        marker = tmp_path / "scanned by"
        self._marked(monkeypatch, marker, signal.pause)

        def broken(*_args: object) -> set[str]:
            raise VaultWriteError("the manifest's history cannot be read")

        monkeypatch.setattr(decide, "_paths", broken)
        with vault_session(vault, write=True) as session:
            session.begin_scan()
            helper = wait_for_pid(marker)
            with pytest.raises(VaultWriteError):
                session.plan(notes(300), Asked())
            assert_reaped(helper)


class TestPlannedInAnotherSession:
    """A plan made read-only, applied later in a writing session (``watch`` plans ahead)."""

    @staticmethod
    def _planned(vault: Path, specs: list[NoteSpec]) -> decide.Decision:
        with vault_session(vault, write=False) as session:
            return session.plan(specs, Asked())

    def test_the_plan_stands_while_the_records_are_as_they_were(self, tmp_path: Path) -> None:
        """Nothing changed since: the plan is applied and the vault is then in sync."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(5))
        decision = self._planned(vault, notes(5, version=2))
        with vault_session(vault, write=True) as session:
            assert session.still_as_planned(decision)
            report = session.sync(decision)
        assert len(report.updated) == 5
        assert check_vault(vault, notes(5, version=2)) == ()

    def test_a_manifest_written_since_sets_the_plan_aside(self, tmp_path: Path) -> None:
        """The same bytes written anew (another sync's doing) are not the file it planned from."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(5))
        decision = self._planned(vault, notes(5, version=2))
        manifest = vault / MANIFEST
        data = manifest.read_bytes()
        manifest.unlink()
        manifest.write_bytes(data)
        with vault_session(vault, write=True) as session:
            assert not session.still_as_planned(decision)

    def test_an_interrupted_sync_sets_the_plan_aside(self, tmp_path: Path) -> None:
        """A journal left since the plan: the interrupted sync is finished first, not skipped."""
        vault = tmp_path / "vault"
        sync_vault(vault, notes(5))
        decision = self._planned(vault, notes(5, version=2))
        (vault / JOURNAL).write_bytes(dump_journal(Journal(intents={})))
        with vault_session(vault, write=True) as session:
            assert not session.still_as_planned(decision)

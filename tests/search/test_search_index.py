"""The index on disk: incremental updates by content hash, link resolution, rebuilds, locks, WAL."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from vaults import age, engine_note, touch_later, write_vault
from vaultsync.core.errors import VaultWriteError
from vaultsync.search import index as index_module
from vaultsync.search.index import index_path, update_index
from vaultsync.search.model import SearchQuery
from vaultsync.search.reader import IndexNotReady, IndexReader, read_repairing
from vaultsync.search.registry import NoteText, read_note
from vaultsync.vault.write import VaultFS


def hits(vault: Path, text: str) -> list[str]:
    reader = IndexReader(vault)
    try:
        return [h.document.path for h in reader.search(SearchQuery(text=text, limit=50)).hits]
    finally:
        reader.close()


def backlinks(vault: Path, ref: str) -> list[tuple[str, str]]:
    reader = IndexReader(vault)
    try:
        return [(link.other.path, link.link_type) for link in reader.links(ref).backlinks]
    finally:
        reader.close()


def spy_on_parsing(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the paths the index parses from now on."""
    parsed: list[str] = []

    def spy(path: str, data: bytes) -> NoteText:
        parsed.append(path)
        return read_note(path, data)

    monkeypatch.setattr(index_module, "read_note", spy)
    return parsed


def aged_vault(root: Path, notes: dict[str, str], **kwargs: dict[str, str]) -> Path:
    write_vault(root, notes, **kwargs)
    for rel in notes:
        age(root / rel)
    return root


class TestBuild:
    def test_first_update_builds(self, tmp_path: Path) -> None:
        """The first update indexes every note and says it built the index."""
        vault = aged_vault(tmp_path, {"a.md": "alpha", "d/b.md": "beta"})
        report = update_index(vault)
        assert (report.notes, report.added, report.rebuilt) == (2, 2, True)
        assert index_path(vault).is_file()

    def test_index_is_private(self, tmp_path: Path) -> None:
        """The database is readable by its owner only, like the vault's notes."""
        update_index(aged_vault(tmp_path, {"a.md": "x"}))
        assert stat.S_IMODE(index_path(tmp_path).stat().st_mode) == 0o600

    def test_gitignored(self, tmp_path: Path) -> None:
        """A vault never synced gets the engine's ``.gitignore``: the index is never committed."""
        update_index(aged_vault(tmp_path, {"a.md": "x"}))
        assert "!manifest.json" in (tmp_path / ".vaultsync" / ".gitignore").read_text()

    def test_full_body_of_user_notes(self, tmp_path: Path) -> None:
        """A word deep in a user note's body is found (goclaw indexes only title and path)."""
        vault = aged_vault(tmp_path, {"Inbox/idea.md": "# Idea\n\n" + "filler " * 500 + "zeppelin"})
        update_index(vault)
        assert hits(vault, "zeppelin") == ["Inbox/idea.md"]

    def test_missing_vault(self, tmp_path: Path) -> None:
        """A vault folder that does not exist is a usage error, not a crash."""
        with pytest.raises(Exception, match="no vault here"):
            update_index(tmp_path / "nope")

    def test_control_folder_symlink_refused(self, tmp_path: Path) -> None:
        """A ``.vaultsync`` that is a symlink is never written through."""
        vault = aged_vault(tmp_path / "v", {"a.md": "x"})
        (tmp_path / "elsewhere").mkdir()
        (vault / ".vaultsync").symlink_to(tmp_path / "elsewhere")
        with contextlib.suppress(VaultWriteError):
            assert update_index(vault).skipped
        assert list((tmp_path / "elsewhere").iterdir()) == []


class TestIncremental:
    def test_unchanged_notes_are_not_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A second update with nothing changed parses no note (stat check only)."""
        vault = aged_vault(tmp_path, {"a.md": "alpha", "b.md": "beta"})
        update_index(vault)
        parsed = spy_on_parsing(monkeypatch)
        report = update_index(vault)
        assert (report.unchanged, report.changed, parsed) == (2, False, [])

    def test_same_bytes_new_mtime_not_reparsed(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A note touched but not changed is hashed, found equal, and not re-indexed."""
        vault = aged_vault(tmp_path, {"a.md": "alpha"})
        update_index(vault)
        touch_later(vault / "a.md", seconds=-30)
        parsed = spy_on_parsing(monkeypatch)
        assert update_index(vault).unchanged == 1
        assert parsed == []

    def test_changed_note(self, tmp_path: Path) -> None:
        """An edited note is re-indexed: the new word is found, the old one is not."""
        vault = aged_vault(tmp_path, {"a.md": "alpha", "b.md": "beta"})
        update_index(vault)
        (vault / "a.md").write_text("gamma")
        report = update_index(vault)
        assert (report.updated, report.unchanged) == (1, 1)
        assert (hits(vault, "gamma"), hits(vault, "alpha")) == (["a.md"], [])

    def test_racy_edit_is_seen(self, tmp_path: Path) -> None:
        """An edit in the same clock tick as the last update (same size and mtime) is still seen."""
        vault = write_vault(tmp_path, {"a.md": "alpha"})
        before = (vault / "a.md").stat()
        update_index(vault)
        (vault / "a.md").write_text("omega")
        os.utime(vault / "a.md", ns=(before.st_atime_ns, before.st_mtime_ns))
        update_index(vault)
        assert hits(vault, "omega") == ["a.md"]

    def test_removed_note(self, tmp_path: Path) -> None:
        """A deleted note leaves the index and the backlinks of what it linked."""
        vault = aged_vault(tmp_path, {"a.md": "[[b]] alpha", "b.md": "beta"})
        update_index(vault)
        (vault / "a.md").unlink()
        report = update_index(vault)
        assert (report.removed, hits(vault, "alpha"), backlinks(vault, "b.md")) == (1, [], [])

    def test_link_to_a_note_created_later(self, tmp_path: Path) -> None:
        """A link written before its target exists resolves once the target appears."""
        vault = aged_vault(tmp_path, {"a.md": "see [[Later note]]"})
        update_index(vault)
        write_vault(vault, {"sub/Later note.md": "hello"})
        update_index(vault)
        assert backlinks(vault, "sub/Later note.md") == [("a.md", "wikilink")]

    def test_renamed_target(self, tmp_path: Path) -> None:
        """A link to a renamed note no longer resolves to it."""
        vault = aged_vault(tmp_path, {"a.md": "see [[b]]", "b.md": "x"})
        update_index(vault)
        (vault / "b.md").rename(vault / "c.md")
        update_index(vault)
        assert backlinks(vault, "c.md") == []

    def test_closer_note_takes_over(self, tmp_path: Path) -> None:
        """A new note in the linking note's folder takes the link (Obsidian's order)."""
        vault = aged_vault(tmp_path, {"d/a.md": "see [[n]]", "far/away/n.md": "x"})
        update_index(vault)
        write_vault(vault, {"d/n.md": "y"})
        update_index(vault)
        assert (backlinks(vault, "d/n.md"), backlinks(vault, "far/away/n.md")) == (
            [("d/a.md", "wikilink")],
            [],
        )

    def test_one_transaction(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An update that fails half-way leaves the index exactly as it was."""
        vault = aged_vault(tmp_path, {"a.md": "alpha", "b.md": "beta"})
        update_index(vault)
        (vault / "a.md").write_text("gamma")
        (vault / "b.md").write_text("delta")

        def failing(path: str, data: bytes) -> NoteText:
            if path == "b.md":
                raise RuntimeError("disk gone")
            return read_note(path, data)

        monkeypatch.setattr(index_module, "read_note", failing)
        with pytest.raises(RuntimeError):
            update_index(vault)
        assert (hits(vault, "alpha"), hits(vault, "gamma")) == (["a.md"], [])


class TestIds:
    def test_engine_and_user_ids(self, tmp_path: Path) -> None:
        """Engine notes carry their graph id; user notes ``vault:<path>``."""
        vault = aged_vault(
            tmp_path,
            {"Projects/x.md": engine_note("project:x", "project", "x"), "mine.md": "hi"},
            engine={"Projects/x.md": "project:x"},
        )
        update_index(vault)
        reader = IndexReader(vault)
        docs, total = reader.documents()
        assert total == 2
        assert [(d.id, d.kind, d.engine) for d in docs] == [
            ("project:x", "project", True),
            ("vault:mine.md", "user", False),
        ]

    def test_manifest_change_alone_moves_ids(self, tmp_path: Path) -> None:
        """When the manifest starts listing a note, its id follows without a content change."""
        vault = aged_vault(tmp_path, {"n.md": "plain"})
        update_index(vault)
        write_vault(vault, {}, engine={"n.md": "topic:n"})
        update_index(vault)
        assert IndexReader(vault).document("n.md")[0].id == "topic:n"


class TestRecovery:
    def test_corrupt_file_is_rebuilt(self, tmp_path: Path) -> None:
        """A database overwritten with garbage is rebuilt by the next update."""
        vault = aged_vault(tmp_path, {"a.md": "alpha"})
        update_index(vault)
        index_path(vault).write_bytes(b"not a database at all" * 200)
        for suffix in ("-wal", "-shm"):
            Path(str(index_path(vault)) + suffix).unlink(missing_ok=True)
        report = update_index(vault)
        assert report.rebuilt
        assert hits(vault, "alpha") == ["a.md"]

    def test_corrupt_pages_found_by_a_reader_rebuild(self, tmp_path: Path) -> None:
        """A reader that meets corruption rebuilds the index and answers."""
        vault = aged_vault(tmp_path, {f"n{i}.md": f"word{i} " * 200 for i in range(30)})
        update_index(vault)
        db = index_path(vault)
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        data = bytearray(db.read_bytes())
        page = 4096
        for offset in range(2 * page, len(data), page):
            data[offset + 8 : offset + 64] = b"\xff" * 56
        db.write_bytes(bytes(data))
        reader = IndexReader(vault)
        result = read_repairing(vault, reader, lambda r: r.search(SearchQuery(text="word7")))
        assert [h.document.path for h in result.hits] == ["n7.md"]

    def test_reader_meeting_a_foreign_index_rebuilds(self, tmp_path: Path) -> None:
        """A reader that finds tables but no schema marker rebuilds the index and answers."""
        vault = aged_vault(tmp_path, {"a.md": "alpha"})
        update_index(vault)
        conn = sqlite3.connect(index_path(vault))
        conn.execute("DELETE FROM meta")
        conn.commit()
        conn.close()
        result = read_repairing(
            vault, IndexReader(vault), lambda r: r.search(SearchQuery(text="alpha"))
        )
        assert [h.document.path for h in result.hits] == ["a.md"]

    def test_other_schema_is_rebuilt(self, tmp_path: Path) -> None:
        """An index of another schema version is rebuilt, not misread."""
        vault = aged_vault(tmp_path, {"a.md": "alpha"})
        update_index(vault)
        conn = sqlite3.connect(index_path(vault))
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
        conn.commit()
        conn.close()
        assert update_index(vault).rebuilt

    def test_the_schema_before_is_brought_forward_keeping_vectors(self, tmp_path: Path) -> None:
        """An index of schema 6 gains its name keys in place: not rebuilt, its vectors kept."""
        vault = aged_vault(tmp_path, {"A/b.md": "[[./x/..]]", "a.md": "alpha"})
        update_index(vault)
        conn = sqlite3.connect(index_path(vault))
        conn.executescript(
            "DROP INDEX notes_pkey; ALTER TABLE notes DROP COLUMN pkey;"
            " UPDATE links SET name_key = '..'; UPDATE meta SET value = '6' WHERE key = 'schema';"
            " INSERT INTO vectors VALUES ('m', 'h', 0, 0, x'00');"
        )
        conn.close()
        report = update_index(vault)
        conn = sqlite3.connect(index_path(vault))
        assert not report.rebuilt
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 1
        assert sorted(conn.execute("SELECT path, pkey FROM notes")) == [
            ("A/b.md", "b"),
            ("a.md", "a"),
        ]
        assert conn.execute("SELECT name_key FROM links").fetchall() == [("a",)]
        conn.close()

    def test_rebuild_on_request(self, tmp_path: Path) -> None:
        """``rebuild=True`` starts from scratch."""
        vault = aged_vault(tmp_path, {"a.md": "alpha"})
        update_index(vault)
        assert update_index(vault, rebuild=True).added == 1

    def test_no_index_yet(self, tmp_path: Path) -> None:
        """Reading before any update says the index is not ready."""
        with pytest.raises(IndexNotReady):
            IndexReader(tmp_path).documents()


class TestConcurrency:
    def test_readers_never_wait_for_a_writer(self, tmp_path: Path) -> None:
        """While an update's transaction is open, readers answer at once from the last state."""
        vault = aged_vault(tmp_path, {"a.md": "alpha", "b.md": "beta"})
        update_index(vault)
        writer = sqlite3.connect(index_path(vault), isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM notes")
        writer.execute("DELETE FROM fts")
        try:
            # The writer's transaction stays open until after these reads, in this thread: a
            # reader that waited for it could only time out and fail, never answer late.
            assert hits(vault, "alpha") == ["a.md"]
            assert IndexReader(vault).documents()[1] == 2
        finally:
            writer.execute("ROLLBACK")
            writer.close()

    def test_skips_while_a_sync_holds_the_vault(self, tmp_path: Path) -> None:
        """An update during a sync skips (after ``wait``) and says so; the index stays as it was."""
        vault = aged_vault(tmp_path, {"a.md": "alpha"})
        update_index(vault)
        (vault / "a.md").write_text("omega")
        with VaultFS(vault) as fs, fs.lock(timeout=1.0):
            report = update_index(vault, wait=0.05)
        assert report.skipped
        assert report.notes == 1
        assert hits(vault, "alpha") == ["a.md"]

    def test_caller_holding_the_lock(self, tmp_path: Path) -> None:
        """``vault_lock=False`` lets a sync that holds the lock update the index itself."""
        vault = aged_vault(tmp_path, {"a.md": "alpha"})
        with VaultFS(vault) as fs, fs.lock(timeout=1.0):
            report = update_index(vault, vault_lock=False)
        assert report.added == 1

"""``vault.quick``: a sync is skipped only when its inputs and every file it saw are unchanged."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from syncdriver import make_spec
from vaultsync.core.fsio import RACY_NS, file_lock
from vaultsync.core.model import NoteSpec
from vaultsync.vault.manifest import (
    CACHE,
    JOURNAL,
    LOCK,
    MANIFEST,
    blob_id,
    dump_cache,
    load_cache,
)
from vaultsync.vault.quick import unchanged_since_last_sync
from vaultsync.vault.sync import sync_vault

INPUTS = "inputs-1"


def specs() -> list[NoteSpec]:
    return [make_spec(f"F/n{i}.md", f"note {i}\n") for i in range(5)]


def synced_and_aged(tmp_path: Path) -> Path:
    """A vault synced with ``INPUTS`` whose files are out of the cache's racy window."""
    vault = tmp_path / "vault"
    sync_vault(vault, specs(), inputs=INPUTS)
    past = time.time_ns() - 10 * RACY_NS
    for path in vault.rglob("*.md"):
        os.utime(path, ns=(past, past))
    sync_vault(vault, specs(), inputs=INPUTS)  # hashes the aged files, records their stat data
    return vault


def make_racy(vault: Path) -> int:
    """Move the cache's mtime to within the racy window of the newest note: its new mtime."""
    newest = max(p.stat().st_mtime_ns for p in vault.rglob("*.md"))
    racy_ns = newest + RACY_NS // 2
    os.utime(vault / CACHE, ns=(racy_ns, racy_ns))
    return racy_ns


class TestUnchangedSinceLastSync:
    def test_same_inputs_and_files_skip(self, tmp_path: Path) -> None:
        """Nothing changed since a conflict-free sync: the answer is known."""
        assert unchanged_since_last_sync(synced_and_aged(tmp_path), INPUTS)

    def test_other_inputs_do_not_skip(self, tmp_path: Path) -> None:
        """A change in the stores, the code, the templates or the caps means a full sync."""
        assert not unchanged_since_last_sync(synced_and_aged(tmp_path), "inputs-2")

    def test_a_touched_note_does_not_skip(self, tmp_path: Path) -> None:
        """A note whose stat data moved (an edit) means a full sync."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n2.md").write_text("my edit\n")
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_deleted_note_does_not_skip(self, tmp_path: Path) -> None:
        """A note the user removed means a full sync (it must be recorded as deleted)."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n2.md").unlink()
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_racy_edit_that_keeps_the_stat_data_does_not_skip(self, tmp_path: Path) -> None:
        """An edit inside the racy window that leaves size, mtime and inode as recorded is seen."""
        vault = synced_and_aged(tmp_path)
        note = vault / "F" / "n2.md"
        before = note.stat()
        note.write_text("note X\n")  # same size, same inode
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
        make_racy(vault)
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_racy_files_with_their_recorded_bytes_skip(self, tmp_path: Path) -> None:
        """Right after a sync every note is racy: reading them proves them unchanged."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(), inputs=INPUTS)
        assert unchanged_since_last_sync(vault, INPUTS)

    def test_the_cache_is_not_touched_inside_the_racy_window(self, tmp_path: Path) -> None:
        """While the notes are as new as the cache, its mtime stays: a later edit may hide."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(), inputs=INPUTS)
        before = (vault / CACHE).stat().st_mtime_ns
        unchanged_since_last_sync(vault, INPUTS)
        assert (vault / CACHE).stat().st_mtime_ns == before

    def test_racy_files_verified_out_of_their_window_touch_the_cache(self, tmp_path: Path) -> None:
        """Racy files read and found unchanged after their window: the cache's mtime moves on."""
        vault = synced_and_aged(tmp_path)
        racy_ns = make_racy(vault)
        assert unchanged_since_last_sync(vault, INPUTS)
        assert (vault / CACHE).stat().st_mtime_ns > racy_ns

    def test_the_cache_is_not_touched_while_the_vault_is_locked(self, tmp_path: Path) -> None:
        """A sync (or a reader) holding the vault lock keeps the cache exactly as it wrote it."""
        vault = synced_and_aged(tmp_path)
        racy_ns = make_racy(vault)
        with file_lock(vault / LOCK, timeout=1, shared=True):
            assert unchanged_since_last_sync(vault, INPUTS)
        assert (vault / CACHE).stat().st_mtime_ns == racy_ns

    def test_the_cache_sums_up_the_manifest(self, tmp_path: Path) -> None:
        """A conflict-free sync records the manifest's blob id, so a no-op need not parse it."""
        vault = synced_and_aged(tmp_path)
        cache = load_cache((vault / CACHE).read_bytes())
        assert cache.manifest == blob_id((vault / MANIFEST).read_bytes())

    def test_a_manifest_with_other_bytes_is_read_again(self, tmp_path: Path) -> None:
        """A manifest changed since the sync is parsed: a new entry whose file exists is seen."""
        vault = synced_and_aged(tmp_path)
        doc = json.loads((vault / MANIFEST).read_text())
        doc["entries"]["F/extra.md"] = next(iter(doc["entries"].values()))
        (vault / MANIFEST).write_text(json.dumps(doc))
        (vault / "F" / "extra.md").write_text("a file the manifest now claims\n")
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_recorded_absent_path_that_reappears_does_not_skip(self, tmp_path: Path) -> None:
        """A manifest entry that had no file at the sync and has one now means a full sync."""
        vault = synced_and_aged(tmp_path)
        cache = load_cache((vault / CACHE).read_bytes())
        written = (vault / CACHE).stat().st_mtime_ns
        data = dump_cache(cache.entries, INPUTS, manifest=cache.manifest, absent=("F/gone.md",))
        (vault / CACHE).write_bytes(data)
        os.utime(vault / CACHE, ns=(written, written))
        assert unchanged_since_last_sync(vault, INPUTS)
        (vault / "F" / "gone.md").write_text("back again\n")
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_journal_does_not_skip(self, tmp_path: Path) -> None:
        """An interrupted sync's journal means its work must be finished."""
        vault = synced_and_aged(tmp_path)
        (vault / JOURNAL).write_bytes(b"{}")
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_corrupt_manifest_does_not_skip(self, tmp_path: Path) -> None:
        """A manifest that cannot be read means a full sync (which reports it)."""
        vault = synced_and_aged(tmp_path)
        (vault / MANIFEST).write_bytes(b"not json")
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_sync_with_conflicts_records_no_inputs(self, tmp_path: Path) -> None:
        """After a sync that left a conflict, the next one always runs in full."""
        vault = tmp_path / "vault"
        vault.mkdir()
        (vault / "F").mkdir()
        (vault / "F" / "n1.md").write_text("a file vaultsync did not write\n")
        report = sync_vault(vault, specs(), inputs=INPUTS)
        assert [c.path for c in report.conflicts] == ["F/n1.md"]
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_no_vault_does_not_skip(self, tmp_path: Path) -> None:
        """No vault yet (no cache): a full sync."""
        assert not unchanged_since_last_sync(tmp_path / "nowhere", INPUTS)

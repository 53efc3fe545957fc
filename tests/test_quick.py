"""``vault.quick``: a sync is skipped only when its inputs and every file it saw are unchanged."""

from __future__ import annotations

import os
import time
from pathlib import Path

from syncdriver import make_spec
from vaultsync.core.fsio import RACY_NS
from vaultsync.core.model import NoteSpec
from vaultsync.vault.manifest import CACHE, JOURNAL, MANIFEST
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

    def test_racy_files_do_not_skip(self, tmp_path: Path) -> None:
        """Files modified within the racy window of the cache's write may hide an edit."""
        vault = synced_and_aged(tmp_path)
        newest = max(p.stat().st_mtime_ns for p in vault.rglob("*.md"))
        os.utime(vault / CACHE, ns=(newest + RACY_NS // 2, newest + RACY_NS // 2))
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

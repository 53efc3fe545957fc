"""``vault.quick``: a sync is skipped only when its inputs and every file it saw are unchanged."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from unittest import mock

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st
from syncdriver import make_spec
from vaultsync.core.fsio import RACY_NS, file_lock
from vaultsync.core.model import NoteSpec
from vaultsync.vault import quick
from vaultsync.vault.manifest import (
    CACHE,
    JOURNAL,
    LOCK,
    MANIFEST,
    ColumnEntries,
    blob_id,
    cache_head,
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
    for path in [*vault.rglob("*.md"), vault / MANIFEST]:
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

    def test_other_inputs_are_told_from_the_cache_head(self, tmp_path: Path) -> None:
        """A cache recorded for other inputs is refused from its first bytes, never parsed."""
        vault = synced_and_aged(tmp_path)
        with mock.patch.object(quick, "load_cache", side_effect=AssertionError("parsed")):
            assert quick.last_sync_and_changes(vault, "inputs-2", at_most=5) is None

    def test_a_cache_in_the_older_key_order_syncs_in_full(self, tmp_path: Path) -> None:
        """A cache written with its inputs after its rows (older code) is never trusted."""
        vault = synced_and_aged(tmp_path)
        doc = json.loads((vault / CACHE).read_bytes())
        doc["inputs"] = doc.pop("inputs")  # moved last, as older code wrote it
        (vault / CACHE).write_text(json.dumps(doc, separators=(",", ":")))
        assert not unchanged_since_last_sync(vault, INPUTS)

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

    def test_racy_files_are_proven_without_every_files_values(self, tmp_path: Path) -> None:
        """The racy notes' blob ids come from the columns: no value is made for the others."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(), inputs=INPUTS)
        cache = quick.last_sync_if_unchanged(vault, INPUTS)
        assert cache is not None and isinstance(cache.entries, ColumnEntries)
        assert cache.entries._dict is None

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
        """A manifest whose bytes are not the ones the sync left gives no quick answer."""
        vault = synced_and_aged(tmp_path)
        doc = json.loads((vault / MANIFEST).read_text())
        doc["entries"]["F/extra.md"] = next(iter(doc["entries"].values()))
        (vault / MANIFEST).write_text(json.dumps(doc))
        (vault / "F" / "extra.md").write_text("a file the manifest now claims\n")
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_the_manifests_stat_data_vouch_for_it_out_of_its_racy_window(
        self, tmp_path: Path
    ) -> None:
        """Out of its racy window the manifest is known by its stat data: its bytes are not read."""
        vault = synced_and_aged(tmp_path)
        with mock.patch.object(quick, "blob_id", side_effect=AssertionError("read")):
            assert unchanged_since_last_sync(vault, INPUTS)

    def test_a_racy_manifest_is_read(self, tmp_path: Path) -> None:
        """A manifest inside its racy window is read and its blob id compared."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(), inputs=INPUTS)
        with mock.patch.object(quick, "blob_id", wraps=blob_id) as hashed:
            assert unchanged_since_last_sync(vault, INPUTS)
        assert (vault / MANIFEST).read_bytes() in [call.args[0] for call in hashed.call_args_list]

    def test_a_racy_manifest_edit_that_keeps_its_stat_data_does_not_skip(
        self, tmp_path: Path
    ) -> None:
        """A manifest edited in its racy window with size, mtime and inode kept is seen."""
        vault = synced_and_aged(tmp_path)
        manifest = vault / MANIFEST
        before = manifest.stat()
        data = manifest.read_bytes()
        with manifest.open("r+b") as handle:  # the same size, in place: the same inode
            handle.write(data.replace(b'"node"', b'"nodf"', 1))
        os.utime(manifest, ns=(before.st_atime_ns, before.st_mtime_ns))
        racy_ns = before.st_mtime_ns + RACY_NS // 2
        os.utime(vault / CACHE, ns=(racy_ns, racy_ns))
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_manifest_moved_out_of_its_stat_data_does_not_skip(self, tmp_path: Path) -> None:
        """A manifest whose stat data are not the recorded ones gives no quick answer."""
        vault = synced_and_aged(tmp_path)
        os.utime(vault / MANIFEST)
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_a_cache_without_the_manifests_stat_data_reads_its_bytes(self, tmp_path: Path) -> None:
        """A cache written before the stat data were kept still vouches by the blob id."""
        vault = synced_and_aged(tmp_path)
        cache = load_cache((vault / CACHE).read_bytes())
        written = (vault / CACHE).stat().st_mtime_ns
        (vault / CACHE).write_bytes(dump_cache(cache.entries, INPUTS, manifest=cache.manifest))
        os.utime(vault / CACHE, ns=(written, written))
        assert load_cache((vault / CACHE).read_bytes()).manifest_stat is None
        assert unchanged_since_last_sync(vault, INPUTS)
        (vault / MANIFEST).write_bytes((vault / MANIFEST).read_bytes() + b" ")
        assert not unchanged_since_last_sync(vault, INPUTS)

    def test_malformed_manifest_stat_data_are_not_recorded(self) -> None:
        """Stat data that are not three integers read as none (its bytes are then read)."""
        good = json.loads(dump_cache({}, INPUTS, manifest="a" * 40, manifest_stat=(1, 2, 3)))
        for bad in (["1", 2, 3], [1, 2], [1, 2, True], "123", None):
            doc = good | {"manifest_stat": bad}
            assert load_cache(json.dumps(doc).encode()).manifest_stat is None
        assert load_cache(json.dumps(good).encode()).manifest_stat == (1, 2, 3)

    def test_the_cache_records_the_manifest_files_stat_data(self, tmp_path: Path) -> None:
        """The manifest's stat data recorded are those of its file as the sync left it."""
        vault = synced_and_aged(tmp_path)
        found = (vault / MANIFEST).stat()
        cache = load_cache((vault / CACHE).read_bytes())
        assert cache.manifest_stat == (found.st_size, found.st_mtime_ns, found.st_ino)

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


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["edit", "stealthy edit", "delete", "age", "later", "sync"]),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=6,
)


class Clock:
    """``time`` for ``vault.quick``: the real clock, ``offset`` nanoseconds later."""

    def __init__(self) -> None:
        self.offset = 0

    def time_ns(self) -> int:
        return time.time_ns() + self.offset


def vault_state(vault: Path) -> tuple[dict[str, bytes], str]:
    """Every file's bytes (the stat cache aside: a hint) and HEAD."""
    files = {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in vault.rglob("*")
        if p.is_file() and ".git" not in p.parts and p != vault / CACHE
    }
    return files, str(pygit2.Repository(str(vault)).head.target)


def act(vault: Path, clock: Clock, action: str, index: int) -> None:
    """One thing a user, the clock or a sync may do to a synced vault."""
    note = vault / "F" / f"n{index}.md"
    if action == "edit" and note.exists():
        note.write_text(f"my edit of note {index}\n")
    elif action == "stealthy edit" and note.exists():
        before = note.stat()
        # Only a file written within the timestamp granularity of now can change and keep its
        # mtime (the racy rule's premise): the edit keeps size, inode and mtime.
        if before.st_mtime_ns >= clock.time_ns() - RACY_NS:
            note.write_bytes(note.read_bytes().upper())
            os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif action == "delete" and note.exists():
        note.unlink()
    elif action == "age":
        past = clock.time_ns() - 10 * RACY_NS
        for path in vault.rglob("*.md"):
            os.utime(path, ns=(past, past))
    elif action == "later":
        clock.offset += 3 * RACY_NS // 2
    elif action == "sync":
        sync_vault(vault, specs(), inputs=INPUTS)


def assert_cache_vouches_only_for_true_blobs(vault: Path) -> None:
    """Outside its racy window, a cache entry whose stat data match names the file's blob."""
    written = (vault / CACHE).stat().st_mtime_ns
    for path, (recorded, blob) in load_cache((vault / CACHE).read_bytes()).entries.items():
        try:
            st = (vault / path).lstat()
        except FileNotFoundError:
            continue
        trusted = recorded[1] < written - RACY_NS
        if trusted and (st.st_size, st.st_mtime_ns, st.st_ino) == recorded:
            assert blob_id((vault / path).read_bytes()) == blob, path


class TestQuickAgreesWithTheFullSync:
    @settings(max_examples=80, deadline=None)
    @given(ACTIONS)
    def test_a_skipped_sync_would_have_changed_nothing(
        self, actions: list[tuple[str, int]]
    ) -> None:
        """After any edits, deletions, ageing, time and syncs, "unchanged" means a sync writes
        nothing, and the stat cache never vouches for bytes a file no longer has."""
        clock = Clock()
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(quick, "time", clock):
            vault = Path(tmp) / "vault"
            sync_vault(vault, specs(), inputs=INPUTS)
            for step, (action, index) in enumerate(actions):
                act(vault, clock, action, index)
                if unchanged_since_last_sync(vault, INPUTS):
                    assert_cache_vouches_only_for_true_blobs(vault)
                    # The full sync runs on a copy: run here, it would heal what the cache says.
                    copy = Path(tmp) / f"copy-{step}"
                    shutil.copytree(vault, copy, symlinks=True)
                    before = vault_state(copy)
                    sync_vault(copy, specs(), inputs=INPUTS)
                    assert vault_state(copy) == before, (action, index)


def test_templates_digest_of_a_folder_with_a_dangling_symlink(tmp_path: Path) -> None:
    """A dangling symlink among the templates is digested, not a FileNotFoundError traceback."""
    (tmp_path / "note.md.j2").symlink_to(tmp_path / "gone.j2")
    before = quick.templates_digest(tmp_path)
    (tmp_path / "gone.j2").write_text("x", encoding="utf-8")
    assert quick.templates_digest(tmp_path) != before


@settings(max_examples=200, deadline=None)
@given(recorded=st.text(max_size=40), asked=st.text(max_size=40))
def test_the_cache_head_names_its_inputs_alone(recorded: str, asked: str) -> None:
    """A dumped cache starts with the head of its own inputs and of no other."""
    data = dump_cache({"a.md": ((1, 2, 3), "0" * 40)}, recorded, manifest="1" * 40)
    assert data.startswith(cache_head(asked)) == (asked == recorded)

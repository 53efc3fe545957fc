"""``vault.indexproof``: git's index answers which notes changed, only where it is proven to."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syncdriver import make_spec
from vaultsync.core.fsio import RACY_NS
from vaultsync.core.model import NoteSpec
from vaultsync.vault import indexproof, quick
from vaultsync.vault.known import sync_from_record
from vaultsync.vault.manifest import (
    CACHE,
    IndexProof,
    StatCache,
    blob_id,
    dump_cache,
    load_cache,
)
from vaultsync.vault.quick import last_sync_and_changes, unchanged_since_last_sync
from vaultsync.vault.sync import sync_vault

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git program")

INPUTS = "inputs-1"


@pytest.fixture(autouse=True)
def git_asked_for_any_vault(monkeypatch: pytest.MonkeyPatch) -> None:
    """These vaults are small: git is asked as it is for a big one."""
    monkeypatch.setattr(quick, "ASK_GIT_FROM_BYTES", 0)


def specs() -> list[NoteSpec]:
    return [make_spec(f"F/n{i}.md", f"note {i}\n") for i in range(5)]


def git(vault: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", "-C", str(vault), *args], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout


def aged(vault: Path) -> None:
    """Every note and the manifest changed long ago (out of every racy window)."""
    past = time.time_ns() - 10 * RACY_NS
    for path in [*vault.rglob("*.md"), vault / ".vaultsync" / "manifest.json"]:
        os.utime(path, ns=(past, past))


def synced_and_aged(tmp_path: Path) -> Path:
    """A vault synced with ``INPUTS``, its files aged, synced again: a proof that holds."""
    vault = tmp_path / "vault"
    sync_vault(vault, specs(), inputs=INPUTS)
    aged(vault)
    sync_vault(vault, specs(), inputs=INPUTS)  # records the aged stat data and the index
    return vault


def recorded_bytes_differ(vault: Path, path: str) -> bool:
    """Whether the file at ``path`` no longer holds the blob the stat cache records."""
    blob: str = cache_of(vault).entries[path][1]
    try:
        return blob_id((vault / path).read_bytes()) != blob
    except FileNotFoundError:
        return True


def cache_of(vault: Path) -> StatCache:
    return load_cache((vault / CACHE).read_bytes())


def changed(vault: Path) -> tuple[str, ...] | None:
    """What the quick answers find changed since the last sync (``None``: they cannot tell)."""
    found = last_sync_and_changes(vault, INPUTS, at_most=10)
    return None if found is None else found[1]


def without_git(vault: Path) -> tuple[str, ...] | None:
    """:func:`changed` from the stat cache alone, as before git's index was asked."""
    with mock.patch.object(indexproof.DiffFiles, "changed", return_value=None):
        return changed(vault)


def lstats(vault: Path, answer: object) -> int:
    """How many files the quick answer stats itself while giving ``answer``."""
    with mock.patch.object(quick, "stat_of", wraps=quick.stat_of) as stat_of:
        assert changed(vault) == answer
    return stat_of.call_count


class TestProof:
    def test_a_sync_records_the_index_it_leaves(self, tmp_path: Path) -> None:
        """The stat cache names the index file the sync left, and no file it cannot vouch for."""
        vault = synced_and_aged(tmp_path)
        proof = cache_of(vault).index
        assert proof is not None
        assert (proof.index, proof.tail) == indexproof.index_identity(vault)
        assert proof.odd == ()

    def test_a_sync_refreshes_the_index_it_proves(self, tmp_path: Path) -> None:
        """Notes whose stat data moved but not their bytes (a copied vault) are listed by git
        until the index is refreshed: the sync refreshes it before proving it."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(), inputs=INPUTS)
        aged(vault)
        assert git(vault, "diff-files", "--name-only") != ""
        sync_vault(vault, specs(), inputs=INPUTS)
        assert git(vault, "diff-files", "--name-only") == ""

    def test_the_refreshed_index_stays_private(self, tmp_path: Path) -> None:
        """The index git writes back for the refresh keeps the vault's ``.git`` private."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(), inputs=INPUTS)
        aged(vault)
        before = os.umask(0o022)
        try:
            sync_vault(vault, specs(), inputs=INPUTS)
        finally:
            os.umask(before)
        assert git(vault, "diff-files", "--name-only") == ""  # written back by the refresh
        assert (vault / ".git" / "index").stat().st_mode & 0o077 == 0

    def test_notes_written_just_before_the_index_are_odd(self, tmp_path: Path) -> None:
        """A note changed within the racy window of the index's write is left to its stat data:
        git, comparing whole seconds, may have recorded it in the second an edit followed."""
        vault = synced_and_aged(tmp_path)
        changed_specs = [make_spec("F/n0.md", "note 0, new words\n"), *specs()[1:]]
        sync_vault(vault, changed_specs, inputs=INPUTS)
        proof = cache_of(vault).index
        assert proof is not None and "F/n0.md" in proof.odd
        assert not {f"F/n{i}.md" for i in range(1, 5)} & set(proof.odd)

    def test_a_kept_edit_is_odd(self, tmp_path: Path) -> None:
        """A note the user edited holds bytes its index entry does not: left to its stat data."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n1.md").write_text("my edit\n")
        sync_vault(vault, specs(), inputs=INPUTS)  # keeps the edit, proves the index again
        proof = cache_of(vault).index
        assert proof is not None and proof.odd == ("F/n1.md",)

    def test_a_staged_edit_is_vouched_for(self, tmp_path: Path) -> None:
        """A note whose staged bytes are its file's is as git's index holds it: not odd."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n1.md").write_text("my staged edit\n")
        git(vault, "add", "F/n1.md")
        aged(vault)  # out of the window of the index's write
        sync_vault(vault, specs(), inputs=INPUTS)
        proof = cache_of(vault).index
        assert proof is not None and proof.odd == ()

    def test_an_entry_assumed_unchanged_is_odd(self, tmp_path: Path) -> None:
        """An entry git would never look at (assume-unchanged) is left to its stat data."""
        vault = synced_and_aged(tmp_path)
        git(vault, "update-index", "--assume-unchanged", "F/n2.md")
        sync_vault(vault, specs(), inputs=INPUTS)
        proof = cache_of(vault).index
        assert proof is not None and proof.odd == ("F/n2.md",)

    def test_an_uncommitted_vault_proves_nothing(self, tmp_path: Path) -> None:
        """Syncs that do not commit leave an index that vouches for no note: no proof."""
        vault = tmp_path / "vault"
        vault.mkdir()
        git(vault, "init", "-q")
        (vault / "mine.txt").write_text("a file of the user's\n")
        git(vault, "add", "mine.txt")
        sync_vault(vault, specs(), inputs=INPUTS, commit=False)
        assert indexproof.index_identity(vault) is not None
        assert cache_of(vault).index is None

    def test_a_vault_inside_another_repository_proves_nothing(self, tmp_path: Path) -> None:
        """Only a vault at the top of its own repository is answered by git."""
        git(tmp_path, "init", "-q")
        vault = tmp_path / "vault"
        sync_vault(vault, specs(), inputs=INPUTS, commit=False)
        assert cache_of(vault).index is None
        assert indexproof.index_identity(vault) is None

    def test_an_index_rewritten_while_git_lists_it_proves_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Git's listing is of an index that may no longer be the one there: no proof."""
        vault = synced_and_aged(tmp_path)
        programs = tmp_path / "bin"
        programs.mkdir()
        wrapper = programs / "git"  # lists, then the index changes, as another git's write
        wrapper.write_text(
            f'#!/bin/sh\n"{shutil.which("git")}" "$@"; status=$?\n'
            f'touch "{vault}/.git/index"\nexit $status\n'
        )
        wrapper.chmod(0o755)
        monkeypatch.setenv("PATH", f"{programs}{os.pathsep}{os.environ['PATH']}")
        assert indexproof.prove_index(vault, cache_of(vault).entries) is None
        monkeypatch.undo()
        assert indexproof.prove_index(vault, cache_of(vault).entries) is not None

    def test_a_vault_named_by_a_relative_path_is_proved(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``--vault vault`` as the README writes it: git finds the repository all the same."""
        vault = synced_and_aged(tmp_path)
        monkeypatch.chdir(vault.parent)
        relative = Path(vault.name)
        assert indexproof.prove_index(relative, cache_of(vault).entries) is not None

    def test_the_record_round_trips_and_a_malformed_one_is_none(self) -> None:
        """The proof is read back as written; any malformed field reads as no proof."""
        proof = IndexProof(index=(1, 2, 3, 4), tail="ab" * 20, odd=("F/a.md",))
        good = json.loads(dump_cache({}, INPUTS, index=proof))
        assert load_cache(json.dumps(good).encode()).index == proof
        for bad in (
            {"file": [1, 2, 3], "tail": "ab" * 20, "odd": []},
            {"file": [1, 2, 3, "4"], "tail": "ab" * 20, "odd": []},
            {"file": [1, 2, 3, 4], "tail": "AB" * 20, "odd": []},
            {"file": [1, 2, 3, 4], "tail": "ab" * 20, "odd": ["../outside.md"]},
            "proof",
        ):
            assert load_cache(json.dumps(good | {"index": bad}).encode()).index is None


class TestChangedFiles:
    def test_a_steady_vault_stats_no_note(self, tmp_path: Path) -> None:
        """In sync, git's answer stands for every note: none is stat'ed by Python."""
        vault = synced_and_aged(tmp_path)
        assert lstats(vault, ()) <= 1  # the manifest's own stat data

    def test_an_edit_is_found_through_the_index(self, tmp_path: Path) -> None:
        """A note the user edited is found, stat'ed alone."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n3.md").write_text("my edit\n")
        assert lstats(vault, ("F/n3.md",)) <= 2

    def test_a_deleted_note_is_found(self, tmp_path: Path) -> None:
        """A note the user removed is found."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n3.md").unlink()
        assert changed(vault) == ("F/n3.md",)

    def test_an_edit_to_an_entry_assumed_unchanged_is_found(self, tmp_path: Path) -> None:
        """git does not list it; the proof left it to its stat data, which show the edit."""
        vault = synced_and_aged(tmp_path)
        git(vault, "update-index", "--assume-unchanged", "F/n2.md")
        sync_vault(vault, specs(), inputs=INPUTS)
        (vault / "F" / "n2.md").write_text("edited where git does not look\n")
        assert changed(vault) == ("F/n2.md",)

    def test_the_users_git_settings_do_not_loosen_the_check(self, tmp_path: Path) -> None:
        """A note replaced by a copy of the same size and mtime (``cp -p``, ``rsync -t``) is
        found even where the repository tells git to check only whole seconds and the size."""
        vault = synced_and_aged(tmp_path)
        git(vault, "config", "core.checkStat", "minimal")
        git(vault, "config", "core.trustctime", "false")
        note = vault / "F" / "n4.md"
        before = note.stat()
        copy = tmp_path / "copy.md"
        copy.write_text("NOTE 4\n")  # the same size
        os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
        copy.replace(note)
        assert changed(vault) == ("F/n4.md",)

    def test_an_index_named_by_a_hook_is_not_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``GIT_INDEX_FILE`` (set for a hook) naming an index that holds the edit is ignored."""
        vault = synced_and_aged(tmp_path)
        other = tmp_path / "other-index"
        shutil.copy(vault / ".git" / "index", other)
        (vault / "F" / "n1.md").write_text("my edit\n")
        subprocess.run(
            ["git", "-C", str(vault), "add", "F/n1.md"],
            env={**os.environ, "GIT_INDEX_FILE": str(other)},
            check=True,
        )
        monkeypatch.setenv("GIT_INDEX_FILE", str(other))
        assert changed(vault) == ("F/n1.md",)

    def test_an_index_rewritten_while_git_reads_it_is_not_trusted(self, tmp_path: Path) -> None:
        """The index replaced after git was started: whichever git read, its answer is not
        taken."""
        vault = synced_and_aged(tmp_path)
        proof = cache_of(vault).index
        assert proof is not None
        with indexproof.DiffFiles(vault) as asked:
            (vault / "F" / "n1.md").write_text("my edit\n")
            git(vault, "add", "F/n1.md")
            assert asked.changed(proof, ["F/n1.md"]) is None

    def test_a_small_vault_does_not_ask_git(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Below the size where git answers sooner, every note is stat'ed and git not started."""
        vault = synced_and_aged(tmp_path)
        monkeypatch.setattr(quick, "ASK_GIT_FROM_BYTES", (vault / CACHE).stat().st_size + 1)
        with mock.patch.object(indexproof, "start_git", side_effect=AssertionError("git")):
            assert lstats(vault, ()) >= len(specs())

    def test_an_index_rewritten_with_the_same_bytes_still_answers(self, tmp_path: Path) -> None:
        """``git status`` may write back the very index it read: its checksum says so."""
        vault = synced_and_aged(tmp_path)
        index = vault / ".git" / "index"
        copy = tmp_path / "index-copy"
        shutil.copy(index, copy)
        copy.replace(index)  # another file, the same bytes
        assert lstats(vault, ()) <= 1

    def test_an_index_without_a_checksum_must_be_the_very_file(self) -> None:
        """Written without its checksum (``index.skipHash``), only its stat data tell it."""
        proof = IndexProof(index=(100, 5, 7, 5), tail="0" * 40)
        assert indexproof._same_index(((100, 5, 7, 5), "0" * 40), proof)
        assert not indexproof._same_index(((100, 6, 8, 6), "0" * 40), proof)
        summed = IndexProof(index=(100, 5, 7, 5), tail="ab" * 20)
        assert indexproof._same_index(((100, 6, 8, 6), "ab" * 20), summed)
        assert not indexproof._same_index(((101, 6, 8, 6), "ab" * 20), summed)

    def test_a_rewritten_index_leaves_the_answer_to_the_stat_cache(self, tmp_path: Path) -> None:
        """After ``git add`` the proof no longer holds: every note is stat'ed, the edit found."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n1.md").write_text("my edit\n")
        git(vault, "add", "F/n1.md")
        assert lstats(vault, ("F/n1.md",)) >= len(specs())

    def test_without_git_the_stat_cache_answers(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No git program: the same answers, from the stat cache."""
        vault = synced_and_aged(tmp_path)
        monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
        assert changed(vault) == ()
        (vault / "F" / "n0.md").write_text("my edit\n")
        assert changed(vault) == ("F/n0.md",)

    def test_a_sync_from_the_record_leaves_the_notes_it_read_to_their_stat_data(
        self, tmp_path: Path
    ) -> None:
        """An edit recorded without a full sync is not what the index holds: it becomes odd,
        and the next quick answer is in sync."""
        vault = synced_and_aged(tmp_path)
        (vault / "F" / "n2.md").write_text("my edit\n")
        assert sync_from_record(vault, INPUTS) is not None
        proof = cache_of(vault).index
        assert proof is not None and proof.odd == ("F/n2.md",)
        assert unchanged_since_last_sync(vault, INPUTS)


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(
            ["edit", "same size", "touch", "delete", "stage", "assume", "age", "sync", "record"]
        ),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=6,
)


def act(vault: Path, action: str, index: int) -> None:
    """One thing a user, git or vaultsync may do to a synced vault."""
    note = vault / "F" / f"n{index}.md"
    rel = f"F/n{index}.md"
    if action in ("edit", "same size", "touch", "delete", "stage") and not note.exists():
        return
    if action == "edit":
        note.write_text(f"my edit of note {index}\n")
    elif action == "same size":
        before = note.stat()
        note.write_bytes(note.read_bytes().upper())
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif action == "touch":
        os.utime(note)
    elif action == "delete":
        note.unlink()
    elif action == "stage":
        git(vault, "add", rel)
    elif action == "assume":
        git(vault, "update-index", "--assume-unchanged", rel)
    elif action == "age":
        aged(vault)
    elif action == "sync":
        sync_vault(vault, specs(), inputs=INPUTS)
    elif action == "record":
        sync_from_record(vault, INPUTS)


class TestAgreesWithTheStatCache:
    @settings(max_examples=60, deadline=None)
    @given(ACTIONS)
    def test_git_finds_what_the_stat_cache_finds(self, actions: list[tuple[str, int]]) -> None:
        """After any edits, stagings, flags, ageing and syncs, asking git's index finds what
        the stat cache finds, but where the two disagree the bytes decide: a file only one of
        them lists is changed exactly when git lists it (a touch is no edit; an edit that kept
        size, inode and mtime changed the ctime git reads)."""
        with tempfile.TemporaryDirectory() as tmp:
            vault = synced_and_aged(Path(tmp))
            for action, index in actions:
                act(vault, action, index)
                found, before = changed(vault), without_git(vault)
                assert (found is None) == (before is None), (action, index)
                for path in set(found or ()) ^ set(before or ()):
                    assert (path in (found or ())) == recorded_bytes_differ(vault, path), path

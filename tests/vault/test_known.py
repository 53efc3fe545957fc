"""``vault.known``: ``status`` and ``check`` read from the last sync equal the planned answers."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from syncdriver import make_spec
from vaultsync.core.fsio import RACY_NS
from vaultsync.core.model import NoteSpec, Skipped
from vaultsync.vault.known import (
    Known,
    known_conflicts,
    known_status,
    since_last_sync,
    sync_from_record,
    user_edits,
)
from vaultsync.vault.manifest import (
    CACHE,
    MANIFEST,
    ROWS_AT_MOST,
    Entry,
    LastSync,
    StatCache,
    blob_id,
    dump_cache,
    dump_manifest,
    load_cache,
)
from vaultsync.vault.moves import NO_MOVES
from vaultsync.vault.quick import unchanged_since_last_sync
from vaultsync.vault.report import StatusReport, SyncReport
from vaultsync.vault.sync import check_vault, sync_vault, vault_moves, vault_status

MARKED = "<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n"


def specs(generation: int, notes: int = 5) -> list[NoteSpec]:
    """Five notes; note 0 and note 1 change with each generation of the stores."""
    return [
        make_spec(f"F/n{i}.md", f"# Note {i}\n\nline a\nline b {generation * (i < 2)}\nline c\n")
        for i in range(notes)
    ]


def inputs(generation: int) -> str:
    return f"inputs-{generation}"


def sync(
    vault: Path, generation: int, skipped: tuple[Skipped, ...] = (), *, notes: int = 5
) -> SyncReport:
    moves = vault_moves(vault) if vault.is_dir() else NO_MOVES
    report = sync_vault(vault, specs(generation, notes), inputs=inputs(generation), moves=moves)
    if skipped:  # the app passes the skipped store files along; here written by hand
        cache = load_cache((vault / CACHE).read_bytes())
        _rewrite(vault, cache, replace(cache.last, skipped=skipped))
    return report


def _rewrite(vault: Path, cache: StatCache, last: LastSync) -> None:
    data = dump_cache(
        cache.entries,
        cache.inputs,
        manifest=cache.manifest,
        absent=cache.absent,
        dumped=cache.dumped,
        last=last,
    )
    (vault / CACHE).write_bytes(data)


def age(vault: Path) -> None:
    """Every note out of the racy window (as if written a while ago)."""
    past = time.time_ns() - 10 * RACY_NS
    for path in vault.rglob("*.md"):
        os.utime(path, ns=(past, past))


def known(vault: Path, generation: int) -> Known | None:
    return since_last_sync(vault, inputs(generation))


def planned(vault: Path, generation: int) -> StatusReport:
    return vault_status(vault, specs(generation), vault_moves(vault))


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["edit", "unedit", "mark", "delete", "recreate", "stores", "sync", "age"]),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=8,
)


def act(vault: Path, generation: int, action: str, index: int) -> int:
    """One thing a user or the stores may do; the stores' generation after it."""
    note = vault / "F" / f"n{index}.md"
    if action == "edit" and note.exists():
        note.write_text(note.read_text().replace("line a", f"line a, my edit {index}"))
    elif action == "unedit" and note.exists():  # back to what vaultsync wrote, if only edited
        note.write_text(note.read_text().replace(f"line a, my edit {index}", "line a"))
    elif action == "mark" and note.exists():
        note.write_text(MARKED)
    elif action == "delete" and note.exists():
        note.unlink()
    elif action == "recreate" and not note.exists():
        note.write_text("a file of mine\n")
    elif action == "stores":
        return generation + 1
    elif action == "sync":
        sync(vault, generation)
    elif action == "age":
        age(vault)
    return generation


class TestKnownEqualsPlanned:
    @settings(max_examples=150, deadline=None)
    @given(ACTIONS)
    def test_status_and_check_from_the_record_equal_the_planned_ones(
        self, actions: list[tuple[str, int]]
    ) -> None:
        """After any edits, conflicts, deletions, store changes and syncs, whenever the record
        answers, ``status`` and ``check`` say exactly what planning every note says."""
        with tempfile.TemporaryDirectory() as tmp:
            vault, generation = Path(tmp) / "vault", 0
            sync(vault, generation)
            for action, index in actions:
                generation = act(vault, generation, action, index)
                found = known(vault, generation)
                if found is None:
                    continue
                full = planned(vault, generation)
                assert not full.pending and not full.manifest_problem, (action, index)
                assert known_status(vault, found) == full, (action, index)
                lines = check_vault(vault, specs(generation), vault_moves(vault))
                from_record = known_conflicts(vault, found.last)
                assert [f"conflict {c.path}: {c.reason}" for c in from_record] == list(lines)


def _notes(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in vault.rglob("F/*.md")}


def _record(vault: Path) -> LastSync:
    return load_cache((vault / CACHE).read_bytes()).last


EDITS_AND_SYNCS = st.lists(
    st.tuples(
        st.sampled_from(["edit", "edit", "unedit", "mark", "delete", "stores", "sync", "sync"]),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=8,
)
"""Mostly edits and syncs: a sync after edits alone is the one the record answers."""


class TestSyncFromRecord:
    @settings(max_examples=50, deadline=None)
    @given(EDITS_AND_SYNCS)
    @example([("delete", 3), ("sync", 0), ("edit", 1), ("sync", 0)])  # a deletion kept
    @example([("mark", 2), ("sync", 0), ("unedit", 2), ("edit", 4), ("sync", 0)])
    def test_a_sync_from_the_record_equals_the_full_sync(
        self, actions: list[tuple[str, int]]
    ) -> None:
        """Two vaults, the same edits: where one syncs from the record, the other in full; the
        reports, the records left, the notes and the next quick answer are the same."""
        with tempfile.TemporaryDirectory() as tmp:
            ours, full, generation = Path(tmp) / "ours", Path(tmp) / "full", 0
            sync(ours, generation)
            sync(full, generation)
            for action, index in actions:
                if action == "sync":
                    answered = sync_from_record(ours, inputs(generation))
                    report = sync(full, generation)
                    event("from the record" if answered else "in full")
                    if answered is None:
                        sync(ours, generation)
                        continue
                    assert answered[0] == report
                    assert _record(ours) == _record(full) == answered[1]
                    assert unchanged_since_last_sync(ours, inputs(generation))
                else:
                    act(full, generation, action, index)
                    generation = act(ours, generation, action, index)
                assert _notes(ours) == _notes(full)


class TestTheRecord:
    def test_a_synced_vault_is_answered_from_the_record(self, tmp_path: Path) -> None:
        """Right after a conflict-free sync, nothing changed: the record answers."""
        vault = tmp_path / "vault"
        sync(vault, 0)
        assert known(vault, 0) is not None

    def test_an_edit_is_answered_before_and_after_the_next_sync(self, tmp_path: Path) -> None:
        """A note the user edited is read again while the record answers, then recorded."""
        vault = tmp_path / "vault"
        sync(vault, 0)
        note = vault / "F" / "n3.md"
        note.write_text(note.read_text() + "mine\n")
        found = known(vault, 0)
        assert found is not None and found.last.edited == ("F/n3.md",)
        sync(vault, 0)
        found = known(vault, 0)
        assert found is not None and found.last.edited == ("F/n3.md",)

    def test_a_sync_whose_write_was_refused_leaves_no_record(self, tmp_path: Path) -> None:
        """A note edited after the plan looked at it keeps the edit, and the next plan merges it."""
        from vaultsync.vault.decide import Asked
        from vaultsync.vault.sync import vault_session

        vault = tmp_path / "vault"
        sync(vault, 0)
        with vault_session(vault, write=True) as session:
            decision = session.plan(specs(1), Asked())
            note = vault / "F" / "n0.md"
            note.write_text(note.read_text() + "typed while the sync ran\n")
            report = session.sync(decision, inputs=inputs(1))
        assert "F/n0.md" in report.kept_edited
        assert known(vault, 1) is None
        assert check_vault(vault, specs(1), vault_moves(vault))

    def test_a_note_deleted_since_needs_a_plan(self, tmp_path: Path) -> None:
        """A note gone since the last sync may have moved: plan again."""
        vault = tmp_path / "vault"
        sync(vault, 0)
        (vault / "F" / "n3.md").unlink()
        assert known(vault, 0) is None

    def test_many_edits_since_need_a_plan(self, tmp_path: Path) -> None:
        """Past a few notes edited since the last sync, the plan costs less than reading them."""
        vault = tmp_path / "vault"
        sync(vault, 0, notes=ROWS_AT_MOST + 1)
        for note in (vault / "F").iterdir():
            note.write_text(note.read_text() + "mine\n")
        assert known(vault, 0) is None

    def test_edits_in_a_vault_with_moved_notes_need_a_plan(self, tmp_path: Path) -> None:
        """Where the user moved a note, an edit may be links Obsidian rewrote: plan again."""
        (tmp_path / "F").mkdir()
        (tmp_path / "F" / "n3.md").write_text("mine\n")
        entries = {"F/n3.md": Entry(node="n", key="k", blob="a" * 40)}
        chosen = {**entries, "F/moved.md": Entry(node="m", key="k", blob="b" * 40, chosen=True)}
        (tmp_path / MANIFEST).parent.mkdir()
        (tmp_path / MANIFEST).write_bytes(dump_manifest(entries, frozenset()))
        assert user_edits(tmp_path, ["F/n3.md"]) == {"F/n3.md": (blob_id(b"mine\n"), True)}
        (tmp_path / MANIFEST).write_bytes(dump_manifest(chosen, frozenset()))
        assert user_edits(tmp_path, ["F/n3.md"]) is None

    def test_a_file_at_a_deleted_notes_path_needs_a_plan(self, tmp_path: Path) -> None:
        """A deletion the record holds is undone by a file appearing there: plan again."""
        vault = tmp_path / "vault"
        sync(vault, 0)
        (vault / "F" / "n3.md").unlink()
        sync(vault, 0)
        assert known(vault, 0) is not None
        (vault / "F" / "n3.md").write_text("back\n")
        assert known(vault, 0) is None

    def test_a_sync_that_met_a_merge_conflict_records_nothing(self, tmp_path: Path) -> None:
        """A conflict the sync met itself leaves no record: status and check plan."""
        vault = tmp_path / "vault"
        sync(vault, 0)
        note = vault / "F" / "n0.md"
        note.write_text(note.read_text().replace("line b 0", "line b, mine"))
        age(vault)
        sync(vault, 1)
        assert planned(vault, 1).conflicts
        assert known(vault, 1) is None

    def test_skipped_store_files_are_kept_in_the_record(self, tmp_path: Path) -> None:
        """The store files a sync skipped come back from the record, masked as printed."""
        vault = tmp_path / "vault"
        skipped = (Skipped(source="sessions/a.json", where="1:2", what="bad JSON", digest="d"),)
        sync(vault, 0, skipped)
        found = known(vault, 0)
        assert found is not None
        assert [(s.source, s.where, s.what, s.new) for s in found.last.skipped] == [
            ("sessions/a.json", "1:2", "bad JSON", False)
        ]

    def test_a_malformed_record_reads_as_an_empty_cache(self, tmp_path: Path) -> None:
        """A cache whose record is not what we write is no answer at all."""
        vault = tmp_path / "vault"
        sync(vault, 0)
        data = (vault / CACHE).read_bytes().replace(b'"edited":[', b'"edited":[7,')
        assert load_cache(data).inputs == ""

    def test_a_file_where_a_deleted_note_was_leaves_the_next_sync_work(
        self, tmp_path: Path
    ) -> None:
        """A file the user put back at a deleted note's path is merged by the next sync: no
        quick answer (sync, status or check) may skip that merge."""
        vault = tmp_path / "vault"
        sync(vault, 0)
        (vault / "F" / "n0.md").unlink()
        sync(vault, 0)
        (vault / "F" / "n0.md").write_text("a file of mine\n")
        sync(vault, 0)
        assert planned(vault, 0).pending == ("merge F/n0.md",)
        assert known(vault, 0) is None

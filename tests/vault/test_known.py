"""``vault.known``: ``status`` and ``check`` read from the last sync equal the planned answers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from syncdriver import make_spec
from vaultsync.core.digest import code_fingerprint
from vaultsync.core.environment import read_environment
from vaultsync.core.fsio import RACY_NS
from vaultsync.core.model import NoteSpec, Skipped
from vaultsync.vault.gitfacts import GitFacts
from vaultsync.vault.known import (
    EDIT_ORIGINS,
    Known,
    known_conflicts,
    known_status,
    since_last_sync,
    sync_from_record,
)
from vaultsync.vault.manifest import (
    CACHE,
    ROWS_AT_MOST,
    LastSync,
    StatCache,
    dump_cache,
    load_cache,
)
from vaultsync.vault.moves import NO_MOVES
from vaultsync.vault.quick import unchanged_since_last_sync
from vaultsync.vault.report import EditHistory, StatusReport, SyncReport
from vaultsync.vault.sync import check_vault, sync_vault, vault_moves, vault_status
from vaultsync.vault.vcs import VaultRepo

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


ACTION_NAMES = ["edit", "unedit", "mark", "delete", "recreate", "stores", "sync", "age"]
ACTIONS = st.lists(
    st.tuples(st.sampled_from(ACTION_NAMES), st.integers(min_value=0, max_value=4)),
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


def _commit_by_hand(vault: Path) -> None:
    """The user commits whatever the work tree holds (their edits), as git does."""
    subprocess.run(["git", "add", "-A"], cwd=vault, check=True)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "mine"], cwd=vault, check=False)


class TestKeptOrigins:
    @settings(max_examples=20, deadline=None)
    @given(
        st.lists(
            st.tuples(st.sampled_from(["commit", *ACTION_NAMES]), st.integers(0, 4)), max_size=6
        )
    )
    @example([("edit", 0), ("commit", 0), ("edit", 0)])  # same edit, new commit; then new blob
    @example([("edit", 2), ("stores", 0), ("sync", 0)])  # a sync of other notes: carried over
    @example([("edit", 0), ("stores", 0), ("sync", 0)])  # a sync merging into the edit: read
    @example([("edit", 2), ("stores", 0), ("commit", 0), ("sync", 0)])  # two commits: read
    def test_kept_origins_equal_the_history_read_again(
        self, actions: list[tuple[str, int]]
    ) -> None:
        """Whatever the user edits, commits by hand or syncs, the edits' origins ``status``
        keeps per commit and edit equal those read from the history again."""
        with tempfile.TemporaryDirectory() as tmp:
            vault, cache, generation = Path(tmp) / "vault", Path(tmp) / "cache", 0
            sync(vault, generation)
            for action, index in actions:
                if action == "commit":
                    _commit_by_hand(vault)
                else:
                    generation = act(vault, generation, action, index)
                found = known(vault, generation)
                if found is None:
                    continue
                facts = GitFacts(vault, cache, read_environment().git)
                kept = known_status(vault, found, facts)
                facts.save()
                assert kept == known_status(vault, found), (action, index)

    @pytest.mark.parametrize(
        "rows", ['[["F/n0.md", 1, "", true, ""]]', '[["F/n1.md", "", "", true, ""]]', "{"]
    )
    def test_a_kept_answer_of_another_shape_is_asked_again(self, tmp_path: Path, rows: str) -> None:
        """Rows that are not this question's origins (a damaged or foreign cache) give the
        history's answer, which is kept in their place."""
        vault, cache = tmp_path / "vault", tmp_path / "cache"
        sync(vault, 0)
        act(vault, 0, "edit", 0)
        found = known(vault, 0)
        assert found is not None
        question = json.dumps([code_fingerprint(), sorted(found.edited.items())])
        damaged = GitFacts(vault, cache, read_environment().git)
        damaged.history(EDIT_ORIGINS, question, lambda: rows)
        damaged.save()
        again = GitFacts(vault, cache, read_environment().git)
        assert known_status(vault, found, again) == known_status(vault, found)
        again.save()
        kept = GitFacts(vault, cache, read_environment().git)
        assert kept.history(EDIT_ORIGINS, question, lambda: "asked") not in (rows, "asked")

    def test_an_answer_kept_by_another_version_is_asked_again(self, tmp_path: Path) -> None:
        """Origins another vaultsync kept (its reading of the history) are neither given nor
        carried over a sync of other notes: the history is read again."""
        vault, cache = tmp_path / "vault", tmp_path / "cache"
        sync(vault, 0)
        parent = _head(vault)
        act(vault, 0, "edit", 2)
        sync(vault, 1)  # a commit of notes 0 and 1 only
        found = known(vault, 1)
        assert found is not None
        older = json.dumps(["an older vaultsync", sorted(found.edited.items())])
        rows = [["F/n2.md", "0" * 40, "", False, ""]]
        kept = {"question": older, "head": parent, "walked": 1, "rows": rows}
        other = GitFacts(vault, cache, read_environment().git)
        other.history(EDIT_ORIGINS, older, lambda: json.dumps(kept))
        other.save()
        again = GitFacts(vault, cache, read_environment().git)
        assert known_status(vault, found, again) == known_status(vault, found)

    def test_a_sync_of_other_notes_carries_the_origins_over(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """After a sync commit that changed none of the edited notes, ``status`` gives the
        origins it kept, without reading the history again, equal to a fresh reading."""
        vault, cache = tmp_path / "vault", tmp_path / "cache"
        sync(vault, 0)
        act(vault, 0, "edit", 2)
        first = GitFacts(vault, cache, read_environment().git)
        known_status(vault, _known(vault, 0), first)
        first.save()
        sync(vault, 1)  # a commit of notes 0 and 1 only
        found = _known(vault, 1)
        reads: list[int] = []
        real = VaultRepo.edit_origins

        def counted(repo: VaultRepo, edited: Mapping[str, str]) -> EditHistory:
            reads.append(1)
            return real(repo, edited)

        monkeypatch.setattr(VaultRepo, "edit_origins", counted)
        carried = known_status(vault, found, GitFacts(vault, cache, read_environment().git))
        monkeypatch.undo()
        assert (reads, carried) == ([], known_status(vault, found))


def _head(vault: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=vault, capture_output=True, text=True, check=True
    ).stdout.strip()


def _known(vault: Path, generation: int) -> Known:
    found = known(vault, generation)
    assert found is not None
    return found


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
        in_lockstep(actions, sync, act)


Syncing = Callable[[Path, int], SyncReport]
Acting = Callable[[Path, int, str, int], int]


def in_lockstep(actions: list[tuple[str, int]], syncing: Syncing, acting: Acting) -> None:
    """Two vaults, the same actions; at each sync, one from the record (where it answers), the
    other in full: reports, records, notes and the next quick answer must agree."""
    with tempfile.TemporaryDirectory() as tmp:
        ours, full, generation = Path(tmp) / "ours", Path(tmp) / "full", 0
        syncing(ours, generation)
        syncing(full, generation)
        for action, index in actions:
            if action == "sync":
                answered = sync_from_record(ours, inputs(generation))
                report = syncing(full, generation)
                event("from the record" if answered else "in full")
                if answered is None:
                    syncing(ours, generation)
                    continue
                assert answered[0] == report
                assert _record(ours) == _record(full) == answered[1]
                assert unchanged_since_last_sync(ours, inputs(generation))
            else:
                acting(full, generation, action, index)
                generation = acting(ours, generation, action, index)
            assert _notes(ours) == _notes(full)


NODES = [f"note:{i}" for i in range(5)]


def linked_specs(generation: int, chosen: Mapping[str, str]) -> list[NoteSpec]:
    """Five notes where the user may have moved them, each linking the next by its path."""
    paths = [chosen.get(node, f"F/n{i}.md") for i, node in enumerate(NODES)]
    links = [f"see [[{paths[(i + 1) % 5][:-3]}|next]]" for i in range(5)]
    return [
        make_spec(
            paths[i],
            f"# Note {i}\n\nline a\nline b {generation * (i < 2)}\n{links[i]}\n",
            node=NODES[i],
        )
        for i in range(5)
    ]


def linked_sync(vault: Path, generation: int) -> SyncReport:
    moves = vault_moves(vault) if vault.is_dir() else NO_MOVES
    chosen = moves.chosen
    specs = linked_specs(generation, chosen)
    return sync_vault(vault, specs, inputs=inputs(generation), moves=moves)


def _where(vault: Path, index: int) -> Path | None:
    found = [p for p in vault.rglob(f"n{index}.md") if ".vaultsync" not in p.parts]
    return found[0] if found else None


def linked_act(vault: Path, generation: int, action: str, index: int) -> int:
    """What a user does in Obsidian: edit, move a note (its links rewritten), relink a note."""
    note = _where(vault, index)
    if action == "move" and note is not None and note.parent.name == "F":
        target = vault / "G" / note.name
        target.parent.mkdir(exist_ok=True)
        note.rename(target)
        for other in vault.rglob("n*.md"):  # Obsidian rewrites the links to it
            text = other.read_text()
            other.write_text(text.replace(f"[[F/n{index}|", f"[[G/n{index}|"))
    elif action == "relink" and note is not None:  # the same note, linked by its name alone
        text = note.read_text()
        note.write_text(re.sub(r"\[\[[A-Z]/(n\d)\|", r"[[\1|", text))
    elif action in ("move", "relink"):
        pass
    else:
        generation = act(vault, generation, action, index)
    return generation


def edited_after_a_move(vault: Path, action: str, index: int) -> Known | None:
    """The record after note 1 moved (and synced), then ``action`` on note ``index``."""
    linked_sync(vault, 0)
    linked_act(vault, 0, "move", 1)
    linked_sync(vault, 0)
    linked_act(vault, 0, action, index)
    return known(vault, 0)


MOVES_AND_EDITS = st.lists(
    st.tuples(
        st.sampled_from(["edit", "unedit", "move", "relink", "stores", "sync", "sync"]),
        st.integers(min_value=0, max_value=4),
    ),
    max_size=8,
)


class TestSyncFromRecordWithMoves:
    @settings(max_examples=40, deadline=None)
    @given(MOVES_AND_EDITS)
    @example([("move", 1), ("sync", 0), ("relink", 0)])
    def test_status_and_check_from_the_record_equal_the_planned_ones(
        self, actions: list[tuple[str, int]]
    ) -> None:
        """Beside moved notes, whenever the record answers, it says what planning says."""
        with tempfile.TemporaryDirectory() as tmp:
            vault, generation = Path(tmp) / "vault", 0
            linked_sync(vault, generation)
            for action, index in actions:
                if action == "sync":
                    linked_sync(vault, generation)
                else:
                    generation = linked_act(vault, generation, action, index)
                found = known(vault, generation)
                if found is None:
                    continue
                moves = vault_moves(vault)
                planned_specs = linked_specs(generation, moves.chosen)
                assert known_status(vault, found) == vault_status(vault, planned_specs, moves)
                assert not check_vault(vault, planned_specs, moves)

    @settings(max_examples=40, deadline=None)
    @given(MOVES_AND_EDITS)
    @example([("move", 1), ("sync", 0), ("relink", 0), ("sync", 0)])
    @example([("move", 1), ("sync", 0), ("edit", 3), ("sync", 0)])
    def test_a_sync_from_the_record_equals_the_full_sync(
        self, actions: list[tuple[str, int]]
    ) -> None:
        """Notes moved and their links rewritten, then edited: from the record as in full."""
        in_lockstep(actions, linked_sync, linked_act)


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

    def test_an_edit_beside_moved_notes_is_answered(self, tmp_path: Path) -> None:
        """Where the user moved a note, an edit of words is still read from the record."""
        found = edited_after_a_move(tmp_path / "vault", "edit", 3)
        assert found is not None and found.last.edited == ("F/n3.md",)

    def test_an_edit_of_links_alone_beside_moved_notes_needs_a_plan(self, tmp_path: Path) -> None:
        """An edit that only writes a link another way may be Obsidian's: the sync updates it."""
        assert edited_after_a_move(tmp_path / "vault", "relink", 0) is None

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

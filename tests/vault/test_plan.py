"""Stage 5, pure: every decision of ``plan_sync`` from hand-made disk states."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syncdriver import make_spec
from vaultsync.core.errors import UnsafePathError, VaultWriteError
from vaultsync.core.model import NoteSpec
from vaultsync.vault.manifest import Entry, Journal, Manifest, blob_id
from vaultsync.vault.plan import (
    ABSENT,
    Action,
    FileKind,
    FileState,
    MergeOutcome,
    Plan,
    collisions,
    history_questions,
    next_manifest,
    plan_sync,
    reconcile,
)


def on_disk(text: str) -> FileState:
    return FileState(kind=FileKind.FILE, blob=blob_id(text.encode()), stat=(len(text), 1, 1))


def entry_for(spec: NoteSpec, text: str) -> Entry:
    return Entry(node=spec.node_id, key=spec.key, blob=blob_id(text.encode()))


def manifest(entries: Mapping[str, Entry], deleted: frozenset[str] = frozenset()) -> Manifest:
    return Manifest(entries=MappingProxyType(dict(entries)), deleted=deleted, fingerprint="f")


def never_render() -> bytes:
    raise AssertionError("render must not be called")


def actions(plan: Plan) -> dict[str, Action]:
    return {s.path: s.action for s in plan.steps}


class TestPlanSync:
    def test_fresh_vault_creates_everything(self) -> None:
        """No manifest, nothing on disk: every note is created."""
        specs = [make_spec("a.md", "a"), make_spec("F/b.md", "b")]
        plan = plan_sync(specs, Manifest(), {}, {})
        assert actions(plan) == {"a.md": Action.CREATE, "F/b.md": Action.CREATE}

    def test_unchanged_key_and_file_is_not_rendered(self) -> None:
        """Same key, untouched file: unchanged, and ``render`` is never called."""
        spec = make_spec("a.md", "a")
        lazy = type(spec)(path=spec.path, node_id=spec.node_id, key=spec.key, render=never_render)
        plan = plan_sync(
            [lazy], manifest({"a.md": entry_for(spec, "a")}), {"a.md": on_disk("a")}, {}
        )
        assert actions(plan) == {"a.md": Action.UNCHANGED}
        assert plan.keep["a.md"].key == spec.key

    def test_changed_key_updates(self) -> None:
        """A new key on an untouched note: update (the sync renders and compares)."""
        old, new = make_spec("a.md", "a"), make_spec("a.md", "a2")
        plan = plan_sync([new], manifest({"a.md": entry_for(old, "a")}), {"a.md": on_disk("a")}, {})
        assert actions(plan) == {"a.md": Action.UPDATE}
        assert plan.steps[0].prior == Entry(node=new.node_id, key=old.key, blob=blob_id(b"a"))

    def test_user_edit_is_kept_and_force_regenerates(self) -> None:
        """An edited note with nothing new is kept (manifest keeps our blob); ``force`` rewrites."""
        spec = make_spec("a.md", "a")
        before = manifest({"a.md": entry_for(spec, "a")})
        disk = {"a.md": on_disk("a, edited by the user")}
        plan = plan_sync([spec], before, disk, {})
        assert actions(plan) == {"a.md": Action.KEEP_EDITED}
        assert plan.keep["a.md"].blob == blob_id(b"a")
        forced = plan_sync([spec], before, disk, {}, force=True)
        assert actions(forced) == {"a.md": Action.UPDATE}

    def test_new_store_data_for_an_edited_note_is_merged(self) -> None:
        """An edited note whose key changed: merge, base = our last blob, kept if no merge."""
        old, spec = make_spec("a.md", "a"), make_spec("a.md", "a2")
        before = manifest({"a.md": entry_for(old, "a")})
        plan = plan_sync([spec], before, {"a.md": on_disk("a, edited by the user")}, {})
        assert actions(plan) == {"a.md": Action.MERGE}
        assert plan.steps[0].prior == Entry(node=spec.node_id, key=old.key, blob=blob_id(b"a"))
        assert plan.keep["a.md"] == plan.steps[0].prior

    def test_clean_merge_records_the_new_render_as_base(self) -> None:
        """After a clean merge on disk the entry names the new render; a conflict records it."""
        old, spec = make_spec("a.md", "a"), make_spec("a.md", "a2")
        before = manifest({"a.md": entry_for(old, "a")})
        plan = plan_sync([spec], before, {"a.md": on_disk("a, edited")}, {})
        theirs, merged = blob_id(b"a2"), blob_id(b"a2, edited")
        clean = {"a.md": MergeOutcome(theirs=theirs, clean=True, blob=merged)}
        entries, _ = next_manifest(plan, {"a.md": merged}, clean)
        assert entries["a.md"] == Entry(node=spec.node_id, key=spec.key, blob=theirs)
        entries, _ = next_manifest(plan, {}, clean)
        assert entries["a.md"] == plan.steps[0].prior
        clash = {"a.md": MergeOutcome(theirs=theirs, overlaps=("body",))}
        entries, _ = next_manifest(plan, {}, clash)
        assert entries["a.md"].theirs == theirs
        assert entries["a.md"].blob == blob_id(b"a")  # the base stays until resolved
        assert entries["a.md"].key == spec.key  # a later store change merges again

    def test_user_deletion_is_respected_until_forced(self) -> None:
        """A note the user deleted is not re-created, and is remembered; ``force`` re-creates."""
        spec = make_spec("a.md", "a")
        first = plan_sync([spec], manifest({"a.md": entry_for(spec, "a")}), {}, {})
        assert actions(first) == {"a.md": Action.KEEP_DELETED}
        assert first.deleted == {"a.md"}
        entries, deleted = next_manifest(first, {})
        later = plan_sync([spec], manifest(entries, deleted), {}, {})
        assert actions(later) == {"a.md": Action.KEEP_DELETED}
        forced = plan_sync([spec], manifest(entries, deleted), {}, {}, force=True)
        assert actions(forced) == {"a.md": Action.CREATE}
        assert forced.deleted == frozenset()

    def test_foreign_file_is_a_conflict_even_with_force(self) -> None:
        """A file the engine never wrote is never touched."""
        spec = make_spec("a.md", "a")
        for force in (False, True):
            plan = plan_sync([spec], manifest({}), {"a.md": on_disk("mine")}, {}, force=force)
            assert actions(plan) == {"a.md": Action.CONFLICT}
            assert "did not write" in plan.steps[0].reason
            assert "a.md" not in plan.keep

    def test_orphans_removed_only_when_unedited(self) -> None:
        """A note no longer produced goes if untouched; an edited one stays, even with force."""
        old = manifest(
            {
                "gone.md": Entry(node="n", key="k", blob=blob_id(b"x")),
                "kept.md": Entry(node="n", key="k", blob=blob_id(b"y")),
            }
        )
        disk = {"gone.md": on_disk("x"), "kept.md": on_disk("y, edited")}
        for force in (False, True):
            plan = plan_sync([], old, disk, {}, force=force)
            assert actions(plan) == {"gone.md": Action.REMOVE, "kept.md": Action.KEEP_EDITED}
            assert set(plan.keep) == {"kept.md"}

    def test_orphan_already_gone_is_dropped(self) -> None:
        """An entry whose file is gone and no longer produced leaves the manifest."""
        plan = plan_sync([], manifest({"x.md": Entry(node="n", key="k", blob="a" * 40)}), {}, {})
        assert plan.steps == ()
        assert next_manifest(plan, {}) == ({}, frozenset())

    def test_corrupt_manifest_keeps_every_existing_file(self) -> None:
        """Without a usable manifest or history, existing files are never overwritten."""
        spec_present, spec_missing = make_spec("a.md", "new a"), make_spec("b.md", "b")
        broken = Manifest(corrupt=True, problem="bad", fingerprint="f")
        plan = plan_sync([spec_present, spec_missing], broken, {"a.md": on_disk("old a")}, {})
        assert actions(plan) == {"a.md": Action.CONFLICT, "b.md": Action.CREATE}

    def test_history_proves_ownership_without_manifest(self) -> None:
        """History makes a file ours: update or keep-edited; a note no longer produced is kept."""
        specs = [make_spec("a.md", "a2"), make_spec("e.md", "e2"), make_spec("d.md", "d")]
        disk = {"a.md": on_disk("a"), "e.md": on_disk("e, edited"), "old.md": on_disk("o")}
        history = {
            p: blob_id(t.encode())
            for p, t in (("a.md", "a"), ("e.md", "e"), ("old.md", "o"), ("d.md", "d"))
        }
        plan = plan_sync(specs, Manifest(corrupt=True, fingerprint="f"), disk, history)
        assert actions(plan) == {
            "a.md": Action.UPDATE,
            "e.md": Action.KEEP_EDITED,
            "d.md": Action.KEEP_DELETED,
            "old.md": Action.UNCHANGED,  # a sync without its manifest removes nothing
        }
        assert plan.keep["old.md"].blob == blob_id(b"o")  # owned again: the next sync removes it

    def test_blocked_and_other_paths_are_conflicts(self) -> None:
        """Behind a symlink, or a folder/symlink at the path: conflict, entry kept if blocked."""
        a, b = make_spec("L/a.md", "a"), make_spec("b.md", "b")
        old = manifest({"L/a.md": entry_for(a, "a"), "b.md": entry_for(b, "b")})
        disk = {
            "L/a.md": FileState(kind=FileKind.BLOCKED, detail="L is a symlink or not a folder"),
            "b.md": FileState(kind=FileKind.OTHER, detail="not a regular file"),
        }
        plan = plan_sync([a, b], old, disk, {})
        assert actions(plan) == {"L/a.md": Action.CONFLICT, "b.md": Action.CONFLICT}
        assert set(plan.keep) == {"L/a.md"}

    def test_case_collisions_do_not_clobber(self) -> None:
        """Two notes differing only by case: the first (sorted) is written, the other reported."""
        specs = [
            make_spec("Notes/Apple.md", "1"),
            make_spec("Notes/apple.md", "2"),
            make_spec("notes/x.md", "3"),
        ]
        plan = plan_sync(specs, Manifest(), {}, {})
        assert actions(plan)["Notes/Apple.md"] is Action.CREATE
        assert actions(plan)["Notes/apple.md"] is Action.CONFLICT
        assert "case" in next(s.reason for s in plan.steps if s.path == "Notes/apple.md")
        assert actions(plan)["notes/x.md"] is Action.CREATE

    def test_unsafe_or_duplicate_specs_refuse_the_whole_sync(self) -> None:
        """A spec path that could leave the vault raises before anything is decided."""
        with pytest.raises(UnsafePathError):
            plan_sync([make_spec("../escape.md", "x")], Manifest(), {}, {})
        with pytest.raises(VaultWriteError):
            plan_sync([make_spec("a.md", "x"), make_spec("a.md", "y")], Manifest(), {}, {})


class TestCollisions:
    def test_unicode_forms_and_folders(self) -> None:
        """NFC/NFD spellings collide; a note cannot sit where another note needs a folder."""
        found = collisions(["caf\u00e9.md", "cafe\u0301.md", "a.md", "a.md/b.md"])
        assert set(found) == {"caf\u00e9.md", "a.md/b.md"}


class TestHistoryQuestions:
    def test_clean_vault_asks_nothing(self) -> None:
        """Every file as the manifest says: git history is not needed."""
        spec = make_spec("a.md", "a")
        assert (
            history_questions(
                ["a.md"],
                manifest({"a.md": entry_for(spec, "a")}),
                {"a.md": on_disk("a")},
                trust_manifest=False,
            )
            == frozenset()
        )

    def test_unknown_and_differing_files_are_asked(self) -> None:
        """Files not in the manifest, or differing (unless the manifest is the committed one)."""
        spec = make_spec("a.md", "a")
        m = manifest({"a.md": entry_for(spec, "a")})
        disk = {"a.md": on_disk("edited"), "b.md": on_disk("b"), "c.md": ABSENT}
        assert history_questions(["a.md", "b.md", "c.md"], m, disk, trust_manifest=False) == {
            "a.md",
            "b.md",
        }
        assert history_questions(["a.md", "b.md", "c.md"], m, disk, trust_manifest=True) == {"b.md"}

    def test_lost_manifest_asks_about_missing_notes(self) -> None:
        """Without a manifest, absent notes are asked too (to respect user deletions)."""
        assert history_questions(["c.md"], Manifest(), {"c.md": ABSENT}, trust_manifest=False) == {
            "c.md"
        }


class TestReconcile:
    def test_adopts_what_happened_only(self) -> None:
        """Intended blobs found on disk are ours; removals done drop entries; the rest stays."""
        spec = make_spec("a.md", "a")
        old = manifest(
            {"gone.md": Entry(node="n", key="k", blob="c" * 40), "b.md": entry_for(spec, "b-old")}
        )
        journal = Journal(
            intents={
                "a.md": entry_for(spec, "a"),
                "b.md": entry_for(spec, "b-new"),
                "gone.md": None,
            }
        )
        disk = {"a.md": on_disk("a"), "b.md": on_disk("b-old"), "gone.md": ABSENT}
        fixed = reconcile(old, journal, disk)
        assert set(fixed.entries) == {"a.md", "b.md"}
        assert fixed.entries["b.md"].blob == blob_id(b"b-old")


class TestNextManifest:
    def test_skipped_steps_keep_their_prior(self) -> None:
        """An update or removal that did not happen keeps our last blob (the file is edited)."""
        old_a = Entry(node="note:a.md", key="old", blob=blob_id(b"a"))
        old_x = Entry(node="n", key="k", blob=blob_id(b"x"))
        plan = plan_sync(
            [make_spec("a.md", "a2")],
            manifest({"a.md": old_a, "x.md": old_x}),
            {"a.md": on_disk("a"), "x.md": on_disk("x")},
            {},
        )
        entries, _ = next_manifest(plan, {})
        assert entries == {"a.md": old_a, "x.md": old_x}
        entries, _ = next_manifest(plan, {"a.md": blob_id(b"a2"), "x.md": None})
        assert entries["a.md"].blob == blob_id(b"a2")
        assert "x.md" not in entries


def _apply(plan: Plan, disk: dict[str, FileState]) -> dict[str, str | None]:
    """Carry a plan out on a simulated disk; the outcome ``next_manifest`` wants."""
    outcome: dict[str, str | None] = {}
    for step in plan.steps:
        if step.action in (Action.CREATE, Action.UPDATE) and step.spec is not None:
            text = step.spec.render().decode()
            disk[step.path] = on_disk(text)
            outcome[step.path] = disk[step.path].blob
        elif step.action is Action.REMOVE:
            disk.pop(step.path)
            outcome[step.path] = None
    return outcome


note_names = st.sampled_from(["a.md", "F/b.md", "F/c.md", "G/d.md", "e.md"])
versions = st.dictionaries(note_names, st.sampled_from(["1", "2", "3"]), max_size=5)


class TestProperties:
    @settings(max_examples=150, deadline=None)
    @given(
        versions,
        versions,
        st.dictionaries(note_names, st.sampled_from(["edit", "delete", "foreign"]), max_size=3),
        st.booleans(),
    )
    def test_applying_then_replanning_leaves_nothing_to_do(
        self, first: dict[str, str], second: dict[str, str], user: dict[str, str], force: bool
    ) -> None:
        """After any sync, user actions and another sync, a third plan changes nothing, and user
        files (edits, foreign files) were never planned for writing or removal unless forced."""
        disk: dict[str, FileState] = {}
        specs = [make_spec(p, f"{p} v{v}") for p, v in first.items()]
        plan = plan_sync(specs, Manifest(), disk, {})
        m = manifest(*next_manifest(plan, _apply(plan, disk)))
        user_blobs: dict[str, str] = {}
        for path, act in user.items():
            if act == "edit" and path in disk:
                disk[path] = on_disk(f"{path} edited")
                user_blobs[path] = disk[path].blob
            elif act == "delete":
                disk.pop(path, None)
            elif act == "foreign" and path not in disk:
                disk[path] = on_disk(f"{path} foreign")
                user_blobs[path] = disk[path].blob
        specs = [make_spec(p, f"{p} v{v}") for p, v in second.items()]
        plan = plan_sync(specs, m, disk, {}, force=force)
        for step in plan.steps:
            if step.path in user_blobs and step.state.blob == user_blobs[step.path]:
                touching = step.action in (Action.UPDATE, Action.REMOVE, Action.CREATE)
                assert not touching or (
                    force and user[step.path] == "edit" and step.action is Action.UPDATE
                )
        m = manifest(*next_manifest(plan, _apply(plan, disk)))
        again = plan_sync(specs, m, disk, {})
        assert not again.paths(Action.CREATE, Action.UPDATE, Action.REMOVE)

    @given(versions)
    def test_order_of_specs_does_not_matter(self, notes: dict[str, str]) -> None:
        """The plan is the same for any order of the same specs."""
        specs = [make_spec(p, f"{p} v{v}") for p, v in notes.items()]
        one = plan_sync(specs, Manifest(), {}, {})
        two = plan_sync(list(reversed(specs)), Manifest(), {}, {})
        assert [(s.path, s.action) for s in one.steps] == [(s.path, s.action) for s in two.steps]

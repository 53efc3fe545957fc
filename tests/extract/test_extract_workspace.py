"""Journal notes, sessions, skills, the board and contexts."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import build_tree, dumps
from vaultsync.core.model import Document
from vaultsync.extract import read_state
from vaultsync.extract.workspace import card_sort_key, normalize_column


def skipped_lines(state: Path) -> list[str]:
    """The warning line of each store file ``read_state`` skipped."""
    return [skipped.line() for skipped in read_state(state).skipped]


class TestJournal:
    def test_daily_weekly_monthly(self, tmp_path: Path) -> None:
        """Daily notes and digests are read with their labels, sorted by (period, label)."""
        build_tree(
            tmp_path,
            {
                "memory/202607/20260703.md": "\n## 09:42\n\nSwitched to gzip.\n",
                "memory/202607/20260701.md": "\n## 08:00\n\nStart.\n",
                "memory/weekly/2026-W27.md": "# Week 2026-W27\n",
                "memory/monthly/2026-06.md": "# Month 2026-06\n",
            },
        )
        notes = read_state(tmp_path).journal
        assert [(n.period, n.label, n.source_path) for n in notes] == [
            ("daily", "2026-07-01", "memory/202607/20260701.md"),
            ("daily", "2026-07-03", "memory/202607/20260703.md"),
            ("monthly", "2026-06", "memory/monthly/2026-06.md"),
            ("weekly", "2026-W27", "memory/weekly/2026-W27.md"),
        ]
        assert notes[1].text == "\n## 09:42\n\nSwitched to gzip.\n"

    def test_other_names_ignored(self, tmp_path: Path) -> None:
        """Files that are not a real date, week or month in the right folder are ignored."""
        build_tree(
            tmp_path,
            {
                "memory/202607/20260631.md": "no such day",
                "memory/202607/20260801.md": "wrong month folder",
                "memory/202607/notes.md": "x",
                "memory/202607/.20260702.md": "hidden",
                "memory/202607/20260702.txt": "x",
                "memory/weekly/2026-W54.md": "no such week",
                "memory/monthly/2026-13.md": "no such month",
                "memory/other/20260702.md": "x",
            },
        )
        assert read_state(tmp_path).journal == ()

    def test_crlf_becomes_lf(self, tmp_path: Path) -> None:
        """Windows line endings are normalized to ``\\n``."""
        build_tree(tmp_path, {"memory/202607/20260703.md": b"a\r\nb\rc\n"})
        assert read_state(tmp_path).journal[0].text == "a\nb\nc\n"

    def test_invalid_utf8(self, tmp_path: Path) -> None:
        """A daily note with invalid UTF-8 is skipped, naming the byte offset."""
        build_tree(tmp_path, {"memory/202607/20260703.md": b"ok\n\xff"})
        assert skipped_lines(tmp_path) == [
            "memory/202607/20260703.md:byte 3: invalid UTF-8 (byte 0xff); skipped"
        ]


class TestSessions:
    def test_v2_title_and_no_mtime(self, tmp_path: Path) -> None:
        """A v2 session gives its file name and title; its mtime is never read (git drops it)."""
        session = {
            "version": 2,
            "title": "retry policy for the OTLP exporter",
            "chat_history": [{"role": "user", "content": "SECRET-MESSAGE"}],
        }
        build_tree(tmp_path, {"sessions/retry-policy.json": dumps(session)})
        os.utime(tmp_path / "sessions/retry-policy.json", ns=(0, 1_783_000_000_123_456_789))
        (read,) = read_state(tmp_path).sessions
        os.utime(tmp_path / "sessions/retry-policy.json", ns=(0, 1_000_000_000_000_000_000))
        assert read_state(tmp_path).sessions == (read,)
        assert (read.name, read.title, read.saved) == (
            "retry-policy",
            "retry policy for the OTLP exporter",
            None,
        )
        assert "SECRET-MESSAGE" not in repr(read_state(tmp_path))

    def test_autosave_name_is_its_time(self, tmp_path: Path) -> None:
        """An autosave's name holds ChatCLI's local wall-clock time of the save (naive)."""
        build_tree(tmp_path, {"sessions/autosave-20261019-154210.json": "[]"})
        (read,) = read_state(tmp_path).sessions
        assert read.saved == datetime(2026, 10, 19, 15, 42, 10)  # naive: a wall clock

    @pytest.mark.parametrize(
        "name",
        [
            "autosave-20261319-154210",
            "autosave-20261019-250000",
            "autosave-2026101-154210x",
            "mcp-20261019-154210",
            "my-autosave-20261019-154210",
        ],
    )
    def test_other_names_have_no_time(self, tmp_path: Path, name: str) -> None:
        """Only a real date and time in ChatCLI's autosave form is a time."""
        build_tree(tmp_path, {f"sessions/{name}.json": "[]"})
        (read,) = read_state(tmp_path).sessions
        assert read.saved is None

    def test_legacy_array_has_no_title(self, tmp_path: Path) -> None:
        """A legacy bare-array session has a name and no title."""
        build_tree(tmp_path, {"sessions/old.json": '[{"role": "user", "content": "hi"}]'})
        (read,) = read_state(tmp_path).sessions
        assert (read.name, read.title) == ("old", "")

    def test_only_visible_json_files(self, tmp_path: Path) -> None:
        """Temp files, hidden files and other extensions are not sessions; names sort."""
        build_tree(
            tmp_path,
            {
                "sessions/b.json": "[]",
                "sessions/a-b.json": "[]",
                "sessions/a.json": "[]",
                "sessions/a.json.123.tmp": "{",
                "sessions/.hidden.json": "{",
                "sessions/notes.txt": "x",
            },
        )
        assert [s.name for s in read_state(tmp_path).sessions] == ["a", "a-b", "b"]

    def test_scalar_session_is_refused(self, tmp_path: Path) -> None:
        """A session that is neither an object nor an array is skipped, saying why."""
        build_tree(tmp_path, {"sessions/x.json": "42"})
        assert skipped_lines(tmp_path) == [
            "sessions/x.json: expected an object (v2 session) or an array (legacy session), "
            "got 42; skipped"
        ]


SKILL = """---
name: pg-tuning
description: Tune Postgres settings for write-heavy workloads
triggers: postgres, vacuum
tags: [database, perf]
category: data
version: 1.2
---
Check autovacuum thresholds first.
"""


class TestSkills:
    def test_package_skill(self, tmp_path: Path) -> None:
        """A ``SKILL.md`` front matter gives name, description, triggers, tags and category."""
        build_tree(tmp_path, {"skills/pg/SKILL.md": SKILL})
        (skill,) = read_state(tmp_path).skills
        assert skill.name == "pg-tuning"
        assert skill.description == "Tune Postgres settings for write-heavy workloads"
        assert skill.triggers == ("postgres", "vacuum")
        assert skill.tags == ("database", "perf")
        assert skill.category == "data"
        assert skill.source_path == "skills/pg/SKILL.md"

    @pytest.mark.parametrize(
        "tags",
        ["[database, perf]", "database, perf", "\n  - database\n  - perf", "' database ,perf, '"],
    )
    def test_list_forms(self, tmp_path: Path, tags: str) -> None:
        """Lists accept a YAML list or a comma-separated string."""
        build_tree(tmp_path, {"skills/x/SKILL.md": f"---\ntags: {tags}\n---\n"})
        assert read_state(tmp_path).skills[0].tags == ("database", "perf")

    def test_name_defaults_to_folder_and_legacy_file(self, tmp_path: Path) -> None:
        """Without a front-matter name, the folder (or legacy file) name is used."""
        build_tree(
            tmp_path,
            {
                "skills/deploy/SKILL.md": "---\ndescription: Ship it\n---\nbody",
                "skills/legacy.md": "Just a body, no front matter.",
            },
        )
        skills = read_state(tmp_path).skills
        assert [(s.name, s.description, s.source_path) for s in skills] == [
            ("deploy", "Ship it", "skills/deploy/SKILL.md"),
            ("legacy", "", "skills/legacy.md"),
        ]

    def test_hidden_and_incomplete_entries_skipped(self, tmp_path: Path) -> None:
        """Dot entries, folders without SKILL.md and non-Markdown files are not skills."""
        build_tree(
            tmp_path,
            {
                "skills/.builtin-manifest.json": "{}",
                "skills/.hidden/SKILL.md": SKILL,
                "skills/empty/README.md": "x",
                "skills/notes.txt": "x",
            },
        )
        assert read_state(tmp_path).skills == ()

    def test_name_clash_first_file_wins(self, tmp_path: Path) -> None:
        """Two skills with one name: the entry first in file-name order wins."""
        build_tree(
            tmp_path,
            {
                "skills/b/SKILL.md": "---\nname: same\ndescription: from b\n---\n",
                "skills/a/SKILL.md": "---\nname: same\ndescription: from a\n---\n",
            },
        )
        assert [s.description for s in read_state(tmp_path).skills] == ["from a"]

    def test_yaml_scalars_become_text(self, tmp_path: Path) -> None:
        """Numbers, booleans and dates in front matter become the text written."""
        build_tree(
            tmp_path,
            {"skills/x/SKILL.md": "---\ndescription: 2026-07-01\ntags: [1.10, yes, ~]\n---\n"},
        )
        skill = read_state(tmp_path).skills[0]
        assert (skill.description, skill.tags) == ("2026-07-01", ("1.10", "yes"))

    def test_keys_are_exact(self, tmp_path: Path) -> None:
        """``Name`` is not ``name``: ChatCLI's keys are exact, so the folder names the skill."""
        build_tree(tmp_path, {"skills/x/SKILL.md": "---\nName: other\n---\n"})
        assert read_state(tmp_path).skills[0].name == "x"

    def test_dots_close_the_front_matter(self, tmp_path: Path) -> None:
        """A ``...`` line closes the front matter as a ``---`` line does."""
        build_tree(tmp_path, {"skills/x/SKILL.md": "---\nname: dotted\n...\nbody\n"})
        assert read_state(tmp_path).skills[0].name == "dotted"

    def test_mapping_where_a_list_belongs_is_empty(self, tmp_path: Path) -> None:
        """A mapping given for ``tags`` gives no tags; the skill is still read (as in ChatCLI)."""
        build_tree(tmp_path, {"skills/x/SKILL.md": "---\nname: x\ntags: {a: b}\n---\n"})
        (skill,) = read_state(tmp_path).skills
        assert (skill.name, skill.tags) == ("x", ())

    @pytest.mark.parametrize(
        "front",
        [
            "name: x\ntags: [a, b\n",
            "name: x\nname: y\n",
            "- a\n",
            "just text\n",
            "name: [a, b]\n",
            "tags: [a, {b: c}]\n",
            "description: {a: b}\n",
        ],
        ids=["bad-yaml", "repeated-key", "list", "scalar", "list-name", "mapping-item", "map-text"],
    )
    def test_skills_chatcli_cannot_load_are_skipped(self, tmp_path: Path, front: str) -> None:
        """Front matter ChatCLI's loader rejects skips that skill, silently, as ChatCLI does."""
        build_tree(
            tmp_path,
            {"skills/bad/SKILL.md": f"---\n{front}---\n", "skills/good/SKILL.md": SKILL},
        )
        assert [s.name for s in read_state(tmp_path).skills] == ["pg-tuning"]


class TestBoard:
    @pytest.mark.parametrize(
        ("written", "column"),
        [
            ("todo", "backlog"),
            ("pending", "backlog"),
            ("in_progress", "doing"),
            ("In Progress", "doing"),
            ("in-progress", "doing"),
            ("inprogress", "doing"),
            ("WIP", "doing"),
            ("dev", "doing"),
            ("develop", "doing"),
            ("reviewing", "review"),
            ("qa", "review"),
            ("waiting", "blocked"),
            ("parked", "blocked"),
            ("completed", "done"),
            ("delivered", "done"),
            ("closed", "done"),
            ("done", "done"),
            ("", "backlog"),
            ("  Icebox ", "icebox"),
        ],
    )
    def test_column_aliases(self, written: str, column: str) -> None:
        """Aliases map to ChatCLI's columns; unknown columns are kept, trimmed and lowercased."""
        assert normalize_column(written) == column

    def test_cards_read_and_sorted_numerically(self, tmp_path: Path) -> None:
        """Cards keep their fields and sort card-2 before card-10."""
        board = {
            "schema_version": 1,
            "seq": 10,
            "cards": [
                {"id": "card-10", "title": "Later", "column": "todo"},
                {
                    "id": "card-2",
                    "title": "Rotate TLS certs",
                    "description": "before expiry",
                    "column": "wip",
                    "assignee": "ops",
                    "notes": [{"author": "user", "text": "soon", "at": "2026-07-08T10:00:00Z"}],
                    "history": [{"from": "backlog", "to": "doing"}],
                    "created_at": "2026-07-07T09:00:00Z",
                    "updated_at": "2026-07-08T10:00:00Z",
                },
            ],
        }
        build_tree(tmp_path, {"board.json": dumps(board)})
        cards = read_state(tmp_path).cards
        assert [(c.id, c.column) for c in cards] == [("card-2", "doing"), ("card-10", "backlog")]
        assert (cards[0].assignee, cards[0].description) == ("ops", "before expiry")
        assert cards[0].notes[0].text == "soon"
        assert cards[0].notes[0].at == datetime(2026, 7, 8, 10, tzinfo=UTC)

    def test_numeric_aware_sort_key(self) -> None:
        """Numbers in ids compare as numbers, text as text."""
        ids = ["card-10", "card-2", "card-1", "alpha", "card-2b"]
        assert sorted(ids, key=card_sort_key) == ["alpha", "card-1", "card-2", "card-2b", "card-10"]

    def test_card_without_id(self, tmp_path: Path) -> None:
        """A card without id makes the board skipped, naming the card."""
        build_tree(tmp_path, {"board.json": '{"cards": [{"title": "x"}]}'})
        assert skipped_lines(tmp_path) == ["board.json:cards[0].id: missing; skipped"]


CONTEXT = {
    "id": "3f0e8f1c-2b6a-4c1e-9d7a-5b2f0c9e1a44",
    "name": "orbital-docs",
    "description": "Gateway docs",
    "files": [
        {"Path": "docs/setup.md", "Content": "# Setup\n", "Size": 8, "Type": "Markdown"},
        {"Path": "C:\\repo\\README.md", "Content": "hello", "Size": 5, "Type": "Markdown"},
    ],
    "mode": "knowledge",
    "created_at": "2026-07-01T12:00:00Z",
    "updated_at": "2026-07-02T12:00:00Z",
    "tags": ["docs"],
    "metadata": None,
    "is_chunked": False,
}


class TestContexts:
    def test_context_and_documents(self, tmp_path: Path) -> None:
        """A context keeps its fields; documents are keyed by path, kept as written."""
        build_tree(tmp_path, {f"contexts/{CONTEXT['id']}.json": dumps(CONTEXT)})
        (context,) = read_state(tmp_path).contexts
        assert (context.id, context.name, context.mode) == (
            CONTEXT["id"],
            "orbital-docs",
            "knowledge",
        )
        assert context.is_knowledge
        assert context.tags == ("docs",)
        assert context.created_at == datetime(2026, 7, 1, 12, tzinfo=UTC)
        assert context.documents == (
            Document(source="C:\\repo\\README.md", content="hello", type="Markdown"),
            Document(source="docs/setup.md", content="# Setup\n", type="Markdown"),
        )

    def test_chunks_fold_back_in_chunk_order(self, tmp_path: Path) -> None:
        """Chunk pieces of one path join in chunk order, identical pieces once."""
        context = {
            "id": "c",
            "name": "big",
            "mode": "chunked",
            "files": None,
            "tags": None,
            "chunks": [
                {"index": 2, "files": [{"Path": "a.go", "Content": "part2", "Type": "Go"}]},
                {
                    "index": 1,
                    "files": [
                        {"Path": "a.go", "Content": "part1|", "Type": "Go"},
                        {"Path": "b.txt", "Content": "same"},
                    ],
                },
                {"index": 3, "files": [{"Path": "b.txt", "Content": "same"}]},
            ],
        }
        build_tree(tmp_path, {"contexts/c.json": dumps(context)})
        (read,) = read_state(tmp_path).contexts
        assert read.documents == (
            Document(source="a.go", content="part1|part2", type="Go"),
            Document(source="b.txt", content="same", type="Text"),
        )

    def test_files_and_chunks_merge_by_path(self, tmp_path: Path) -> None:
        """A path in both ``files[]`` and a chunk is one document."""
        context = {
            "id": "c",
            "files": [{"Path": "a.md", "Content": "whole"}],
            "chunks": [{"index": 1, "files": [{"Path": "a.md", "Content": "whole"}]}],
        }
        build_tree(tmp_path, {"contexts/c.json": dumps(context)})
        assert read_state(tmp_path).contexts[0].documents == (
            Document(source="a.md", content="whole"),
        )

    def test_id_and_name_fallbacks(self, tmp_path: Path) -> None:
        """A context without id takes its file name, and without name its id."""
        build_tree(tmp_path, {"contexts/abc.json": '{"mode": "full"}'})
        (read,) = read_state(tmp_path).contexts
        assert (read.id, read.name, read.mode) == ("abc", "abc", "full")

    def test_sorted_by_creation_then_id(self, tmp_path: Path) -> None:
        """Contexts sort by (created_at, id); one without a date sorts first."""
        build_tree(
            tmp_path,
            {
                "contexts/a.json": '{"id": "a", "created_at": "2026-07-02T00:00:00Z"}',
                "contexts/b.json": '{"id": "b", "created_at": "2026-07-01T00:00:00Z"}',
                "contexts/c.json": '{"id": "c"}',
                "contexts/c.json.123.tmp": "{",
            },
        )
        assert [c.id for c in read_state(tmp_path).contexts] == ["c", "b", "a"]

    def test_document_without_path(self, tmp_path: Path) -> None:
        """A document without a path makes its context skipped, naming it."""
        build_tree(tmp_path, {"contexts/c.json": '{"chunks": [{"files": [{"Content": "x"}]}]}'})
        assert skipped_lines(tmp_path) == [
            "contexts/c.json:chunks[0].files[0].Path: missing; skipped"
        ]

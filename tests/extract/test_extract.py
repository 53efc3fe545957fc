"""``read_state`` over a whole state directory, and ``store_fingerprint``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import build_tree, dumps
from vaultsync.core.errors import StoreError
from vaultsync.core.model import Records
from vaultsync.extract import read_state, store_fingerprint

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "stores" / "demo"


FACTS = [
    {"id": f"f{i:02d}", "content": f"fact {i}", "category": "general", "score": 10 - i}
    for i in range(6)
]

STATE: dict[str, str | bytes] = {
    "memory/memory_index.json": dumps(FACTS),
    "memory/memory_tombstones.json": dumps({"f05": "2026-07-05T10:00:00Z"}),
    "memory/topics.json": dumps([{"name": "telemetry", "mentions": 7}]),
    "memory/projects.json": dumps([{"name": "Orbital", "status": "ativo"}]),
    "memory/user_profile.json": dumps({"name": "Ana", "skills": ["go"]}),
    "memory/episodes.json": dumps([{"id": "ep_1", "date": "2026-07-08T15:30:00Z"}]),
    "memory/links.json": dumps({"links": []}),
    "memory/MEMORY.md": "# regenerated, not read",
    "memory/202607/20260703.md": "\n## 09:42\n\nNote.\n",
    "memory/weekly/2026-W27.md": "# Week\n",
    "memory/monthly/2026-06.md": "# Month\n",
    "sessions/chat.json": dumps({"version": 2, "title": "Chat", "chat_history": []}),
    "skills/pg/SKILL.md": "---\nname: pg\n---\n",
    "skills/pg/scripts/run.sh": "echo\n",
    "skills/legacy.md": "body",
    "board.json": dumps({"cards": [{"id": "card-1", "title": "T", "column": "todo"}]}),
    "contexts/c1.json": dumps({"id": "c1", "name": "docs", "mode": "knowledge"}),
}


class TestReadState:
    def test_every_store_kind(self, tmp_path: Path) -> None:
        """A full state directory yields every kind of record."""
        records = read_state(build_tree(tmp_path, STATE))
        assert [f.id for f in records.facts] == ["f00", "f01", "f02", "f03", "f04"]
        assert [t.name for t in records.topics] == ["telemetry"]
        assert [(p.name, p.status) for p in records.projects] == [("orbital", "active")]
        assert records.profile is not None
        assert records.profile.name == "Ana"
        assert [e.id for e in records.episodes] == ["ep_1"]
        assert [n.label for n in records.journal] == ["2026-07-03", "2026-06", "2026-W27"]
        assert [s.title for s in records.sessions] == ["Chat"]
        assert [s.name for s in records.skills] == ["legacy", "pg"]
        assert [c.column for c in records.cards] == ["backlog"]
        assert [c.name for c in records.contexts] == ["docs"]
        assert records.links == ()

    def test_missing_state_dir_is_empty(self, tmp_path: Path) -> None:
        """A state directory that does not exist reads as empty records."""
        assert read_state(tmp_path / "absent") == Records()

    def test_empty_state_dir_is_empty(self, tmp_path: Path) -> None:
        """An empty state directory reads as empty records."""
        assert read_state(tmp_path) == Records()

    def test_state_path_is_a_file(self, tmp_path: Path) -> None:
        """A file given as the state directory is an error."""
        build_tree(tmp_path, {"state": "x"})
        with pytest.raises(StoreError) as caught:
            read_state(tmp_path / "state")
        assert str(caught.value) == f"{tmp_path / 'state'}: not a directory"

    def test_independent_of_input_order(self, tmp_path: Path) -> None:
        """Reversing every store's arrays gives the same records."""
        state = {
            "memory/memory_index.json": dumps(FACTS),
            "memory/topics.json": dumps([{"name": "b"}, {"name": "a"}]),
            "board.json": dumps({"cards": [{"id": "card-10"}, {"id": "card-9"}]}),
        }
        forward = read_state(build_tree(tmp_path / "forward", state))
        reversed_state = {
            rel: dumps(
                {"cards": json.loads(text)["cards"][::-1]}
                if rel == "board.json"
                else json.loads(text)[::-1]
            )
            for rel, text in state.items()
        }
        backward = read_state(build_tree(tmp_path / "backward", reversed_state))
        assert forward == backward

    def test_demo_store(self) -> None:
        """The bundled demo store reads without error and holds at least 40 facts."""
        if not DEMO.is_dir():
            pytest.skip("fixtures/stores/demo is not there yet")
        assert len(read_state(DEMO).facts) >= 40


class TestFingerprint:
    def test_stable(self, tmp_path: Path) -> None:
        """Two calls over an unchanged directory agree."""
        build_tree(tmp_path, STATE)
        assert store_fingerprint(tmp_path) == store_fingerprint(tmp_path)

    def test_hex_sha256(self, tmp_path: Path) -> None:
        """The fingerprint is 64 hex digits, also for an empty directory."""
        fingerprint = store_fingerprint(tmp_path)
        assert len(fingerprint) == 64
        assert int(fingerprint, 16) >= 0

    @pytest.mark.parametrize(
        "rel",
        [
            "memory/memory_index.json",
            "memory/memory_tombstones.json",
            "memory/links.json",
            "memory/202607/20260703.md",
            "memory/weekly/2026-W27.md",
            "sessions/chat.json",
            "skills/pg/SKILL.md",
            "skills/pg/scripts/run.sh",
            "board.json",
            "contexts/c1.json",
        ],
    )
    def test_changes_on_edit(self, tmp_path: Path, rel: str) -> None:
        """Editing any source file changes the fingerprint, even with size and mtime kept."""
        build_tree(tmp_path, STATE)
        before = store_fingerprint(tmp_path)
        path = tmp_path / rel
        stat = path.stat()
        path.write_bytes(path.read_bytes() + b" ")
        assert store_fingerprint(tmp_path) != before
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        assert store_fingerprint(tmp_path) != before

    @pytest.mark.parametrize(
        "rel",
        [
            "memory/202607/20260704.md",
            "memory/monthly/2026-05.md",
            "sessions/new.json",
            "skills/new/SKILL.md",
            "contexts/c2.json",
            "memory/episodes.json",
        ],
    )
    def test_changes_on_add_and_remove(self, tmp_path: Path, rel: str) -> None:
        """Adding a source file changes the fingerprint, and removing it changes it back."""
        state = {k: v for k, v in STATE.items() if k != rel}
        build_tree(tmp_path, state)
        before = store_fingerprint(tmp_path)
        build_tree(tmp_path, {rel: "[]"})
        assert store_fingerprint(tmp_path) != before
        (tmp_path / rel).unlink()
        assert store_fingerprint(tmp_path) == before

    @pytest.mark.parametrize(
        "rel",
        [
            "memory/MEMORY.md",
            "memory/usage_stats.json",
            "memory/graph.json",
            "sessions/chat.json.123.tmp",
            "sessions/.hidden.json",
            "skills/.builtin-manifest.json",
            "vault/Home.md",
        ],
    )
    def test_ignores_files_that_do_not_feed_records(self, tmp_path: Path, rel: str) -> None:
        """Files the extract does not read leave the fingerprint alone."""
        build_tree(tmp_path, STATE)
        before = store_fingerprint(tmp_path)
        build_tree(tmp_path, {rel: "x"})
        assert store_fingerprint(tmp_path) == before

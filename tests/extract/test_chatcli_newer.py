"""What ChatCLI after v1.188.0 adds on disk: each file read or ignored on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_tree
from vaultsync.extract import read_state

FACTS = '[{"id": "f1", "content": "a fact", "category": "note"}]'
SKILL = "---\nname: deploy\ndescription: ship it\n---\nSteps.\n"
BASE: dict[str, str | bytes] = {
    "memory/memory_index.json": FACTS,
    "memory/daily/2026-09-01.md": "# 2026-09-01\n\n## 09:42\n\nDid things.\n",
    "skills/deploy/SKILL.md": SKILL,
    "sessions/s.json": '{"version": 2, "title": "t", "chat_history": []}',
}


@pytest.mark.parametrize(
    "extra",
    [
        {"memory/pending/f9.json": FACTS},
        {"memory/memory_index.json.lock": ""},
        {"sessions/s.json.lock": ""},
        {"memory/.migrated-from-legacy": "2026-09-01T00:00:00Z\n"},
        {"skill-preferences.yaml": "deploy:\n  enabled: false\n"},
        {"memory/daily/.2026-09-01.md.tmp": "half written"},
    ],
    ids=["pending", "memory-lock", "session-lock", "legacy-marker", "skill-prefs", "rename-tmp"],
)
def test_newer_side_files_are_ignored(tmp_path: Path, extra: dict[str, str]) -> None:
    """Pending facts, lock sidecars, the adoption marker, skill preferences, temps: not read."""
    plain = read_state(build_tree(tmp_path / "a", BASE))
    with_extra = read_state(build_tree(tmp_path / "b", {**BASE, **extra}))
    assert with_extra == plain


def test_a_skill_source_key_is_ignored(tmp_path: Path) -> None:
    """A skill's ``source`` front-matter key changes nothing in what is read."""
    sourced = SKILL.replace("name: deploy\n", "name: deploy\nsource: hub\n")
    plain = read_state(build_tree(tmp_path / "a", BASE))
    other = read_state(build_tree(tmp_path / "b", {**BASE, "skills/deploy/SKILL.md": sourced}))
    assert other.skills == plain.skills


def test_a_newer_session_version_is_skipped(tmp_path: Path) -> None:
    """A session ``version`` above 2 is skipped as ChatCLI refuses it, naming the version."""
    state = build_tree(tmp_path, {"sessions/s.json": '{"version": 3, "title": "t"}'})
    records = read_state(state)
    assert records.sessions == ()
    (skipped,) = records.skipped
    assert (skipped.source, skipped.where) == ("sessions/s.json", "version")
    assert "newer than 2" in skipped.what


def test_a_version_2_session_with_newer_fields_reads(tmp_path: Path) -> None:
    """Fields a newer ChatCLI adds to a version-2 session are ignored, the title read."""
    session = '{"version": 2, "title": "t", "chat_history": null, "workspace": {"x": 1}}'
    (found,) = read_state(build_tree(tmp_path, {"sessions/s.json": session})).sessions
    assert found.title == "t"

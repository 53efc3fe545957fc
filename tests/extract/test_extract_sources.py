"""``extract.sources``: the one listing of the stores' files, its fingerprint, its light import."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import build_tree
from vaultsync.core.settings import Sources
from vaultsync.extract import read_state
from vaultsync.extract.sources import (
    context_folders,
    outside_fingerprint,
    session_folders,
    source_files,
    store_fingerprint,
)

MTIME_NS = 1_780_000_000_123_456_789

# Every kind of file the stores read, and neighbours that must not count.
READ = {
    "memory/memory_index.json": "[]",
    "memory/memory_tombstones.json": "{}",
    "memory/topics.json": "[ ]",
    "memory/projects.json": "[  ]",
    "memory/user_profile.json": "{ }",
    "memory/episodes.json": "[   ]",
    "memory/links.json": '{"links": []}',
    "memory/202607/20260703.md": "daily",
    "memory/weekly/2026-W27.md": "weekly!",
    "memory/monthly/2026-06.md": "monthly!!",
    "sessions/chat.json": '{"version": 2}',
    "skills/pg/SKILL.md": "---\nname: pg\n---\n",
    "skills/pg/scripts/run.sh": "echo\n",
    "skills/legacy.md": "body",
    "board.json": '{"cards": []}',
    "contexts/c1.json": '{"id": "c1"}',
}
IGNORED = {
    "memory/MEMORY.md": "x",
    "memory/usage_stats.json": "x",
    "memory/202607/20260803.md": "another month's day",
    "memory/202607/.20260704.md": "hidden",
    "memory/weekly/2026-W60.md": "no such week",
    "memory/monthly/2026-13.md": "no such month",
    "memory/.202608/20260801.md": "hidden folder",
    "sessions/chat.json.123.tmp": "x",
    "sessions/.hidden.json": "x",
    "skills/.builtin-manifest.json": "x",
    "skills/pg/.git/HEAD": "x",
    "contexts/c1.json.corrupt": "x",
    "contexts/.c2.json": "x",
    "vault/Home.md": "x",
}
OUTSIDE = {
    "project/.agent/skills/deploy/SKILL.md": "---\nname: deploy\n---\n",
}
# ``store_fingerprint`` of READ + IGNORED at MTIME_NS, as the fingerprint was before the listing
# moved to ``extract.sources`` (computed with that code): the no-op cache keys on it.
PINNED = "711932a37eb943306fa7694ae108dcd35ad82458dd1bb19eac8438ab89eb96c8"


def _tree(root: Path, files: dict[str, str]) -> Path:
    build_tree(root, files)
    for rel in files:
        os.utime(root / rel, ns=(MTIME_NS, MTIME_NS))
    return root


def _lines(root: Path, files: dict[str, str], state: Path) -> list[str]:
    """The fingerprint's lines, written out by hand: path (relative to ``state`` when inside)."""
    lines = []
    for rel, text in files.items():
        path = root / rel
        shown = path.relative_to(state).as_posix() if path.is_relative_to(state) else str(path)
        lines.append(f"{shown}|{len(text.encode())}|{MTIME_NS}")
    return sorted(lines)


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@pytest.fixture(autouse=True)
def _no_board_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHATCLI_BOARD_PATH", raising=False)


def test_fingerprint_is_the_one_before_the_move(tmp_path: Path) -> None:
    """The fingerprint of a tree with every store kind is byte-identical to the old code's."""
    _tree(tmp_path, READ | IGNORED)
    assert store_fingerprint(tmp_path) == PINNED


def test_fingerprint_lines_are_relpath_size_mtime(tmp_path: Path) -> None:
    """The fingerprint hashes exactly the sorted ``relpath|size|mtime_ns`` lines of READ."""
    _tree(tmp_path, READ | IGNORED)
    assert store_fingerprint(tmp_path) == _digest(_lines(tmp_path, READ, tmp_path))


@pytest.mark.parametrize("spelling", [".", "./", "{tmp}", "{tmp}/", "{tmp}/../{name}"])
def test_fingerprint_lines_whatever_the_state_directory_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    """``.``, a trailing slash or ``..`` in ``--state`` give the same relative lines."""
    _tree(tmp_path, READ | IGNORED)
    monkeypatch.chdir(tmp_path)
    state = Path(spelling.format(tmp=tmp_path, name=tmp_path.name))
    assert store_fingerprint(state) == _digest(_lines(tmp_path, READ, tmp_path))


def test_listing_names_the_files_read_and_no_other(tmp_path: Path) -> None:
    """``source_files`` lists READ's files that exist, and the memory stores even if missing."""
    _tree(tmp_path, READ | IGNORED)
    (tmp_path / "memory/topics.json").unlink()
    listed = {p.relative_to(tmp_path).as_posix() for p in source_files(tmp_path)}
    assert listed == set(READ)


def test_outside_folders_are_listed_by_absolute_path(tmp_path: Path) -> None:
    """Extra skill folders count, shown by absolute path."""
    state = _tree(tmp_path / "state", READ)
    _tree(tmp_path, OUTSIDE)
    sources = Sources(skills=(tmp_path / "project/.agent/skills",))
    inside = _lines(state, READ, state)
    outside = _lines(tmp_path, OUTSIDE, state)
    assert store_fingerprint(state, sources) == _digest(sorted(inside + outside))
    assert outside_fingerprint(state, sources) == _digest(outside)


def test_readers_read_what_is_listed(tmp_path: Path) -> None:
    """The readers go through the same listing: a listed session and context become records."""
    _tree(tmp_path, READ | IGNORED)
    records = read_state(tmp_path)
    assert [s.name for s in records.sessions] == ["chat"]
    assert [c.id for c in records.contexts] == ["c1"]


def test_the_no_op_path_imports_no_reader() -> None:
    """Importing the no-op sync's modules loads no reader, no ``core.model``, no ``vault.plan``'s
    model."""
    code = (
        "import sys, vaultsync.cli.main, vaultsync.cli.options, vaultsync.cli.vault, "
        "vaultsync.vault.quick, vaultsync.vault.config, vaultsync.extract;"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('vaultsync.'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    heavy = {
        "vaultsync.extract.read",
        "vaultsync.extract.memory",
        "vaultsync.extract.journal",
        "vaultsync.extract.workspace",
        "vaultsync.extract.contexts",
        "vaultsync.extract.jsonio",
        "vaultsync.core.model",
    }
    assert "vaultsync.extract.sources" in loaded
    assert loaded & heavy == set()


def test_sessions_and_contexts_are_read_from_the_state_directory_only(tmp_path: Path) -> None:
    """One state root: ``session_folders``/``context_folders`` name only its own folders."""
    assert session_folders(tmp_path) == (tmp_path / "sessions",)
    assert context_folders(tmp_path) == (tmp_path / "contexts",)

"""SIGKILL a real sync process, then check that nothing the user owns was lost and that the next
sync reaches exactly the vault (files, HEAD tree, git status) of a sync that was never killed.

Two sandboxes get the same history: generation 0 synced, then the same user actions (an
uncommitted edit, a committed edit, a paragraph appended to a note — merged with every later
version —, a note moved elsewhere — followed —, a deletion, their own notes, a file where the
engine will later want a note, an attachment in a note folder, an Obsidian dot folder). Then,
generation after generation, the sync of one sandbox runs in ``syncdriver.py`` and is killed at
a random moment (or at a named point), the next sync runs in-process, and the other sandbox
syncs without interruption. ``VAULTSYNC_CRASH_RUNS`` sets the number of random kills of the
default run (20, about 15 s on two cores); ``make crash`` runs the slow-marked variant with 500.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest
from syncdriver import FIXED_TIME, LATE_PATH, followed_specs, note_path
from vaultsync.core.errors import VaultWriteError
from vaultsync.vault.manifest import CACHE, JOURNAL, LOCK
from vaultsync.vault.sync import sync_vault, vault_moves
from vaultsync.vault.write import TEMP_PATTERN

DRIVER = Path(__file__).parents[1] / "syncdriver.py"
SEED = 7
COUNT = 240  # enough that a sync writes packs (>= PACK_AT blobs) and renders in two processes
SENTINEL = b"outside the vault: never touched\n"
USER_FILES = {
    note_path(5): b"my uncommitted edit\n",
    note_path(11): b"my committed edit\n",
    "Notes/0/mine.md": b"my own note\n",
    LATE_PATH: b"my note, where the engine will want one\n",
    "Solo/0013/attachment.png": b"\x89PNG\r\n\x1a\n not really\n",
    ".obsidian/workspace.json": b'{"main": {}}\n',
}
LOCAL = {LOCK, CACHE}
MERGED = note_path(21)
"""A note the user appended a paragraph to: each generation's change is merged into it."""
PARAGRAPH = b"\nmy own paragraph, merged with every later version\n"
MOVED = (note_path(31), "Moved by me/renamed note.md")
"""A note the user moved: followed, never re-created at its old path while it lives."""


def _sync(vault: Path, generation: int) -> None:
    """An in-process sync; a git ``*.lock`` left by a killed process is removed the way the
    error's hint tells the user to (only once, and only when one is there)."""
    for _attempt in range(2):
        try:
            moves = vault_moves(vault)
            specs = followed_specs(vault, SEED, generation, COUNT)
            report = sync_vault(vault, specs, clock=lambda: FIXED_TIME, moves=moves)
        except VaultWriteError:
            if not _drop_git_locks(vault):
                raise
            continue
        if report.index_synced or not _drop_git_locks(vault):
            return
    raise AssertionError("sync did not complete after removing stale git locks")


def _drop_git_locks(vault: Path) -> list[Path]:
    locks = [p for p in (vault / ".git").rglob("*.lock") if "objects" not in p.parts]
    for lock in locks:
        lock.unlink()
    _drop_git_locks.count += len(locks)  # type: ignore[attr-defined]
    return locks


_drop_git_locks.count = 0  # type: ignore[attr-defined]


def _prepare(root: Path) -> Path:
    root.mkdir()
    (root / "sentinel.txt").write_bytes(SENTINEL)
    vault = root / "vault"
    _sync(vault, 0)
    repo = pygit2.Repository(str(vault))
    (vault / note_path(11)).write_bytes(USER_FILES[note_path(11)])
    index = repo.index
    index.add(note_path(11))
    index.write()
    who = pygit2.Signature("User", "user@example.invalid", 1_700_000_000, 0)
    repo.create_commit("HEAD", who, who, "my edit", index.write_tree(), [repo.head.target])
    (vault / note_path(7)).unlink()
    for rel, data in USER_FILES.items():
        if rel != note_path(11):
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_bytes(data)
    merged = vault / MERGED
    merged.write_bytes(merged.read_bytes() + PARAGRAPH)
    (vault / MOVED[1]).parent.mkdir()
    (vault / MOVED[0]).rename(vault / MOVED[1])
    # Saved long ago: a sync merges into them at once, never waits for an editor to finish
    # (the wait depends on the clock, and both sandboxes must see the same history).
    for rel in [*USER_FILES, MERGED]:
        os.utime(vault / rel, ns=(1_700_000_000 * 10**9,) * 2)
    return vault


def _files(vault: Path) -> dict[str, bytes]:
    out = {}
    for path in vault.rglob("*"):
        rel = path.relative_to(vault).as_posix()
        if path.is_file() and not rel.startswith(".git/") and rel not in LOCAL:
            out[rel] = path.read_bytes()
    return out


def _assert_user_data_safe(vault: Path) -> None:
    root = vault.parent
    assert sorted(p.name for p in root.iterdir()) == ["sentinel.txt", "vault"]
    assert (root / "sentinel.txt").read_bytes() == SENTINEL
    for rel, data in USER_FILES.items():
        assert (vault / rel).read_bytes() == data, rel
    assert (vault / MERGED).read_bytes().endswith(PARAGRAPH)
    # Followed, never doubled (a generation that drops the note removes it; when it comes back
    # it is a new note, at vaultsync's path).
    assert not ((vault / MOVED[0]).exists() and (vault / MOVED[1]).exists())


def _assert_converged(vault: Path, reference: Path) -> None:
    _assert_user_data_safe(vault)
    temps = [p for p in vault.rglob("*") if TEMP_PATTERN.fullmatch(p.name)]
    assert temps == []
    assert not (vault / JOURNAL).exists()
    assert _files(vault) == _files(reference)
    ours, theirs = pygit2.Repository(str(vault)), pygit2.Repository(str(reference))
    assert ours.head.peel(pygit2.Commit).tree_id == theirs.head.peel(pygit2.Commit).tree_id
    assert ours.status() == theirs.status()


def _killed_sync(vault: Path, generation: int, *, delay: float = 0.0, phase: str = "") -> int:
    args = [sys.executable, str(DRIVER), str(vault), str(SEED), str(generation), str(COUNT)]
    if phase:
        args += ["--die-at", phase]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"go\n", proc.communicate()[1].decode()
    if not phase:
        time.sleep(delay)
        proc.kill()
    _out, err = proc.communicate()
    assert proc.returncode in (0, -9), err.decode()
    return proc.returncode


@pytest.fixture
def sandboxes(tmp_path: Path) -> tuple[Path, Path]:
    return _prepare(tmp_path / "killed"), _prepare(tmp_path / "reference")


@pytest.mark.parametrize(
    "phase", ["journal", "place:1", "place:8", "manifest", "commit", "index", "end"]
)
def test_kill_at_each_window_converges(sandboxes: tuple[Path, Path], phase: str) -> None:
    """Killed at a named point of a sync, the next sync finishes its work exactly."""
    vault, reference = sandboxes
    assert _killed_sync(vault, 1, phase=phase) == -9
    _assert_user_data_safe(vault)
    assert (vault / JOURNAL).exists()
    _sync(vault, 1)
    _sync(reference, 1)
    _assert_converged(vault, reference)


def _random_kills(sandboxes: tuple[Path, Path], runs: int, seed: int) -> None:
    """``runs`` generations, each synced by a process killed at a random moment, then resumed.

    The kill comes at up to 1.5 times the last uninterrupted sync's duration after the driver
    says ``go``, so most kills land inside a sync (asserted: at least a third of them, and a
    tenth while the journal is out).
    """
    vault, reference = sandboxes
    rng = random.Random(seed)
    scale = 0.05
    killed = mid_write = 0
    for generation in range(1, runs + 1):
        code = _killed_sync(vault, generation, delay=rng.uniform(0, 1.5 * scale))
        killed += code == -9
        mid_write += (vault / JOURNAL).exists()
        _assert_user_data_safe(vault)
        _sync(vault, generation)
        started = time.perf_counter()
        _sync(reference, generation)
        scale = max(0.01, time.perf_counter() - started)
        _assert_converged(vault, reference)
    print(f"{runs} runs: {killed} killed, {mid_write} during the write phase,", end=" ")
    print(f"{_drop_git_locks.count} stale git locks removed")  # type: ignore[attr-defined]
    assert killed >= runs // 3, f"only {killed} of {runs} syncs were interrupted"
    assert mid_write >= runs // 10, f"only {mid_write} kills hit the write phase"


def test_random_kills_converge(sandboxes: tuple[Path, Path]) -> None:
    """SIGKILL at random moments, generation after generation: no loss, same vault."""
    _random_kills(sandboxes, int(os.environ.get("VAULTSYNC_CRASH_RUNS", "20")), seed=1)


@pytest.mark.slow
def test_many_random_kills_converge(sandboxes: tuple[Path, Path]) -> None:
    """The long variant: 500 kills."""
    _random_kills(sandboxes, 500, seed=2)

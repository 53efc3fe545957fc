"""Progress on a terminal: every phase with its total, both rendering processes counted."""

from __future__ import annotations

import os
import pickle
import pty
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from vaultsync.core import parallel, progress

BIN = Path(sys.executable).parent


class Recorder:
    """A listener that keeps what it was told."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, int | None]] = []
        self.done: dict[str, int] = {}
        self.closed = False

    def phase(self, name: str, total: int | None) -> None:
        """Note the phase and its total."""
        self.phases.append((name, total))
        self.done[name] = 0

    def advance(self, done: int) -> None:
        """Count items of the current phase."""
        self.done[self.phases[-1][0]] += done

    def pause(self) -> None:
        """Nothing to erase."""

    def resume(self) -> None:
        """Nothing to redraw."""

    def close(self) -> None:
        """Note the end."""
        self.closed = True


def test_split_map_counts_the_helpers_items_too() -> None:
    """Every item is counted once, whether the parent or the forked helper did it."""
    seen = Recorder()
    with progress.listening(seen):
        progress.phase("render", 600)
        parallel.split_map(lambda n: n + 1, range(600), min_items=10)
    assert seen.done == {"render": 600} and seen.closed


def test_items_redone_after_the_helper_died_are_counted_once() -> None:
    """A helper killed after sending some results: every item still counted exactly once."""
    parent = os.getpid()

    def work(n: int) -> int:
        if os.getpid() != parent and n > 500:  # past its first frames of 256 results
            os.kill(os.getpid(), signal.SIGKILL)
        return n + 1

    seen = Recorder()
    with progress.listening(seen):
        progress.phase("render", 2000)
        assert parallel.split_map(work, range(2000), min_items=10) == list(range(1, 2001))
    assert seen.done == {"render": 2000}


def test_items_redone_after_a_damaged_frame_are_counted_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A frame that does not load: the helper's share is redone and counted once in all."""
    real = pickle.loads
    calls = []

    def loads(data: bytes) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("damaged")
        return real(data)

    monkeypatch.setattr(pickle, "loads", loads)  # the parent reads the frames with it
    seen = Recorder()
    with progress.listening(seen):
        progress.phase("render", 2000)
        assert parallel.split_map(lambda n: n * 2, range(2000), min_items=10) == [
            n * 2 for n in range(2000)
        ]
    assert seen.done == {"render": 2000}


def test_nothing_is_told_without_a_listener() -> None:
    """With no listener installed the calls do nothing (the pure core stays silent)."""
    progress.phase("render", 3)
    progress.advance(3)
    assert parallel.split_map(lambda n: n, range(3)) == [0, 1, 2]


def on_a_terminal(command: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run ``command`` with stderr on a pseudo-terminal: exit code, stdout, the terminal's text."""
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=follower, env=env, stdin=subprocess.DEVNULL
    )
    os.close(follower)
    screen = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        screen += chunk
    out = child.stdout.read().decode() if child.stdout else ""
    code = child.wait()
    os.close(leader)
    return code, out, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.decode(errors="replace"))


def test_sync_on_a_terminal_shows_each_phase_with_totals(demo_state: Path, tmp_path: Path) -> None:
    """A real sync with stderr on a terminal draws graph, notes, render, write and commit."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    vault = tmp_path / "vault"
    command = [str(BIN / "vaultsync"), "sync", "--state", str(demo_state), "--vault", str(vault)]
    code, out, screen = on_a_terminal(command, env)
    assert code == 0, screen
    assert out.startswith("synced ")
    notes = len(list(vault.rglob("*.md")))
    for label in ("reading the stores", "preparing notes", "rendering notes", "committing"):
        assert label in screen
    assert f"{notes - 1}/{notes - 1}" in screen  # every note prepared (Home.md apart)
    assert f"{notes}/{notes}" in screen  # every note rendered and written


def test_force_question_is_asked_on_a_clean_line(demo_state: Path, tmp_path: Path) -> None:
    """A bare --force on a terminal stops the bars, asks, and 'n' writes nothing (exit 2)."""
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    assert subprocess.run([str(BIN / "vaultsync"), "sync", *where], check=False).returncode == 0
    fact = sorted((vault / "Facts").rglob("*.md"))[0]
    fact.write_text(fact.read_text() + "\nMy note.\n")
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    child = subprocess.Popen(
        [str(BIN / "vaultsync"), "sync", "--force", *where],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    screen = bytearray()
    while b"Go on?" not in screen and select.select([leader], [], [], 120)[0]:
        screen += os.read(leader, 65536)
    os.write(leader, b"n\n")
    code = child.wait()
    os.close(leader)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.decode(errors="replace"))
    assert "--force overwrites 1 note you edited" in shown.splitlines()[-1]
    assert code == 2 and "My note." in fact.read_text()

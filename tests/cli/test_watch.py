"""`vaultsync watch`: a real watcher process follows a store, warns on a broken one, stops clean."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest
from demoedits import edit_topic
from vaultsync.core import debounce
from vaultsync.search.index import update_index
from vaultsync.search.model import SearchQuery
from vaultsync.search.reader import IndexReader

WAIT_S = 60.0
"""How long a test waits for the watcher before failing (a bound, never a measured speed)."""

FAST = {"watch.first_s": "0.1", "watch.debounce_s": "0.3", "watch.poll_s": "0.1"}


def vaultsync(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a child process and wait for it."""
    return subprocess.run(
        [sys.executable, "-m", "vaultsync", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=WAIT_S,
    )


def wait_for(what: Callable[[], bool], *, label: str) -> None:
    """Poll ``what`` until it holds; fail after ``WAIT_S``."""
    deadline = time.monotonic() + WAIT_S
    while not what():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {label}")
        time.sleep(0.05)


@dataclass
class Watcher:
    state: Path
    vault: Path
    proc: subprocess.Popen[bytes]
    out: Path
    err: Path

    def committed(self, path: str) -> str:
        """The text of ``path`` at the vault's HEAD ("" before the first commit)."""
        try:
            repo = pygit2.Repository(str(self.vault))
            blob = repo.revparse_single(f"HEAD:{path}")
        except (pygit2.GitError, KeyError):
            return ""
        assert isinstance(blob, pygit2.Blob)
        return blob.data.decode()

    def stop(self) -> int:
        """SIGTERM, then its exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=WAIT_S)


@pytest.fixture
def watcher(demo_state: Path, tmp_path: Path) -> Iterator[Watcher]:
    """A `vaultsync watch` child on a copy of the demo store, with fast saved timings."""
    vault = tmp_path / "vault"
    for key, value in FAST.items():
        done = vaultsync("config", "set", "--vault", str(vault), key, value)
        assert done.returncode == 0, done.stderr
    out, err = tmp_path / "watch.out", tmp_path / "watch.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vaultsync", "watch", "--state", str(demo_state),
             "--vault", str(vault)],
            stdout=stdout,
            stderr=stderr,
        )  # fmt: skip
    running = Watcher(state=demo_state, vault=vault, proc=proc, out=out, err=err)
    yield running
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_follows_stores_and_edits_through_a_burst(watcher: Watcher) -> None:
    """Store changes synced and committed, a broken store one warning, user edits indexed only."""
    wait_for(lambda: "OTLP pipeline" in watcher.committed("Topics/telemetry.md"), label="sync")
    update_index(watcher.vault)  # the search index exists once someone searched
    for n in range(3):  # a burst of ChatCLI writes
        edit_topic(watcher.state, f"Collectors ship traces through the watched gateway {n}")
    wait_for(
        lambda: "watched gateway 2" in watcher.committed("Topics/telemetry.md"),
        label="the burst committed",
    )
    topics = watcher.state / "memory" / "topics.json"
    good = topics.read_text()
    topics.write_text("{ not json")
    wait_for(lambda: "topics.json" in watcher.err.read_text(), label="the warning")
    topics.write_text(good)
    edit_topic(watcher.state, "Fixed store, synced again")
    wait_for(
        lambda: "Fixed store" in watcher.committed("Topics/telemetry.md"), label="the fix synced"
    )
    head = pygit2.Repository(str(watcher.vault)).head.target
    (watcher.vault / "Mine.md").write_text("# Mine\n\nzanzibarquux lives here\n")
    wait_for(lambda: indexed(watcher.vault, "zanzibarquux"), label="the edit indexed")
    assert watcher.stop() == 0
    assert pygit2.Repository(str(watcher.vault)).head.target == head  # the edit is not synced
    out, err = watcher.out.read_text().splitlines(), watcher.err.read_text()
    assert out and all(line.startswith("synced ") for line in out)  # one line per sync
    assert "Traceback" not in err
    assert next(line for line in err.splitlines() if "topics.json" in line).startswith("warning: ")


def indexed(vault: Path, word: str) -> bool:
    """Whether the search index (read as it is, not updated) finds ``word``."""
    reader = IndexReader(vault)
    try:
        return bool(reader.search(SearchQuery(text=word)).hits)
    finally:
        reader.close()


def lock_held(path: Path) -> bool:
    """Whether another process holds an ``flock`` on ``path``."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_one_watcher_per_vault(watcher: Watcher) -> None:
    """A second watcher on the same vault is refused with one line and exit 7."""
    wait_for(lambda: lock_held(watcher.vault / ".vaultsync" / "watch.lock"), label="the lock")
    second = vaultsync("watch", "--state", str(watcher.state), "--vault", str(watcher.vault))
    assert second.returncode == 7
    assert second.stderr.startswith("error: ") and "another `vaultsync watch`" in second.stderr
    assert watcher.stop() == 0


def test_off_by_variable(tmp_path: Path) -> None:
    """CHATCLI_MEMORY_VAULT=false: the watcher says so and exits 0 without writing."""
    env = {**os.environ, "CHATCLI_MEMORY_VAULT": "false"}
    done = vaultsync("watch", "--state", str(tmp_path), "--vault", str(tmp_path / "v"), env=env)
    assert done.returncode == 0
    assert "automatic sync is off" in done.stderr
    assert not (tmp_path / "v").exists()


TIMINGS = debounce.Timings(first_s=10, debounce_s=5, max_wait_s=60, poll_s=1)


def test_schedule_first_sync_after_start() -> None:
    """The first sync is due first_s after the start, whatever the stores hold."""
    schedule = debounce.observe(debounce.start(0, TIMINGS), "a", 0, TIMINGS)
    assert not debounce.due(schedule, 9.9)
    assert debounce.due(schedule, 10)


def test_schedule_debounces_and_caps_a_burst() -> None:
    """A change waits debounce_s of quiet; a burst is synced at most max_wait_s after it began."""
    schedule = debounce.synced(debounce.Schedule(), "a")
    schedule = debounce.observe(schedule, "b", 100, TIMINGS)
    assert not debounce.due(schedule, 104) and debounce.due(schedule, 105)
    for second in range(100, 200, 2):
        schedule = debounce.observe(schedule, f"c{second}", second, TIMINGS)
        if debounce.due(schedule, second):
            break
    assert second == 160


def test_schedule_counts_quiet_from_the_write() -> None:
    """A known write time starts the quiet period, never before the previous look (or poll_s)."""
    synced = debounce.synced(debounce.Schedule(), "a")
    assert debounce.observe(synced, "b", 100, TIMINGS, changed_at=99.4).due_at == 104.4
    assert debounce.observe(synced, "b", 100, TIMINGS, changed_at=50).due_at == 104
    assert debounce.observe(synced, "b", 100, TIMINGS, changed_at=200).due_at == 105
    assert debounce.observe(synced, "b", 100, TIMINGS, changed_at=97.5, since=97).due_at == 102.5


def test_schedule_wakes_when_the_sync_falls_due() -> None:
    """The wait before the next look ends when the sync is due, never later."""
    schedule = debounce.observe(debounce.synced(debounce.Schedule(), "a"), "b", 100, TIMINGS)
    assert debounce.pause(schedule, 100, 1) == 1
    assert debounce.pause(schedule, 104.75, 1) == 0.25
    assert debounce.pause(schedule, 106, 1) == 0
    assert debounce.pause(debounce.synced(schedule, "b"), 106, 3) == 3


def test_schedule_backs_off_after_failures() -> None:
    """Each failure doubles the wait before the retry, up to the cap."""
    schedule = debounce.synced(debounce.Schedule(), "a")
    waits = []
    for _ in range(10):
        schedule = debounce.failed(schedule, "a", 0, TIMINGS)
        assert schedule.due_at is not None
        waits.append(schedule.due_at)
    assert waits[:4] == [5, 10, 20, 40]
    assert waits[-1] == debounce.MAX_BACKOFF_S


UNIT = Path(__file__).parents[2] / "contrib" / "vaultsync-watch.service"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_unit_verifies(tmp_path: Path) -> None:
    """contrib's user unit passes `systemd-analyze verify --user`."""
    home, runtime = tmp_path / "home", tmp_path / "run"
    (home / ".local" / "bin").mkdir(parents=True)
    runtime.mkdir(mode=0o700)
    (home / ".local" / "bin" / "vaultsync").symlink_to(Path(sys.executable).parent / "vaultsync")
    unit = tmp_path / UNIT.name
    unit.write_bytes(UNIT.read_bytes())
    env = {**os.environ, "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run(
        ["systemd-analyze", "verify", "--user", str(unit)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=WAIT_S,
    )
    assert done.returncode == 0, done.stderr


def test_the_watcher_keeps_its_syncs_state_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While it watches, what a sync holds (its caches' values) is there for the next sync."""
    from vaultsync.app import watch
    from vaultsync.core import cachefile

    path, head = tmp_path / "cache" / "value", cachefile.envelope("probe", 1, "")
    found: list[object] = []

    def one_sync(_self: watch.Watcher, _stop: object) -> None:
        assert cachefile.write(path, head, b"x")
        cachefile.hold(path, head, "kept")
        found.append(cachefile.held(path, head))

    monkeypatch.setattr(watch.Watcher, "_watch", one_sync)
    watch.Watcher.run(object.__new__(watch.Watcher), stop=object())  # type: ignore[arg-type]
    assert found == ["kept"]
    assert cachefile.held(path, head) is None  # stopped: nothing held any more


def test_a_watchers_caches_are_written_once_its_sync_is_said(
    demo_state: Path, tmp_path: Path
) -> None:
    """The patch state and the notes' keys a sync saves reach disk after it, once tidied up."""
    from vaultsync.app import watch
    from vaultsync.app.workspace import open_workspace
    from vaultsync.core import cachefile
    from vaultsync.graph.cache import patch_state_path
    from vaultsync.render.keycache import memo_path

    ws = open_workspace(str(demo_state), str(tmp_path / "vault"))
    files = (patch_state_path(ws.state), memo_path(ws.state))
    on_disk: list[tuple[bool, ...]] = []
    watcher = watch.Watcher(
        ws,
        synced=lambda _: on_disk.append(tuple(path.exists() for path in files)),
        warn=pytest.fail,
    )
    with cachefile.resident():
        assert watcher.sync_once()
        assert not any(path.exists() for path in files)  # a sync may be pending still
        watcher.tidy()
        assert on_disk == [(False, False)]
        assert all(path.exists() for path in files)

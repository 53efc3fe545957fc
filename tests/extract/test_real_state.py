"""A state directory as ChatCLI v1.188 writes it, bad items included.

Every test writes the v1188 fixture (``fixtures/stores/build_chatcli.py``), with the variants it
needs, and runs the ``vaultsync`` command line: in-process, but for the tests whose point is the
real program (files that could make a reader hang, the exit code of an unreadable store), which
run it in a real process.  A subprocess timeout is only a guard against a hang, never a
measurement.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import ROOT, Done, invoke

GUARD = 120  # seconds: only a failure guard against a hang, never a timing assertion
TORN = "sessions/duckdb-spill-debug.json"
CLEAN: frozenset[str] = frozenset()


def builder() -> ModuleType:
    """``fixtures/stores/build_chatcli.py`` as a module."""
    path = ROOT / "fixtures" / "stores" / "build_chatcli.py"
    spec = importlib.util.spec_from_file_location("build_chatcli", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BUILD = builder()


def write(root: Path, broken: frozenset[str] | set[str] = CLEAN) -> Path:
    """The v1188 state directory under ``root/state`` with the ``broken`` variants."""
    return Path(BUILD.write_state(root / "state", broken=broken))


def run(state: Path, *args: str, vault: Path | None = None) -> Done:
    """``vaultsync ARGS --state STATE [--vault VAULT]``, in-process (a traceback fails the test)."""
    where = ["--state", str(state)] + (["--vault", str(vault)] if vault else [])
    return invoke(*args, *where)


def run_process(state: Path, *args: str, vault: Path | None = None) -> Done:
    """The same in a real process, for what could hang or crash it."""
    where = ["--state", str(state)] + (["--vault", str(vault)] if vault else [])
    command = [sys.executable, "-m", "vaultsync", *args, *where]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=GUARD)
    return Done(done.returncode, done.stdout, done.stderr)


def warnings(done: Done) -> list[str]:
    """The ``warning:`` lines of a run's stderr."""
    return [line for line in done.stderr.splitlines() if line.startswith("warning:")]


def tree_digest(root: Path) -> dict[str, str]:
    """relative path → SHA-256 (files), ``link:`` target (symlinks), ``dir`` (folders)."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = "link:" + str(path.readlink())
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def notes(vault: Path) -> dict[str, bytes]:
    """Every Markdown note of the vault, by path."""
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in vault.rglob("*.md")}


class TestSkippedItems:
    def test_committed_fixture_syncs_with_one_warning_per_bad_item(self, tmp_path: Path) -> None:
        """The committed fixture (torn session, three bad skills) syncs, exit 0, four warnings."""
        state = write(tmp_path, BUILD.COMMITTED)
        done = run_process(state, "sync", vault=tmp_path / "vault")
        assert done.returncode == 0, done.stderr
        assert warnings(done) == [
            f"warning: {TORN}:10:15: invalid JSON: Unterminated string starting at; skipped",
            "warning: skills/grafana-dash/SKILL.md:6:1: invalid YAML front matter: found "
            'duplicate key "triggers" with value "dashboard" (original value: "grafana"); skipped',
            "warning: skills/lint-and-validate/SKILL.md:3:187: invalid YAML front matter: "
            "mapping values are not allowed here; skipped",
            "warning: skills/release-notes/SKILL.md:description: a list or mapping where "
            "ChatCLI expects text; skipped",
        ]

    def test_a_warning_is_shown_once_per_content(self, tmp_path: Path) -> None:
        """A second run over the same bad bytes is silent, even when the stores changed."""
        state = write(tmp_path, {"torn-session"})
        vault = tmp_path / "vault"
        assert len(warnings(run(state, "sync", vault=vault))) == 1
        (state / "memory" / "202610" / "20261027.md").write_text("\n## 18:00\n\nNew.\n")
        again = run(state, "sync", vault=vault)
        assert again.returncode == 0 and warnings(again) == []

    def test_new_bad_content_is_warned_again(self, tmp_path: Path) -> None:
        """The same file broken differently is a new warning."""
        state = write(tmp_path, {"torn-session"})
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        (state / TORN).write_bytes(b'{"version": 2, "title": ')
        assert len(warnings(run(state, "sync", vault=vault))) == 1

    def test_a_source_that_breaks_keeps_its_note_and_every_other(self, tmp_path: Path) -> None:
        """A session that tears after a sync keeps its note as is; no note changes."""
        state = write(tmp_path)
        vault = tmp_path / "vault"
        assert run(state, "sync", vault=vault).returncode == 0
        before = notes(vault)
        session = state / "sessions" / "heron-flag-audit.json"
        data = session.read_bytes()
        session.write_bytes(data[: len(data) // 2])
        done = run(state, "sync", vault=vault)
        assert done.returncode == 0 and len(warnings(done)) == 1
        assert notes(vault) == before

    @pytest.mark.parametrize(
        ("variant", "source"),
        [
            ("corrupt-board", "board.json"),
            ("corrupt-context", "contexts/"),
            ("daily-not-utf8", "memory/202610/20261027.md:byte"),
            ("too-deep-session", "sessions/too-deep.json"),
        ],
    )
    def test_each_bad_item_kind_is_skipped(self, tmp_path: Path, variant: str, source: str) -> None:
        """A corrupt board, context, daily note or a too-deep session: one warning, exit 0."""
        state = write(tmp_path, {variant})
        done = run(state, "sync", vault=tmp_path / "vault")
        assert done.returncode == 0, done.stderr
        (line,) = warnings(done)
        assert line.startswith(f"warning: {source}") and line.endswith("; skipped")

    def test_status_lists_skipped_sources(self, tmp_path: Path) -> None:
        """``status`` lists every skipped source, also after the warning was shown."""
        state = write(tmp_path, {"torn-session"})
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        done = run(state, "status", vault=vault)
        assert done.returncode == 0 and warnings(done) == []
        assert f"  - {TORN}:10:15: invalid JSON" in done.stdout

    def test_status_json_lists_skipped_sources(self, tmp_path: Path) -> None:
        """``status --json`` has a ``skipped`` list naming the source and the place."""
        state = write(tmp_path, {"torn-session"})
        done = run(state, "status", "--json", vault=tmp_path / "vault")
        skipped = json.loads(done.stdout)["skipped"]
        assert [(s["source"], s["where"]) for s in skipped] == [(TORN, "10:15")]

    def test_check_passes_with_a_skipped_source(self, tmp_path: Path) -> None:
        """A skipped source does not fail ``check``; it is listed."""
        state = write(tmp_path, {"torn-session"})
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        done = run(state, "check", vault=vault)
        assert done.returncode == 0 and TORN in done.stdout

    def test_check_strict_fails_with_a_skipped_source(self, tmp_path: Path) -> None:
        """``check --strict`` exits 4 when a source was skipped."""
        state = write(tmp_path, {"torn-session"})
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        assert run(state, "check", "--strict", vault=vault).returncode == 4

    def test_check_strict_passes_on_a_clean_state(self, tmp_path: Path) -> None:
        """``check --strict`` exits 0 when nothing was skipped."""
        state = write(tmp_path)
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        assert run(state, "check", "--strict", vault=vault).returncode == 0


class TestUnreadableStores:
    def test_empty_memory_index_is_exit_4_and_nothing_written(self, tmp_path: Path) -> None:
        """An empty ``memory_index.json`` is corrupt (as for ChatCLI): exit 4, vault unchanged."""
        state = write(tmp_path)
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        before = tree_digest(vault)
        (state / "memory" / "memory_index.json").write_bytes(b"")
        done = run(state, "sync", vault=vault)
        assert done.returncode == 4
        assert done.stderr.startswith(f"error: {state / 'memory/memory_index.json'}: empty file")
        assert tree_digest(vault) == before

    def test_huge_number_is_one_line_exit_4(self, tmp_path: Path) -> None:
        """``1e400`` in the memory index: one line naming the file, exit 4, no traceback."""
        state = write(tmp_path, {"huge-confidence"})
        done = run_process(state, "sync", vault=tmp_path / "vault")
        assert done.returncode == 4 and "Traceback" not in done.stderr
        assert "memory_index.json" in done.stderr and "1e400" in done.stderr

    def test_store_over_the_size_limit_is_exit_4(self, tmp_path: Path) -> None:
        """A memory store over ``caps.store_file_mib`` is exit 4 naming the setting."""
        state = write(tmp_path)
        index = state / "memory" / "memory_index.json"
        index.write_bytes(index.read_bytes()[:-1] + b" " * (1 << 20) + b"]")
        os.environ["VAULTSYNC_CAP_STORE_FILE_MIB"] = "1"
        try:
            done = run(state, "sync", vault=tmp_path / "vault")
        finally:
            del os.environ["VAULTSYNC_CAP_STORE_FILE_MIB"]
        assert done.returncode == 4 and "caps.store_file_mib" in done.stderr


class TestHostileFiles:
    def test_session_nested_as_deep_as_go_accepts_is_read(self, tmp_path: Path) -> None:
        """A session nested 10,000 deep (Go's limit) syncs without a warning."""
        state = write(tmp_path, {"deep-session"})
        vault = tmp_path / "vault"
        done = run(state, "sync", vault=vault)
        assert done.returncode == 0 and warnings(done) == []
        assert any("deep-meta" in path for path in notes(vault))

    def test_fifo_is_skipped_without_waiting(self, tmp_path: Path) -> None:
        """A FIFO in place of a session is one line, never a hang."""
        state = write(tmp_path)
        os.mkfifo(state / "sessions" / "fifo.json")
        done = run_process(state, "sync", vault=tmp_path / "vault")
        assert done.returncode == 0
        assert warnings(done) == [
            "warning: sessions/fifo.json: not a regular file (a FIFO, socket or device is "
            "never read); skipped"
        ]

    def test_link_to_dev_zero_is_skipped(self, tmp_path: Path) -> None:
        """``board.json`` linked to ``/dev/zero`` is one line, never read without end."""
        state = write(tmp_path)
        (state / "board.json").unlink()
        (state / "board.json").symlink_to("/dev/zero")
        done = run_process(state, "sync", vault=tmp_path / "vault")
        assert done.returncode == 0
        assert [line.split(":")[1].strip() for line in warnings(done)] == ["board.json"]

    def test_folder_that_cannot_be_listed_is_skipped(self, tmp_path: Path) -> None:
        """A ``sessions`` folder that cannot be listed (a link loop) is one line, exit 0."""
        state = write(tmp_path)
        vault = tmp_path / "vault"
        (state / "contexts").rename(tmp_path / "contexts-away")
        (state / "contexts").symlink_to("contexts")
        done = run(state, "sync", vault=vault)
        assert done.returncode == 0
        assert warnings(done) == [
            "warning: contexts: cannot list the folder: Too many levels of symbolic links; skipped"
        ]

    def test_a_file_where_the_folder_was_keeps_its_notes(self, tmp_path: Path) -> None:
        """``sessions`` replaced by a file cannot be listed: one line, every session note kept."""
        state = write(tmp_path)
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        before = notes(vault)
        shutil.rmtree(state / "sessions")
        (state / "sessions").write_text("x")
        done = run(state, "sync", vault=vault)
        assert done.returncode == 0
        assert warnings(done) == [
            "warning: sessions: cannot list the folder: it is a file, not a folder; skipped"
        ]
        assert notes(vault) == before

    @pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
    def test_unreadable_folder_keeps_its_notes(self, tmp_path: Path) -> None:
        """A ``sessions`` folder made unreadable after a sync keeps every session note."""
        state = write(tmp_path)
        vault = tmp_path / "vault"
        run(state, "sync", vault=vault)
        before = notes(vault)
        (state / "sessions").chmod(0)
        try:
            done = run(state, "sync", vault=vault)
        finally:
            (state / "sessions").chmod(0o700)
        assert done.returncode == 0 and len(warnings(done)) == 1
        assert notes(vault) == before

    def test_session_over_the_size_limit_is_skipped(self, tmp_path: Path) -> None:
        """A session over ``caps.store_file_mib`` is skipped, naming the limit and the setting."""
        state = write(tmp_path)
        (state / "sessions" / "big.json").write_bytes(b"[" + b" " * (1 << 20) + b"]")
        os.environ["VAULTSYNC_CAP_STORE_FILE_MIB"] = "1"
        try:
            done = run(state, "sync", vault=tmp_path / "vault")
        finally:
            del os.environ["VAULTSYNC_CAP_STORE_FILE_MIB"]
        assert done.returncode == 0
        (line,) = warnings(done)
        assert line.startswith("warning: sessions/big.json: 1.0 MiB is over the size limit")


class TestLinksStore:
    def test_read_only_command_reads_a_corrupt_links_file_as_empty(self, tmp_path: Path) -> None:
        """``status`` warns about a corrupt links.json, reads it as empty and leaves it."""
        state = write(tmp_path)
        links = state / "memory" / "links.json"
        links.write_text("{not json")
        done = run(state, "status", vault=tmp_path / "vault")
        assert done.returncode == 0
        (line,) = warnings(done)
        assert line.startswith("warning: memory/links.json:1:2: invalid JSON")
        assert links.read_text() == "{not json"

    def test_sync_moves_a_corrupt_links_file_aside(self, tmp_path: Path) -> None:
        """``sync`` moves a corrupt links.json aside, says where, and goes on (exit 0)."""
        state = write(tmp_path)
        (state / "memory" / "links.json").write_text("{not json")
        done = run(state, "sync", vault=tmp_path / "vault")
        assert done.returncode == 0
        (moved,) = (state / "memory").glob("links.json.corrupt-*")
        assert moved.read_text() == "{not json"
        assert any(f"moved aside to {moved.name}" in line for line in warnings(done))

    def test_dry_run_never_moves_links_json(self, tmp_path: Path) -> None:
        """``sync --dry-run`` leaves a corrupt links.json where it is."""
        state = write(tmp_path)
        (state / "memory" / "links.json").write_text("{not json")
        assert run(state, "sync", "--dry-run", vault=tmp_path / "vault").returncode == 0
        assert list((state / "memory").glob("links.json.corrupt-*")) == []


COMMANDS = [
    ("sync", "--dry-run"),
    ("sync",),
    ("check",),
    ("status",),
    ("status", "--json"),
    ("graph", "map"),
    ("graph", "export"),
    ("graph", "neighbors", "tidewater"),
    ("links", "tidewater"),
    ("query", "orphans"),
    ("search", "tidewater"),
]


class TestStateUntouched:
    @pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
    def test_state_directory_bytes_are_identical(
        self, tmp_path: Path, command: tuple[str, ...]
    ) -> None:
        """No command creates, changes or removes anything in the state directory."""
        state = write(tmp_path, BUILD.COMMITTED)
        vault = tmp_path / "vault"
        if command[0] in ("query", "search", "check", "status", "links"):
            run(state, "sync", vault=vault)
        before = tree_digest(state)
        graph_before = (state / "memory" / "graph.json").stat().st_mtime_ns
        done = run(state, *command, vault=None if command[0] == "graph" else vault)
        assert done.returncode in (0, 1), done.stderr
        assert tree_digest(state) == before
        assert (state / "memory" / "graph.json").stat().st_mtime_ns == graph_before


class TestDocsFlatten:
    def test_chunks_fold_into_one_note_per_document(self, tmp_path: Path) -> None:
        """``docs/intro.md#0001`` and ``#0002`` become one note, ``docs/intro.md``, in order."""
        state = write(tmp_path)
        vault = tmp_path / "vault"
        assert run(state, "sync", vault=vault).returncode == 0
        handbook = vault / "Contexts" / "lantern-handbook"
        assert not [p for p in handbook.rglob("*") if "#" in p.name]
        text = (handbook / "docs" / "intro.md").read_text()
        assert text.index("How the data-platform team works") < text.index("How to contribute")

    def test_chunk_id_names_its_document(self, tmp_path: Path) -> None:
        """``graph links docs/intro.md#0002`` answers for ``docs/intro.md``, titled by its H1."""
        state = write(tmp_path)
        done = run(state, "graph", "links", "docs/intro.md#0002")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith('lantern-handbook :: docs/intro.md — "Lantern handbook"')


class TestChatCLISettings:
    def test_board_is_read_where_chatcli_board_path_says(self, tmp_path: Path) -> None:
        """With ``CHATCLI_BOARD_PATH`` set, the cards come from that file, as in ChatCLI."""
        state = write(tmp_path)
        moved = tmp_path / "elsewhere" / "board.json"
        moved.parent.mkdir()
        (state / "board.json").rename(moved)
        vault = tmp_path / "vault"
        os.environ["CHATCLI_BOARD_PATH"] = str(moved)
        try:
            done = run(state, "sync", vault=vault)
        finally:
            del os.environ["CHATCLI_BOARD_PATH"]
        assert done.returncode == 0, done.stderr
        assert any("broken links" in p.name for p in (vault / "Board").rglob("*.md"))

"""How ``vaultsync`` leaves: ``os._exit`` and ``gc.freeze`` only for big sync/check/status runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The console entry point in a real process, with an atexit handler that says whether it ran
# and whether the collector's heap was frozen.  ``--big`` lowers the note count of a big run.
SCRIPT = """
import atexit, gc, sys
import vaultsync.cli.main as cli_main
import vaultsync.core.process as process
atexit.register(lambda: print(f"atexit ran, frozen {gc.get_freeze_count()}", file=sys.stderr))
if sys.argv[1] == "--big":
    process.BIG_RUN_NOTES = 1
    del sys.argv[1]
cli_main.main()
"""


def vaultsync(*args: str, big: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", SCRIPT, *(["--big"] if big else []), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


class TestLeaving:
    def test_other_commands_exit_normally(self, tmp_path: Path) -> None:
        """``vaultsync path`` runs the atexit handlers and freezes nothing."""
        done = vaultsync("path", "--state", str(tmp_path))
        assert done.returncode == 0
        assert done.stdout == f"{tmp_path / 'vault'}\n"
        assert "atexit ran, frozen 0" in done.stderr

    def test_small_sync_exits_normally(self, tmp_path: Path) -> None:
        """A sync below ``BIG_RUN_NOTES`` notes exits normally, heap not frozen."""
        (tmp_path / "s").mkdir()
        done = vaultsync("sync", "--state", str(tmp_path / "s"), "--vault", str(tmp_path / "v"))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("synced ")
        assert "atexit ran, frozen 0" in done.stderr

    def test_big_sync_and_check_leave_fast_with_their_output(self, tmp_path: Path) -> None:
        """A big sync or check leaves through ``os._exit``: no atexit, output and code kept.

        (An empty state directory gives one note, Home; ``--big`` makes one note big.  The
        stat cache is dropped so the check plans instead of reading the last sync's record.)
        """
        (tmp_path / "s").mkdir()
        state, vault = str(tmp_path / "s"), str(tmp_path / "v")
        done = vaultsync("sync", "--state", state, "--vault", vault, big=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("synced ")
        assert "atexit ran" not in done.stderr
        (tmp_path / "v" / ".vaultsync" / "cache.json").unlink()
        checked = vaultsync("check", "--state", state, "--vault", vault, big=True)
        assert checked.returncode == 0, checked.stderr
        assert checked.stdout.endswith("is in sync\n")
        assert "atexit ran" not in checked.stderr

    def test_errors_keep_their_code_on_both_ways_out(self, tmp_path: Path) -> None:
        """A failing command (a corrupt store: exit 4) keeps its code and its one error line."""
        state = tmp_path / "state"
        (state / "memory").mkdir(parents=True)
        (state / "memory" / "memory_index.json").write_text("[{]")
        for big in (False, True):
            done = vaultsync("check", "--state", str(state), big=big)
            assert done.returncode == 4
            assert done.stderr.startswith("error: ")

    def test_closed_pipe_exits_1_quietly(self, tmp_path: Path) -> None:
        """Output into a pipe nobody reads any more: exit 1, no traceback, no warning."""
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            done = subprocess.run(
                [sys.executable, "-c", SCRIPT, "path", "--state", str(tmp_path)],
                stdout=write_end,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
        finally:
            os.close(write_end)
        assert done.returncode == 1
        assert "Error" not in done.stderr
        assert "Exception" not in done.stderr

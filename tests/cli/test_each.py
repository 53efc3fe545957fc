"""``vaultsync sync --each ROOT [--shard K/N]``: every state directory under ROOT, a vault each."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from helpers import Done, docs_text, invoke
from vaultsync.app.each import Outcome, in_child, parse_shard, shard_of, state_dirs, unchanged
from vaultsync.cli.schemas import SCHEMAS
from vaultsync.core.errors import UsageError

VAULTSYNC = Path(sys.executable).with_name("vaultsync")


def sender(root: Path, name: str, *, facts: int = 1) -> Path:
    """A small sender state directory ``ROOT/name`` (a gateway sender's few facts)."""
    state = root / name
    (state / "memory").mkdir(parents=True)
    records = [
        {"id": f"{name.replace('/', '')}{k:04d}".ljust(24, "0")[:24],
         "content": f"{name} prefers short answers ({k})", "category": "preference",
         "created_at": "2026-11-01T10:00:00Z", "last_accessed": "2026-11-02T10:00:00Z",
         "access_count": 1, "score": 1.0}
        for k in range(facts)
    ]  # fmt: skip
    (state / "memory" / "memory_index.json").write_text(json.dumps(records), encoding="utf-8")
    return state


def each(root: Path, *args: str, env: dict[str, str] | None = None) -> Done:
    """``vaultsync sync --each ROOT ARGS`` in-process."""
    return invoke("sync", "--each", str(root), *args, env=env)


def each_process(root: Path, *args: str) -> Done:
    """The same as a real process, for the exit code and stderr the shell sees."""
    done = subprocess.run(
        [str(VAULTSYNC), "sync", "--each", str(root), *args],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return Done(done.returncode, done.stdout, done.stderr)


def summary(done: Done) -> dict[str, Any]:
    """The ``--json`` summary, validated against its schema."""
    data: dict[str, Any] = json.loads(done.stdout)
    jsonschema_rs.validator_for(SCHEMAS["sync --each"]).validate(data)
    return data


def commits(vault: Path) -> int:
    log = subprocess.run(
        ["git", "-C", str(vault), "rev-list", "--count", "HEAD"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(log.stdout)


def test_state_dirs_are_found_in_both_layouts(tmp_path: Path) -> None:
    """``ROOT/<sender>`` and ``ROOT/<platform>/<chat>`` are found, sorted, relative to ROOT."""
    sender(tmp_path, "alice")
    sender(tmp_path, "telegram/42")
    sender(tmp_path, "telegram/7")
    assert state_dirs(tmp_path) == ("alice", "telegram/42", "telegram/7")


def test_hidden_linked_and_nested_folders_are_not_entered(tmp_path: Path) -> None:
    """Hidden folders, symlinks, folders without memory/ and a state dir's inside are skipped."""
    outer = sender(tmp_path, "alice")
    sender(outer, "sessions/inner")  # inside a state directory: part of alice, not a sender
    sender(tmp_path, ".trash/bob")
    (tmp_path / "link").symlink_to(outer, target_is_directory=True)
    (tmp_path / "empty" / "sessions").mkdir(parents=True)
    assert state_dirs(tmp_path) == ("alice",)


def test_shard_of_a_name_never_changes() -> None:
    """The shard is a fixed function of the name (sha256): the same on every machine."""
    assert [shard_of(n, 4) for n in ("alice", "telegram/42", "slack/T01/U02")] == [3, 1, 2]


def test_shards_cover_every_name_exactly_once() -> None:
    """For N shards, each name is taken by exactly one K."""
    names = [f"telegram/{i}" for i in range(300)]
    shards = [parse_shard(f"{k}/3") for k in range(3)]
    assert all(sum(s.takes(n) for s in shards) == 1 for n in names)
    assert all(sum(s.takes(n) for n in names) > 50 for s in shards)  # and spreads them


@pytest.mark.parametrize("text", ["3/3", "1", "a/b", "0/0", "-1/2"])
def test_malformed_shard_is_a_usage_error(text: str) -> None:
    """``--shard`` outside 0 ≤ K < N, or not K/N, is refused (exit 2)."""
    with pytest.raises(UsageError):
        parse_shard(text)


def test_every_vault_is_synced_into_its_state_directory(tmp_path: Path) -> None:
    """Each state directory gets its own committed vault at <state>/vault; exit 0."""
    for name in ("alice", "telegram/42"):
        sender(tmp_path, name)
    done = each(tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    data = summary(done)
    assert [v["name"] for v in data["vaults"]] == ["alice", "telegram/42"]
    assert (data["found"], data["synced"], data["changed"], data["failed"]) == (2, 2, 2, 0)
    assert all(commits(tmp_path / n / "vault") == 1 for n in ("alice", "telegram/42"))


def test_a_failing_vault_is_reported_and_the_others_synced(tmp_path: Path) -> None:
    """A malformed store fails its vault only: named on stderr, the rest synced, exit 9."""
    sender(tmp_path, "alice")
    (sender(tmp_path, "bob") / "memory" / "memory_index.json").write_text("{not json")
    sender(tmp_path, "carol")
    done = each_process(tmp_path, "--json")
    assert done.returncode == 9
    data = summary(done)
    assert [(v["name"], v["ok"], v["exit_code"]) for v in data["vaults"]] == [
        ("alice", True, 0), ("bob", False, 4), ("carol", True, 0),
    ]  # fmt: skip
    assert "error: bob: " in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "carol" / "vault" / "Home.md").is_file()


def test_two_shards_split_the_vaults_between_them(tmp_path: Path) -> None:
    """--shard 0/2 and 1/2 sync disjoint sets whose union is every state directory."""
    names = [f"telegram/{i}" for i in range(6)]
    for name in names:
        sender(tmp_path, name)
    taken = [
        [v["name"] for v in summary(each(tmp_path, "--shard", f"{k}/2", "--json"))["vaults"]]
        for k in range(2)
    ]
    assert sorted(taken[0] + taken[1]) == names and not set(taken[0]) & set(taken[1])
    assert all((tmp_path / n / "vault").is_dir() for n in names)


def test_one_process_mode_reports_failures_alike(tmp_path: Path) -> None:
    """VAULTSYNC_JOBS=1 (no fork): every vault still synced, the failing one reported, exit 9."""
    sender(tmp_path, "alice")
    (sender(tmp_path, "bob") / "memory" / "memory_index.json").write_text("[1, 2")
    done = each(tmp_path, "--json", env={"VAULTSYNC_JOBS": "1"})
    assert done.returncode == 9 and "error: bob: " in done.stderr
    assert [v["ok"] for v in summary(done)["vaults"]] == [True, False]


def test_vault_variables_do_not_merge_the_vaults(tmp_path: Path) -> None:
    """VAULTSYNC_VAULT_DIR names one vault: with --each each vault stays in its state dir."""
    sender(tmp_path, "alice")
    sender(tmp_path, "bob")
    env = {"VAULTSYNC_VAULT_DIR": str(tmp_path / "one-vault")}
    assert each(tmp_path, env=env).returncode == 0
    assert not (tmp_path / "one-vault").exists()
    assert (tmp_path / "alice" / "vault" / "Home.md").is_file()


def test_text_mode_names_each_changed_vault_then_sums_up(tmp_path: Path) -> None:
    """Without --json, each vault's line is prefixed with its name, then one summary line."""
    sender(tmp_path, "alice")
    done = each(tmp_path)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0].startswith("alice: synced: ")
    assert lines[-1] == f"{tmp_path}: 1 vault: 1 changed, 1 ok, 0 failed"


def test_unchanged_vault_is_answered_without_a_sync(tmp_path: Path) -> None:
    """Once synced and settled, a vault gets the quick answer; a changed store does not."""
    state = sender(tmp_path, "alice")
    assert unchanged("alice", state) is None  # never synced
    each(tmp_path)
    past = state.stat().st_mtime - 60  # notes older than vault.quick's racy window…
    for note in (state / "vault").rglob("*.md"):
        os.utime(note, (past, past))
    each(tmp_path)  # …are recorded by the next sync as settled
    answer = unchanged("alice", state)
    assert answer is not None and answer.ok and answer.quick
    (state / "memory" / "memory_index.json").write_text("[]", encoding="utf-8")
    assert unchanged("alice", state) is None


def test_dry_run_writes_no_vault(tmp_path: Path) -> None:
    """--dry-run says what each vault would get, and writes none."""
    sender(tmp_path, "alice")
    done = each(tmp_path, "--dry-run")
    assert done.returncode == 0 and done.stdout.startswith("alice: would sync: ")
    assert not (tmp_path / "alice" / "vault").exists()


def test_quiet_second_run_prints_nothing(tmp_path: Path) -> None:
    """-q, nothing changed (cron): no output at all."""
    sender(tmp_path, "alice")
    assert each(tmp_path, "-q").returncode == 0
    again = each(tmp_path, "-q")
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")


@pytest.mark.parametrize(
    "args", [["--vault", "v"], ["--state", "s"], ["--force"], ["--shard", "2/2"]]
)
def test_options_naming_one_vault_are_refused(tmp_path: Path, args: list[str]) -> None:
    """--each with --vault, --state, --force or a bad --shard: one error line, exit 2."""
    sender(tmp_path, "alice")
    done = each(tmp_path, *args)
    assert done.returncode == 2 and done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr and not (tmp_path / "alice" / "vault").exists()


def test_root_without_state_directories_is_a_usage_error(tmp_path: Path) -> None:
    """An empty ROOT (an unmounted volume, say) exits 2 rather than passing silently."""
    done = each(tmp_path)
    assert done.returncode == 2 and "no ChatCLI state directory" in done.stderr


def test_a_killed_child_is_a_failed_vault(tmp_path: Path) -> None:
    """A vault whose process dies without answering is a failure that names the signal."""

    def dies() -> Outcome:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")

    outcome = in_child(dies, "alice", tmp_path / "alice")
    assert not outcome.ok and "killed by signal 9" in (outcome.error or "")


def children(pid: int) -> list[int]:
    """The processes ``pid`` forked that are still running (Linux's /proc)."""
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in found]


@contextlib.contextmanager
def syncing_first_of_three(root: Path) -> Iterator[subprocess.Popen[str]]:
    """``sync --each ROOT --json`` caught inside its first vault's sync (a child holding on
    the vault lock, which this test holds), the other two vaults not yet started."""
    for name in ("a", "b", "c"):
        sender(root, name)
    assert each(root).returncode == 0
    (root / "a" / "memory" / "memory_index.json").write_text("[]", encoding="utf-8")
    lock = os.open(root / "a" / "vault" / ".vaultsync" / "lock", os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)
    run = subprocess.Popen(
        [str(VAULTSYNC), "sync", "--each", str(root), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        while run.poll() is None and not children(run.pid):
            time.sleep(0.02)  # waits for the fork; asserts nothing about time
        yield run
    finally:
        os.close(lock)  # the child takes the lock and finishes (or was killed)
        run.wait(timeout=120)


def test_sigterm_lets_the_vault_being_synced_finish_and_starts_no_other(tmp_path: Path) -> None:
    """SIGTERM mid-run: the vault being synced commits, the rest are reported not started."""
    with syncing_first_of_three(tmp_path) as run:
        run.send_signal(signal.SIGTERM)
    out, err = run.communicate()
    assert run.returncode == 9, err
    data = summary(Done(9, out, err))
    assert (data["stopped_by"], data["not_started"]) == ("SIGTERM", 2)
    assert [(v["name"], v["ok"], v["changed"]) for v in data["vaults"]] == [("a", True, True)]
    assert commits(tmp_path / "a" / "vault") == 2
    assert err.startswith("SIGTERM: stopping once the vault being synced is done")
    assert "stopped by SIGTERM: 2 vaults not started" in err


def test_second_sigterm_ends_the_run_at_once(tmp_path: Path) -> None:
    """A second SIGTERM ends the run by that signal, its vault's child with it."""
    with syncing_first_of_three(tmp_path) as run:
        child = children(run.pid)[0]
        run.send_signal(signal.SIGTERM)
        assert run.stderr is not None
        assert run.stderr.readline().startswith("SIGTERM: stopping once")  # heard: once
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=60) == -signal.SIGTERM
        while Path(f"/proc/{child}").exists() and "Z" not in _state(child):
            time.sleep(0.02)  # the child dies with its parent (PR_SET_PDEATHSIG)
    assert commits(tmp_path / "a" / "vault") == 1


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def readme_block(after: str, language: str) -> str:
    """The first fenced block of ``language`` after the text ``after`` in the documentation."""
    text = docs_text()
    found = re.search(rf"```{language}\n(.*?)```", text[text.index(after) :], re.DOTALL)
    assert found is not None, f"no {language} block after {after!r}"
    return found.group(1)


def shell_env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{VAULTSYNC.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_readme_cron_lines_sync_every_vault_silently(tmp_path: Path) -> None:
    """The documentation's two cron lines, started together, sync every vault and print nothing."""
    lines = readme_block("**Cron**, two shards", "cron").strip().splitlines()
    names = [f"telegram/{i}" for i in range(5)]
    for name in names:
        sender(tmp_path / "root", name)
    commands = [
        line.split(None, 5)[5]
        .replace("/tmp/", f"{tmp_path}/")  # noqa: S108 - the documentation's lock files, moved
        .replace("/srv/chatcli", str(tmp_path / "root"))
        for line in lines
    ]
    runs = [
        subprocess.Popen(c, shell=True, env=shell_env(), stdout=subprocess.PIPE,  # noqa: S602
                         stderr=subprocess.PIPE, text=True)
        for c in commands
    ]  # fmt: skip
    for run in runs:
        out, err = run.communicate()
        assert (run.returncode, out, err) == (0, "", "")
    assert all(commits(tmp_path / "root" / n / "vault") == 1 for n in names)


def test_readme_ci_matrix_covers_every_vault(tmp_path: Path) -> None:
    """The CI matrix of the docs: one job per shard value, whose summaries name every vault once."""
    block = readme_block("**A CI matrix**", "yaml")
    shards = json.loads(re.search(r"shard: (\[.*\])", block).group(1))  # type: ignore[union-attr]
    step = [line.split("run:", 1)[1].strip() for line in block.splitlines() if "run:" in line][1]
    names = [f"slack/{i}" for i in range(5)]
    for name in names:
        sender(tmp_path / "root", name)
    taken: list[str] = []
    for shard in shards:
        command = step.replace("${{ matrix.shard }}", str(shard))
        command = command.replace("/srv/chatcli", str(tmp_path / "root"))
        done = subprocess.run(command, shell=True, cwd=tmp_path, env=shell_env(), check=False)  # noqa: S602
        assert done.returncode == 0
        taken += [v["name"] for v in json.loads((tmp_path / "summary.json").read_text())["vaults"]]
    assert sorted(taken) == names

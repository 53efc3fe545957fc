"""The documentation's cron line, pre-commit config and CI job work when pasted as written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import clean_env, docs_text

README = Path(__file__).resolve().parents[2] / "README.md"
BIN = Path(sys.executable).parent
DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "stores" / "demo"


def block(after: str, language: str) -> str:
    """The first fenced block of ``language`` after the line that starts with ``after``."""
    text = docs_text()
    start = text.index(after)
    found = re.search(rf"```{language}\n(.*?)```", text[start:], re.DOTALL)
    assert found is not None, f"no {language} block after {after!r}"
    return found.group(1)


def environ(home: Path) -> dict[str, str]:
    env = clean_env()  # keeps the embedder switched off, as in every test
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    env["VAULTSYNC_CACHE_DIR"] = str(home / ".cache" / "vaultsync")
    return env


def run(
    command: str | list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    shell = isinstance(command, str)
    return subprocess.run(
        command, cwd=cwd, env=env, shell=shell, capture_output=True, text=True, check=False
    )


@pytest.fixture
def export_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository holding an export and its synced vault, committed."""
    env = environ(tmp_path / "home")
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo / "memory-export")
    assert run(["git", "init", "-q"], repo, env).returncode == 0
    synced = run(["vaultsync", "sync", "--state", "memory-export", "--vault", "vault"], repo, env)
    assert synced.returncode == 0, synced.stderr
    assert run(["git", "add", "-A"], repo, env).returncode == 0
    assert run(["git", "commit", "-qm", "export and vault"], repo, env).returncode == 0
    return repo, env


def cron_command(home: Path) -> str:
    """The documentation's cron line without its schedule, for a shell with ``home`` as HOME."""
    line = block("`sync` says one line when it changed something", "cron").strip()
    shutil.copytree(DEMO, home / ".chatcli")
    return line.split(None, 5)[5]


def test_cron_line_syncs_the_default_state_directory(tmp_path: Path) -> None:
    """The cron line's command, run by a shell with a ChatCLI home, syncs its vault quietly."""
    home = tmp_path / "home"
    command = cron_command(home)
    done = run(command, tmp_path, environ(home))
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")  # cron mails nothing
    assert (home / ".chatcli" / "vault" / "Home.md").is_file()


def test_cron_line_mails_nothing_when_the_stores_change(tmp_path: Path) -> None:
    """A change of the stores is synced and committed, and the cron line prints nothing."""
    home = tmp_path / "home"
    command = cron_command(home)
    assert run(command, tmp_path, environ(home)).returncode == 0
    topics = home / ".chatcli" / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data[0]["summary"] = "changed between two cron runs"
    topics.write_text(json.dumps(data))
    done = run(command, tmp_path, environ(home))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    vault = home / ".chatcli" / "vault"
    log = run(["git", "-C", str(vault), "log", "--format=%s"], tmp_path, environ(home))
    assert len(log.stdout.splitlines()) == 2


@pytest.mark.external
def test_pre_commit_config_fails_while_the_vault_is_stale(
    export_repo: tuple[Path, dict[str, str]],
) -> None:
    """The documentation's config, run by the real pre-commit: green in sync, red once stale."""
    repo, env = export_repo
    (repo / ".pre-commit-config.yaml").write_text(block("**pre-commit.**", "yaml"))
    hook = [str(BIN / "pre-commit"), "run", "--all-files"]
    green = run(hook, repo, env)
    assert green.returncode == 0, green.stdout + green.stderr
    topics = repo / "memory-export" / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data[0]["summary"] = "changed without a sync"
    topics.write_text(json.dumps(data))
    red = run(hook, repo, env)
    said = red.stdout + red.stderr
    assert red.returncode == 1 and "stale" in said
    assert "run `vaultsync sync --state memory-export --vault vault`" in said


@pytest.mark.external
def test_shipped_hook_runs_with_pre_commit_try_repo(
    export_repo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """.pre-commit-hooks.yaml's vaultsync-check, installed by pre-commit itself, fails stale."""
    repo, env = export_repo
    env = {**env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env.update(VAULTSYNC_STATE_DIR="memory-export", VAULTSYNC_VAULT_DIR="vault")
    hook = [str(BIN / "pre-commit"), "try-repo", str(README.parent), "vaultsync-check"]
    green = run([*hook, "--all-files"], repo, env)
    assert green.returncode == 0, green.stdout + green.stderr
    topics = repo / "memory-export" / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data[0]["summary"] = "changed without a sync"
    topics.write_text(json.dumps(data))
    run(["git", "add", "memory-export"], repo, env)
    red = run(hook, repo, env)  # the staged change matches no filter: the hook has none
    assert red.returncode == 1 and "stale" in red.stdout + red.stderr


def test_ci_job_steps_check_the_committed_vault(export_repo: tuple[Path, dict[str, str]]) -> None:
    """The CI job's check step passes on a fresh clone and fails once the export changes."""
    repo, env = export_repo
    steps = [line.split("run:", 1)[1].strip() for line in block("**CI.**", "yaml").splitlines()]
    assert steps[0].startswith("pip install")  # installing is the job's business, not this test's
    clone = repo.parent / "clone"
    assert run(["git", "clone", "-q", str(repo), str(clone)], repo.parent, env).returncode == 0
    checked = run(steps[1], clone, env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (clone / "memory-export" / "memory" / "topics.json").write_text("[]")
    assert run(steps[1], clone, env).returncode == 1

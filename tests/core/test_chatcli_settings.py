"""ChatCLI's settings: the one state root (``CHATCLI_STATE_DIR`` an alias), extra skill folders.

Real files in tmp folders; ``HOME`` is the tmp home of ``conftest.isolated_git``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vaultsync.cli.options import workspace
from vaultsync.core.config import read_config, resolve
from vaultsync.core.settings import Sources, state_dir
from vaultsync.extract import read_state
from vaultsync.vault.config import save_setting
from vaultsync.vault.quick import sync_inputs

GUARD = 120  # seconds: only a failure guard against a hang, never a timing assertion


def session(folder: Path, name: str, title: str) -> Path:
    """A v2 ChatCLI session file ``folder/sessions/<name>.json``."""
    path = folder / "sessions" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 2, "title": title, "chat_history": None}))
    return path


def context(folder: Path, ident: str, name: str) -> Path:
    """A ChatCLI context file ``folder/contexts/<id>.json`` with one document."""
    path = folder / "contexts" / f"{ident}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    files = [{"Path": "notes.md", "Content": "# Notes\n", "Type": "md"}]
    path.write_text(json.dumps({"id": ident, "name": name, "files": files}))
    return path


def skill(folder: Path, name: str, description: str) -> Path:
    """A package skill ``folder/<name>/SKILL.md``."""
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody.\n")
    return path


def home() -> Path:
    """ChatCLI's home in the test's HOME."""
    return Path.home() / ".chatcli"


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A state directory elsewhere than ``~/.chatcli``, with one session and one skill."""
    root = tmp_path / "state"
    session(root, "named", "From the state directory")
    skill(root / "skills", "deploy", "from the state directory")
    return root


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``vaultsync ARGS`` in a real process (with ``env`` added to the environment)."""
    command = [sys.executable, "-m", "vaultsync", *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        timeout=GUARD,
        env={**os.environ, **(env or {})},
    )


def all_notes(vault: Path) -> str:
    """Every note's text, concatenated."""
    return "\n".join(p.read_text() for p in sorted(vault.rglob("*.md")))


class TestStateRoot:
    def test_no_option_nor_variable_is_chatclis_home(self) -> None:
        """Nothing set: ``~/.chatcli``."""
        assert state_dir(None, {}) == home()

    def test_a_sync_under_the_alias_reads_no_home_sessions(
        self, state: Path, tmp_path: Path
    ) -> None:
        """Under ``CHATCLI_STATE_DIR`` only the state directory's sessions become notes."""
        session(home(), "from-home", "Session kept in the home")
        vault = tmp_path / "vault"
        done = run("sync", "--vault", str(vault), env={"CHATCLI_STATE_DIR": str(state)})
        assert done.returncode == 0, done.stderr
        text = all_notes(vault)
        assert "From the state directory" in text
        assert "Session kept in the home" not in text

    def test_home_contexts_are_not_read(self, state: Path) -> None:
        """``~/.chatcli/contexts`` is not read when the state directory is elsewhere."""
        context(state, "ctx-1", "State's context")
        context(home(), "ctx-2", "Home's context")
        assert [c.name for c in read_state(state).contexts] == ["State's context"]

    def test_a_home_session_leaves_the_no_op_sync_inputs_alone(
        self, state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Under ``CHATCLI_STATE_DIR``, a new ``~/.chatcli/sessions`` file changes nothing."""
        monkeypatch.setenv("CHATCLI_STATE_DIR", str(state))
        vault = tmp_path / "vault"

        def inputs() -> str:
            ws = workspace(None, str(vault))
            return sync_inputs(ws.state, ws.settings.as_key(), ws.templates)

        before = inputs()
        session(home(), "from-home", "New in the home")
        assert inputs() == before


class TestExtraSkillFolders:
    def test_an_extra_folder_skill_wins_over_the_state_directory(
        self, state: Path, tmp_path: Path
    ) -> None:
        """The first folder wins a name: the project's ``deploy`` over the state's."""
        project = tmp_path / "project" / ".agent" / "skills"
        skill(project, "deploy", "from the project")
        skill(project, "lint", "only in the project")
        records = read_state(state, sources=Sources(skills=(project,)))
        assert {s.name: s.description for s in records.skills} == {
            "deploy": "from the project",
            "lint": "only in the project",
        }
        assert records.skills[0].source_path == "skills/deploy/SKILL.md"

    def test_extra_folders_are_scanned_in_order(self, state: Path, tmp_path: Path) -> None:
        """Of two extra folders, the first listed wins a name."""
        first, second = tmp_path / "first", tmp_path / "second"
        skill(first, "deploy", "first")
        skill(second, "deploy", "second")
        records = read_state(state, sources=Sources(skills=(first, second)))
        assert [s.description for s in records.skills] == ["first"]

    def test_an_invalid_skill_in_an_extra_folder_is_skipped(
        self, state: Path, tmp_path: Path
    ) -> None:
        """An extra folder's skill is read as leniently, and skipped as, a state one."""
        project = tmp_path / "project"
        bad = project / "broken" / "SKILL.md"
        bad.parent.mkdir(parents=True)
        bad.write_text("---\nname: broken\ndescription: a: b: c\n---\n")
        records = read_state(state, sources=Sources(skills=(project,)))
        assert [s.name for s in records.skills] == ["deploy"]
        assert [s.source for s in records.skipped] == [bad.as_posix()]

    def test_saved_relative_folders_are_relative_to_the_vault(self, tmp_path: Path) -> None:
        """``skills.extra_folders`` in the config: relative paths start at the vault."""
        vault = tmp_path / "vault"
        saved = read_config(b'[skills]\nextra_folders = ["../project/.agent/skills", "/abs"]\n')
        settings = resolve(saved, vault=vault, environ={})
        assert settings.skill_folders == (tmp_path / "project/.agent/skills", Path("/abs"))
        assert settings.caps.sources.skills == settings.skill_folders

    def test_a_comma_separated_variable_names_folders(self, tmp_path: Path) -> None:
        """``VAULTSYNC_SKILLS_EXTRA_FOLDERS=a,b`` is two folders."""
        env = {"VAULTSYNC_SKILLS_EXTRA_FOLDERS": "/a, /b"}
        settings = resolve({}, vault=tmp_path, environ=env)
        assert settings.skill_folders == (Path("/a"), Path("/b"))

    def test_sync_renders_the_extra_folder_skill(self, state: Path, tmp_path: Path) -> None:
        """A saved ``skills.extra_folders`` reaches the sync: the project's skill is the note."""
        project = tmp_path / "project" / ".agent" / "skills"
        skill(project, "deploy", "from the project")
        vault = tmp_path / "vault"
        vault.mkdir()
        save_setting(vault, "skills.extra_folders", "../project/.agent/skills", commit=False)
        done = run("sync", "--state", str(state), "--vault", str(vault))
        assert done.returncode == 0, done.stderr
        text = all_notes(vault)
        assert "from the project" in text
        assert "from the state directory" not in text

    def test_a_missing_extra_folder_is_a_setting_error(self, state: Path, tmp_path: Path) -> None:
        """A saved skills folder gone since is exit 3, one line; nothing is removed."""
        vault, gone = tmp_path / "vault", tmp_path / "gone"
        vault.mkdir()
        gone.mkdir()
        save_setting(vault, "skills.extra_folders", "../gone", commit=False)
        gone.rmdir()
        done = run("sync", "--state", str(state), "--vault", str(vault))
        assert done.returncode == 3
        assert done.stderr.splitlines()[0].endswith("(from config): not a folder")
        assert not list(vault.rglob("*.md"))

    def test_a_change_in_an_extra_folder_invalidates_the_no_op_sync(
        self, state: Path, tmp_path: Path
    ) -> None:
        """The quick path's inputs change when a file in an extra skill folder does."""
        project = tmp_path / "project"
        path = skill(project, "deploy", "from the project")
        vault = tmp_path / "vault"
        vault.mkdir()
        save_setting(vault, "skills.extra_folders", str(project), commit=False)

        def inputs() -> str:
            ws = workspace(str(state), str(vault))
            return sync_inputs(ws.state, ws.settings.as_key(), ws.templates)

        before = inputs()
        assert inputs() == before
        path.write_text("---\nname: deploy\ndescription: edited, and longer\n---\n")
        assert inputs() != before
        skill(project, "added", "a new skill")
        assert len({before, inputs()}) == 2

"""``vaultsync config`` and saved settings, as a user runs them: set, show, sync, clone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pygit2
from click.testing import CliRunner
from vaultsync.cli.main import cli


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def where(state: Path, vault: Path) -> list[str]:
    return ["--state", str(state), "--vault", str(vault)]


def custom_templates(folder: Path) -> Path:
    """An override of the topic template that marks every topic note."""
    folder.mkdir()
    (folder / "topic.md.j2").write_text(
        '{% extends "!builtin/topic.md.j2" %}\n{% block body %}CUSTOM TOPIC\n{{ super() }}'
        "{% endblock %}\n",
        encoding="utf-8",
    )
    return folder


class TestConfigCommand:
    def test_set_saves_and_commits(self, demo_state: Path, tmp_path: Path) -> None:
        """``config set`` writes .vaultsync/config.toml and commits it, without a sync trailer."""
        vault = tmp_path / "vault"
        code, out, err = run("config", "set", "caps.episodes", "5", *where(demo_state, vault))
        assert code == 0, err
        assert "saved caps.episodes = 5" in out
        assert (vault / ".vaultsync/config.toml").read_text() == "[caps]\nepisodes = 5\n"
        head = pygit2.Repository(str(vault)).head.peel(pygit2.Commit)
        assert head.message.startswith("vaultsync: config caps.episodes = 5")
        assert "Vaultsync-Sync" not in head.message

    def test_set_leaves_git_status_clean(self, demo_state: Path, tmp_path: Path) -> None:
        """git's index follows the commit: nothing staged, nothing untracked afterwards."""
        vault = tmp_path / "vault"
        assert run("sync", *where(demo_state, vault))[0] == 0
        for args in (["set", "caps.episodes", "5"], ["unset", "caps.episodes"]):
            assert run("config", *args, *where(demo_state, vault))[0] == 0
            assert pygit2.Repository(str(vault)).status() == {}

    def test_show_says_where_each_value_comes_from(self, demo_state: Path, tmp_path: Path) -> None:
        """``config --json`` lists every setting with its value and source."""
        vault = tmp_path / "vault"
        run("config", "set", "caps.episodes", "5", *where(demo_state, vault))
        env = {"VAULTSYNC_CAP_SESSIONS": "7"}
        code, out, err = run("config", "--json", *where(demo_state, vault), env=env)
        assert code == 0, err
        settings = json.loads(out)["settings"]
        assert settings["caps.episodes"] == {"value": 5, "source": "config"}
        assert settings["caps.sessions"] == {"value": 7, "source": "env VAULTSYNC_CAP_SESSIONS"}
        assert settings["render.timezone"] == {"value": "UTC", "source": "default"}

    def test_bad_value_is_one_line_and_writes_nothing(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """A bad value exits 3 with one line; no file, no commit."""
        vault = tmp_path / "vault"
        code, _, err = run(
            "config", "set", "render.timezone", "Mars/Base", *where(demo_state, vault)
        )
        assert code == 3
        assert err.startswith("error: render.timezone='Mars/Base': not a time zone")
        assert not (vault / ".vaultsync/config.toml").exists()

    def test_a_missing_folder_is_refused_and_nothing_saved(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """A skills folder that is not there exits 3 with one line; no file, no commit."""
        vault = tmp_path / "vault"
        assert run("sync", *where(demo_state, vault))[0] == 0
        head = pygit2.Repository(str(vault)).head.target
        code, _, err = run(
            "config", "set", "skills.extra_folders", "../gone", *where(demo_state, vault)
        )
        assert code == 3
        assert err.count("\n") == 1
        assert "not a folder; nothing saved" in err
        assert not (vault / ".vaultsync/config.toml").exists()
        assert pygit2.Repository(str(vault)).head.target == head

    def test_a_folder_gone_since_it_was_saved_can_be_unset(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """Every other command refuses the setting (exit 3); config unset still removes it."""
        vault, skills = tmp_path / "vault", tmp_path / "skills"
        skills.mkdir()
        assert (
            run("config", "set", "skills.extra_folders", str(skills), *where(demo_state, vault))[0]
            == 0
        )
        skills.rmdir()
        assert run("status", *where(demo_state, vault))[0] == 3
        assert run("config", "unset", "skills.extra_folders", *where(demo_state, vault))[0] == 0
        assert run("status", *where(demo_state, vault))[0] == 0

    def test_a_missing_templates_flag_is_one_line_exit_3(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """--templates naming no folder is a setting error like the saved one: no usage text."""
        vault = tmp_path / "vault"
        args = ["sync", "--templates", str(tmp_path / "gone"), *where(demo_state, vault)]
        code, _, err = run(*args)
        assert code == 3
        assert err == f"error: templates folder {tmp_path / 'gone'} (from flag): not a folder\n"
        assert not vault.exists()

    def test_saved_caps_shape_the_sync(self, demo_state: Path, tmp_path: Path) -> None:
        """A saved cap applies to a plain sync: only 5 episodes become notes."""
        vault = tmp_path / "vault"
        run("config", "set", "caps.episodes", "5", *where(demo_state, vault))
        code, _, err = run("sync", *where(demo_state, vault))
        assert code == 0, err
        assert len(list((vault / "Episodes").rglob("*.md"))) == 5

    def test_variable_over_saved_value_says_so(self, demo_state: Path, tmp_path: Path) -> None:
        """A variable that overrides a saved value is named on stderr."""
        vault = tmp_path / "vault"
        run("config", "set", "caps.episodes", "5", *where(demo_state, vault))
        env = {"VAULTSYNC_CAP_EPISODES": "6"}
        code, _, err = run("check", *where(demo_state, vault), env=env)
        assert code == 1
        assert "note: caps.episodes: env VAULTSYNC_CAP_EPISODES overrides the saved value 5" in err

    def test_malformed_saved_file_names_it(self, demo_state: Path, tmp_path: Path) -> None:
        """A hand-broken config is one error line naming the file, exit 3, nothing written."""
        vault = tmp_path / "vault"
        (vault / ".vaultsync").mkdir(parents=True)
        (vault / ".vaultsync/config.toml").write_text("[caps\n")
        code, _, err = run("sync", *where(demo_state, vault))
        assert code == 3
        assert err.startswith(f"error: {vault}/.vaultsync/config.toml: ")
        assert sorted(p.name for p in vault.iterdir()) == [".vaultsync"]


class TestTemplatesStory:
    def test_templates_once_then_plain_sync_keeps_them(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """``sync --templates DIR`` once; a later plain sync keeps the custom renders."""
        vault = tmp_path / "vault"
        templates = custom_templates(tmp_path / "my-templates")
        code, _, err = run("sync", *where(demo_state, vault), "--templates", str(templates))
        assert code == 0, err
        assert "saved render.templates = ../my-templates" in err
        topic = vault / "Topics" / "Go.md"
        assert "CUSTOM TOPIC" in topic.read_text()
        code, _, err = run("sync", *where(demo_state, vault))
        assert code == 0, err
        assert "CUSTOM TOPIC" in topic.read_text()
        assert run("check", *where(demo_state, vault))[0] == 0

    def test_saved_config_is_committed_with_the_sync(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """The config saved by ``--templates`` is in the sync's commit, so a clone has it."""
        vault = tmp_path / "vault"
        templates = custom_templates(tmp_path / "my-templates")
        run("sync", *where(demo_state, vault), "--templates", str(templates))
        tree = pygit2.Repository(str(vault)).head.peel(pygit2.Commit).tree
        saved = tree / ".vaultsync/config.toml"
        assert isinstance(saved, pygit2.Blob)
        assert b'templates = "../my-templates"' in saved.data

    def test_clone_uses_the_saved_templates(self, demo_state: Path, tmp_path: Path) -> None:
        """A clone of the vault beside the same templates folder checks green with no flag."""
        root = tmp_path / "work"
        root.mkdir()
        vault = root / "vault"
        templates = custom_templates(root / "my-templates")
        run("sync", *where(demo_state, vault), "--templates", str(templates))
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        shutil.copytree(templates, elsewhere / "my-templates")
        pygit2.clone_repository(str(vault), str(elsewhere / "vault"))
        code, out, err = run("check", *where(demo_state, elsewhere / "vault"))
        assert code == 0, out + err

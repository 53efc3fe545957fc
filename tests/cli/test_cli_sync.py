"""``vaultsync sync``/``check`` as a person reads them: quiet runs, hints, Home after deletes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from vaultsync.cli.main import cli


def run(*args: str) -> tuple[int, str, str]:
    """Run the command line in-process: exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def change_a_topic(state: Path, summary: str) -> None:
    """Edit the first topic's summary in the store, as ChatCLI would rewrite topics.json."""
    topics = state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data[0]["summary"] = summary
    topics.write_text(json.dumps(data))


def session_note(vault: Path) -> str:
    """A session note Home.md lists (its vault path, without ``.md``)."""
    home = (vault / "Home.md").read_text()
    note = sorted((vault / "Sessions").glob("*.md"))[0].relative_to(vault).as_posix()
    assert f"[[{note[:-3]}" in home
    return note


class TestQuiet:
    def test_quiet_sync_prints_nothing_when_it_changes_notes(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """-q: a sync that creates and updates notes prints no line at all."""
        where = ["--state", str(demo_state), "--vault", str(tmp_path / "vault")]
        assert run("sync", "-q", *where) == (0, "", "")
        change_a_topic(demo_state, "a quieter summary")
        assert run("sync", "-q", *where) == (0, "", "")
        topics = (tmp_path / "vault" / "Topics").glob("*.md")
        assert any("a quieter summary" in note.read_text() for note in topics)

    def test_quiet_sync_still_names_a_conflict(self, demo_state: Path, tmp_path: Path) -> None:
        """-q: a merge conflict, which needs the person, is still said (and only it)."""
        vault = tmp_path / "vault"
        where = ["--state", str(demo_state), "--vault", str(vault)]
        assert run("sync", *where)[0] == 0
        topics = json.loads((demo_state / "memory" / "topics.json").read_text())
        note = vault / "Topics" / f"{topics[0]['name']}.md"
        first_words = topics[0]["summary"].split("[[")[0]
        assert first_words in note.read_text()
        note.write_text(note.read_text().replace(first_words, "My own words "))
        os.utime(note, (note.stat().st_atime - 60, note.stat().st_mtime - 60))  # saved a while ago
        change_a_topic(demo_state, "the stores' new words")
        code, out, _err = run("sync", "-q", *where)
        assert code == 0
        assert [line.split(" — ")[0] for line in out.splitlines()] == [
            f"conflict: {note.relative_to(vault).as_posix()}"
        ]

    def test_plain_sync_says_what_changed(self, demo_state: Path, tmp_path: Path) -> None:
        """Without -q, a sync that changed notes says so in one counted line."""
        code, out, _err = run("sync", "--state", str(demo_state), "--vault", str(tmp_path / "v"))
        assert code == 0 and out.startswith("synced ") and " created, " in out


class TestStaleHint:
    def test_check_names_the_sync_to_run_with_the_same_options(
        self, demo_state: Path, tmp_path: Path
    ) -> None:
        """A stale vault's hint is the exact sync command: same --state and --vault, quoted."""
        vault = tmp_path / "my vault"
        where = ["--state", str(demo_state), "--vault", str(vault)]
        assert run("sync", *where)[0] == 0
        change_a_topic(demo_state, "changed without a sync")
        code, _out, err = run("check", *where)
        assert code == 1
        assert f"run `vaultsync sync --state {demo_state} --vault '{vault}'`" in err


class TestHomeAfterDeletes:
    @pytest.fixture
    def deleted(self, demo_state: Path, tmp_path: Path) -> tuple[Path, list[str], str]:
        """A synced demo vault whose user deleted a session note, synced again."""
        vault = tmp_path / "vault"
        where = ["--state", str(demo_state), "--vault", str(vault)]
        assert run("sync", *where)[0] == 0
        note = session_note(vault)
        (vault / note).unlink()
        assert run("sync", *where)[0] == 0
        return vault, where, note

    def test_home_stops_listing_a_note_the_user_deleted(
        self, deleted: tuple[Path, list[str], str]
    ) -> None:
        """The sync after a delete drops the note from Home.md, and the vault checks clean."""
        vault, where, note = deleted
        assert f"[[{note[:-3]}" not in (vault / "Home.md").read_text()
        assert not (vault / note).exists()
        assert run("check", *where)[0] == 0

    def test_forcing_the_note_back_lists_it_again(
        self, deleted: tuple[Path, list[str], str]
    ) -> None:
        """sync --force PATH re-creates a deleted note, and Home.md links to it again."""
        vault, where, note = deleted
        assert run("sync", *where, "--force", note)[0] == 0
        assert (vault / note).is_file()
        assert f"[[{note[:-3]}" in (vault / "Home.md").read_text()
        assert run("check", *where)[0] == 0


def test_a_steady_no_op_loads_no_report_git_or_template_code(
    demo_state: Path, tmp_path: Path
) -> None:
    """The no-op answers from stat data: printing its (empty) outcome imports no report, git,
    graph or Jinja code, which cost it more than the stat proof itself."""
    import time

    where = ["--state", str(demo_state), "--vault", str(tmp_path / "vault")]
    assert run("sync", *where)[0] == 0
    time.sleep(2.1)  # past git's racy window, so the next no-op stats only
    assert run("sync", *where)[0] == 0
    loaded = _modules_loaded_by("sync", where)
    heavy = {"pygit2", "jinja2", "vaultsync.cli.views", "vaultsync.cli.reports",
             "vaultsync.vault.report", "vaultsync.graph.query",
             "vaultsync.core.redact"}  # fmt: skip
    assert loaded & heavy == set()


def test_status_in_sync_loads_no_graph_or_template_code(demo_state: Path, tmp_path: Path) -> None:
    """``status`` answered from the last sync's record imports no graph, query, template,
    pickle, note-reading, merge, SQLite or git code: its report views are apart from the query
    views, and git's answers are kept while its files are unchanged."""
    import time

    where = ["--state", str(demo_state), "--vault", str(tmp_path / "vault")]
    assert run("sync", *where)[0] == 0
    time.sleep(2.1)  # past git's racy window, so status answers from the record
    assert run("status", *where)[0] == 0  # the first after a commit looks through history
    loaded = _modules_loaded_by("status", where)
    heavy = {"pickle", "jinja2", "vaultsync.cli.views", "vaultsync.core.model",
             "vaultsync.graph.build", "vaultsync.graph.query",
             "vaultsync.render.specs", "vaultsync.core.notes", "pygit2",
             "subprocess", "sqlite3", "vaultsync.vault.merge"}  # fmt: skip
    assert "vaultsync.cli.reports" in loaded
    assert loaded & heavy == set()


def _modules_loaded_by(command: str, where: list[str]) -> set[str]:
    """The modules a fresh ``vaultsync COMMAND *where`` process has imported when it ends."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom vaultsync.cli.main import cli\n"
        f"cli.main([{command!r}, *{where!r}], standalone_mode=False)\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_status_warns_of_a_failed_background_packing(demo_state: Path, tmp_path: Path) -> None:
    """`status` prints a line naming the failed packing of git objects and its log."""
    from vaultsync.core.background import record_failure
    from vaultsync.vault.housekeeping import pack_job

    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    assert run("sync", "-q", *where)[0] == 0
    record_failure(pack_job(vault), 128, "fatal: bad object")
    code, out, _err = run("status", *where)
    assert code == 0
    assert (
        "warning: git objects not packed: the background packing failed "
        "(exit 128: fatal: bad object); see .vaultsync/git-pack.log"
    ) in out

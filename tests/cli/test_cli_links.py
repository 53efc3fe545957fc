"""`vaultsync link / unlink / links` end to end on a copy of the demo store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import DEMO_STORE
from vaultsync.cli.links import split_link_arguments
from vaultsync.cli.main import cli
from vaultsync.core.errors import UsageError


@pytest.fixture
def state(tmp_path: Path) -> Path:
    target = tmp_path / "state"
    shutil.copytree(DEMO_STORE, target)
    return target


def run(state: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [*args, "--state", str(state)])
    return result.exit_code, result.stdout, result.stderr


def drawn(state: Path) -> list[dict[str, str]]:
    path = state / "memory" / "links.json"
    return json.loads(path.read_text())["links"] if path.exists() else []


class TestArguments:
    @pytest.mark.parametrize(
        ("words", "expected"),
        [
            (("telemetry", "security", "->", "Orbital"), ("telemetry security", "Orbital")),
            (("a", "→", "b"), ("a", "b")),
            (("a->b",), ("a", "b")),
            (("Ingest gateway", "Orbital"), ("Ingest gateway", "Orbital")),
        ],
    )
    def test_forms(self, words: tuple[str, ...], expected: tuple[str, str]) -> None:
        """The arrow may be -> or →, attached or spaced; two quoted words need no arrow."""
        assert split_link_arguments(words) == expected

    def test_missing_side_is_a_usage_error(self) -> None:
        """An arrow with nothing on one side is refused."""
        with pytest.raises(UsageError):
            split_link_arguments(("a", "->"))


class TestLink:
    def test_draw_then_see_it_in_neighbors(self, state: Path) -> None:
        """A drawn link shows in both notes' local graphs, marked as yours, with its note."""
        code, out, _ = run(
            state,
            "link",
            "telemetry security",
            "->",
            "orbital",
            "--rel",
            "about",
            "--note",
            "gateway notes",
        )
        assert code == 0 and "linked: telemetry security → orbital (about)" in out
        _, view, _ = run(state, "links", "orbital")
        assert "(← about · linked by you: gateway notes)" in view
        _, neighbours, _ = run(state, "graph", "neighbors", "orbital")
        assert view == neighbours

    def test_ambiguous_reference_is_refused_with_candidates(self, state: Path) -> None:
        """A name two notes share is refused, listing both ids, and nothing is written."""
        code, _, err = run(state, "link", "troubleshooting", "→", "orbital")
        assert code == 6
        assert err.count("doc:") >= 2 and "could mean" in err
        assert drawn(state) == []

    def test_wikilink_reference_resolves_by_kind_priority(self, state: Path) -> None:
        """[[api]] names the topic over the document titled api, as the link in a note does."""
        code, out, _ = run(state, "link", "[[api]]", "→", "orbital")
        assert code == 0 and "topic:api → project:orbital" in out

    def test_wikilink_reference_that_still_ties_is_refused(self, state: Path) -> None:
        """[[troubleshooting]] names two documents: refused with both ids, nothing written."""
        code, _, err = run(state, "link", "[[troubleshooting]]", "→", "orbital")
        assert code == 6 and err.count("doc:") >= 2
        assert drawn(state) == []

    def test_relation_is_slugged_and_mapped(self, state: Path) -> None:
        """Free relation names become slugs; common words map onto built-in relations."""
        run(state, "link", "orbital", "→", "Kubernetes operator", "--rel", "Depends On")
        run(state, "link", "skiff", "→", "orbital", "--rel", "references")
        assert sorted(l["rel"] for l in drawn(state)) == ["depends_on", "links_to"]

    def test_unlink_removes_only_your_link(self, state: Path) -> None:
        """unlink removes the drawn link and leaves a tombstone."""
        run(state, "link", "skiff", "→", "orbital")
        code, out, _ = run(state, "unlink", "skiff", "→", "orbital")
        assert code == 0 and "unlinked" in out
        data = json.loads((state / "memory" / "links.json").read_text())
        assert data["links"] == [] and len(data["tombstones"]) == 1

    def test_unlink_of_a_data_link_explains_its_origin(self, state: Path) -> None:
        """A link from the data is reported with its relation and origin, and not removed."""
        code, _, err = run(state, "unlink", "Orbital streams telemetry", "→", "orbital")
        assert code == 8
        assert "in_project (structural" in err and "change the data" in err

    def test_export_import_round_trip(self, state: Path, tmp_path: Path) -> None:
        """Links exported as JSON Lines import into a fresh state directory unchanged."""
        run(state, "link", "skiff", "→", "orbital", "--note", "ships it")
        _, exported, _ = run(state, "links", "export")
        dump = tmp_path / "links.jsonl"
        dump.write_text(exported)
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        code, out, _ = run(fresh, "links", "import", str(dump))
        assert code == 0 and "1 added" in out
        assert drawn(fresh) == drawn(state)

    def test_corrupt_links_file_is_quarantined_by_a_write(self, state: Path) -> None:
        """A write command moves a corrupt links.json aside, says where, and starts anew."""
        corrupt = state / "memory" / "links.json"
        corrupt.write_text("{not json")
        code, _, err = run(state, "link", "skiff", "→", "orbital")
        assert code == 0 and "moved aside to" in err
        (moved,) = (state / "memory").glob("links.json.corrupt-*")
        assert moved.read_text() == "{not json"
        assert len(drawn(state)) == 1


def test_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    """A real process reports a bad store in one line on stderr with a non-zero exit code."""
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "topics.json").write_text('[{"name": "ok"},\n {"name": 42}]')
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "graph", "map", "--state", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 4
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "topics.json" in proc.stderr and "[1].name" in proc.stderr


def test_missing_state_directory_is_refused(tmp_path: Path) -> None:
    """A mistyped --state is a usage error, and no vault is created."""
    vault = tmp_path / "vault"
    result = CliRunner().invoke(
        cli, ["sync", "--state", str(tmp_path / "typo"), "--vault", str(vault)]
    )
    assert result.exit_code == 2 and "no such directory" in result.stderr
    assert not vault.exists()


def test_vault_that_is_a_file_is_refused(tmp_path: Path) -> None:
    """--vault naming a file is refused with a clear line, and the file is untouched."""
    state = tmp_path / "state"
    state.mkdir()
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    result = CliRunner().invoke(cli, ["sync", "--state", str(state), "--vault", str(target)])
    assert result.exit_code == 2 and "not a folder" in result.stderr
    assert target.read_text() == "mine"

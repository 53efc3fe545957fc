"""``vaultsync query``: every subcommand, text and ``--json``, vault selection, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from vaultsync.cli.knowledge import query
from vaultsync.core.errors import NoteReferenceError, UsageError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vaults" / "knowledge"


@pytest.fixture
def vaults(tmp_path: Path) -> Path:
    """A copy of the fixture vaults (the CLI writes its cache into the vault)."""
    target = tmp_path / "vaults"
    shutil.copytree(FIXTURES, target)
    return target


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(query, list(args), env=env, catch_exceptions=True)


def as_json(vault: Path, *args: str) -> Any:
    result = run(*args, "--vault", str(vault), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


class TestQueries:
    def test_orphans(self, vaults: Path) -> None:
        """orphans lists notes with no incoming edge."""
        found = as_json(vaults / "queries", "orphans")
        assert [idea["path"] for idea in found] == ["a.md", "d.md"]
        assert set(found[0]) == {
            "path",
            "title",
            "state",
            "kind",
            "in_degree",
            "out_degree",
            "degree",
            "has_sources",
        }

    def test_leaves(self, vaults: Path) -> None:
        """leaves lists notes with no outgoing edge."""
        assert [i["path"] for i in as_json(vaults / "queries", "leaves")] == ["c.md", "d.md"]

    def test_hubs_min(self, vaults: Path) -> None:
        """hubs --min N keeps notes with N or more neighbours."""
        assert [i["path"] for i in as_json(vaults / "queries", "hubs", "--min", "2")] == [
            "a.md",
            "b.md",
            "c.md",
        ]
        assert as_json(vaults / "queries", "hubs") == []

    def test_unsourced(self, vaults: Path) -> None:
        """unsourced lists notes whose claims have no source."""
        assert [i["path"] for i in as_json(vaults / "claims", "unsourced")] == ["n4.md"]

    def test_claims_without_sources(self, vaults: Path) -> None:
        """claims-without-sources pairs each sourceless claim with its note."""
        found = as_json(vaults / "claims", "claims-without-sources")
        assert [(c["path"], c["claim"]) for c in found] == [("n1.md", "c2"), ("n4.md", "c4")]

    def test_sources(self, vaults: Path) -> None:
        """sources counts the notes citing each source."""
        found = as_json(vaults / "claims", "sources")
        assert found == [
            {"kind": "link", "ref": "S1.md", "count": 2},
            {"kind": "text", "ref": "doi:x", "count": 1},
        ]

    def test_state(self, vaults: Path) -> None:
        """state STATE lists the notes in that state; case and emoji tolerated."""
        assert [i["path"] for i in as_json(vaults / "queries", "state", "Permanent")] == [
            "a.md",
            "c.md",
        ]
        assert len(as_json(vaults / "queries", "state", "🌱 fleeting")) == 2

    def test_maturity(self, vaults: Path) -> None:
        """maturity groups notes into isolated, sparse and connected."""
        found = as_json(vaults / "queries", "maturity")
        assert {band: [i["path"] for i in ideas] for band, ideas in found.items()} == {
            "isolated": ["d.md"],
            "sparse": ["a.md", "b.md", "c.md"],
            "connected": [],
        }

    def test_contradictions(self, vaults: Path) -> None:
        """contradictions NOTE gives both directions; NOTE may be a name."""
        assert as_json(vaults / "relations", "contradictions", "claim-a") == {
            "note": "claim-a.md",
            "contradicts": ["claim-b.md"],
            "contradicted_by": ["answer.md"],
        }

    def test_questions(self, vaults: Path) -> None:
        """questions lists the questions no note supports."""
        assert as_json(vaults / "relations", "questions") == [
            {"question": "q1.md", "asked_by": ["note.md"]}
        ]

    def test_edges(self, vaults: Path) -> None:
        """edges --type T lists the edges of one type; rendered words are accepted."""
        assert as_json(vaults / "queries", "edges", "--type", "supports") == [
            {"type": "supports", "from": "a.md", "to": "c.md"}
        ]
        garden = as_json(vaults / "garden", "edges", "--type", "in project")
        assert [e["type"] for e in garden] == ["in_project"]

    def test_unresolved(self, vaults: Path) -> None:
        """unresolved lists each link that reaches no file, with its line."""
        assert as_json(vaults / "relations", "unresolved") == [
            {"note": "plain.md", "line": 1, "target": "x", "form": "wikilink", "rel": "link"}
        ]

    def test_transitions(self, vaults: Path) -> None:
        """transitions NOTE gives the state and the allowed next states."""
        assert as_json(vaults / "relations", "transitions", "[[note]]") == {
            "note": "note.md",
            "state": "developing",
            "declared": "developing",
            "next": ["evergreen", "archived"],
        }


class TestText:
    @pytest.mark.parametrize(
        ("args", "expected"),
        [
            (("orphans",), "a.md"),
            (("leaves",), "c.md"),
            (("hubs", "--min", "1"), "degree 2"),
            (("maturity",), "isolated 1"),
            (("state", "permanent"), "Permanent notes (2)"),
            (("edges", "--type", "link"), "a.md → b.md"),
            (("unresolved",), "Every link resolves."),
            (("questions",), "No open question"),
            (("transitions", "a"), "may move to: developing, archived"),
            (("contradictions", "a"), "Nothing contradicts a.md"),
            (("unsourced",), "Every note that makes a claim"),
            (("claims-without-sources",), "Every claim cites a source."),
            (("sources",), "No note cites a source."),
        ],
    )
    def test_text_output(self, vaults: Path, args: tuple[str, ...], expected: str) -> None:
        """Each query prints readable text."""
        result = run(*args, "--vault", str(vaults / "queries"))
        assert result.exit_code == 0, result.output
        assert expected in result.stdout

    def test_help_defines_orphan_and_leaf(self) -> None:
        """``--help`` says what an orphan and a leaf are."""
        text = " ".join(run("--help").stdout.split())
        assert "orphan is a note with no incoming edge" in text
        assert "leaf is a note with no outgoing edge" in text

    def test_problems_warned_on_stderr(self, vaults: Path) -> None:
        """A note with broken front matter is named on stderr."""
        result = run("orphans", "--vault", str(vaults / "garden"))
        assert "warning: Notes/Broken front matter.md" in result.stderr


class TestVaultChoice:
    def test_env_vault(self, vaults: Path) -> None:
        """VAULTSYNC_VAULT_DIR names the vault when --vault is absent."""
        result = run("leaves", "--json", env={"VAULTSYNC_VAULT_DIR": str(vaults / "queries")})
        assert [i["path"] for i in json.loads(result.stdout)] == ["c.md", "d.md"]

    def test_state_vault(self, vaults: Path, tmp_path: Path) -> None:
        """Without a vault setting, the vault is <state>/vault."""
        state = tmp_path / "state"
        shutil.copytree(vaults / "queries", state / "vault")
        result = run("orphans", "--json", "--state", str(state))
        assert [i["path"] for i in json.loads(result.stdout)] == ["a.md", "d.md"]


class TestErrors:
    def test_unknown_state(self, vaults: Path) -> None:
        """An unknown state is a usage error."""
        result = run("state", "draft", "--vault", str(vaults / "queries"))
        assert isinstance(result.exception, UsageError)
        assert "fleeting" in (result.exception.hint or "")

    def test_unknown_note(self, vaults: Path) -> None:
        """An unknown NOTE is a note-reference error."""
        result = run("transitions", "nowhere", "--vault", str(vaults / "queries"))
        assert isinstance(result.exception, NoteReferenceError)

    def test_ambiguous_note(self, vaults: Path, tmp_path: Path) -> None:
        """A title two notes share is refused with the candidates."""
        vault = tmp_path / "v"
        (vault / "x").mkdir(parents=True)
        (vault / "x" / "One.md").write_text("---\ntitle: Same\n---\n")
        (vault / "Two.md").write_text("---\ntitle: Same\n---\n")
        result = run("transitions", "same", "--vault", str(vault))
        assert isinstance(result.exception, NoteReferenceError)
        assert "Two.md" in str(result.exception)

    def test_unknown_edge_type(self, vaults: Path) -> None:
        """An edge type neither in the vocabulary nor in the vault is a usage error."""
        result = run("edges", "--type", "frobs", "--vault", str(vaults / "queries"))
        assert isinstance(result.exception, UsageError)

    def test_missing_vault(self, tmp_path: Path) -> None:
        """A vault folder that does not exist is a usage error."""
        result = run("orphans", "--vault", str(tmp_path / "none"))
        assert isinstance(result.exception, UsageError)

"""Real vaults: third-party corpora, and a vault synced from the demo store plus user notes.

Corpora (``../shared/corpora``) are read in place with ``cache=False`` (nothing is written
there).  Every link the parsers find is accounted for: it reaches a file of the corpus, or it is
listed as unresolved; the figures are those of ``corpora/README.md``.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import DEMO_STORE, corpus
from vaultsync.cli.knowledge import query
from vaultsync.cli.main import cli
from vaultsync.core.notes import read_front_matter, walk_vault
from vaultsync.knowledge import queries as q
from vaultsync.knowledge.idea import LinkForm
from vaultsync.knowledge.model import KnowledgeModel
from vaultsync.knowledge.scan import load_model
from vaultsync.links.mdlinks import DestKind, classify_destination, parse_markdown_links
from vaultsync.links.wikilinks import parse_wikilinks

ROOT = Path(__file__).resolve().parents[2]


def accounted(vault: Path) -> tuple[KnowledgeModel, Counter[tuple[str, bool]]]:
    """The model, after checking that every link found is resolved to a real file or listed."""
    model = load_model(vault, cache=False).model
    files = set(walk_vault(vault).files)
    counts: Counter[tuple[str, bool]] = Counter()
    for path in model.ideas:
        text = (vault / path).read_text(encoding="utf-8")
        body = text[read_front_matter(text).body_start :]
        found = list(parse_wikilinks(body)) + [
            link
            for link in parse_markdown_links(body)
            if classify_destination(link.dest) is DestKind.PATH
        ]
        links = [link for link in model.links(path) if link.form is not LinkForm.PROPERTY]
        assert len(links) == len(found), path
        for link in links:
            assert link.path is None or link.path in files
            counts[link.form.value, link.path is not None] += 1
    assert list(model.problems()) == []
    return model, counts


class TestFoam:
    def test_every_link_accounted(self) -> None:
        """foam-docs: 199 wikilinks outside code, 197 resolve; every link is accounted for."""
        _, counts = accounted(corpus("foam-docs") / "docs")
        assert counts["wikilink", True] == 197
        assert counts["wikilink", False] == 2

    def test_broken_ones_listed(self) -> None:
        """The two broken wikilinks are the unresolved ones."""
        model = load_model(corpus("foam-docs") / "docs", cache=False).model
        broken = {link.target for link in model.unresolved() if link.form is LinkForm.WIKILINK}
        assert broken == {"publishing", "cli-grep"}

    def test_reference_definitions_resolve(self) -> None:
        """The 180 link reference definitions to .md files all resolve."""
        model = load_model(corpus("foam-docs") / "docs", cache=False).model
        resolved = [
            link
            for link in model.links()
            if link.form is LinkForm.MARKDOWN and link.target.endswith(".md") and link.path
        ]
        assert len(resolved) >= 180


EXPORT_VAULTS = (
    "main-samples",
    "single-file",
    "infinite-recursion",
    "postprocessors",
    "filter-by-tags",
    "non-ascii",
    "start-at",
    "same-filename-different-directories",
)


class TestObsidianExport:
    @pytest.fixture
    def inputs(self) -> Path:
        return corpus("obsidian-export-testdata") / "tests" / "testdata" / "input"

    def test_every_link_accounted(self, inputs: Path) -> None:
        """The 8 input vaults: 48 wikilinks and embeds, one unresolved (non-existing note)."""
        totals: Counter[tuple[str, bool]] = Counter()
        for name in EXPORT_VAULTS:
            totals.update(accounted(inputs / name)[1])
        wiki = {key: n for key, n in totals.items() if key[0] in ("wikilink", "embed")}
        assert sum(wiki.values()) == 48
        assert wiki.get(("wikilink", False), 0) + wiki.get(("embed", False), 0) == 1

    def test_same_filename_different_directories(self, inputs: Path) -> None:
        """``[[dir1/Note]]`` and ``[[dir2/Note]]`` reach their own folders."""
        model = load_model(inputs / "same-filename-different-directories", cache=False).model
        reached = {link.target: link.path for link in model.links()}
        assert all(path is not None for path in reached.values())

    def test_embeds_reach_attachments(self, inputs: Path) -> None:
        """Image and PDF embeds resolve to the files but make no edge."""
        model = load_model(inputs / "main-samples", cache=False).model
        attachments = {
            link.path
            for link in model.links()
            if link.path is not None and not link.path.endswith(".md")
        }
        targets = {edge.target for edges in model.outgoing.values() for edge in edges}
        assert attachments
        assert not attachments & targets


USER_NOTES = {
    "Notes/Orbital review.md": (
        '---\nstate: permanent\nsources:\n  - "[[Projects/orbital]]"\n---\n'
        "# Orbital review\n\n"
        "- claim:: orbital needs idempotent producers\n"
        "- supports:: [[orbital]]\n"
        "- question:: [[Why do batches reorder]]\n"
    ),
    "Notes/Why do batches reorder.md": "An open question.\n",
    "Notes/Skeptic.md": (
        "---\nstate: 🌱 fleeting\n---\n"
        "[contradicts:: [[Orbital review]]] — I doubt it.\n\nclaim:: unproven\n"
    ),
}


def synced_vault(target: Path) -> Path:
    """The demo store synced into ``target`` by ``vaultsync sync`` (in-process), plus USER_NOTES."""
    state = target.parent / "state"
    shutil.copytree(DEMO_STORE, state)
    done = CliRunner().invoke(cli, ["sync", "--state", str(state), "--vault", str(target)])
    if done.exit_code != 0:
        pytest.fail(f"vaultsync sync failed: {done.stderr}")
    for rel, text in USER_NOTES.items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text, encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synced demo vault with the user notes."""
    return synced_vault(tmp_path_factory.mktemp("synced") / "vault")


@pytest.fixture(scope="module")
def model(synced: Path) -> KnowledgeModel:
    """The model of the synced demo vault with the user notes."""
    return load_model(synced).model


def ask(vault: Path, *args: str) -> Any:
    """One ``vaultsync query`` subcommand's JSON answer."""
    result = CliRunner().invoke(query, [*args, "--vault", str(vault), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


class TestSyncedDemoQueries:
    def test_orphans_and_leaves(self, synced: Path) -> None:
        """Home and the skeptic have no backlinks; the open question links nowhere."""
        orphans = {i["path"] for i in ask(synced, "orphans")}
        leaves = {i["path"] for i in ask(synced, "leaves")}
        assert {"Home.md", "Notes/Skeptic.md"} <= orphans
        assert "Notes/Why do batches reorder.md" in leaves

    def test_hubs_and_maturity(self, synced: Path) -> None:
        """orbital is a hub; every note sits in one maturity band."""
        assert "Projects/orbital.md" in {i["path"] for i in ask(synced, "hubs", "--min", "10")}
        bands = ask(synced, "maturity")
        notes = sum(len(ideas) for ideas in bands.values())
        assert notes == len(ask(synced, "state", "fleeting")) + 1  # the review is permanent

    def test_claims_queries(self, synced: Path) -> None:
        """unsourced, claims-without-sources and sources agree on the user notes."""
        assert [i["path"] for i in ask(synced, "unsourced")] == ["Notes/Skeptic.md"]
        assert ask(synced, "claims-without-sources") == [
            {"path": "Notes/Skeptic.md", "title": "Skeptic", "claim": "unproven"}
        ]
        assert ask(synced, "sources") == [
            {"kind": "link", "ref": "Projects/orbital.md", "count": 1}
        ]

    def test_relation_queries(self, synced: Path) -> None:
        """contradictions, questions and edges answer across user and engine notes."""
        assert ask(synced, "contradictions", "Orbital review")["contradicted_by"] == [
            "Notes/Skeptic.md"
        ]
        assert [q["question"] for q in ask(synced, "questions")] == [
            "Notes/Why do batches reorder.md"
        ]
        assert ask(synced, "edges", "--type", "supports") == [
            {"type": "supports", "from": "Notes/Orbital review.md", "to": "Projects/orbital.md"}
        ]
        assert len(ask(synced, "edges", "--type", "in project")) > 10

    def test_unresolved_and_transitions(self, synced: Path) -> None:
        """Unresolved links carry note and line; transitions follow the machine."""
        unresolved = ask(synced, "unresolved")
        assert unresolved
        assert all(link["note"] and link["line"] >= 1 for link in unresolved)
        assert ask(synced, "transitions", "Notes/Orbital review.md")["next"] == [
            "developing",
            "archived",
        ]


class TestSyncedDemo:
    def test_every_note_is_an_idea(self, model: KnowledgeModel) -> None:
        """Engine notes and user notes are all ideas; none has a front-matter problem."""
        assert "Home.md" in model.ideas
        assert set(USER_NOTES) <= set(model.ideas)
        assert list(model.problems()) == []

    def test_engine_relations_read(self, model: KnowledgeModel) -> None:
        """The engine's relations (in project, part of, links to…) become typed edges."""
        assert {"in_project", "part_of", "links_to", "mentions", "same_day"} <= set(model.by_type)
        assert model.ideas["Projects/orbital.md"].maturity.in_degree > 10

    def test_user_relations_join_engine_notes(self, model: KnowledgeModel) -> None:
        """A user's ``supports:: [[orbital]]`` reaches the engine's project note."""
        assert ("supports", "Projects/orbital.md") in {
            (e.type, e.target) for e in model.edges_from("Notes/Orbital review.md")
        }

    def test_contradictions_and_questions(self, model: KnowledgeModel) -> None:
        """Skeptic contradicts the review; the review's question is unanswered."""
        found = q.contradictions(model, "Notes/Orbital review.md")
        assert [e.source for e in found] == ["Notes/Skeptic.md"]
        assert [x.path for x in q.unanswered_questions(model)] == [
            "Notes/Why do batches reorder.md"
        ]

    def test_claims(self, model: KnowledgeModel) -> None:
        """The review's claim is sourced by the project note; the skeptic's is not."""
        assert [i.path for i in q.unsourced(model)] == ["Notes/Skeptic.md"]
        assert ("Projects/orbital.md", 1) in {
            (c.source.ref, c.count) for c in q.sources_by_reference_count(model)
        }

    def test_engine_notes_make_no_claims(self, model: KnowledgeModel) -> None:
        """Engine notes (their ``source`` is an origin path) stay out of the claims accounting."""
        assert all(not i.claims for i in model.ideas.values() if i.kind is not None)

    def test_states(self, model: KnowledgeModel) -> None:
        """User states are read (emoji tolerated); engine notes declare none and are fleeting."""
        assert model.ideas["Notes/Orbital review.md"].state.value == "permanent"
        assert model.ideas["Notes/Skeptic.md"].state.value == "fleeting"
        engine = [i for i in model.ideas.values() if i.kind is not None]
        assert engine
        assert all(i.declared_state is None and i.state.value == "fleeting" for i in engine)

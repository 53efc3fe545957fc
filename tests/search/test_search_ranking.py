"""Reading the index: ranking, filters, snippets, linked notes, a note's links, the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from vaults import age, engine_note, write_vault
from vaultsync.search.index import update_index
from vaultsync.search.model import SearchQuery, SearchResult
from vaultsync.search.reader import IndexReader, NoteNotFound


def indexed(root: Path, notes: dict[str, str], engine: dict[str, str] | None = None) -> IndexReader:
    write_vault(root, notes, engine=engine)
    for rel in notes:
        age(root / rel)
    update_index(root)
    return IndexReader(root)


def search(reader: IndexReader, text: str, **kwargs: object) -> SearchResult:
    return reader.search(SearchQuery(text=text, **kwargs))  # type: ignore[arg-type]


def paths(result: SearchResult) -> list[str]:
    return [hit.document.path for hit in result.hits]


class TestRanking:
    def test_title_beats_body(self, tmp_path: Path) -> None:
        """A note titled with the word ranks above one that only mentions it."""
        reader = indexed(
            tmp_path,
            {"a.md": "# Notes\n\nsomething about kafka here", "b.md": "# Kafka\n\nother things"},
        )
        assert paths(search(reader, "kafka")) == ["b.md", "a.md"]

    def test_aliases_and_tags_beat_body(self, tmp_path: Path) -> None:
        """An alias or a tag weighs more than the body."""
        reader = indexed(
            tmp_path,
            {
                "a.md": "# One\n\nzebra zebra",
                "b.md": "---\naliases: [zebra]\n---\n# Two\n",
                "c.md": "---\ntags: [zebra]\n---\n# Three\n",
            },
        )
        assert paths(search(reader, "zebra"))[-1] == "a.md"

    def test_path_beats_body(self, tmp_path: Path) -> None:
        """A word in the folder path weighs more than the same word in a body."""
        reader = indexed(tmp_path, {"a.md": "# A\n\nmango", "mango/b.md": "# B\n\nother"})
        assert paths(search(reader, "mango")) == ["mango/b.md", "a.md"]

    def test_text_mode_matches_words_as_typed(self, tmp_path: Path) -> None:
        """Text mode does not stem: ``restarting`` does not find ``restarts``."""
        reader = indexed(tmp_path, {"a.md": "# A\n\nthe pod restarts in a loop", "b.md": "# B\n"})
        assert paths(search(reader, "restarting")) == []

    def test_stable_tie_break(self, tmp_path: Path) -> None:
        """Notes with equal scores always come in path order."""
        notes = {f"{name}.md": "# Same\n\nsame words" for name in ("c", "a", "b")}
        reader = indexed(tmp_path, notes)
        assert paths(search(reader, "same")) == ["a.md", "b.md", "c.md"]

    def test_exact_title_or_alias_first(self, tmp_path: Path) -> None:
        """A note whose title (or alias) is the query comes first, however BM25 scores it."""
        reader = indexed(
            tmp_path,
            {
                "Projects/orbital.md": "# orbital\n\nIngest gateway.",
                "a.md": "# Retry budget for orbital\n\norbital orbital orbital",
                "b.md": "---\naliases: [Orbital]\n---\n# Something else\n",
            },
        )
        assert paths(search(reader, "Orbital"))[:2] == ["Projects/orbital.md", "b.md"]

    def test_scores_descend(self, tmp_path: Path) -> None:
        """Scores are positive and descend with rank."""
        reader = indexed(tmp_path, {"a.md": "# Kafka\n", "b.md": "kafka", "c.md": "x kafka y z w"})
        scores = [hit.score for hit in search(reader, "kafka").hits]
        assert scores == sorted(scores, reverse=True)
        assert all(score > 0 for score in scores)


class TestFilters:
    def test_kind_filter_applies_before_the_limit(self, tmp_path: Path) -> None:
        """``--kind`` is part of the query: a limit of 1 still finds the one fact."""
        reader = indexed(
            tmp_path,
            {
                "Facts/f.md": engine_note("fact:" + "a" * 24, "fact", "a fact", "otter"),
                **{f"u{i}.md": f"# Otter {i}\n\notter otter" for i in range(5)},
            },
            engine={"Facts/f.md": "fact:" + "a" * 24},
        )
        result = search(reader, "otter", kinds=("fact",), limit=1)
        assert paths(result) == ["Facts/f.md"]

    def test_user_kind(self, tmp_path: Path) -> None:
        """``user`` selects the notes people wrote."""
        reader = indexed(
            tmp_path,
            {"Facts/f.md": engine_note("fact:" + "b" * 24, "fact", "otter"), "mine.md": "otter"},
            engine={"Facts/f.md": "fact:" + "b" * 24},
        )
        assert paths(search(reader, "otter", kinds=("user",))) == ["mine.md"]

    def test_folder_filter(self, tmp_path: Path) -> None:
        """``--folder`` keeps notes under that folder only, not a folder sharing its prefix."""
        reader = indexed(tmp_path, {"Docs/a.md": "heron", "Docs2/b.md": "heron", "c.md": "heron"})
        assert paths(search(reader, "heron", folder="/Docs/")) == ["Docs/a.md"]

    def test_limit(self, tmp_path: Path) -> None:
        """No more hits than the limit."""
        reader = indexed(tmp_path, {f"n{i}.md": "lynx" for i in range(8)})
        assert len(search(reader, "lynx", limit=3).hits) == 3


class TestSnippets:
    def test_marks_the_hits_in_the_body(self, tmp_path: Path) -> None:
        """The snippet comes from the body around the hits, which are marked ``**…**``."""
        body = "# Title\n\n" + "lorem " * 40 + "the walrus sat here " + "ipsum " * 40
        reader = indexed(tmp_path, {"a.md": body})
        (hit,) = search(reader, "walrus").hits
        assert "**walrus**" in hit.snippet
        assert hit.snippet.startswith("…")
        assert "\n" not in hit.snippet

    def test_accents(self, tmp_path: Path) -> None:
        """``creme`` finds and marks ``crème``."""
        reader = indexed(tmp_path, {"a.md": "une crème brûlée"})
        (hit,) = search(reader, "creme brulee").hits
        assert "**crème**" in hit.snippet


class TestLinkedNotes:
    def test_linked_notes_with_why(self, tmp_path: Path) -> None:
        """Notes linked with the best hits follow, each saying how, none of them a hit."""
        reader = indexed(
            tmp_path,
            {
                "gw.md": "# Gateway\n\nThe gateway uses [[setup]].",
                "setup.md": "# Setup\n\nInstall it.",
                "index.md": "# Index\n\n- [[gw]]",
                "other.md": "# Other\n\ngateway too, see [[gw]]",
            },
        )
        result = search(reader, "gateway")
        assert set(paths(result)) == {"gw.md", "other.md"}
        why = {n.document.path: n.why for n in result.linked}
        assert why == {"setup.md": "linked from gw.md", "index.md": "links to gw.md"}

    def test_at_most_six(self, tmp_path: Path) -> None:
        """No more than six linked notes are shown."""
        links = " ".join(f"[[t{i}]]" for i in range(10))
        notes = {"hub.md": f"# Puffin\n\n{links}", **{f"t{i}.md": f"# T{i}" for i in range(10)}}
        reader = indexed(tmp_path, notes)
        assert len(search(reader, "puffin").linked) == 6

    def test_no_hits_no_linked(self, tmp_path: Path) -> None:
        """Nothing found: no linked notes either."""
        reader = indexed(tmp_path, {"a.md": "[[b]]", "b.md": "x"})
        result = search(reader, "nonexistentword")
        assert (result.hits, result.linked) == ((), ())


class TestNoteLinks:
    def test_outlinks_and_backlinks(self, tmp_path: Path) -> None:
        """A note's links in and out, with type and context, one per (note, type), no self-links."""
        reader = indexed(
            tmp_path,
            {
                "a.md": "See [[b]] and [[b]] and [b again](b.md) and [[a]] and [[#Top]].",
                "b.md": "Back to ![[a]].",
            },
        )
        view = reader.links("a.md")
        assert [(link.other.path, link.link_type) for link in view.outlinks] == [
            ("b.md", "wikilink"),
            ("b.md", "markdown"),
        ]
        assert view.outlinks[0].context == "See [[b]] and [[b]] and [b again](…"
        assert [(link.other.path, link.link_type) for link in view.backlinks] == [("b.md", "embed")]

    def test_typed_links(self, tmp_path: Path) -> None:
        """An engine note's ``## Links`` lines are typed by their relation."""
        fact = engine_note("fact:" + "c" * 24, "fact", "F", links="- in project → [[Projects/p|p]]")
        reader = indexed(
            tmp_path,
            {"Facts/f.md": fact, "Projects/p.md": engine_note("project:p", "project", "p")},
            engine={"Facts/f.md": "fact:" + "c" * 24, "Projects/p.md": "project:p"},
        )
        (link,) = reader.links("project:p").backlinks
        assert (link.other.id, link.link_type, link.context) == (
            "fact:" + "c" * 24,
            "in_project",
            "in project → [[Projects/p|p]]",
        )

    def test_unknown_note(self, tmp_path: Path) -> None:
        """An id or path no note has is ``NoteNotFound``."""
        reader = indexed(tmp_path, {"a.md": "x"})
        with pytest.raises(NoteNotFound):
            reader.links("nope")


class TestRegistry:
    def test_pages_and_total(self, tmp_path: Path) -> None:
        """Pages come sorted by path, with the total of notes passing the filters."""
        reader = indexed(tmp_path, {f"n{i}.md": "x" for i in range(5)})
        docs, total = reader.documents(limit=2, offset=2)
        assert ([d.path for d in docs], total) == (["n2.md", "n3.md"], 5)

    def test_entry_fields(self, tmp_path: Path) -> None:
        """Each entry has id, path, title, kind, SHA-256 and size."""
        reader = indexed(tmp_path, {"Inbox/n.md": "---\ntags: [a]\n---\n# Hello\n"})
        (doc,), _ = reader.documents()
        data = (tmp_path / "Inbox/n.md").read_bytes()
        assert (doc.id, doc.title, doc.kind, doc.tags, doc.size) == (
            "vault:Inbox/n.md",
            "Hello",
            "user",
            ("a",),
            len(data),
        )
        assert len(doc.content_hash) == 64

    def test_document_by_id_path_or_stem(self, tmp_path: Path) -> None:
        """A note is found by id, by vault path, or by path without ``.md``, with its text."""
        reader = indexed(tmp_path, {"Inbox/n.md": "---\ntitle: T\n---\nbody text\n"})
        for ref in ("vault:Inbox/n.md", "Inbox/n.md", "Inbox/n", "/Inbox/n.md"):
            doc, body = reader.document(ref)
            assert (doc.path, body) == ("Inbox/n.md", "body text\n")

"""One note → an idea in the model: links, relations, lifecycle, claims, engine notes."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.knowledge.claims import Source
from vaultsync.knowledge.idea import LinkForm, parse_note
from vaultsync.knowledge.lifecycle import State
from vaultsync.knowledge.model import KnowledgeModel


def model_of(tree: dict[str, str], attachments: Iterable[str] = ()) -> KnowledgeModel:
    """The model of a vault given as ``{path: text}`` (plus attachment paths)."""
    notes = {path: parse_note(text.encode()) for path, text in tree.items()}
    return KnowledgeModel.build(notes, [*tree, *attachments])


def edges(model: KnowledgeModel, source: str) -> set[tuple[str, str]]:
    return {(edge.type, edge.target) for edge in model.edges_from(source)}


class TestResolution:
    def test_exact_path_wins(self) -> None:
        """``[[b/Note]]`` is ``b/Note.md`` even with a same-named note beside the source."""
        model = model_of({"a/x.md": "[[b/Note]]", "a/b/Note.md": "", "b/Note.md": ""})
        assert edges(model, "a/x.md") == {("link", "b/Note.md")}

    def test_same_folder_then_shortest(self) -> None:
        """A bare name goes to the source's folder first, else to the shortest path."""
        tree = {"a/x.md": "[[Note]]", "a/Note.md": "", "zz/y.md": "[[Note]]", "b/Note.md": ""}
        model = model_of({**tree, "ccc/ddd/Note.md": ""})
        assert edges(model, "a/x.md") == {("link", "a/Note.md")}
        assert edges(model, "zz/y.md") == {("link", "a/Note.md")}

    def test_case_insensitive(self) -> None:
        """``[[LOG]]`` reaches ``Log.md``."""
        assert edges(model_of({"x.md": "[[LOG]]", "Log.md": ""}), "x.md") == {("link", "Log.md")}

    def test_heading_block_alias_stripped(self) -> None:
        """Heading, block and alias do not change the target."""
        model = model_of({"x.md": "[[N#Part]] [[N#^b1]] [[N|shown]] [[N.md]]", "N.md": ""})
        assert edges(model, "x.md") == {("link", "N.md")}
        assert [link.path for link in model.links("x.md")] == ["N.md"] * 4

    def test_unresolved_listed_not_an_edge(self) -> None:
        """An unresolved link makes no edge and is listed with its line."""
        model = model_of({"x.md": "one\n[[Ghost]]"})
        assert model.edges_from("x.md") == ()
        (link,) = model.unresolved()
        assert (link.source, link.target, link.line) == ("x.md", "Ghost", 2)

    def test_attachment_resolves_without_edge(self) -> None:
        """``![[img.png]]`` resolves to the image but joins no note."""
        model = model_of({"x.md": "![[img.png]]"}, ["img.png"])
        (link,) = model.links("x.md")
        assert (link.path, link.form) == ("img.png", LinkForm.EMBED)
        assert model.edges_from("x.md") == ()

    def test_markdown_links(self) -> None:
        """A Markdown link to a note is a link (decoded, fragment cut); URLs are not."""
        text = "[a](My%20Note.md#part) [b](https://example.com) [c](mailto:x@y.z)"
        model = model_of({"x.md": text, "sub/My Note.md": ""})
        assert edges(model, "x.md") == {("link", "sub/My Note.md")}
        assert len(list(model.links("x.md"))) == 1

    def test_links_in_code_ignored(self) -> None:
        """Links in fenced or inline code are not links."""
        model = model_of({"x.md": "`[[A]]`\n```\n[[B]]\n```\n", "A.md": "", "B.md": ""})
        assert list(model.links("x.md")) == []

    def test_self_link_dropped(self) -> None:
        """``[[#Heading]]`` and a link to itself resolve but make no edge."""
        model = model_of({"x.md": "[[#Top]] [[x]]"})
        assert [link.path for link in model.links("x.md")] == ["x.md", "x.md"]
        assert model.edges_from("x.md") == ()

    def test_property_links(self) -> None:
        """A wikilink in any property is a link (Obsidian counts them)."""
        model = model_of({"x.md": '---\nup: "[[P]]"\n---\n', "P.md": ""})
        assert edges(model, "x.md") == {("link", "P.md")}


class TestRelations:
    def test_front_matter_relation(self) -> None:
        """``contradicts: ["[[B]]"]`` is a contradicts edge."""
        model = model_of({"a.md": '---\ncontradicts: ["[[B]]"]\n---\n', "B.md": ""})
        assert edges(model, "a.md") == {("contradicts", "B.md")}

    def test_inline_relation(self) -> None:
        """``supports:: [[C]]`` is a supports edge."""
        assert edges(model_of({"a.md": "supports:: [[C]]", "C.md": ""}), "a.md") == {
            ("supports", "C.md")
        }

    def test_bracketed_relation_keeps_its_link(self) -> None:
        """``[supports:: [[X]]]`` gives the link to X (the peer loses it)."""
        model = model_of({"a.md": "Because [supports:: [[X]]].", "X.md": ""})
        assert edges(model, "a.md") == {("supports", "X.md")}

    def test_key_spellings(self) -> None:
        """Keys ignore case and ``_``/``-``: ``Inspired_By::`` is inspired-by."""
        assert edges(model_of({"a.md": "Inspired_By:: [[X]]", "X.md": ""}), "a.md") == {
            ("inspired-by", "X.md")
        }

    def test_typed_beats_plain_and_duplicates_collapse(self) -> None:
        """A typed target is not also a plain link; repeats collapse."""
        text = '---\nsupports: ["[[B]]", "[[B]]"]\n---\nSee [[B]].\nsupports:: [[B]]\n'
        assert edges(model_of({"a.md": text, "B.md": ""}), "a.md") == {("supports", "B.md")}

    def test_several_types_to_one_target(self) -> None:
        """A target may carry several types."""
        text = "supports:: [[B]]\nexpands:: [[B]]"
        assert edges(model_of({"a.md": text, "B.md": ""}), "a.md") == {
            ("supports", "B.md"),
            ("expands", "B.md"),
        }

    def test_unknown_key_is_plain_link(self) -> None:
        """A link in a field outside the vocabulary is a plain link."""
        assert edges(model_of({"a.md": "related:: [[B]]", "B.md": ""}), "a.md") == {
            ("link", "B.md")
        }

    def test_text_value_is_no_relation(self) -> None:
        """``question:: why?`` names no note: no edge, no unresolved link."""
        model = model_of({"a.md": "question:: why does it fail?"})
        assert (model.edges_from("a.md"), list(model.links())) == ((), [])

    def test_relation_in_code_ignored(self) -> None:
        """A relation field inside code is not read."""
        model = model_of({"a.md": "```\nsupports:: [[B]]\n```", "B.md": ""})
        assert model.edges_from("a.md") == ()


ENGINE = """---
vaultsync_id: "fact:1"
kind: "fact"
source: "docs/x.md"
---

# A fact

Text naming [[Projects/orbital|orbital]].

## Links

- in project → [[Projects/orbital|orbital]]
- contradicts → [[Notes/Other|Other]] · linked by you — a note
- inspired by → [[Notes/Idea|Idea]]
"""


class TestEngineNotes:
    def test_links_section_relations(self) -> None:
        """``- in project → [[…]]`` is an ``in_project`` edge; vocabulary names stay semantic."""
        tree = {
            "Facts/f.md": ENGINE,
            "Projects/orbital.md": "",
            "Notes/Other.md": "",
            "Notes/Idea.md": "",
        }
        model = model_of(tree)
        assert edges(model, "Facts/f.md") == {
            ("in_project", "Projects/orbital.md"),
            ("contradicts", "Notes/Other.md"),
            ("inspired-by", "Notes/Idea.md"),
        }
        assert model.ideas["Facts/f.md"].kind == "fact"

    def test_heading_per_relation(self) -> None:
        """A ``### part of`` heading gives its list items that relation."""
        text = (
            '---\nvaultsync_id: "x"\n---\n'
            "## Links\n\n### part of\n\n- [[P]]\n\n### about\n- [[Q]]\n"
        )
        model = model_of({"x.md": text, "P.md": "", "Q.md": ""})
        assert edges(model, "x.md") == {("part_of", "P.md"), ("about", "Q.md")}

    def test_engine_source_is_not_evidence(self) -> None:
        """The engine's ``source`` property (a document's origin) makes no claim."""
        model = model_of({"Facts/f.md": ENGINE})
        assert model.ideas["Facts/f.md"].claims == ()

    def test_user_links_section_is_plain(self) -> None:
        """A person's own ``## Links`` list is plain links (only engine notes are read so)."""
        model = model_of({"x.md": "## Links\n\n- about → [[P]]\n", "P.md": ""})
        assert edges(model, "x.md") == {("link", "P.md")}


class TestIdea:
    def test_title_property_else_file_name(self) -> None:
        """The title is the ``title`` property, else the file name."""
        model = model_of({"a/One.md": "---\ntitle: First\n---\n", "a/Two.md": ""})
        assert [i.title for i in model.ideas.values()] == ["First", "Two"]

    def test_state(self) -> None:
        """The state comes from front matter, else ``state::``; unknown or none is fleeting."""
        model = model_of(
            {
                "a.md": "---\nstate: 📚 Evergreen\n---\n",
                "b.md": "state:: literature",
                "c.md": "---\nstate: draft\n---\n",
                "d.md": "",
            }
        )
        states = {path: idea.state for path, idea in model.ideas.items()}
        assert states == {
            "a.md": State.EVERGREEN,
            "b.md": State.LITERATURE,
            "c.md": State.FLEETING,
            "d.md": State.FLEETING,
        }
        assert model.ideas["c.md"].declared_state == "draft"

    def test_created(self) -> None:
        """``created`` (else ``date``) is kept as text."""
        model = model_of({"a.md": "---\ncreated: 2024-03-01\n---\n", "b.md": "---\ndate: x\n---\n"})
        assert [i.created for i in model.ideas.values()] == ["2024-03-01", "x"]

    def test_degrees_count_distinct_neighbours(self) -> None:
        """A note linked both ways counts once in ``degree``."""
        model = model_of({"a.md": "[[b]] supports:: [[c]]", "b.md": "[[a]]", "c.md": ""})
        signals = model.ideas["a.md"].maturity
        assert (signals.in_degree, signals.out_degree, signals.degree) == (1, 2, 2)

    def test_bad_front_matter_is_a_problem(self) -> None:
        """Bad YAML is reported and the body is still read."""
        model = model_of({"a.md": "---\ntitle: [x\n---\n[[b]]", "b.md": ""})
        assert edges(model, "a.md") == {("link", "b.md")}
        ((path, problem),) = model.problems()
        assert path == "a.md"
        assert "YAML" in problem

    def test_bad_utf8_is_a_problem(self) -> None:
        """Invalid UTF-8 is replaced and reported."""
        parse = parse_note(b"abc \xff [[b]]")
        assert parse.problems
        assert [link.target for link in parse.links] == ["b"]


class TestClaims:
    def test_explicit_claims_share_note_sources(self) -> None:
        """Each explicit claim carries the note-level sources."""
        text = '---\nclaim: ["X is true", "Y follows"]\nsources: ["[[A]]"]\n---\n'
        model = model_of({"n.md": text, "A.md": ""})
        claims = model.ideas["n.md"].claims
        assert [(c.text, c.sources) for c in claims] == [
            ("X is true", (Source("link", "A.md"),)),
            ("Y follows", (Source("link", "A.md"),)),
        ]

    def test_sources_only_make_one_claim(self) -> None:
        """Only sources: one claim named after the note, links and text kept."""
        text = '---\nsources: ["[[A]]", "url:z"]\n---\n'
        (claim,) = model_of({"notes/idea.md": text, "A.md": ""}).ideas["notes/idea.md"].claims
        assert (claim.text, claim.sources) == (
            "idea",
            (Source("link", "A.md"), Source("text", "url:z")),
        )

    def test_neither_makes_no_claim(self) -> None:
        """A note with neither claim nor source has no claims."""
        assert model_of({"n.md": "---\nauthor: me\n---\n"}).ideas["n.md"].claims == ()

    def test_dedupe_front_matter_and_inline(self) -> None:
        """A source in both front matter and inline counts once; text case-insensitively."""
        text = '---\nsources: ["[[A]]", "DOI:1"]\n---\nsource:: [[A]]\nsource:: doi:1\n'
        (claim,) = model_of({"n.md": text, "A.md": ""}).ideas["n.md"].claims
        assert claim.sources == (Source("link", "A.md"), Source("text", "DOI:1"))

    def test_all_unresolved_sources_give_no_claim(self) -> None:
        """Sources that are all unresolved links make no synthesized claim."""
        assert model_of({"n.md": "source:: [[Ghost]]"}).ideas["n.md"].claims == ()

    def test_same_line_source_binds_to_its_claim(self) -> None:
        """``[claim:: c1] [source:: [[S]]]`` sources c1 only; a claim alone stays sourceless."""
        text = "- [claim:: c1] [source:: [[S]]]\n- claim:: c2\n"
        claims = model_of({"n.md": text, "S.md": ""}).ideas["n.md"].claims
        assert [(c.text, len(c.sources)) for c in claims] == [("c1", 1), ("c2", 0)]

    def test_inline_claim_without_source(self) -> None:
        """An explicit claim with no source is a sourceless claim."""
        (claim,) = model_of({"n.md": "claim:: bare claim"}).ideas["n.md"].claims
        assert (claim.text, claim.sources) == ("bare claim", ())


class TestNeverRaises:
    @settings(max_examples=200)
    @given(st.binary(max_size=300))
    def test_any_bytes(self, data: bytes) -> None:
        """Any bytes parse into a model without raising."""
        model = KnowledgeModel.build({"x.md": parse_note(data)}, ["x.md"])
        assert set(model.ideas) == {"x.md"}

    @settings(max_examples=200)
    @given(st.text(alphabet=st.sampled_from(list("-:[]()#|!`>\n abx*\"'")), max_size=200))
    def test_any_markdown(self, text: str) -> None:
        """Any Markdown-ish text parses; every link is resolved or listed as unresolved."""
        model = KnowledgeModel.build({"x.md": parse_note(text.encode())}, ["x.md", "a.md"])
        for link in model.links():
            assert link.path in {None, "x.md", "a.md"}

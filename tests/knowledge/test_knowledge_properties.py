"""Front matter as the knowledge model reads it: problems in its words, property strings."""

from __future__ import annotations

from vaultsync.knowledge.properties import property_strings, property_text, read_properties


class TestSplit:
    def test_body_after_block(self) -> None:
        """The body starts after the closing line; its line number is known."""
        text = "---\ntitle: T\n---\nbody"
        props = read_properties(text)
        assert props.front.values == {"title": "T"}
        assert text[props.front.body_start :] == "body"
        assert props.front.body_line == 4

    def test_no_closing_line(self) -> None:
        """Without a closing ``---`` the whole text is body."""
        props = read_properties("---\ntitle: T\nbody")
        assert (props.front.values, props.front.body_start, props.problem) == ({}, 0, None)

    def test_bom(self) -> None:
        """A BOM before the block is ignored."""
        assert read_properties("\ufeff---\na: 1\n---\n").front.values == {"a": 1}

    def test_not_first_line(self) -> None:
        """A ``---`` block that does not open the note is a thematic break, not front matter."""
        assert read_properties("x\n---\na: 1\n---\n").front.values == {}

    def test_keys_case_folded(self) -> None:
        """``Title`` and ``title`` are one property; the first wins."""
        props = read_properties("---\nTitle: A\ntitle: B\n---\n")
        assert props.front.values == {"title": "A"}

    def test_yaml_1_2(self) -> None:
        """``yes`` is a key and a string, not a boolean (YAML 1.2, as the search index reads it)."""
        assert read_properties("---\nyes: on\n---\n").front.values == {"yes": "on"}


class TestProblems:
    def test_bad_yaml(self) -> None:
        """Bad YAML gives no properties and a problem with its place; the block is not body."""
        text = "---\ntitle: [unclosed\n---\nbody"
        props = read_properties(text)
        assert props.front.values == {}
        assert props.problem is not None
        assert "not usable YAML (line 3, column 1:" in props.problem
        assert text[props.front.body_start :] == "body"

    def test_list_front_matter(self) -> None:
        """A list front matter is reported, not silently dropped."""
        props = read_properties("---\n- a\n- b\n---\n")
        assert props.front.values == {}
        assert props.problem is not None
        assert "a list, not a mapping" in props.problem

    def test_empty_block(self) -> None:
        """An empty block is no problem."""
        assert read_properties("---\n---\nbody").problem is None


class TestStrings:
    def test_unquoted_wikilink(self) -> None:
        """``supports: [[X]]`` (YAML reads a nested list) counts as the text ``[[X]]``."""
        values = read_properties("---\nsupports: [[X]]\n---\n").front.values
        assert list(property_strings(values["supports"])) == ["[[X]]"]

    def test_unquoted_wikilinks_in_block_list(self) -> None:
        """Each unquoted ``- [[X]]`` item counts as a link text."""
        values = read_properties("---\nsupports:\n  - [[A]]\n  - [[B]]\n---\n").front.values
        assert list(property_strings(values["supports"])) == ["[[A]]", "[[B]]"]

    def test_scalars(self) -> None:
        """Numbers and dates become text; booleans, nulls and mappings do not."""
        block = "---\na: [1, 2024-01-02, true, null, {b: c}, x]\n---\n"
        values = read_properties(block).front.values
        assert list(property_strings(values["a"])) == ["1", "2024-01-02", "x"]

    def test_alias_bomb_is_bounded(self) -> None:
        """A YAML alias bomb yields at most 1,000 strings."""
        levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
        levels += [
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}]"
            for p, c in zip("abcdef", "bcdefg", strict=True)
        ]
        values = read_properties("---\n" + "\n".join(levels) + "\n---\n").front.values
        assert len(list(property_strings(values["g"]))) <= 1000

    def test_property_text(self) -> None:
        """A single-text property is the first non-blank string, trimmed."""
        assert property_text(["  ", " x "]) == "x"
        assert property_text(None) is None

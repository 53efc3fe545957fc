"""Inline fields ``key:: value``: both forms, list and quote prefixes, code, links in values."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.knowledge.fields import parse_inline_fields


def pairs(text: str) -> list[tuple[str, str]]:
    return [(field.key, field.value) for field in parse_inline_fields(text)]


class TestWholeLine:
    def test_plain(self) -> None:
        """A whole line ``key:: value`` is a field."""
        assert pairs("supports:: [[Atomic Habits]]") == [("supports", "[[Atomic Habits]]")]

    def test_colon_in_value(self) -> None:
        """``time:: 10:30`` keeps its colon."""
        assert pairs("time:: 10:30") == [("time", "10:30")]

    def test_url_is_not_a_field(self) -> None:
        """A single-colon URL is not a field."""
        assert pairs("see http://example.com for more") == []
        assert pairs("https://example.com/a/b") == []

    def test_list_markers(self) -> None:
        """``-``, ``*``, ``+``, ``1.`` and ``1)`` list items may hold a field."""
        text = "- a:: 1\n* b:: 2\n+ c:: 3\n1. d:: 4\n2) e:: 5"
        assert pairs(text) == [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("e", "5")]

    def test_task_box(self) -> None:
        """A task item ``- [x] key:: value`` holds a field."""
        assert pairs("- [x] done:: yes\n- [ ] due:: 2026-11-01") == [
            ("done", "yes"),
            ("due", "2026-11-01"),
        ]

    def test_quote(self) -> None:
        """A ``>`` quote (nested too) may hold a field."""
        assert pairs("> a:: 1\n> > b:: 2") == [("a", "1"), ("b", "2")]

    def test_key_case_folded(self) -> None:
        """Keys are matched without regard to case; the raw key is kept."""
        (field,) = parse_inline_fields("Supports:: [[X]]")
        assert (field.key, field.raw_key) == ("supports", "Supports")

    def test_prose_before_key_is_not_a_field(self) -> None:
        """Text before the key makes the line prose, not a whole-line field."""
        assert pairs("I think that a:: b") == []

    def test_empty_value_is_no_field(self) -> None:
        """``key::`` with nothing after it is not a field."""
        assert pairs("key::   ") == []


class TestBracketed:
    def test_two_on_one_line(self) -> None:
        """``text [a:: 1] more (b:: 2)`` gives two fields."""
        assert pairs("text [a:: 1] more (b:: 2)") == [("a", "1"), ("b", "2")]

    def test_wikilink_value(self) -> None:
        """``[supports:: [[X]]]`` keeps the whole link (ZettelFlow cut it to ``[[X``)."""
        assert pairs("[supports:: [[X]]]") == [("supports", "[[X]]")]

    def test_wikilink_with_alias_and_heading(self) -> None:
        """A value may hold a link with a heading and an alias."""
        assert pairs("see [expands:: [[Note#Part|shown]]] here") == [
            ("expands", "[[Note#Part|shown]]")
        ]

    def test_nested_parentheses(self) -> None:
        """One level of parentheses is part of the value."""
        assert pairs("(source:: Smith (2020))") == [("source", "Smith (2020)")]

    def test_markdown_link_value(self) -> None:
        """A Markdown link is part of a bracketed value."""
        assert pairs("[source:: [paper](paper.md)]") == [("source", "[paper](paper.md)")]

    def test_brackets_must_pair(self) -> None:
        """``[a:: 1)`` is not a field."""
        assert pairs("x [a:: 1) y") == []

    def test_wikilink_text_is_not_a_field(self) -> None:
        """``[[key:: x]]`` is a wikilink, not a bracketed field."""
        assert pairs("[[supports:: X]]") == []

    def test_bracketed_line_skips_whole_line_form(self) -> None:
        """A line with a bracketed field is not also read as a whole-line field."""
        assert pairs("a:: one [b:: two]") == [("b", "two")]

    def test_value_offsets(self) -> None:
        """``start``/``end`` delimit the trimmed value in the text."""
        text = "x\n- [claim:: c1]  [source:: [[S1]] ]"
        fields = parse_inline_fields(text)
        assert [text[f.start : f.end] for f in fields] == ["c1", "[[S1]]"]
        assert [f.line for f in fields] == [2, 2]


class TestCode:
    def test_fenced_code_skipped(self) -> None:
        """Fields inside a fenced block are not fields."""
        body = "```\nkey:: value\n```\nreal:: yes"
        assert pairs(body) == [("real", "yes")]

    def test_inline_code_skipped(self) -> None:
        """A field whose key is in inline code is skipped."""
        assert pairs("use `[a:: 1]` or [b:: 2]") == [("b", "2")]

    def test_tilde_fence(self) -> None:
        """A ``~~~`` fence hides fields too."""
        assert pairs("~~~\nk:: v\n~~~") == []


class TestProperties:
    @given(st.text(alphabet=st.sampled_from(list("ab:[]()`-> \n*1.x|")), max_size=80))
    def test_never_raises_and_offsets_hold(self, text: str) -> None:
        """Any text parses; each value is non-empty, trimmed and found at its offsets."""
        for field in parse_inline_fields(text):
            assert field.value
            assert field.value == field.value.strip()
            assert text[field.start : field.end] == field.value
            assert field.line == text.count("\n", 0, field.start) + 1

    @given(
        st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 .:/-]{0,20}", fullmatch=True),
    )
    def test_round_trip(self, key: str, value: str) -> None:
        """``key:: value`` and ``[key:: value]`` both read back the key and trimmed value."""
        assert pairs(f"{key}:: {value}") == [(key, value.strip())]
        assert pairs(f"x [{key}:: {value}] y") == [(key, value.strip())]

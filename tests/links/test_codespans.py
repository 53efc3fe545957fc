"""Code regions of Markdown: fenced blocks and inline code spans."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.links.codespans import code_mask, fenced_blocks, is_in_code, overlaps_code


def code_texts(text: str) -> list[str]:
    return [text[start:end] for start, end in code_mask(text)]


class TestFencedBlocks:
    def test_backtick_fence(self) -> None:
        """A backtick fence covers its opening line through its closing line."""
        text = "a\n```py\n[[x]]\n```\nb"
        assert [text[s:e] for s, e in fenced_blocks(text)] == ["```py\n[[x]]\n```"]

    def test_tilde_fence(self) -> None:
        """Tildes fence code as well."""
        text = "~~~\ncode\n~~~\n"
        assert code_texts(text) == ["~~~\ncode\n~~~"]

    def test_closing_fence_needs_same_character(self) -> None:
        """A tilde line does not close a backtick fence."""
        text = "```\na\n~~~\nb\n```\nafter"
        assert code_texts(text) == ["```\na\n~~~\nb\n```"]

    def test_closing_fence_at_least_as_long(self) -> None:
        """A shorter fence inside a longer one is content, not the end."""
        text = "````\n```\nstill code\n````\nafter"
        assert code_texts(text) == ["````\n```\nstill code\n````"]

    def test_closing_fence_has_no_info_string(self) -> None:
        """A fence line with text after it does not close a block."""
        text = "```\n```js\nx\n```\n"
        assert code_texts(text) == ["```\n```js\nx\n```"]

    def test_unclosed_fence_runs_to_end(self) -> None:
        """An unclosed fence masks the rest of the text."""
        text = "a\n```\n[[x]]\nmore"
        assert code_texts(text) == ["```\n[[x]]\nmore"]

    def test_backtick_info_string_cannot_hold_backticks(self) -> None:
        """```a``` on one line is inline code, not a fence opener."""
        text = "```a``` then text\nnext"
        assert code_texts(text) == ["```a```"]

    def test_indented_fence_in_list_item(self) -> None:
        """Fences nested in list items or admonitions (four or more spaces) are found."""
        text = "1. step\n\n    ```yaml\n    x: 1\n    ```\n"
        assert code_texts(text) == ["    ```yaml\n    x: 1\n    ```"]

    def test_fence_in_blockquote(self) -> None:
        """A fence behind a > quote marker is found."""
        text = "> ```python\n> [[x]]\n> ```\nout"
        assert code_texts(text) == ["> ```python\n> [[x]]\n> ```"]

    def test_crlf_line_endings(self) -> None:
        """Windows line endings do not hide a closing fence."""
        text = "```\r\ncode\r\n```\r\nafter"
        assert code_texts(text) == ["```\r\ncode\r\n```\r"]

    def test_no_fence_no_blocks(self) -> None:
        """Text without a fence has no blocks."""
        assert fenced_blocks("plain ``x``") == ()


class TestInlineCode:
    def test_single_backticks(self) -> None:
        """`x` is a code span."""
        assert code_texts("a `[[x]]` b") == ["`[[x]]`"]

    def test_double_backticks_hold_single(self) -> None:
        """A run of two closes only at the next run of two."""
        assert code_texts("``a ` b`` c") == ["``a ` b``"]

    def test_unmatched_run_is_literal(self) -> None:
        """A backtick run with no partner of the same length is plain text."""
        assert code_texts("a `` b ` c") == []

    def test_unmatched_opener_does_not_swallow_later_spans(self) -> None:
        """After a literal run, later spans are still found."""
        assert code_texts("``x `y` z") == ["`y`"]

    def test_span_does_not_cross_blank_line(self) -> None:
        """A paragraph break ends any chance of closing a span."""
        assert code_texts("a `b\n\nc` d") == []

    def test_span_crosses_soft_line_break(self) -> None:
        """A span may continue on the next line of the same paragraph."""
        assert code_texts("a `b\nc` d") == ["`b\nc`"]

    def test_escaped_backtick_does_not_open(self) -> None:
        r"""\` is a literal backtick."""
        assert code_texts(r"a \`b` c`") == ["` c`"]

    def test_span_does_not_cross_fence(self) -> None:
        """Backticks before and after a fenced block do not pair across it."""
        text = "a `b\n```\ncode\n```\nc` d"
        assert code_texts(text) == ["```\ncode\n```"]

    def test_no_backticks_fast_path(self) -> None:
        """Text without backticks or tildes has no code."""
        assert code_mask("[[a]] and [b](c)") == ()


class TestLookups:
    def test_is_in_code(self) -> None:
        """Offsets inside a span are code; the end offset is not."""
        text = "ab `cd` ef"
        mask = code_mask(text)
        assert [is_in_code(mask, i) for i in (2, 3, 6, 7)] == [False, True, True, False]

    def test_is_in_code_empty_mask(self) -> None:
        """Nothing is code in an empty mask."""
        assert not is_in_code((), 0)

    def test_overlaps_code(self) -> None:
        """A range overlaps when it shares at least one offset with a span."""
        mask = ((5, 10),)
        assert overlaps_code(mask, 0, 6)
        assert overlaps_code(mask, 9, 20)
        assert overlaps_code(mask, 6, 7)
        assert not overlaps_code(mask, 0, 5)
        assert not overlaps_code(mask, 10, 12)


markdownish = st.text(alphabet=st.sampled_from("`~ \n\\ab>[]"), max_size=200)


class TestProperties:
    @given(st.text())
    def test_never_crashes(self, text: str) -> None:
        """Any text gives a mask."""
        code_mask(text)

    @given(markdownish)
    def test_spans_sorted_disjoint_and_in_bounds(self, text: str) -> None:
        """Spans are non-empty, sorted, non-overlapping and inside the text."""
        previous_end = 0
        for start, end in code_mask(text):
            assert previous_end <= start < end <= len(text)
            previous_end = end

    @given(markdownish)
    def test_is_in_code_agrees_with_spans(self, text: str) -> None:
        """The bisect lookup agrees with a linear scan."""
        mask = code_mask(text)
        for offset in range(len(text) + 1):
            assert is_in_code(mask, offset) == any(s <= offset < e for s, e in mask)

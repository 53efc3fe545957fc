"""Front matter: splitting, odd blocks as problems, property strings, the engine fast path."""

from __future__ import annotations

import yaml  # type: ignore[import-untyped,unused-ignore]  # no stubs installed
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.knowledge.properties import property_strings, property_text, read_properties
from vaultsync.render.yamlfm import yaml_scalar


class TestSplit:
    def test_body_after_block(self) -> None:
        """The body starts after the closing line; its line number is known."""
        text = "---\ntitle: T\n---\nbody"
        props = read_properties(text)
        assert props.values == {"title": "T"}
        assert text[props.body_start :] == "body"
        assert props.body_line == 4

    def test_no_closing_line(self) -> None:
        """Without a closing ``---`` the whole text is body."""
        props = read_properties("---\ntitle: T\nbody")
        assert (props.values, props.body_start, props.problem) == ({}, 0, None)

    def test_bom(self) -> None:
        """A BOM before the block is ignored."""
        assert read_properties("\ufeff---\na: 1\n---\n").values == {"a": 1}

    def test_not_first_line(self) -> None:
        """A ``---`` block that does not open the note is a thematic break, not front matter."""
        assert read_properties("x\n---\na: 1\n---\n").values == {}

    def test_keys_case_folded(self) -> None:
        """``Title`` and ``title`` are one property; the first wins."""
        props = read_properties("---\nTitle: A\ntitle: B\n---\n")
        assert props.values == {"title": "A"}


class TestProblems:
    def test_bad_yaml(self) -> None:
        """Bad YAML gives no properties and a problem; the block is still not body."""
        text = "---\ntitle: [unclosed\n---\nbody"
        props = read_properties(text)
        assert props.values == {}
        assert props.problem is not None
        assert "not valid YAML" in props.problem
        assert text[props.body_start :] == "body"

    def test_list_front_matter(self) -> None:
        """A list front matter is reported, not silently dropped."""
        props = read_properties("---\n- a\n- b\n---\n")
        assert props.values == {}
        assert props.problem is not None
        assert "list" in props.problem

    def test_empty_block(self) -> None:
        """An empty block is no problem."""
        assert read_properties("---\n---\nbody").problem is None


class TestStrings:
    def test_unquoted_wikilink(self) -> None:
        """``supports: [[X]]`` (YAML reads a nested list) counts as the text ``[[X]]``."""
        values = read_properties("---\nsupports: [[X]]\n---\n").values
        assert list(property_strings(values["supports"])) == ["[[X]]"]

    def test_unquoted_wikilinks_in_block_list(self) -> None:
        """Each unquoted ``- [[X]]`` item counts as a link text."""
        values = read_properties("---\nsupports:\n  - [[A]]\n  - [[B]]\n---\n").values
        assert list(property_strings(values["supports"])) == ["[[A]]", "[[B]]"]

    def test_scalars(self) -> None:
        """Numbers and dates become text; booleans, nulls and mappings do not."""
        values = read_properties("---\na: [1, 2024-01-02, true, null, {b: c}, x]\n---\n").values
        assert list(property_strings(values["a"])) == ["1", "2024-01-02", "x"]

    def test_alias_bomb_is_bounded(self) -> None:
        """A YAML alias bomb yields at most 1,000 strings."""
        levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
        levels += [
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}]"
            for p, c in zip("abcdef", "bcdefg", strict=True)
        ]
        values = read_properties("---\n" + "\n".join(levels) + "\n---\n").values
        assert len(list(property_strings(values["g"]))) <= 1000

    def test_property_text(self) -> None:
        """A single-text property is the first non-blank string, trimmed."""
        assert property_text(["  ", " x "]) == "x"
        assert property_text(None) is None


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
VALUES = st.one_of(
    st.text(),
    st.integers(-(10**9), 10**9),
    st.booleans(),
    st.lists(st.text(), max_size=3),
)


def engine_block(fields: dict[str, object]) -> str:
    """A front-matter block written the way ``templates/_macros.j2`` writes one."""
    lines = []
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{key}:" if value else f"{key}: []")
            lines.extend(f"  - {yaml_scalar(item)}" for item in value)
        else:
            lines.append(f"{key}: {yaml_scalar(value)}")
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n"


class TestFastPath:
    @settings(max_examples=300)
    @given(st.dictionaries(KEYS, VALUES, max_size=6))
    def test_engine_blocks_read_as_yaml_reads_them(self, fields: dict[str, object]) -> None:
        """Whatever the engine writes reads exactly as the YAML loader reads it."""
        block = engine_block(fields)
        expected = yaml.load(block[4:-4], Loader=LOADER) or {}  # noqa: S506 - a safe loader
        folded: dict[str, object] = {}
        for key, value in expected.items():
            folded.setdefault(str(key).casefold(), value)
        assert dict(read_properties(block).values) == folded

    @settings(max_examples=300)
    @given(st.text(alphabet=st.sampled_from(list('ab:"- \n[]01\\u#tyn\t{}')), max_size=40))
    def test_any_block_reads_as_yaml_or_is_a_problem(self, block: str) -> None:
        """On any block, the result equals the YAML loader's or reports a problem."""
        props = read_properties(f"---\n{block}\n---\n")
        if not block.strip():
            assert (dict(props.values), props.problem) == ({}, None)
            return
        try:
            loaded = yaml.load(block + "\n", Loader=LOADER)  # noqa: S506 - a safe loader
        except yaml.YAMLError:
            assert props.problem is not None
            return
        if isinstance(loaded, dict):
            folded: dict[str, object] = {}
            for key, value in loaded.items():
                folded.setdefault(str(key).strip().casefold(), value)
            assert dict(props.values) == folded
        elif loaded is not None:
            assert props.problem is not None

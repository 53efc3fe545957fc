"""Portable file names: valid everywhere, safe in wikilinks, bounded, stable."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pathvalidate import is_valid_filename, sanitize_filename
from vaultsync.render.filenames import (
    MAX_NAME_BYTES,
    is_safe_component,
    note_filename,
    safe_component,
)

LINK_BREAKERS = ("#", "|", "^", "[", "]", ":", "%%", "\\", "/", "`")


def assert_portable(name: str, max_bytes: int = MAX_NAME_BYTES) -> None:
    assert name
    assert is_valid_filename(name, platform="universal")
    assert len(name.encode("utf-8")) <= max_bytes
    assert not name.startswith((".", " "))
    assert not name.endswith((".", " "))
    assert name == unicodedata.normalize("NFC", name)
    for bad in LINK_BREAKERS:
        assert bad not in name
    assert not any(unicodedata.category(c) == "Cc" for c in name)


class TestSafeComponent:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("Configuração do servidor", "Configuração do servidor"),
            ("日本語のノート", "日本語のノート"),
            ("C# tips", "C- tips"),
            ("[doing] rotate certs", "(doing) rotate certs"),
            ("a|b^c", "a-b-c"),
            ("Fix: retry", "Fix- retry"),
            ("100%% sure", "100% sure"),
            ('say "hi" <now>', "say 'hi' (now)"),
            ("a/b\\c", "a-b-c"),
            ("  spaced\tout\nname  ", "spaced out name"),
            ("trailing dots...", "trailing dots"),
            (".hidden", "hidden"),
            ("..", ""),
            ("", ""),
            ("???", "---"),
            ("CON", "CON_"),
            ("nul", "nul_"),
            ("com1", "com1_"),
            ("bidi\u202eevil", "bidievil"),
            ("e\u0301", "é"),
        ],
    )
    def test_examples(self, raw: str, expected: str) -> None:
        """Risky characters are translated, Unicode kept, reserved names renamed."""
        assert safe_component(raw) == expected

    def test_long_name_is_cut_on_a_character_boundary(self) -> None:
        """A long CJK name is cut to the byte bound without splitting a character."""
        name = safe_component("語" * 200)
        assert len(name.encode()) <= MAX_NAME_BYTES
        assert name == "語" * (MAX_NAME_BYTES // 3)

    def test_cut_never_strands_a_combining_mark(self) -> None:
        """A base letter whose accent does not fit is dropped with it."""
        text = "a" * 9 + "e\u0301\u0301"  # no NFC form for a doubly accented e
        assert safe_component(text, max_bytes=11) == "a" * 9

    def test_plain_fast_path_matches_pathvalidate(self) -> None:
        """Names that skip pathvalidate are names it would leave unchanged."""
        for name in ("Orbital (ab12cd34)", "a_b-c.d", "x{1}", "Q&A $5!", "CON_"):
            assert sanitize_filename(name, platform="universal") == name
            assert safe_component(name) == name

    @settings(max_examples=400)
    @given(st.text())
    def test_property_valid_bounded_stable(self, text: str) -> None:
        """Any text gives a valid, bounded name, and the name is a fixed point."""
        name = safe_component(text)
        if name:
            assert_portable(name)
            assert is_safe_component(name)
        assert safe_component(name) == name

    @settings(max_examples=200)
    @given(st.text(min_size=1), st.integers(min_value=1, max_value=40))
    def test_property_small_bounds(self, text: str, max_bytes: int) -> None:
        """The bound holds even when it is tiny."""
        name = safe_component(text, max_bytes=max_bytes)
        assert len(name.encode()) <= max_bytes
        assert safe_component(name, max_bytes=max_bytes) == name


class TestNoteFilename:
    def test_tail_and_extension_survive_truncation(self) -> None:
        """The short id and .md are kept; only the stem is cut."""
        name = note_filename("x" * 400, tail="(ab12cd34)", fallback="ab12cd34")
        assert name.endswith("x (ab12cd34).md")
        assert len(name.encode()) == MAX_NAME_BYTES

    def test_empty_stem_uses_fallback(self) -> None:
        """A stem with nothing valid in it falls back to the id."""
        assert note_filename("...", fallback="ab12cd34") == "ab12cd34.md"
        assert note_filename("", tail="(card-4)", fallback="card-4") == "card-4 (card-4).md"

    def test_reserved_stem(self) -> None:
        """A Windows device name is renamed even with an extension after it."""
        assert note_filename("aux", fallback="x") == "aux_.md"
        assert is_valid_filename(note_filename("aux", fallback="x"), platform="universal")

    def test_document_extension(self) -> None:
        """Non-Markdown documents keep their own extension before .md."""
        assert note_filename("run.sh", fallback="doc") == "run.sh.md"

    @settings(max_examples=300)
    @given(
        st.text(),
        st.sampled_from(["", "(ab12cd34)", "(card-4)", "(2)"]),
        st.sampled_from([".md", ".canvas"]),
    )
    def test_property(self, stem: str, tail: str, extension: str) -> None:
        """Always valid, non-empty, bounded, and stable when its stem is fed back."""
        name = note_filename(stem, tail=tail, extension=extension, fallback="fallback")
        assert_portable(name)
        assert name.endswith(f"{' ' + tail if tail else ''}{extension}")
        kept = name[: len(name) - len(extension) - (len(tail) + 1 if tail else 0)]
        assert note_filename(kept, tail=tail, extension=extension, fallback="fallback") == name

"""The one name normalizer and the relation slug."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.links.names import normalize_name, slugify_relation


class TestNormalizeName:
    def test_accents_case_and_separators_are_alike(self) -> None:
        """The seed's example: accents, case, space, - and _ do not matter."""
        assert normalize_name("Configuração do servidor") == normalize_name(
            "configuracao-do_servidor"
        )

    def test_result_is_lowercase_words_with_single_spaces(self) -> None:
        """The key is the folded words joined by one space."""
        assert normalize_name("Configuração do servidor") == "configuracao do servidor"

    def test_runs_of_separators_collapse(self) -> None:
        """Mixed runs of spaces, dashes and underscores become one space."""
        assert normalize_name("a -_ -b") == "a b"

    def test_whitespace_is_collapsed_and_trimmed(self) -> None:
        """Tabs, newlines and outer spaces do not count."""
        assert normalize_name("  Orbital\t\n gateway ") == "orbital gateway"

    def test_casefold_not_lower(self) -> None:
        """Case folding maps ß to ss, as lower() does not."""
        assert normalize_name("Straße") == normalize_name("STRASSE")

    def test_compatibility_forms_fold(self) -> None:
        """NFKD folds compatibility characters such as the ﬁ ligature and full-width letters."""
        assert normalize_name("ﬁle") == "file"
        assert normalize_name("\uff21\uff22\uff23") == "abc"

    def test_greek_accents_are_removed(self) -> None:
        """Greek tonos is an accent too."""
        assert normalize_name("Αθήνα") == normalize_name("ΑΘΗΝΑ")

    def test_japanese_dakuten_is_kept(self) -> None:
        """ガ and カ are different letters, not an accented pair."""
        assert normalize_name("ガス") != normalize_name("カス")

    def test_cyrillic_short_i_is_kept(self) -> None:
        """Cyrillic й is its own letter, not an accented и."""
        assert normalize_name("й") != normalize_name("и")

    def test_non_latin_scripts_are_not_transliterated(self) -> None:
        """Names in other scripts stay in their script, so they cannot collide with Latin ones."""
        assert normalize_name("Москва") == "москва"
        assert normalize_name("東京") == "東京"

    def test_empty_and_separator_only(self) -> None:
        """Nothing but separators normalizes to the empty string."""
        assert normalize_name(" -_ ") == ""

    @given(st.text())
    def test_idempotent(self, text: str) -> None:
        """Normalizing a key again changes nothing."""
        once = normalize_name(text)
        assert normalize_name(once) == once

    @given(st.text())
    def test_no_outer_or_double_spaces(self, text: str) -> None:
        """A key never starts or ends with a space nor holds two in a row."""
        key = normalize_name(text)
        assert key == key.strip()
        assert "  " not in key


class TestSlugifyRelation:
    def test_words_become_snake_case(self) -> None:
        """The seed's example: Depends On is depends_on."""
        assert slugify_relation("Depends On") == "depends_on"

    def test_punctuation_becomes_one_underscore(self) -> None:
        """Runs of punctuation and separators collapse to one underscore, none at the ends."""
        assert slugify_relation("  --is/part-of!! ") == "is_part_of"

    def test_latin_accents_are_removed(self) -> None:
        """Relação becomes relacao."""
        assert slugify_relation("Relação Forte") == "relacao_forte"

    def test_non_latin_letters_are_kept(self) -> None:
        """Letters of other scripts, with their combining signs, stay in the slug."""
        assert slugify_relation("हिंदी भाषा") == "हिंदी_भाषा"
        assert slugify_relation("зависит от") == "зависит_от"

    def test_nothing_sluggable_gives_empty(self) -> None:
        """Text without letters or digits gives an empty slug; the caller picks the default."""
        assert slugify_relation("-- !") == ""

    @given(st.text())
    def test_slug_is_stable(self, text: str) -> None:
        """Slugifying a slug changes nothing."""
        slug = slugify_relation(text)
        assert slugify_relation(slug) == slug

"""Front-matter values read back unchanged in YAML 1.2 (ruamel) and YAML 1.1 (PyYAML)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.core.model import ZERO_TIME
from vaultsync.core.notes import load_yaml
from vaultsync.render.yamlfm import (
    clean_fields,
    property_date,
    property_time,
    yaml_scalar,
    yaml_str,
)

TRICKY = [
    "yes",
    "no",
    "on",
    "off",
    "y",
    "true",
    "null",
    "Null",
    "~",
    "",
    "12:30",
    "1:02:03",
    "007",
    "0x1F",
    "1e3",
    ".inf",
    "-.5",
    "2026-10-24",
    "2026-10-24T12:00:00Z",
    "[[Projects/orbital]]",
    "#tag",
    "- item",
    "? key",
    ": colon",
    "a: b",
    "a #b",
    "@at",
    "`tick`",
    "!tag",
    "&anchor",
    "*alias",
    "|",
    ">",
    "%YAML",
    "---",
    "...",
    "'single'",
    '"double"',
    "back\\slash",
    "tab\there",
    "line\nbreak",
    "crlf\r\n",
    " leading and trailing ",
    "nel\x85ls\u2028ps\u2029",
    "del\x7f c1\x80\x9f",
    "bom\ufeff",
    "nonchar\ufffe\uffff",
    "emoji 😀 and CJK 日本語",
    "Configuração",
    "\x00\x01\x1b",
]


def ruamel_load(text: str) -> Any:
    """What the vault's one reader (``core.notes.load_yaml``, ruamel, YAML 1.2) reads."""
    data, problem = load_yaml(text)
    assert problem is None
    return data


def pyyaml_load(text: str) -> Any:
    yaml = pytest.importorskip("yaml")  # PyYAML: only through python-frontmatter, never ours
    return yaml.safe_load(text)


class TestYamlStr:
    @pytest.mark.parametrize("value", TRICKY)
    def test_reads_back_in_both_parsers(self, value: str) -> None:
        """Strings YAML would turn into booleans, numbers, dates, lists or nulls stay strings."""
        document = f"key: {yaml_str(value)}\n"
        assert ruamel_load(document) == {"key": value}
        assert pyyaml_load(document) == {"key": value}

    def test_is_one_line(self) -> None:
        """Line breaks of every kind are escaped."""
        assert "\n" not in yaml_str("a\nb\rc\x85d\u2028e\u2029f")
        assert yaml_str("a\x85b\u2028c\u2029d") == '"a\\Nb\\Lc\\Pd"'

    @settings(max_examples=500)
    @given(st.text(alphabet=st.characters(codec="utf-8")))
    def test_property_ruamel(self, value: str) -> None:
        """Any string reads back identically with ruamel (YAML 1.2)."""
        assert ruamel_load(f"key: {yaml_str(value)}\n") == {"key": value}

    @settings(max_examples=500)
    @given(st.text(alphabet=st.characters(codec="utf-8")))
    def test_property_pyyaml(self, value: str) -> None:
        """Any string reads back identically with PyYAML (YAML 1.1)."""
        assert pyyaml_load(f"key: {yaml_str(value)}\n") == {"key": value}


class TestYamlScalar:
    def test_numbers_stay_numbers(self) -> None:
        """Only real numbers are written bare."""
        assert yaml_scalar(7) == "7"
        assert yaml_scalar(0.5) == "0.5"
        assert yaml_scalar(True) == "true"
        assert yaml_scalar("7") == '"7"'

    def test_datetime_is_a_quoted_property_time(self) -> None:
        """A timestamp is Obsidian's Date & time form, read back as a string (not a datetime)."""
        text = yaml_scalar(datetime(2026, 10, 24, 12, 0, 0, 45100, tzinfo=UTC))
        assert text == '"2026-10-24T12:00:00"'
        assert pyyaml_load(f"k: {text}") == {"k": "2026-10-24T12:00:00"}

    def test_property_time_in_zone(self) -> None:
        """A time is the wall clock of the render zone, whole seconds, without a suffix."""
        moment = datetime(2026, 10, 24, 23, 30, 5, 999999, tzinfo=UTC)
        assert property_time(moment, ZoneInfo("Europe/Berlin")) == "2026-10-25T01:30:05"
        assert property_date(moment, ZoneInfo("Europe/Berlin")) == "2026-10-25"
        assert property_date(moment) == "2026-10-24"

    def test_non_finite_float(self) -> None:
        """NaN and infinities are written as strings rather than YAML-specific spellings."""
        assert ruamel_load(f"k: {yaml_scalar(float('inf'))}") == {"k": "inf"}

    def test_rejects_other_types(self) -> None:
        """A mapping is not a front-matter scalar."""
        with pytest.raises(TypeError):
            yaml_scalar({"a": 1})


class TestCleanFields:
    def test_drops_empty_values_keeps_lists(self) -> None:
        """Empty values vanish; aliases and tags are always there."""
        fields = clean_fields(
            [
                ("vaultsync_id", "fact:1"),
                ("aliases", ()),
                ("tags", ["go", ""]),
                ("category", ""),
                ("created", ZERO_TIME),
                ("updated", None),
                ("mentions", 0),
                ("technologies", []),
            ]
        )
        assert fields == (
            ("vaultsync_id", "fact:1"),
            ("aliases", ()),
            ("tags", ("go",)),
            ("mentions", 0),
        )

    @pytest.mark.parametrize("key", ["bad key", "1x", "tags"])
    def test_rejects_bad_or_repeated_keys(self, key: str) -> None:
        """Keys are identifiers and unique (Obsidian requires unique property names)."""
        with pytest.raises(ValueError, match="front-matter key"):
            clean_fields([("tags", ()), (key, "x")])

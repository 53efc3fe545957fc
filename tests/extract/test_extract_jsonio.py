"""Strict store reading: JSON syntax, UTF-8, sealed stores, field types and timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import build_tree
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.errors import StoreError
from vaultsync.extract import read_state
from vaultsync.extract.jsonio import SEAL_MAGIC, load_json, parse_time

INDEX = "memory/memory_index.json"


def store_error(tmp_path: Path, files: dict[str, str | bytes]) -> str:
    """The message ``read_state`` raises for a tree that must be refused."""
    with pytest.raises(StoreError) as caught:
        read_state(build_tree(tmp_path, files))
    return str(caught.value)


class TestSyntax:
    def test_bad_json_names_line_and_column(self, tmp_path: Path) -> None:
        """A JSON syntax error is reported as path:line:column."""
        message = store_error(tmp_path, {INDEX: '[\n  {"id": "a",\n   "content" "x"}\n]'})
        assert message == f"{tmp_path / INDEX}:3:14: invalid JSON: Expecting ':' delimiter"

    def test_invalid_utf8_names_byte_offset(self, tmp_path: Path) -> None:
        """Invalid UTF-8 is reported at its byte offset."""
        message = store_error(tmp_path, {INDEX: b'[{"id": "a", "content": "caf\xe9"}]'})
        assert message == f"{tmp_path / INDEX}:byte 28: invalid UTF-8 (byte 0xe9)"

    def test_byte_order_mark_is_refused(self, tmp_path: Path) -> None:
        """A UTF-8 BOM is refused, as Go's JSON decoder refuses it."""
        message = store_error(tmp_path, {INDEX: b"\xef\xbb\xbf[]"})
        assert message == (
            f"{tmp_path / INDEX}:1:1: file starts with a UTF-8 byte order mark, "
            "which JSON does not allow"
        )

    def test_nan_is_refused(self, tmp_path: Path) -> None:
        """NaN is not JSON, even though Python's parser accepts it."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a", "score": NaN}]'})
        assert message == f"{tmp_path / INDEX}: invalid JSON: NaN is not a JSON value"

    def test_empty_file_is_an_empty_store(self, tmp_path: Path) -> None:
        """A zero-length or whitespace-only store reads as empty."""
        build_tree(tmp_path, {INDEX: " \n"})
        assert load_json(tmp_path / INDEX) is None

    def test_lone_surrogate_becomes_replacement_character(self, tmp_path: Path) -> None:
        """A lone surrogate escape decodes to U+FFFD, as in Go."""
        build_tree(tmp_path, {INDEX: '[{"id": "a", "content": "x\\ud800y \\ud83d\\ude00"}]'})
        assert read_state(tmp_path).facts[0].content == "x\ufffdy \U0001f600"

    def test_directory_in_place_of_a_store(self, tmp_path: Path) -> None:
        """A directory where a store file belongs is an error."""
        (tmp_path / INDEX).mkdir(parents=True)
        with pytest.raises(StoreError) as caught:
            read_state(tmp_path)
        assert str(caught.value) == f"{tmp_path / INDEX}: expected a file, found a directory"


class TestSealed:
    def test_magic_bytes(self, tmp_path: Path) -> None:
        """A memory store starting with ChatCLI's at-rest magic is skipped as sealed."""
        build_tree(tmp_path, {INDEX: SEAL_MAGIC + b"\x00\x01nonce-and-ciphertext"})
        (skipped,) = read_state(tmp_path).skipped
        assert skipped.source == INDEX
        assert skipped.what.startswith("store is sealed (encrypted at rest by ChatCLI); set ")

    def test_enc_prefix(self, tmp_path: Path) -> None:
        """A store whose text starts with ``enc:`` is skipped as sealed."""
        build_tree(tmp_path, {"memory/topics.json": "enc:Q0hBVENMSV9FTkNfdjEK"})
        (skipped,) = read_state(tmp_path).skipped
        assert "store is sealed" in skipped.what

    def test_sealed_session(self, tmp_path: Path) -> None:
        """A sealed session without a key is skipped, its line saying what to set."""
        build_tree(tmp_path, {"sessions/a.json": SEAL_MAGIC + b"xyz"})
        (skipped,) = read_state(tmp_path).skipped
        assert skipped.source == "sessions/a.json"
        assert "CHATCLI_ENCRYPTION_KEY" in skipped.what


class TestFieldTypes:
    def test_list_element_of_wrong_type(self, tmp_path: Path) -> None:
        """A wrong element type names the record, the field and the index."""
        facts = '[{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d", "tags": ["x", 42]}]'
        message = store_error(tmp_path, {INDEX: facts})
        assert message == f"{tmp_path / INDEX}:[3].tags[1]: expected a string, got 42"

    def test_object_where_array_belongs(self, tmp_path: Path) -> None:
        """An object in place of the top-level array is refused."""
        message = store_error(tmp_path, {INDEX: '{"id": "a"}'})
        assert message == f"{tmp_path / INDEX}: expected an array, got an object"

    def test_array_where_object_belongs(self, tmp_path: Path) -> None:
        """An array in place of the profile object is refused."""
        message = store_error(tmp_path, {"memory/user_profile.json": "[]"})
        assert (
            message == f"{tmp_path / 'memory/user_profile.json'}: expected an object, got an array"
        )

    def test_record_that_is_not_an_object(self, tmp_path: Path) -> None:
        """Each element of a record array must be an object."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a"}, "b"]'})
        assert message == f'{tmp_path / INDEX}:[1]: expected an object, got "b"'

    def test_float_where_integer_belongs(self, tmp_path: Path) -> None:
        """An integer field refuses a fraction, as Go does."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a", "access_count": 1.5}]'})
        assert message == f"{tmp_path / INDEX}:[0].access_count: expected an integer, got 1.5"

    def test_boolean_where_number_belongs(self, tmp_path: Path) -> None:
        """A boolean is not a number."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a", "score": true}]'})
        assert message == f"{tmp_path / INDEX}:[0].score: expected a number, got true"

    def test_null_means_absent(self, tmp_path: Path) -> None:
        """``null`` in any field yields the field's default."""
        build_tree(tmp_path, {INDEX: '[{"id": "a", "content": null, "tags": null, "score": null}]'})
        fact = read_state(tmp_path).facts[0]
        assert (fact.content, fact.tags, fact.score) == ("", (), 0.0)

    def test_unknown_fields_are_ignored(self, tmp_path: Path) -> None:
        """Fields the reader does not know are ignored, whatever their type."""
        build_tree(tmp_path, {INDEX: '[{"id": "a", "future": {"x": [1]}}]'})
        assert read_state(tmp_path).facts[0].id == "a"

    def test_malformed_timestamp_names_the_field(self, tmp_path: Path) -> None:
        """A malformed timestamp is an error naming its field."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a", "created_at": "2026-07-02 14:05"}]'})
        assert message == (
            f'{tmp_path / INDEX}:[0].created_at: invalid RFC 3339 timestamp "2026-07-02 14:05"'
        )

    def test_timestamp_of_wrong_type(self, tmp_path: Path) -> None:
        """A number where a timestamp belongs is refused."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a", "last_accessed": 17}]'})
        assert message == (
            f"{tmp_path / INDEX}:[0].last_accessed: expected an RFC 3339 timestamp string, got 17"
        )


class TestParseTime:
    def test_zulu_with_fraction(self) -> None:
        """``Z`` and a short fraction parse to an aware UTC datetime."""
        assert parse_time("2026-07-02T14:05:11.48Z") == datetime(
            2026, 7, 2, 14, 5, 11, 480000, tzinfo=UTC
        )

    def test_offset_and_nanoseconds(self) -> None:
        """Nine fractional digits are truncated to microseconds; the offset is kept."""
        moment = parse_time("2026-07-02T14:05:11.482913999+02:00")
        assert moment == datetime(
            2026, 7, 2, 14, 5, 11, 482913, tzinfo=timezone(timedelta(hours=2))
        )
        assert moment is not None
        assert moment.utcoffset() == timedelta(hours=2)

    def test_go_zero_time_is_none(self) -> None:
        """Go's zero time means "never" and becomes None."""
        assert parse_time("0001-01-01T00:00:00Z") is None

    def test_lowercase_separators(self) -> None:
        """RFC 3339 allows lowercase ``t`` and ``z``."""
        assert parse_time("2026-07-02t14:05:11z") == datetime(2026, 7, 2, 14, 5, 11, tzinfo=UTC)

    @pytest.mark.parametrize(
        "text",
        [
            "2026-07-02",
            "2026-07-02T14:05:11",
            "2026-07-02T14:05:11.1234567890Z",
            "2026-02-30T00:00:00Z",
            "2026-07-02T14:05:11+24:00",
            "0001-01-01T00:30:00+01:00",
            " 2026-07-02T14:05:11Z",
        ],
    )
    def test_refused(self, text: str) -> None:
        """Dates alone, naive times, too many digits and impossible moments are refused."""
        with pytest.raises(StoreError, match="invalid RFC 3339 timestamp"):
            parse_time(text, path="p", where="w")

    @given(
        st.text()
        | st.from_regex(r"\A\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d{1,10})?([Zz]|[+-]\d\d:\d\d)\Z")
    )
    def test_never_crashes(self, text: str) -> None:
        """Any text either parses to an aware datetime (or None) or raises StoreError."""
        try:
            moment = parse_time(text, path="p", where="w")
        except StoreError:
            return
        assert moment is None or moment.tzinfo is not None


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


class TestHostileJSON:
    @given(value=JSON_VALUES, depth=st.integers(min_value=0, max_value=1500))
    def test_any_value_under_any_nesting_reads_as_json_does(
        self, value: object, depth: int
    ) -> None:
        """Any JSON value wrapped ``depth`` arrays deep reads back equal (past Python's limit)."""
        import json
        import tempfile

        text = "[" * depth + json.dumps(value) + "]" * depth
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.json"
            path.write_text(text)
            got = load_json(path)
        for _ in range(depth):
            assert isinstance(got, list) and len(got) == 1
            got = got[0]
        assert got == value

    @pytest.mark.parametrize(("depth", "reads"), [(10_000, True), (10_001, False)])
    def test_nesting_limit_is_gos(self, tmp_path: Path, depth: int, reads: bool) -> None:
        """10,000 levels read (Go's maxNestingDepth); 10,001 are refused in one line."""
        path = tmp_path / "deep.json"
        path.write_text('{"a":' * depth + "1" + "}" * depth)
        if reads:
            assert isinstance(load_json(path), dict)
        else:
            with pytest.raises(StoreError, match="nested deeper than 10,000 levels"):
                load_json(path)

    def test_brackets_inside_strings_do_not_count(self, tmp_path: Path) -> None:
        """A string full of ``[`` nested past Python's limit is not deep JSON."""
        path = tmp_path / "s.json"
        path.write_text("[" * 1200 + json_string("[" * 20_000) + "]" * 1200)
        assert load_json(path) is not None

    def test_out_of_range_float(self, tmp_path: Path) -> None:
        """``1e400`` is refused, as Go refuses it, naming the number."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a", "confidence": 1e400}]'})
        assert message.endswith("invalid JSON: the number 1e400 is out of range for a float64")

    def test_integer_no_float64_holds(self, tmp_path: Path) -> None:
        """``10**400`` where a number belongs is refused, named by its digits."""
        message = store_error(tmp_path, {INDEX: '[{"id": "a", "score": 1' + "0" * 400 + "}]"})
        assert message.endswith(
            "score: expected a number that fits in 64 bits, got a 401-digit number"
        )


def json_string(text: str) -> str:
    import json

    return json.dumps(text)

"""The manifest's bulk checks and fast entries agree with the one-by-one rules they replace."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import assume, example, given
from hypothesis import strategies as st
from vaultsync.core.vaultpath import all_safe, is_safe
from vaultsync.vault.manifest import (
    Entry,
    _entry,
    _lower_hex,
    dump_cache,
    dump_manifest,
    load_cache,
    load_manifest,
    patch_manifest,
    recorded_blob,
    recorded_blobs,
    stat_rows,
)
from vaultsync.vault.plan import _fold, _fold_all

_PARTS = st.text(alphabet="a./\\:\x00Cé", max_size=6)
_BLOB = st.text(alphabet="0123456789abcdefABg", min_size=39, max_size=41)


@given(st.lists(_PARTS, max_size=5))
@example(["a", "", "b"])  # an empty path between two others
@example(["a", ".b"])  # a later path opening with a dot
@example(["a/", "b"])  # a path ending in a slash, before another
def test_all_safe_is_is_safe_of_each(paths: list[str]) -> None:
    """The joined-string check says safe exactly when every path is."""
    assert all_safe(paths) == all(is_safe(p) for p in paths)


_VALUES = st.one_of(
    st.fixed_dictionaries({"node": st.text(max_size=3), "key": st.text(max_size=3), "blob": _BLOB}),
    st.fixed_dictionaries(
        {"node": st.text(max_size=3), "key": st.integers(), "blob": _BLOB},
    ),
    st.fixed_dictionaries(
        {"node": st.text(max_size=3), "key": st.text(max_size=3), "blob": _BLOB},
        optional={"theirs": _BLOB, "chosen": st.booleans(), "other": st.integers()},
    ),
)


@given(st.dictionaries(_PARTS, _VALUES, max_size=6))
def test_load_matches_entry_by_entry(raw: dict[str, dict[str, object]]) -> None:
    """A manifest loads to what ``_entry`` gives entry by entry, or is corrupt if one is bad."""
    doc = {"schema": 1, "engine": "vaultsync", "entries": raw, "deleted": []}
    loaded = load_manifest(json.dumps(doc).encode(), fingerprint="f")
    expected = {p: _entry(v) for p, v in raw.items()}
    if all(e is not None and is_safe(p) for p, e in expected.items()):
        assert not loaded.corrupt
        assert dict(loaded.entries) == expected
    else:
        first = next(p for p, e in expected.items() if e is None or not is_safe(p))
        assert loaded.corrupt
        assert loaded.problem == f"bad entry {first!r}"


def test_fast_entry_equals_constructed() -> None:
    """A loaded entry equals, hashes and dumps like one built by its constructor."""
    built = Entry(node="n", key="k", blob="a" * 40)
    data = dump_manifest({"x.md": built}, frozenset())
    loaded = load_manifest(data, fingerprint="f").entries["x.md"]
    assert (loaded, hash(loaded), repr(loaded)) == (built, hash(built), repr(built))


def test_entry_at_empty_path_is_corrupt() -> None:
    """An entry keyed by the empty path makes the manifest corrupt, not silently empty."""
    doc = {"schema": 1, "engine": "vaultsync", "deleted": []}
    doc["entries"] = {"": {"node": "n", "key": "k", "blob": "a" * 40}}
    assert load_manifest(json.dumps(doc).encode(), fingerprint="f").corrupt


_STATS = st.tuples(st.integers(0, 2**40), st.integers(0, 2**62), st.integers(0, 2**40))
_HEX = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)


@given(st.dictionaries(st.text(max_size=8), st.tuples(_STATS, _HEX), max_size=8))
def test_cache_columns_round_trip(entries: dict[str, tuple[tuple[int, int, int], str]]) -> None:
    """The stat cache's columns load back to the entries dumped."""
    data = dump_cache(entries, "in", manifest="b" * 40, absent=("x.md",))
    loaded = load_cache(data, written_ns=5)
    assert (loaded.entries, loaded.inputs, loaded.manifest, loaded.absent) == (
        entries,
        "in",
        "b" * 40,
        ("x.md",),
    )
    assert dict(stat_rows(loaded.entries)) == {path: stat for path, (stat, _) in entries.items()}
    assert {path: loaded.entries[path] for path in entries} == entries


def test_cache_of_schema_1_still_loads() -> None:
    """A cache written before the columns (schema 1) keeps its entries: nothing is re-hashed."""
    old = {"schema": 1, "entries": {"a.md": [1, 2, 3, "c" * 40]}, "inputs": "i"}
    loaded = load_cache(json.dumps(old).encode())
    assert (loaded.entries, loaded.inputs) == ({"a.md": ((1, 2, 3), "c" * 40)}, "i")


def test_cache_with_ragged_columns_is_empty() -> None:
    """Columns of mismatched lengths or types, or a path twice, give an empty cache."""
    good = json.loads(dump_cache({"a.md": ((1, 2, 3), "c" * 40)}))
    for column, bad in (("stats", [1, 2]), ("blobs", "c" * 39), ("stats", [1, 2, "3"])):
        assert load_cache(json.dumps(good | {column: bad}).encode()).entries == {}
    twice = good | {"paths": ["a.md", "a.md"], "stats": [1, 2, 3] * 2, "blobs": "c" * 80}
    assert load_cache(json.dumps(twice).encode()).entries == {}


@given(st.lists(st.text(alphabet="aAßΣς\u0301e\u00e9İ/\x00K\u212a", max_size=5), max_size=6))
def test_fold_all_is_fold_of_each(paths: list[str]) -> None:
    """Folding the joined paths gives each path's own NFC case fold."""
    assert _fold_all(paths) == [_fold(p) for p in paths]


_ENTRIES = st.dictionaries(
    st.sampled_from(["a.md", "b/c.md", "b/d.md", "é.md", "z.md", "B.md", "b.md"]),
    st.builds(
        Entry,
        node=st.sampled_from(["n", "m", 'q"\n']),
        key=st.sampled_from(["k", "j"]),
        blob=st.sampled_from(["a" * 40, "b" * 40]),
        theirs=st.sampled_from(["", "c" * 40]),
        chosen=st.booleans(),
    ),
)


@given(_ENTRIES, _ENTRIES, st.frozensets(st.sampled_from(["x.md", "y/z.md"])), st.integers(1, 3))
def test_patch_equals_dump(
    before: dict[str, Entry], after: dict[str, Entry], deleted: frozenset[str], fmt: int
) -> None:
    """Patching a dump of ``before`` gives byte for byte the dump of ``after``."""
    previous = dump_manifest(before, deleted, render_format=fmt)
    patched = patch_manifest(previous, before, after)
    if before and after:
        assert patched == dump_manifest(after, deleted, render_format=fmt)
    else:
        assert patched is None


def test_patch_refuses_another_layout() -> None:
    """A manifest not laid out as this version dumps (here: compact JSON) is not patched."""
    before = {"a.md": Entry(node="n", key="k", blob="a" * 40)}
    compact = json.dumps(json.loads(dump_manifest(before, frozenset()))).encode()
    after = {"a.md": Entry(node="n", key="j", blob="a" * 40)}
    assert patch_manifest(compact, before, after) is None


def test_a_written_manifest_is_known_as_its_own_parse(tmp_path: Path) -> None:
    """Each manifest a sync writes, whole or patched, is taken as what parsing it gives."""
    from syncdriver import make_spec
    from vaultsync.vault import manifest
    from vaultsync.vault.manifest import MANIFEST, blob_id
    from vaultsync.vault.sync import sync_vault

    vault = tmp_path / "vault"
    notes = {f"Topics/t{n}.md": f"# t{n}\n" for n in range(5)}
    for round_ in range(4):
        notes[f"Topics/t{round_}.md"] = f"# t{round_} changed\n"  # a few entries: patched
        if round_ == 3:
            del notes["Topics/t4.md"]
        specs = [make_spec(path, text) for path, text in sorted(notes.items())]
        sync_vault(vault, specs)
        data = (vault / MANIFEST).read_bytes()
        assert manifest._as_written(data) == load_manifest(data, fingerprint=blob_id(data))


@given(
    st.dictionaries(
        st.text(alphabet="ab/", min_size=1, max_size=4),
        st.text(alphabet="0123456789abcdef", min_size=40, max_size=40),
    )
)
def test_a_rows_recorded_blob_is_its_entrys(blobs: dict[str, str]) -> None:
    """By row number, from the columns or a schema 1 mapping: the blob the path's entry holds."""
    entries = {path: ((len(path), 7, 9), blob) for path, blob in blobs.items()}
    columns = load_cache(dump_cache(entries)).entries
    for mapping in (entries, columns):
        for index, (path, _) in enumerate(stat_rows(mapping)):
            assert recorded_blob(mapping, index, path) == blobs[path]


def _dump_as_text(
    entries: dict[str, Entry], deleted: frozenset[str], released: frozenset[str], form: int
) -> bytes:
    """The manifest as one text, encoded at the end: the bytes ``dump_manifest`` must give."""
    from vaultsync.vault.manifest import ENGINE, SCHEMA, _entry_json, _line, _quote

    rows = [f"    {_quote(p)}: {_entry_json(e)}" for p, e in sorted(entries.items())]
    gone = ["    " + _quote(p) for p in sorted(deleted)]
    freed = ",\n".join("    " + _quote(p) for p in sorted(released))
    text = (
        f"{{\n  {_line('schema', SCHEMA)},\n  {_line('engine', ENGINE)},\n"
        + (f"  {_line('render_format', form)},\n" if form != 1 else "")
        + ('  "entries": {\n' + ",\n".join(rows) + "\n  },\n" if rows else '  "entries": {},\n')
        + ('  "deleted": [\n' + ",\n".join(gone) + "\n  ]" if gone else '  "deleted": []')
        + (',\n  "released": [\n' + freed + "\n  ]\n" if released else "\n")
        + "}\n"
    )
    return text.encode("utf-8")


_PATHS = st.text(alphabet='ab/é"\\\n', min_size=1, max_size=5)
_ONE_ENTRY = st.builds(
    Entry,
    node=st.text(max_size=4),
    key=st.text(max_size=4),
    blob=st.just("a" * 40),
    theirs=st.sampled_from(["", "b" * 40]),
    chosen=st.booleans(),
)


@given(
    st.dictionaries(_PATHS, _ONE_ENTRY, max_size=5),
    st.frozensets(_PATHS, max_size=3),
    st.frozensets(_PATHS, max_size=3),
    st.integers(1, 3),
)
def test_the_dump_is_the_manifest_as_one_text(
    entries: dict[str, Entry], deleted: frozenset[str], released: frozenset[str], form: int
) -> None:
    """Encoded line by line, the manifest has the bytes of its whole text encoded at once."""
    dumped = dump_manifest(entries, deleted, released, render_format=form)
    assert dumped == _dump_as_text(entries, deleted, released, form)


@given(st.text(alphabet="0123456789abcdefABCDEF \t\ng\u00e9\u0663", max_size=30))
def test_lower_hex_is_an_even_run_of_lower_case_hex_digits(text: str) -> None:
    """The C-speed check of blob columns says what the regex of before said."""
    expected = len(text) % 2 == 0 and re.fullmatch("[0-9a-f]*", text) is not None
    assert _lower_hex(text) == expected


_ROW_PATHS = st.sampled_from(["a.md", "b/c.md", 'q"\\.md', "é/\u2028.md", "b/c.md.md", "c.md"])


@given(_ENTRIES, st.frozensets(_ROW_PATHS), st.lists(_ROW_PATHS, max_size=4), st.integers(1, 3))
def test_rows_give_what_the_parse_gives(
    entries: dict[str, Entry], deleted: frozenset[str], asked: list[str], fmt: int
) -> None:
    """A dump's rows give each asked path's blob as parsing it whole does; unlisted: no answer."""
    data = dump_manifest(entries, deleted, render_format=fmt)
    manifest = load_manifest(data)
    assume(not manifest.corrupt)  # a bad path elsewhere: its rows still answer (a sync's dump)
    parsed = manifest.entries
    found = recorded_blobs(data, asked)
    if all(path in parsed for path in asked):
        assert found == {path: parsed[path].blob for path in asked}
    else:
        assert found is None


def test_rows_of_another_layout_give_no_answer() -> None:
    """Compact JSON, or more paths than rows are read for, is left to a whole parse."""
    entries = {f"n{i}.md": Entry(node="n", key="k", blob="a" * 40) for i in range(20)}
    data = dump_manifest(entries, frozenset())
    assert recorded_blobs(json.dumps(json.loads(data)).encode(), ["n1.md"]) is None
    assert recorded_blobs(data, list(entries)[:16]) is not None
    assert recorded_blobs(data, list(entries)[:17]) is None

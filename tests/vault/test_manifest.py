"""The manifest, stat cache and journal formats, and the vault-path rule."""

from __future__ import annotations

import json

import pygit2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.errors import UnsafePathError
from vaultsync.vault.manifest import (
    Entry,
    Journal,
    blob_id,
    check_path,
    dump_cache,
    dump_journal,
    dump_manifest,
    load_cache,
    load_journal,
    load_manifest,
)

HEAD = b'{"schema": 1, "engine": "vaultsync", "entries": '
A = Entry(node="fact:a", key="k1", blob="a" * 40)
B = Entry(node="topic:b", key="k2", blob="b" * 40)


class TestManifest:
    def test_round_trip(self) -> None:
        """What is dumped loads back equal, not corrupt."""
        data = dump_manifest({"Facts/a.md": A, "Topics/b é.md": B}, frozenset({"gone.md"}))
        loaded = load_manifest(data, fingerprint=blob_id(data))
        assert dict(loaded.entries) == {"Facts/a.md": A, "Topics/b é.md": B}
        assert loaded.deleted == {"gone.md"}
        assert not loaded.corrupt
        assert not loaded.lost

    def test_deterministic_and_one_entry_per_line(self) -> None:
        """Same content, same bytes, whatever the insertion order; one line per entry."""
        one = dump_manifest({"b.md": B, "a.md": A}, frozenset({"y.md", "x.md"}))
        two = dump_manifest({"a.md": A, "b.md": B}, frozenset({"x.md", "y.md"}))
        assert one == two
        lines = one.decode().splitlines()
        assert sum('"a.md": {' in line for line in lines) == 1
        assert (
            lines.index('    "a.md": {"blob": "' + "a" * 40 + '", "key": "k1", "node": "fact:a"},')
            > 0
        )
        assert json.loads(one)["schema"] == 1
        assert one.endswith(b"}\n")

    def test_empty_manifest_is_valid_json(self) -> None:
        """An empty manifest is compact and loads back."""
        data = dump_manifest({}, frozenset())
        assert json.loads(data) == {
            "schema": 1,
            "engine": "vaultsync",
            "entries": {},
            "deleted": [],
        }

    def test_missing_is_empty_and_lost(self) -> None:
        """No file: an empty manifest, not corrupt, but ownership must come from history."""
        loaded = load_manifest(None)
        assert not loaded.entries
        assert not loaded.corrupt
        assert loaded.lost

    @pytest.mark.parametrize(
        "data",
        [
            b"{not json",
            b"\xff\xfe",
            b"[]",
            b'{"schema": 1, "engine": "other", "entries": {}}',
            b'{"schema": 2, "engine": "vaultsync", "entries": {}}',
            b'{"schema": 1, "engine": "vaultsync", "entries": []}',
            b'{"schema": 1, "engine": "vaultsync", "entries": {"a.md": {"node": "", "key": ""}}}',
            HEAD + b'{"a.md": {"node": "", "key": "", "blob": "xyz"}}}',
            HEAD + b'{"../x.md": {"node": "", "key": "", "blob": "' + b"a" * 40 + b'"}}}',
            HEAD + b'{"a.md": {"node": "", "key": "", "blob": "' + b"A" * 40 + b'"}}}',
            b'{"schema": 1, "engine": "vaultsync", "entries": {}, "deleted": ["/etc/passwd"]}',
        ],
    )
    def test_corrupt_or_foreign_is_flagged_never_raised(self, data: bytes) -> None:
        """Unreadable, foreign, future-schema or unsafe content: flagged corrupt, empty."""
        loaded = load_manifest(data, fingerprint=blob_id(data))
        assert loaded.corrupt
        assert loaded.problem
        assert not loaded.entries
        assert loaded.lost

    @given(st.binary(max_size=200))
    def test_any_bytes_load_without_error(self, data: bytes) -> None:
        """No input makes loading raise."""
        load_manifest(data)


class TestCheckPath:
    @pytest.mark.parametrize(
        "path",
        [
            "",
            "/abs.md",
            "../up.md",
            "a/../b.md",
            "a/./b.md",
            "a//b.md",
            "a/",
            "C:/x.md",
            "c:x.md",
            "a\\b.md",
            "nul\x00.md",
            ".obsidian/x.md",
            ".git/config",
            ".trash/x.md",
            ".vaultsync/manifest.json",
            "Facts/.hidden.md",
        ],
    )
    def test_refused(self, path: str) -> None:
        """Traversal, absolute, drive, NUL, backslash and dot parts are refused."""
        with pytest.raises(UnsafePathError):
            check_path(path)

    @pytest.mark.parametrize(
        "path", ["Home.md", "Facts/gotcha/Title (ab12).md", "a b/é ü.md", "x..y.md"]
    )
    def test_accepted(self, path: str) -> None:
        """Ordinary nested note paths pass."""
        assert check_path(path) == tuple(path.split("/"))

    def test_control_paths(self) -> None:
        """Only ``.vaultsync/<file>`` passes as an engine file."""
        assert check_path(".vaultsync/.gitignore", control=True) == (".vaultsync", ".gitignore")
        for bad in ("manifest.json", ".vaultsync/a/b", ".git/x", ".vaultsync/../x"):
            with pytest.raises(UnsafePathError):
                check_path(bad, control=True)


class TestBlobId:
    @given(st.binary(max_size=2000))
    def test_matches_git(self, data: bytes) -> None:
        """``blob_id`` is git's blob id."""
        assert blob_id(data) == str(pygit2.hash(data))


class TestCacheAndJournal:
    def test_cache_round_trip(self) -> None:
        """Stat data and blobs load back; the file's mtime comes from the caller."""
        entries = {"a.md": ((10, 123456789, 42), "a" * 40)}
        loaded = load_cache(dump_cache(entries), written_ns=5)
        assert loaded.entries == entries
        assert loaded.written_ns == 5

    @pytest.mark.parametrize(
        "data", [None, b"", b"{}", b'{"schema": 1, "entries": {"a": 3}}', b"\xff"]
    )
    def test_bad_cache_is_empty(self, data: bytes | None) -> None:
        """A cache is a hint: anything odd gives an empty one."""
        assert not load_cache(data).entries

    def test_journal_round_trip(self) -> None:
        """Intents (with removals as ``None``) load back."""
        journal = Journal(intents={"a.md": A, "old.md": None})
        loaded = load_journal(dump_journal(journal))
        assert loaded == journal

    def test_unreadable_journal(self) -> None:
        """A journal that cannot be read is reported as such (the vault gets a full sweep)."""
        assert load_journal(None) is None
        bad = load_journal(b'{"intents": {"../x": null}}')
        assert bad is not None
        assert not bad.readable

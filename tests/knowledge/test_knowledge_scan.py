"""Reading a vault: the walk, the content-hash cache, renames, edits, and never writing notes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from vaultsync.core.errors import UsageError
from vaultsync.knowledge.scan import CACHE_NAME, load_model

OLD = 1_600_000_000_000_000_000  # 2020: far from any cache's scan time, so never racy


def write(root: Path, files: dict[str, str], *, old: bool = True) -> None:
    """Write ``files`` under ``root``; ``old`` back-dates them so their stat can be trusted."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if old:
            os.utime(path, ns=(OLD, OLD))


def fingerprint(root: Path) -> dict[str, str]:
    """SHA-256 of every file outside .vaultsync."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".vaultsync" not in path.parts
    }


VAULT = {
    "a.md": "supports:: [[b]]\n[contradicts:: [[c]]]",
    "b.md": "---\nstate: permanent\n---\nsee [[c]]",
    "c.md": "claim:: c holds",
    "sub/d.md": "[[a]]",
}


class TestWalk:
    def test_dot_folders_and_files_skipped(self, tmp_path: Path) -> None:
        """``.obsidian``, ``.trash`` and dot files are not notes."""
        write(tmp_path, {"a.md": "", ".obsidian/x.md": "", ".trash/y.md": "", ".z.md": ""})
        assert list(load_model(tmp_path).model.ideas) == ["a.md"]

    def test_symlinks_never_followed(self, tmp_path: Path) -> None:
        """Symlinked notes and folders, in the vault or out of it, are not read (as in search)."""
        vault, outside = tmp_path / "vault", tmp_path / "outside"
        write(vault, {"a.md": "", "sub/b.md": ""})
        write(outside, {"secret.md": ""})
        (vault / "leak.md").symlink_to(outside / "secret.md")
        (vault / "leakdir").symlink_to(outside, target_is_directory=True)
        (vault / "alias.md").symlink_to(vault / "a.md")
        (vault / "again").symlink_to(vault / "sub", target_is_directory=True)
        loaded = load_model(vault)
        assert sorted(loaded.model.ideas) == ["a.md", "sub/b.md"]
        assert loaded.stats.files == 2

    def test_symlink_cycle(self, tmp_path: Path) -> None:
        """A folder symlink pointing back up does not loop."""
        write(tmp_path, {"sub/a.md": ""})
        (tmp_path / "sub" / "up").symlink_to(tmp_path, target_is_directory=True)
        assert list(load_model(tmp_path).model.ideas) == ["sub/a.md"]

    def test_not_a_folder(self, tmp_path: Path) -> None:
        """A vault that is not a folder is a usage error."""
        with pytest.raises(UsageError):
            load_model(tmp_path / "missing")


class TestCache:
    def test_warm_run_reads_nothing(self, tmp_path: Path) -> None:
        """A second run with nothing changed reads and parses no note."""
        write(tmp_path, VAULT)
        first = load_model(tmp_path)
        second = load_model(tmp_path)
        assert (first.stats.read, first.stats.parsed) == (4, 4)
        assert (second.stats.read, second.stats.parsed, second.stats.cache_written) == (0, 0, False)
        assert second.model.ideas == first.model.ideas

    def test_one_edit_rereads_one_note(self, tmp_path: Path) -> None:
        """After one edit, one note is read and parsed again."""
        write(tmp_path, VAULT)
        load_model(tmp_path)
        write(tmp_path, {"c.md": "claim:: c holds firmly"})
        loaded = load_model(tmp_path)
        assert (loaded.stats.read, loaded.stats.parsed) == (1, 1)
        assert loaded.model.ideas["c.md"].claims[0].text == "c holds firmly"

    def test_inline_relations_survive_an_edit(self, tmp_path: Path) -> None:
        """Editing a note keeps its inline relations (ZettelFlow lost them until reload)."""
        write(tmp_path, VAULT)
        before = load_model(tmp_path).model.edges_from("a.md")
        write(tmp_path, {"a.md": VAULT["a.md"] + "\n\nA new paragraph."})
        loaded = load_model(tmp_path)
        assert loaded.stats.parsed == 1
        assert loaded.model.edges_from("a.md") == before
        assert {e.type for e in before} == {"supports", "contradicts"}

    def test_touch_rehashes_without_parsing(self, tmp_path: Path) -> None:
        """A changed mtime with the same bytes is read and hashed, not parsed."""
        write(tmp_path, VAULT)
        load_model(tmp_path)
        os.utime(tmp_path / "b.md", ns=(OLD + 10**9, OLD + 10**9))
        loaded = load_model(tmp_path)
        assert (loaded.stats.read, loaded.stats.parsed) == (1, 0)

    def test_racy_files_are_rehashed(self, tmp_path: Path) -> None:
        """Files modified just before the cache was written are re-hashed, never trusted."""
        write(tmp_path, VAULT, old=False)
        load_model(tmp_path)
        (tmp_path / "c.md").write_text("claim:: changed in the same second")
        loaded = load_model(tmp_path)
        assert loaded.stats.parsed == 1
        assert loaded.model.ideas["c.md"].claims[0].text == "changed in the same second"

    def test_rename_rekeys_without_parsing(self, tmp_path: Path) -> None:
        """A renamed note keeps its parse and its incoming edges follow it."""
        write(tmp_path, {**VAULT, "sub/d.md": "[[c]]"})
        load_model(tmp_path)
        (tmp_path / "c.md").rename(tmp_path / "sub" / "c.md")
        loaded = load_model(tmp_path)
        model = loaded.model
        assert (loaded.stats.read, loaded.stats.parsed) == (1, 0)
        assert "c.md" not in model.ideas
        assert model.ideas["sub/c.md"].claims[0].text == "c holds"
        assert {(e.source, e.type) for e in model.edges_to("sub/c.md")} == {
            ("a.md", "contradicts"),
            ("b.md", "link"),
            ("sub/d.md", "link"),
        }

    def test_new_note_resolves_old_links(self, tmp_path: Path) -> None:
        """A note created later turns an unresolved link into an edge without re-parsing it."""
        write(tmp_path, {"a.md": "[[later]]"})
        assert [link.target for link in load_model(tmp_path).model.unresolved()] == ["later"]
        write(tmp_path, {"later.md": ""})
        loaded = load_model(tmp_path)
        assert loaded.stats.parsed == 1
        assert [e.target for e in loaded.model.edges_from("a.md")] == ["later.md"]

    def test_deleted_note_leaves(self, tmp_path: Path) -> None:
        """A deleted note leaves the model; links to it become unresolved."""
        write(tmp_path, VAULT)
        load_model(tmp_path)
        (tmp_path / "b.md").unlink()
        model = load_model(tmp_path).model
        assert "b.md" not in model.ideas
        assert [link.target for link in model.unresolved()] == ["b"]

    @pytest.mark.parametrize(
        "content",
        [b"not json", b"{}", b'{"layout": 2}', b"[1, 2]", b"\xff\xfe", b""],
        ids=["text", "empty-object", "partial", "list", "binary", "empty"],
    )
    def test_corrupt_cache_is_rebuilt(self, tmp_path: Path, content: bytes) -> None:
        """A corrupt cache is ignored and rewritten."""
        write(tmp_path, VAULT)
        expected = load_model(tmp_path).model
        (tmp_path / CACHE_NAME).write_bytes(content)
        loaded = load_model(tmp_path)
        assert loaded.stats.parsed == 4
        assert loaded.stats.cache_written
        assert loaded.model.ideas == expected.ideas
        assert json.loads((tmp_path / CACHE_NAME).read_bytes())["layout"] == 2

    def test_damaged_entries_are_reparsed(self, tmp_path: Path) -> None:
        """A cache entry of the wrong shape is parsed again, the rest reused."""
        write(tmp_path, VAULT)
        expected = load_model(tmp_path).model
        data = json.loads((tmp_path / CACHE_NAME).read_bytes())
        sha = data["notes"]["a.md"][2]
        data["parses"][sha] = ["wrong"]
        data["notes"]["b.md"][3] = ["x"]
        (tmp_path / CACHE_NAME).write_text(json.dumps(data))
        loaded = load_model(tmp_path)
        assert loaded.stats.parsed == 1
        assert loaded.model.ideas == expected.ideas

    def test_no_cache_option(self, tmp_path: Path) -> None:
        """``cache=False`` writes nothing at all."""
        write(tmp_path, VAULT)
        load_model(tmp_path, cache=False)
        assert not (tmp_path / ".vaultsync").exists()

    def test_read_only_vault(self, tmp_path: Path) -> None:
        """A vault where the cache cannot be written is still read."""
        write(tmp_path, VAULT)
        (tmp_path / ".vaultsync").write_text("a file where the folder should be")
        loaded = load_model(tmp_path)
        assert (len(loaded.model.ideas), loaded.stats.cache_written) == (4, False)


class TestReadOnly:
    def test_never_writes_a_note(self, tmp_path: Path) -> None:
        """Every file but the cache is byte-identical (and keeps its mtime) after reading."""
        write(tmp_path, {**VAULT, "bad.md": "---\n: [\n---\n", "img.png": "x"})
        before = fingerprint(tmp_path)
        times = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
        load_model(tmp_path)
        load_model(tmp_path)
        assert fingerprint(tmp_path) == before
        assert {p: p.stat().st_mtime_ns for p in times} == times
        assert [p.name for p in (tmp_path / ".vaultsync").iterdir()] == ["knowledge-cache.json"]

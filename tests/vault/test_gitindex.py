"""``vault.gitindex``: written files enter the index with their stat data, unread; guarded."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode
from syncdriver import make_spec
from vaultsync.core.model import NoteSpec
from vaultsync.vault import gitindex
from vaultsync.vault.manifest import blob_id
from vaultsync.vault.sync import sync_vault

ROOT = Path(__file__).resolve().parents[2]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def staged_blob(cwd: Path, path: str) -> str:
    return git(cwd, "ls-files", "--stage", path).split()[1]


def specs(count: int) -> list[NoteSpec]:
    return [
        make_spec(f"N/{i % 7}/note {i:03}.md", f"# Note {i}\n\nbody {i}\n") for i in range(count)
    ]


class TestVersionGuard:
    @pytest.mark.parametrize(
        ("version", "supported"),
        [
            ("1.14.9", False),
            ("1.15.0", True),
            ("1.18.0", True),
            ("1.21.0", True),
            ("1.21.7", True),
            ("1.22.0", False),
            ("2.0.0", False),
            ("", False),
            ("main", False),
        ],
    )
    def test_only_verified_versions_take_the_fast_path(self, version: str, supported: bool) -> None:
        """Versions outside ``VERIFIED`` (or unreadable) fall back to the public API."""
        assert gitindex.fast_path_supported(version) is supported

    def test_pyproject_bound_is_the_verified_range(self) -> None:
        """pyproject's pygit2 bound is exactly ``VERIFIED``: moving one means checking both."""
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        bound = next(d for d in project["dependencies"] if d.startswith("pygit2"))
        (low_major, low_minor), (high_major, high_minor) = gitindex.VERIFIED
        assert bound == f"pygit2>={low_major}.{low_minor},<{high_major}.{high_minor}"

    def test_installed_pygit2_takes_the_fast_path(self) -> None:
        """The pygit2 pyproject allows is one the fast path was verified on."""
        assert gitindex.FAST


class TestContract:
    def test_after_a_sync_git_sees_a_clean_tree_without_refreshing(self, tmp_path: Path) -> None:
        """The real git binary: ``diff-files`` (no index refresh) and ``status`` report nothing."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(150))
        assert git(vault, "diff-files", "--name-only") == ""
        assert git(vault, "status", "--porcelain") == ""

    def test_fast_path_records_without_reading_the_file(self, tmp_path: Path) -> None:
        """Handed a blob id that is not the file's, the fast path records it: it never read it."""
        git(tmp_path, "init", "-q")
        (tmp_path / "a.md").write_bytes(b"on disk\n")
        found = (tmp_path / "a.md").lstat()
        repo = pygit2.Repository(str(tmp_path))
        claimed = repo.create_blob(b"what the sync says it wrote\n")  # stored, as a sync does
        index = repo.index
        gitindex.add_written(index, "a.md", claimed, FileMode.BLOB, found, fast=True)
        index.write()
        assert staged_blob(tmp_path, "a.md") == str(claimed)
        debug = git(tmp_path, "ls-files", "--debug", "a.md")
        assert f"ino: {found.st_ino & 0xFFFFFFFF}" in debug
        assert f"size: {found.st_size}" in debug

    def test_fallback_reads_the_file(self, tmp_path: Path) -> None:
        """The public-API fallback hashes what is on disk, whatever blob it is handed."""
        git(tmp_path, "init", "-q")
        (tmp_path / "a.md").write_bytes(b"on disk\n")
        found = (tmp_path / "a.md").lstat()
        claimed = pygit2.Oid(hex=blob_id(b"what the sync says it wrote\n"))
        index = pygit2.Repository(str(tmp_path)).index
        gitindex.add_written(index, "a.md", claimed, FileMode.BLOB, found, fast=False)
        index.write()
        assert staged_blob(tmp_path, "a.md") == blob_id(b"on disk\n")
        assert git(tmp_path, "diff-files", "--name-only") == ""

    def test_sync_on_the_fallback_is_as_clean(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With the fast path off (an unverified pygit2), a sync leaves git just as clean."""
        monkeypatch.setattr(gitindex, "FAST", False)
        vault = tmp_path / "vault"
        sync_vault(vault, specs(150))
        assert git(vault, "diff-files", "--name-only") == ""
        assert git(vault, "status", "--porcelain") == ""
        head = pygit2.Repository(str(vault)).head.peel(pygit2.Commit).tree
        assert staged_blob(vault, "N/3/note 003.md") == str(head["N/3/note 003.md"].id)

    def test_stat_fields_are_the_files(self, tmp_path: Path) -> None:
        """Every stat field git compares is the file's (low 32 bits, as git keeps them)."""
        vault = tmp_path / "vault"
        sync_vault(vault, specs(3))
        entry = pygit2.Repository(str(vault)).index["N/1/note 001.md"]
        found = os.lstat(vault / "N/1/note 001.md")
        debug = git(vault, "ls-files", "--debug", "N/1/note 001.md")
        assert f"mtime: {found.st_mtime_ns // 10**9}:{found.st_mtime_ns % 10**9}" in debug
        assert f"ctime: {found.st_ctime_ns // 10**9}:{found.st_ctime_ns % 10**9}" in debug
        assert f"dev: {found.st_dev & 0xFFFFFFFF}\tino: {found.st_ino & 0xFFFFFFFF}" in debug
        assert f"uid: {found.st_uid}\tgid: {found.st_gid}" in debug
        assert f"size: {found.st_size}" in debug
        assert str(entry.id) == blob_id((vault / "N/1/note 001.md").read_bytes())

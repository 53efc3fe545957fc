"""The vault's own ``.git`` is private (0700, nothing group/other readable) whatever the umask."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from vaultsync.vault.vcs import PACK_AT, VaultRepo


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def opened(vault: Path) -> VaultRepo:
    repo = VaultRepo.open(vault, create=True)
    assert repo is not None
    return repo


def open_entries(git_dir: Path) -> list[str]:
    """Every path under ``git_dir`` (itself included) with a group or other permission bit."""
    found = []
    for path in [git_dir, *git_dir.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & 0o077:
            found.append(str(path.relative_to(git_dir.parent)))
    return found


class TestPrivateGitDir:
    @pytest.mark.usefixtures("umask_022")
    def test_existing_vault_folder(self, tmp_path: Path) -> None:
        """A vault folder a user made under umask 022 gets a 0700 .git with private objects."""
        vault = tmp_path / "vault"
        vault.mkdir()
        repo = opened(vault)
        repo.commit({"a.md": b"a\n", "b/c.md": b"c\n"}, fingerprint="x")
        assert stat.S_IMODE((vault / ".git").stat().st_mode) == 0o700
        assert open_entries(vault / ".git") == []

    @pytest.mark.usefixtures("umask_022")
    def test_packs_are_private(self, tmp_path: Path) -> None:
        """Blobs stored as a pack are read-only for the owner alone."""
        repo = opened(tmp_path)
        repo.commit({f"n{i}.md": f"{i}\n".encode() for i in range(PACK_AT)}, fingerprint="x")
        packs = list((tmp_path / ".git" / "objects" / "pack").iterdir())
        assert packs
        assert {stat.S_IMODE(p.stat().st_mode) for p in packs} == {0o400}

    @pytest.mark.usefixtures("umask_022")
    def test_open_repository_repaired(self, tmp_path: Path) -> None:
        """A vault whose .git was made world-readable is repaired when opened to write."""
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / "a.md").write_text("a\n")
        subprocess.run(["git", "-C", str(tmp_path), "add", "a.md"], check=True)
        assert open_entries(tmp_path / ".git")
        opened(tmp_path)
        assert open_entries(tmp_path / ".git") == []

    @pytest.mark.usefixtures("umask_022")
    def test_read_only_open_changes_nothing(self, tmp_path: Path) -> None:
        """Opening without ``create`` (status, check) leaves the modes alone."""
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        assert VaultRepo.open(tmp_path, create=False) is not None
        assert stat.S_IMODE((tmp_path / ".git").stat().st_mode) == 0o755

    @pytest.mark.usefixtures("umask_022")
    def test_larger_repository_untouched(self, tmp_path: Path) -> None:
        """The repository of a larger work tree keeps the modes its owner chose."""
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        vault = tmp_path / "notes"
        vault.mkdir()
        repo = opened(vault)
        repo.commit({"a.md": b"a\n"}, fingerprint="x")
        assert not repo.private
        assert stat.S_IMODE((tmp_path / ".git").stat().st_mode) == 0o755

"""``pipeline.packfile``: packs that git, libgit2 and pygit2 read back exactly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.manifest import blob_id
from pipeline.packfile import Pack, _entry_header, build_packs


def install(repo_dir: Path, packs: tuple[Pack, ...]) -> pygit2.Repository:
    """Write packs where git looks for them and open the repository."""
    repo = pygit2.init_repository(str(repo_dir))
    folder = Path(repo.path) / "objects" / "pack"
    for pack in packs:
        (folder / f"pack-{pack.name}.pack").write_bytes(pack.pack)
        (folder / f"pack-{pack.name}.idx").write_bytes(pack.index)
    return pygit2.Repository(str(repo_dir))


def git(repo_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo_dir), *args], capture_output=True, text=True, check=True
    ).stdout


def test_git_verifies_and_reads_every_blob(tmp_path: Path) -> None:
    """``git verify-pack`` and ``fsck --strict`` accept the pack; ``cat-file`` gives each blob."""
    blobs = [f"note {i}\n".encode() * (i + 1) for i in range(300)]
    packs = build_packs(blobs)
    install(tmp_path, packs)
    (pack,) = packs
    git(tmp_path, "verify-pack", str(tmp_path / ".git/objects/pack" / f"pack-{pack.name}.idx"))
    git(tmp_path, "fsck", "--strict", "--full")
    for data in blobs[::37]:
        assert git(tmp_path, "cat-file", "blob", blob_id(data)).encode() == data
    assert pack.ids == tuple(sorted(blob_id(data) for data in blobs))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(blobs=st.lists(st.binary(max_size=3000), min_size=1, max_size=30))
def test_pygit2_reads_back_exact_bytes(
    tmp_path_factory: pytest.TempPathFactory, blobs: list[bytes]
) -> None:
    """Any bytes (empty, binary, any size) come back exactly, each id as git computes it."""
    folder = tmp_path_factory.mktemp("pack")
    repo = install(folder, build_packs(blobs))
    for data in blobs:
        assert repo[pygit2.Oid(hex=blob_id(data))].read_raw() == data


def test_duplicates_are_stored_once() -> None:
    """The same bytes twice make one entry."""
    (pack,) = build_packs([b"same\n", b"other\n", b"same\n"])
    assert len(pack.ids) == 2


def test_offsets_past_the_limit_start_another_pack(tmp_path: Path) -> None:
    """When the next offset would not fit the index, the rest goes to another valid pack."""
    blobs = [bytes([i]) * 5000 for i in range(40)]
    packs = build_packs(blobs, max_offset=400)
    assert len(packs) > 1
    repo = install(tmp_path, packs)
    git(tmp_path, "fsck", "--strict", "--full")
    assert all(repo[pygit2.Oid(hex=blob_id(data))].read_raw() == data for data in blobs)


def test_entry_header_sizes() -> None:
    """The size is written 4 bits, then 7 bits per byte, low bits first."""
    assert _entry_header(0) == bytes([0x30])
    assert _entry_header(15) == bytes([0x3F])
    assert _entry_header(16) == bytes([0xB0, 0x01])
    assert _entry_header(1 << 20) == bytes([0xB0, 0x80, 0x80, 0x04])

"""``vaultsync.vault.packfile``: packs that git, libgit2 and pygit2 read back exactly."""

from __future__ import annotations

import io
import os
import struct
import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaultsync.vault.manifest import blob_id
from vaultsync.vault.packfile import MAX_OFFSET, Pack, _entry_header, plan_packs, write_pack
from vaultsync.vault.vcs import PACK_AT, VaultRepo


def by_id(blobs: list[bytes]) -> dict[str, bytes]:
    """Blobs keyed by their git id, as vcs hands them over (the same bytes twice: one key)."""
    return {blob_id(data): data for data in blobs}


def install(repo_dir: Path, blobs: list[bytes], *, max_offset: int = MAX_OFFSET) -> list[Pack]:
    """Write the blobs' packs where git looks for them, as vcs does; the packs written."""
    repo = pygit2.init_repository(str(repo_dir))
    folder = Path(repo.path) / "objects" / "pack"
    packs = []
    for group in plan_packs(by_id(blobs), max_offset=max_offset):
        stream = io.BytesIO()
        pack = write_pack(group, stream)
        (folder / f"pack-{pack.name}.pack").write_bytes(stream.getvalue())
        (folder / f"pack-{pack.name}.idx").write_bytes(pack.index)
        packs.append(pack)
    return packs


def opened(repo_dir: Path) -> pygit2.Repository:
    return pygit2.Repository(str(repo_dir))


def git(repo_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo_dir), *args], capture_output=True, text=True, check=True
    ).stdout


def test_git_verifies_and_reads_every_blob(tmp_path: Path) -> None:
    """``git verify-pack`` and ``fsck --strict`` accept the pack; ``cat-file`` gives each blob."""
    blobs = [f"note {i}\n".encode() * (i + 1) for i in range(300)]
    (pack,) = install(tmp_path, blobs)
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
    install(folder, blobs)
    repo = opened(folder)
    for data in blobs:
        assert repo[pygit2.Oid(hex=blob_id(data))].read_raw() == data


def pack_count(data: bytes) -> int:
    """The object count a pack's header declares."""
    return int(struct.unpack(">I", data[8:12])[0])


def test_a_repeated_blob_is_written_once(tmp_path: Path) -> None:
    """The same blob twice in one group makes one entry; git verifies the pack."""
    repo = pygit2.init_repository(str(tmp_path))
    folder = Path(repo.path) / "objects" / "pack"
    group = [(blob_id(data), data) for data in (b"same\n", b"other\n", b"same\n")]
    stream = io.BytesIO()
    pack = write_pack(group, stream)
    (folder / f"pack-{pack.name}.pack").write_bytes(stream.getvalue())
    (folder / f"pack-{pack.name}.idx").write_bytes(pack.index)
    assert pack.ids == tuple(sorted({blob_id(b"same\n"), blob_id(b"other\n")}))
    assert pack_count(stream.getvalue()) == 2
    git(tmp_path, "verify-pack", str(folder / f"pack-{pack.name}.idx"))


def test_notes_sharing_bytes_are_packed_once(tmp_path: Path) -> None:
    """Notes with the same bytes, committed as packs, store each blob once; git verifies it."""
    notes = {f"n{i:03}.md": f"body {i % PACK_AT}\n".encode() for i in range(3 * PACK_AT)}
    repo = VaultRepo.open(tmp_path, create=True)
    assert repo is not None
    assert repo.commit(notes, fingerprint="x") is not None
    (idx,) = (tmp_path / ".git" / "objects" / "pack").glob("pack-*.idx")
    listed = git(tmp_path, "verify-pack", "-v", str(idx))
    blobs = [line.split()[0] for line in listed.splitlines() if " blob " in line]
    assert sorted(blobs) == sorted({blob_id(data) for data in notes.values()})
    assert len(blobs) == PACK_AT
    assert pack_count(idx.with_suffix(".pack").read_bytes()) == PACK_AT


def test_offsets_past_the_limit_start_another_pack(tmp_path: Path) -> None:
    """When the next offset would not fit the index, the rest goes to another valid pack."""
    blobs = [bytes([i]) * 5000 for i in range(40)]
    assert len(install(tmp_path, blobs, max_offset=12_000)) > 1
    repo = opened(tmp_path)
    git(tmp_path, "fsck", "--strict", "--full")
    assert all(repo[pygit2.Oid(hex=blob_id(data))].read_raw() == data for data in blobs)


def test_entry_header_sizes() -> None:
    """The size is written 4 bits, then 7 bits per byte, low bits first."""
    assert _entry_header(0) == bytes([0x30])
    assert _entry_header(15) == bytes([0x3F])
    assert _entry_header(16) == bytes([0xB0, 0x01])
    assert _entry_header(1 << 20) == bytes([0xB0, 0x80, 0x80, 0x04])


def test_incompressible_blobs_stay_within_the_offset_limit() -> None:
    """Random bytes deflate to more than their size; every offset still fits the limit."""
    blobs = [os.urandom(1000) for _ in range(30)]
    limit = 5000
    for group in plan_packs(by_id(blobs), max_offset=limit):
        pack = write_pack(group, io.BytesIO())
        count = len(pack.ids)
        start = 8 + 256 * 4 + 24 * count  # header, fanout, ids, CRCs
        offsets = struct.unpack(f">{count}I", pack.index[start : start + 4 * count])
        assert max(offsets) <= limit

"""``core.fsio``: atomic writes by path and through folder descriptors, locks, the racy rule."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core import fsio

TEMP = re.compile(r"\.x-[0-9a-f]{12}\.tmp")


@pytest.fixture
def folder_fd(tmp_path: Path) -> Iterator[int]:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


class TestByPath:
    def test_atomic_write_replaces_with_the_mode(self, tmp_path: Path) -> None:
        """The target gets the bytes and exactly the mode; no temp file stays."""
        target = tmp_path / "a.json"
        target.write_bytes(b"old")
        fsio.atomic_write(target, b"new", mode=0o640)
        assert target.read_bytes() == b"new"
        assert mode_of(target) == 0o640
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]

    def test_atomic_write_of_chunks_writes_them_in_order(self, tmp_path: Path) -> None:
        """Chunks given instead of bytes land one after another, nothing between them."""
        target = tmp_path / "a.bin"
        fsio.atomic_write(target, (b"head\n", b"", b"first", b"second"))
        assert target.read_bytes() == b"head\nfirstsecond"

    @pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
    def test_atomic_write_of_any_buffer_writes_it_whole(self, tmp_path: Path, kind: Any) -> None:
        """A buffer of any kind is written as it is, never taken for chunks."""
        target = tmp_path / "a.bin"
        fsio.atomic_write(target, kind(b"all of it"))
        assert target.read_bytes() == b"all of it"

    def test_failure_leaves_the_target_and_no_temp(self, tmp_path: Path) -> None:
        """An error inside the block keeps the old file and removes the temp file."""
        target = tmp_path / "a.json"
        target.write_bytes(b"old")
        with pytest.raises(RuntimeError), fsio.atomic_file(target) as handle:
            handle.write(b"half")
            raise RuntimeError
        assert target.read_bytes() == b"old"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]

    def test_named_file_gets_the_name_given_last(self, tmp_path: Path) -> None:
        """``atomic_file_named`` places the file under the name set while writing."""
        with fsio.atomic_file_named(tmp_path, prefix="tmp_", mode=0o444) as (handle, name):
            handle.write(b"pack")
            name("first")
            name("pack-1.pack")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["pack-1.pack"]
        assert mode_of(tmp_path / "pack-1.pack") == 0o444

    def test_unnamed_file_is_an_error_and_removed(self, tmp_path: Path) -> None:
        """A block that never names its file raises and leaves nothing behind."""
        with (
            pytest.raises(ValueError, match="never named"),
            fsio.atomic_file_named(tmp_path, prefix="tmp_") as (handle, _name),
        ):
            handle.write(b"pack")
        assert list(tmp_path.iterdir()) == []


class TestThroughAFolderDescriptor:
    def test_temp_is_new_private_and_named_by_the_pattern(
        self, tmp_path: Path, folder_fd: int
    ) -> None:
        """``write_temp_at`` makes a fresh file of exactly ``mode``, whatever the umask."""
        old = os.umask(0o077)
        try:
            name, found = fsio.write_temp_at(folder_fd, b"data", prefix=".x-", mode=0o640)
        finally:
            os.umask(old)
        assert TEMP.fullmatch(name)
        assert (tmp_path / name).read_bytes() == b"data"
        assert mode_of(tmp_path / name) == 0o640
        assert found.st_ino == (tmp_path / name).stat().st_ino

    def test_link_never_replaces_a_file(self, tmp_path: Path, folder_fd: int) -> None:
        """``link_at`` places a temp under a free name only; the temp keeps its name."""
        (tmp_path / "taken.md").write_bytes(b"user")
        temp, _found = fsio.write_temp_at(folder_fd, b"ours", prefix=".x-")
        assert fsio.link_at(folder_fd, temp, "taken.md") is False
        assert (tmp_path / "taken.md").read_bytes() == b"user"
        assert fsio.link_at(folder_fd, temp, "free.md") is True
        assert (tmp_path / "free.md").read_bytes() == b"ours"
        assert (tmp_path / temp).exists()

    def test_atomic_write_at_replaces_a_symlink_never_its_target(
        self, tmp_path: Path, folder_fd: int
    ) -> None:
        """A symlink at the name is replaced by the file; what it pointed to is untouched."""
        outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
        outside.write_bytes(b"precious")
        (tmp_path / "a.json").symlink_to(outside)
        fsio.atomic_write_at(folder_fd, "a.json", b"ours", prefix=".x-")
        assert not (tmp_path / "a.json").is_symlink()
        assert (tmp_path / "a.json").read_bytes() == b"ours"
        assert outside.read_bytes() == b"precious"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]

    def test_failed_rename_removes_the_temp(self, tmp_path: Path, folder_fd: int) -> None:
        """A rename that fails removes the temp file (here: the target is a folder)."""
        (tmp_path / "a.json").mkdir()
        (tmp_path / "a.json" / "inside").write_bytes(b"x")
        with pytest.raises(OSError, match=r"directory|Is a"):
            fsio.atomic_write_at(folder_fd, "a.json", b"ours", prefix=".x-")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]

    def test_sync_filesystem(self, folder_fd: int) -> None:
        """``sync_filesystem`` accepts a folder descriptor (syncfs or sync)."""
        fsio.sync_filesystem(folder_fd)


class TestLocks:
    def test_lock_file_symlink_is_refused(self, tmp_path: Path) -> None:
        """``open_lock`` never follows a symlink in the lock file's place."""
        (tmp_path / "elsewhere").write_bytes(b"")
        (tmp_path / "lock").symlink_to(tmp_path / "elsewhere")
        with pytest.raises(OSError) as caught:
            fsio.open_lock(tmp_path / "lock")
        assert caught.value.errno == errno.ELOOP

    def test_missing_lock_is_not_created_without_create(self, tmp_path: Path) -> None:
        """``create=False`` on a missing lock yields ``False`` and creates nothing."""
        with fsio.file_lock(tmp_path / "lock", timeout=1, create=False) as held:
            assert held is False
        assert list(tmp_path.iterdir()) == []

    def test_busy_lock_times_out_then_is_taken(self, tmp_path: Path) -> None:
        """A held lock makes ``acquire`` give up; once released it is taken."""
        lock = tmp_path / "lock"
        other = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(other, fcntl.LOCK_EX)
            with pytest.raises(fsio.LockTimeout), fsio.file_lock(lock, timeout=0.1):
                pass
            fcntl.flock(other, fcntl.LOCK_UN)
            with fsio.file_lock(lock, timeout=1) as held:
                assert held is True
        finally:
            os.close(other)

    def test_waiter_gets_the_lock_when_it_is_released(self, tmp_path: Path) -> None:
        """A blocked ``acquire`` is woken by the release (it queues, it does not give up)."""
        lock = tmp_path / "lock"
        order: list[str] = []
        inside = threading.Event()
        leave = threading.Event()

        def holder() -> None:
            with fsio.file_lock(lock, timeout=5):
                order.append("holder in")
                inside.set()
                leave.wait(5)
                order.append("holder out")

        thread = threading.Thread(target=holder)
        thread.start()
        inside.wait(5)
        threading.Timer(0.1, leave.set).start()
        with fsio.file_lock(lock, timeout=30):
            order.append("waiter in")
        thread.join()
        assert order == ["holder in", "holder out", "waiter in"]

    def test_shared_locks_coexist_and_exclude_a_writer(self, tmp_path: Path) -> None:
        """Two shared holders at once; an exclusive one must wait for both."""
        lock = tmp_path / "lock"
        with (
            fsio.file_lock(lock, timeout=1, shared=True),
            fsio.file_lock(lock, timeout=1, shared=True),
            pytest.raises(fsio.LockTimeout),
            fsio.file_lock(lock, timeout=0.1),
        ):
            pass
        with fsio.file_lock(lock, timeout=1) as held:
            assert held

    def test_lock_through_a_folder_descriptor(self, tmp_path: Path, folder_fd: int) -> None:
        """``dir_fd`` opens the lock file relative to that folder."""
        with fsio.file_lock("lock", timeout=1, dir_fd=folder_fd) as held:
            assert held
        assert (tmp_path / "lock").exists()


class TestRacy:
    @given(st.integers(0, 2**62), st.integers(0, 2**62), st.integers(0, 2**40))
    def test_a_later_mtime_is_never_less_racy(self, mtime: int, recorded: int, later: int) -> None:
        """Racy for one mtime means racy for every later one, and for a later record never less."""
        if fsio.is_racy(mtime, recorded):
            assert fsio.is_racy(mtime + later, recorded)
        if not fsio.is_racy(mtime, recorded):
            assert not fsio.is_racy(mtime, recorded + later)

    def test_a_file_newer_than_the_record_is_racy(self) -> None:
        """Stat data recorded before the file's mtime prove nothing."""
        assert fsio.is_racy(10 * fsio.RACY_NS, 5 * fsio.RACY_NS)

    def test_edges(self) -> None:
        """Just inside the window is racy, just outside is not."""
        assert fsio.is_racy(10 * fsio.RACY_NS - fsio.RACY_NS, 10 * fsio.RACY_NS)
        assert not fsio.is_racy(10 * fsio.RACY_NS - fsio.RACY_NS - 1, 10 * fsio.RACY_NS)


def test_a_fifo_where_a_note_was_is_not_read(tmp_path: Path) -> None:
    """A named pipe is no regular file: read as none at once, never waiting for a writer."""
    fifo = tmp_path / "note.md"
    os.mkfifo(fifo)
    found: list[bytes | None] = []
    reader = threading.Thread(target=lambda: found.append(fsio.read_regular(fifo)), daemon=True)
    reader.start()
    reader.join(timeout=30)  # a reader that waits for a writer never returns
    assert found == [None]
    (tmp_path / "plain.md").write_bytes(b"text\n")
    assert fsio.read_regular(tmp_path / "plain.md") == b"text\n"
    (tmp_path / "link.md").symlink_to(tmp_path / "plain.md")
    assert fsio.read_regular(tmp_path / "link.md") is None

"""The one cache envelope: what it wrote reads back; anything else reads as nothing."""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core import cachefile, parallel

HEAD = cachefile.envelope("held", 1, "key")


@pytest.fixture(autouse=True)
def any_heap_may_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a helper is forked does not hang on how much memory the test process holds."""
    monkeypatch.setattr(cachefile, "HELPER_HEAP_MIB", 1 << 30)


@given(st.binary(max_size=200), st.text(max_size=20), st.integers(0, 9))
def test_what_is_written_reads_back(payload: bytes, key: str, version: int) -> None:
    """A payload written under a head reads back whole, under that head only."""
    with tempfile.TemporaryDirectory() as folder:  # one per example, removed after it
        path = Path(folder) / "cache"
        head = cachefile.envelope("thing", version, key)
        assert cachefile.write(path, head, payload, durable=False)
        assert cachefile.read(path, head) == payload
        assert cachefile.holds(path, head)
        assert cachefile.read(path, cachefile.envelope("thing", version + 1, key)) is None
        assert cachefile.read(path, cachefile.envelope("thing", version, key + "x")) is None
        assert cachefile.read(path, cachefile.envelope("other", version, key)) is None


@given(st.lists(st.binary(max_size=50), max_size=5))
def test_a_payload_of_chunks_reads_back_as_they_were_joined(chunks: list[bytes]) -> None:
    """Chunks written one after another read back as one payload, in their order."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache"
        assert cachefile.write(path, HEAD, tuple(chunks), durable=False)
        assert cachefile.read(path, HEAD) == b"".join(chunks)


@given(st.integers(0, 60))
def test_a_truncated_or_corrupt_pickle_is_no_cache(cut: int) -> None:
    """A pickle cut anywhere, or garbage after the head, loads as ``None``, never an error."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache"
        head = cachefile.envelope("memo", 1, "k")
        body = pickle.dumps({"a": [1, 2, 3], "b": "text" * 5})
        cut_off = (head + body)[: len(head) + cut] if cut < len(body) else head + b"\x80junk"
        path.write_bytes(cut_off)
        assert cachefile.load_pickle(path, head) is None


def test_a_missing_file_is_no_cache(tmp_path: Path) -> None:
    """Nothing there: ``None`` and ``False``."""
    head = cachefile.envelope("memo", 1, "k")
    assert cachefile.read(tmp_path / "none", head) is None
    assert not cachefile.holds(tmp_path / "none", head)


def test_a_value_is_held_only_in_a_resident_process(tmp_path: Path) -> None:
    """Outside ``resident``, hold keeps nothing; inside, held gives the very object back."""
    path, value = tmp_path / "c.bin", {"a": 1}
    assert cachefile.write(path, HEAD, b"x")
    cachefile.hold(path, HEAD, value)
    assert cachefile.held(path, HEAD) is None
    with cachefile.resident():
        cachefile.hold(path, HEAD, value)
        assert cachefile.held(path, HEAD) is value
        assert cachefile.held(path, b"another head\n") is None
    assert cachefile.held(path, HEAD) is None  # leaving forgets


def test_a_held_value_is_dropped_once_its_file_is_replaced(tmp_path: Path) -> None:
    """Another write of the file (a new inode) or its removal: the held value is not given."""
    path = tmp_path / "c.bin"
    with cachefile.resident():
        assert cachefile.write(path, HEAD, b"x")
        cachefile.hold(path, HEAD, "mine")
        assert cachefile.write(path, HEAD, b"x")
        assert cachefile.held(path, HEAD) is None
        cachefile.hold(path, HEAD, "mine")
        path.unlink()
        assert cachefile.held(path, HEAD) is None


def test_only_one_cache_folder_is_held(tmp_path: Path) -> None:
    """Holding a value of another cache folder forgets the first folder's."""
    first, second = tmp_path / "a" / "c.bin", tmp_path / "b" / "c.bin"
    with cachefile.resident():
        for path in (first, second):
            assert cachefile.write(path, HEAD, b"x")
            cachefile.hold(path, HEAD, path.parent.name)
        assert cachefile.held(first, HEAD) is None
        assert cachefile.held(second, HEAD) == "b"


def test_load_held_loads_once_and_never_holds_nothing(tmp_path: Path) -> None:
    """The first call loads and holds; the next takes the held value; ``None`` is not held."""
    path, loads = tmp_path / "c.bin", []
    assert cachefile.write(path, HEAD, b"x")

    def load() -> object:
        loads.append(1)
        return None if len(loads) == 1 else "loaded"

    with cachefile.resident():
        assert cachefile.load_held(path, HEAD, load) is None
        assert cachefile.load_held(path, HEAD, load) == "loaded"
        assert cachefile.load_held(path, HEAD, load) == "loaded"
    assert loads == [1, 1]


def _writer(path: Path, body: bytes, *, ok: bool = True) -> Callable[[], bool]:
    def write() -> bool:
        return ok and cachefile.write(path, HEAD, body)

    return write


def test_a_one_shot_save_writes_at_once(tmp_path: Path) -> None:
    """Outside ``resident``, ``save`` is the write itself."""
    path = tmp_path / "c.bin"
    assert cachefile.save(path, HEAD, "v", _writer(path, b"now"))
    assert cachefile.read(path, HEAD) == b"now"
    assert not cachefile.save(path, HEAD, "v", _writer(path, b"no", ok=False))


def test_a_resident_save_is_held_at_once_and_written_at_the_flush(tmp_path: Path) -> None:
    """Resident: the value is there for the next sync before the file is; the flush writes it."""
    path = tmp_path / "c.bin"
    assert cachefile.write(path, HEAD, b"old")
    with cachefile.resident():
        assert cachefile.save(path, HEAD, "new", _writer(path, b"new"))
        assert cachefile.read(path, HEAD) == b"old"
        assert cachefile.held(path, HEAD) == "new"
        cachefile.flush()
        assert cachefile.read(path, HEAD) == b"new"
        assert cachefile.held(path, HEAD) == "new"
        assert cachefile.write(path, HEAD, b"theirs")  # another process's write, after it
        assert cachefile.held(path, HEAD) is None


def test_leaving_the_resident_block_writes_what_is_left(tmp_path: Path) -> None:
    """No save is lost when the watcher stops between its sync and the flush."""
    path = tmp_path / "c.bin"
    with cachefile.resident():
        cachefile.save(path, HEAD, "v", _writer(path, b"kept"))
    assert cachefile.read(path, HEAD) == b"kept"


def test_a_save_not_written_is_not_held(tmp_path: Path) -> None:
    """A flush whose write fails drops the value: the next sync reads what the file has."""
    path = tmp_path / "c.bin"
    with cachefile.resident():
        cachefile.save(path, HEAD, "v", _writer(path, b"x", ok=False))
        cachefile.flush()
        assert cachefile.held(path, HEAD) is None


def test_a_later_save_of_a_file_is_the_one_written(tmp_path: Path) -> None:
    """Two saves before a flush: the second's bytes and value."""
    path = tmp_path / "c.bin"
    with cachefile.resident():
        cachefile.save(path, HEAD, "first", _writer(path, b"first"))
        cachefile.save(path, HEAD, "second", _writer(path, b"second"))
        cachefile.flush()
        assert (cachefile.read(path, HEAD), cachefile.held(path, HEAD)) == (b"second", "second")


def test_another_folders_save_writes_the_first_folders_saves(tmp_path: Path) -> None:
    """Moving to another cache folder (``sync --each``) writes what the first one left."""
    first, second = tmp_path / "a" / "c.bin", tmp_path / "b" / "c.bin"
    with cachefile.resident():
        cachefile.save(first, HEAD, "a", _writer(first, b"a"))
        cachefile.save(second, HEAD, "b", _writer(second, b"b"))
        assert cachefile.read(first, HEAD) == b"a"
        assert cachefile.held(first, HEAD) is None


def test_a_write_that_fails_at_the_flush_is_no_cache(tmp_path: Path) -> None:
    """A write raising at the flush leaves no file and no held value, and the flush goes on."""
    first, second = tmp_path / "c.bin", tmp_path / "d.bin"

    def broken() -> bool:
        raise RecursionError("too deep to pickle")

    with cachefile.resident():
        cachefile.save(first, HEAD, "v", broken)
        cachefile.save(second, HEAD, "w", _writer(second, b"w"))
        cachefile.flush()
        assert cachefile.held(first, HEAD) is None and not first.exists()
        assert cachefile.read(second, HEAD) == b"w"


def _pid_writer(path: Path) -> Callable[[], bool]:
    """A write of the writing process's id: who wrote the file."""
    return lambda: cachefile.write(path, HEAD, str(os.getpid()).encode(), durable=False)


def _writer_pid(path: Path) -> int | None:
    data = cachefile.read(path, HEAD)
    return int(data) if data else None


def test_saves_aside_wait_for_the_hand_over(tmp_path: Path) -> None:
    """Inside ``saved_aside`` a save and a ``later`` write nothing before ``hand_over``."""
    first, second = tmp_path / "c.bin", tmp_path / "d.bin"
    with cachefile.saved_aside():
        assert cachefile.save(first, HEAD, "v", _pid_writer(first))
        assert cachefile.later(second, _pid_writer(second))
        assert not first.exists() and not second.exists()
        assert cachefile.held(first, HEAD) is None  # a one-shot run holds no value
    assert _writer_pid(first) == _writer_pid(second) == os.getpid()  # written on leaving


def test_a_process_holding_much_memory_writes_its_saves_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``HELPER_HEAP_MIB`` no helper is forked: a copy of the heap would double it."""
    monkeypatch.setattr(cachefile, "HELPER_HEAP_MIB", 0)
    path = tmp_path / "c.bin"
    with cachefile.saved_aside():
        cachefile.save(path, HEAD, "v", _pid_writer(path))
        cachefile.hand_over(parallel.MIN_ITEMS)
        assert _writer_pid(path) == os.getpid()  # at the hand-over, not on leaving


def test_a_large_stages_saves_are_written_by_a_helper(tmp_path: Path) -> None:
    """``hand_over`` with many items gives the saves to a forked helper, waited for on leaving."""
    path = tmp_path / "c.bin"
    with cachefile.saved_aside():
        cachefile.save(path, HEAD, "v", _pid_writer(path))
        cachefile.hand_over(parallel.MIN_ITEMS)
    writer = _writer_pid(path)
    assert writer is not None and writer != os.getpid()


def test_each_hand_over_has_its_own_helper(tmp_path: Path) -> None:
    """Two stages handing their saves over: two helpers, both waited for."""
    first, second = tmp_path / "c.bin", tmp_path / "d.bin"
    with cachefile.saved_aside():
        cachefile.save(first, HEAD, "v", _pid_writer(first))
        cachefile.hand_over(parallel.MIN_ITEMS)
        cachefile.save(second, HEAD, "w", _pid_writer(second))
        cachefile.hand_over(parallel.MIN_ITEMS)
    pids = {_writer_pid(first), _writer_pid(second)}
    assert len(pids) == 2 and os.getpid() not in pids


def test_a_small_stages_saves_are_written_at_the_hand_over(tmp_path: Path) -> None:
    """Below the fork's worth, this process writes them then, not later."""
    path = tmp_path / "c.bin"
    with cachefile.saved_aside():
        cachefile.save(path, HEAD, "v", _pid_writer(path))
        cachefile.hand_over(parallel.MIN_ITEMS - 1)
        assert _writer_pid(path) == os.getpid()


def test_without_a_helper_the_saves_are_written_at_the_hand_over(tmp_path: Path) -> None:
    """``saved_aside(helper=False)`` (a first sync): written here, once handed over."""
    path = tmp_path / "c.bin"
    with cachefile.saved_aside(helper=False):
        cachefile.save(path, HEAD, "v", _pid_writer(path))
        assert not path.exists()
        cachefile.hand_over(parallel.MIN_ITEMS)
        assert _writer_pid(path) == os.getpid()


def test_a_save_after_the_hand_over_is_written_on_leaving(tmp_path: Path) -> None:
    """What is saved once the helper began is written by this process, after the helper's."""
    first, second = tmp_path / "c.bin", tmp_path / "d.bin"
    with cachefile.saved_aside():
        cachefile.save(first, HEAD, "v", _pid_writer(first))
        cachefile.hand_over(parallel.MIN_ITEMS)
        cachefile.save(second, HEAD, "w", _pid_writer(second))
    assert _writer_pid(first) != os.getpid()
    assert _writer_pid(second) == os.getpid()


def test_a_helper_that_dies_leaves_the_earlier_file(tmp_path: Path) -> None:
    """A helper killed while writing: the earlier cache stays, and the run goes on."""
    path, parent = tmp_path / "c.bin", os.getpid()
    assert cachefile.write(path, HEAD, b"earlier")

    def dies_in_the_helper() -> bool:
        if os.getpid() != parent:
            os._exit(9)
        return cachefile.write(path, HEAD, b"here")

    with cachefile.saved_aside():
        cachefile.save(path, HEAD, "v", dies_in_the_helper)
        cachefile.hand_over(parallel.MIN_ITEMS)
    assert cachefile.read(path, HEAD) == b"earlier"


def test_a_resident_process_keeps_its_own_policy(tmp_path: Path) -> None:
    """In ``resident``, ``saved_aside`` changes nothing: saves are held until the flush."""
    path = tmp_path / "c.bin"
    with cachefile.resident():
        with cachefile.saved_aside():
            cachefile.save(path, HEAD, "v", _pid_writer(path))
            cachefile.hand_over(parallel.MIN_ITEMS)
        assert not path.exists() and cachefile.held(path, HEAD) == "v"
        cachefile.flush()
        assert _writer_pid(path) == os.getpid()


def test_outside_saved_aside_a_hand_over_does_nothing(tmp_path: Path) -> None:
    """A save outside is written at once; ``hand_over`` then finds nothing to hand."""
    path = tmp_path / "c.bin"
    cachefile.save(path, HEAD, "v", _pid_writer(path))
    cachefile.hand_over(parallel.MIN_ITEMS)
    assert _writer_pid(path) == os.getpid()


@given(st.binary(max_size=100), st.binary(max_size=100))
def test_two_parts_split_apart_as_they_were(first: bytes, second: bytes) -> None:
    """Two parts joined in one payload come apart again, each whole."""
    assert cachefile.split_parts(b"".join(cachefile.two_parts(first, second))) == (first, second)


@pytest.mark.parametrize("cut", [0, 5, 9])
def test_a_payload_cut_inside_its_first_part_is_no_two_parts(cut: int) -> None:
    """Too short for the first part's size, or for the first part itself: a ``ValueError``."""
    with pytest.raises(ValueError):
        cachefile.split_parts(b"".join(cachefile.two_parts(b"x" * 4, b""))[:cut])

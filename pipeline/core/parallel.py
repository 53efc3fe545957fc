"""Work items → results in order, shared with one forked helper process; no other side effect.

Rendering notes and writing git blobs are CPU-bound and independent per note, and the machines
vaultsync runs on have at least two cores.  Threads do not help (the work holds the GIL), and a
process pool would have to pickle the graph and the templates; a ``fork`` shares them for free.
So the parent forks one helper, which takes every other block of items while the parent does the
rest, and sends its results back pickled through a pipe.  Blocks, not single items: the objects an
item reads lie near each other in memory, in item order, and a page that holds items of both
processes is copied by both once either writes to it (a reference count is a write).  At 100,000
notes the peak of a first sync's processes went from 1,038-1,043 MiB (every other item) to
1,009-1,021 MiB (blocks of 256 or 2,048; 1,021 in ``make bench-large`` with blocks of 1,024).

The helper is best effort, never load-bearing:

* an item that fails in the helper is done again by the parent, and if any item fails the
  parent redoes the whole list in order, so the error raised (a template error, say) is the
  one the plain loop would raise, with its own type and message;
* if the helper dies (killed, out of memory, unpicklable result) the parent does its share;
  one that is stopped or stuck is killed after three times the parent's own time (10 s at
  least) and its share done by the parent;
* the helper dies with the parent (``PR_SET_PDEATHSIG`` on Linux), so a killed sync leaves no
  process behind, and it never runs the parent's ``atexit`` handlers or flushes its buffers.

**Where it forks.**  The helper is forked without ``exec``, which is safe where the process's
libraries start no threads of their own behind its back:

* Linux and the BSDs: the helper is used (unless ``VAULTSYNC_JOBS=1``);
* macOS: one process by default.  CPython's own documentation calls ``fork`` without ``exec``
  unsafe there since 3.8 (system libraries may start threads; ``multiprocessing`` switched to
  ``spawn``), so the helper is used only when ``VAULTSYNC_JOBS=2`` asks for it;
* platforms without ``os.fork`` (Windows): always one process.

``VAULTSYNC_JOBS``: ``1`` = one process, never a fork; ``2`` (or more: there is one helper at
most) = the helper wherever ``os.fork`` exists; unset = the defaults above.  Any other value is
a ``ConfigError``.  Below ``min_items`` items everything runs in this process too.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

from vaultsync.core import progress
from vaultsync.core.environment import read_environment
from vaultsync.core.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 200
"""Fewer items than this are not worth a fork (about 10-30 ms with a large heap)."""
BLOCK = 1024
"""Items in a row that one process does at most: enough to fill pages, few enough to share
evenly; a short list has blocks of a sixteenth of it, so both processes still have work."""
MIN_WAIT = 10.0
"""Seconds the parent waits at least for the helper's share, once its own is done."""

JOBS_ENV = "VAULTSYNC_JOBS"
_PR_SET_PDEATHSIG = 1


class _Failed:
    """Stands for an item the helper could not do."""


@dataclass(slots=True)
class _Inbox:
    """The helper's results as they arrive (each counted in ``core.progress`` on arrival)."""

    results: list[object] = field(default_factory=list)
    damaged: bool = False
    """A frame did not load: the results are not to be used, but they were counted."""


_FAILED = _Failed()


def helper_allowed(
    environ: Mapping[str, str] | None = None,
    *,
    platform: str = sys.platform,
    can_fork: bool = hasattr(os, "fork"),
) -> bool:
    """Whether ``split_map`` may fork its helper here (see "Where it forks" above).

    Raises:
        ConfigError: ``VAULTSYNC_JOBS`` is set to something other than a positive integer.
    """
    value = read_environment(environ).jobs.strip()
    if value and not (value.isdigit() and int(value) >= 1):
        raise ConfigError(
            f"{JOBS_ENV}={value!r}: expected 1 (one process) or 2 (a forked helper)",
            hint=f"unset {JOBS_ENV} for the default of this platform",
        )
    if not can_fork or (value and int(value) == 1):
        return False
    return bool(value) or platform != "darwin"


def split_map(work: Callable[[T], R], items: Sequence[T], *, min_items: int = MIN_ITEMS) -> list[R]:
    """``[work(item) for item in items]``, every other block of items done in a forked helper.

    The result, and the error raised if an item fails, are those of the plain loop.  Each
    item done, here or in the helper, is counted in ``core.progress``.

    Raises:
        ConfigError: ``VAULTSYNC_JOBS`` has a value that is not a positive integer.
    """
    if len(items) < max(min_items, 2) or _in_helper or not helper_allowed():
        return _counted(work, items)
    return _shared(work, items)


def _counted(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """The plain loop, counting each item done."""
    out: list[R] = []
    for item in items:
        out.append(work(item))
        progress.advance()
    return out


def _shared(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``split_map`` with the helper: fork, do the even blocks, merge the helper's odd ones."""
    parent = os.getpid()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the helper, which leaves through os._exit
        _helper(work, _blocks(items, 1), read_end, write_end, parent)
    os.close(write_end)
    inbox = _Inbox()
    reader = threading.Thread(target=_receive, args=(read_end, inbox), daemon=True)
    reader.start()  # read while working: the helper would block on a full pipe otherwise
    mine, status = _parent_share(work, items, pid, reader)
    if mine is None:  # an item failed: the plain loop raises the first failure in item order
        return [work(item) for item in items]
    complete = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    expected = len(items) - len(mine)
    usable = complete and not inbox.damaged and len(inbox.results) == expected
    out = _in_order(work, items, mine, inbox.results if usable else [])
    progress.advance(max(0, expected - len(inbox.results)))  # items done here, never counted
    return out


def _in_order(
    work: Callable[[T], R], items: Sequence[T], mine: list[R], theirs: list[object]
) -> list[R]:
    """Both shares' results at their items' places; the helper's missing ones done here."""
    size = _block_size(len(items))
    out: list[R] = []
    for start in range(0, len(items), size):
        block = items[start : start + size]
        # only a list's last block is short: each earlier pair of blocks gave a share `size`
        done = start // (2 * size) * size
        if start % (2 * size) == 0:
            out.extend(mine[done : done + len(block)])
            continue
        for offset, item in enumerate(block):
            result = theirs[done + offset] if theirs else _FAILED
            out.append(work(item) if isinstance(result, _Failed) else cast("R", result))
    return out


def _block_size(count: int) -> int:
    """The items of a block for a list of ``count`` (see ``BLOCK``)."""
    return max(1, min(BLOCK, count // 16))


def _blocks(items: Sequence[T], parity: int) -> list[T]:
    """The items of every other block: the first block's (``parity`` 0) or the second's (1)."""
    size = _block_size(len(items))
    starts = range(parity * size, len(items), 2 * size)
    return [item for start in starts for item in items[start : start + size]]


def _parent_share(
    work: Callable[[T], R], items: Sequence[T], pid: int, reader: threading.Thread
) -> tuple[list[R] | None, int]:
    """The parent's results (``None``: an item failed) and the helper's wait status.

    Waits for the helper once its own share is done; one that is stopped or stuck must not
    hold the sync, so past a generous deadline (three times the parent's own share) it is
    killed and its share left to the parent.
    """
    started = time.monotonic()
    mine: list[R] | None = None
    try:
        mine = _counted(work, _blocks(items, 0))
    except Exception:  # noqa: S110 - the caller redoes the whole list and raises the error
        pass
    except BaseException:
        _kill(pid)
        raise
    finally:
        reader.join(timeout=0 if mine is None else max(MIN_WAIT, 3 * (time.monotonic() - started)))
        if reader.is_alive():
            _kill(pid)
            reader.join()
        _, status = os.waitpid(pid, 0)
    return mine, status


class Background(Generic[R]):
    """``work()`` begun in a forked helper (:func:`in_background`); :meth:`result` is its value.

    Best effort like :func:`split_map`: a helper that fails, dies, sends damaged bytes or has
    not sent its value within ``MIN_WAIT`` seconds of being asked for it is killed if need
    be, and the parent calls ``work()`` itself: same value, same error.  No thread waits on
    the helper (a later fork must not copy one).  Where the system has anonymous memory files
    (Linux's ``memfd_create``), the helper writes its value into one and leaves at once, its
    memory freed: through a pipe nobody reads yet, it waited with its whole heap (at 100,000
    notes, the scan's 190 MiB for the five seconds the notes took to build, beside the
    caches' helper).  Elsewhere it sends its value through the pipe, read when asked for.
    """

    def __init__(self, work: Callable[[], R], *, fork: bool) -> None:
        self._work = work
        self._pid: int | None = None
        self._pipe = -1
        self._value = -1
        """The anonymous file the helper writes its value into (``-1``: the pipe carries it)."""
        if fork:
            self._begin()

    def _begin(self) -> None:
        parent = os.getpid()
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return  # no helper: the parent does the work when asked
        value = _value_file()
        try:
            pid = os.fork()
        except OSError:
            for fd in (read_end, write_end, value):
                _close(fd)
            return
        if pid == 0:  # pragma: no cover - runs in the helper, which leaves through os._exit
            _background_helper(self._work, read_end, write_end, parent, value)
        os.close(write_end)
        self._pid, self._pipe, self._value = pid, read_end, value

    @property
    def forked(self) -> bool:
        """Whether a helper was forked for the work (else :meth:`result` does it here)."""
        return self._pid is not None

    def discard(self) -> None:
        """Stop the helper, its value unwanted (nothing is left behind)."""
        if self._pid is not None:
            self._stop(kill=True)

    def result(self) -> R:
        """The helper's value, or ``work()``'s done here; asked once."""
        if self._pid is None:
            return self._work()
        data: bytes | None = None
        try:
            data = _read_until(self._pipe, time.monotonic() + MIN_WAIT)
        finally:
            # Its whole value read, the helper is leaving on its own: killed now, it could die
            # between closing the pipe and its exit, and its value would be thrown away.
            status = self._stop(kill=data is None)
        if data is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            try:
                if self._value != -1:
                    data = _read_all(self._value)
                return cast("R", pickle.loads(data))  # noqa: S301 - our own child's
            except Exception:  # noqa: S110 - damaged: the parent does the work below
                pass
            finally:
                self._value = _close(self._value)
        return self._work()

    def _stop(self, *, kill: bool) -> int:
        """Reap the helper (killed first if ``kill``) and close the pipe: its wait status.

        The file its value is in stays open when it ended well (``result`` reads it).
        """
        pid, self._pid = self._pid, None
        assert pid is not None  # noqa: S101 - called only while there is a helper
        if kill:
            _kill(pid)
        _, status = os.waitpid(pid, 0)
        os.close(self._pipe)
        if kill or not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            self._value = _close(self._value)
        return status


def in_background(work: Callable[[], R], *, min_items: int = 0) -> Background[R]:
    """``work()`` begun now in a forked helper, while this process goes on; see :class:`Background`.

    ``min_items``: how much work there is (below :data:`MIN_ITEMS`, or where :func:`split_map`
    would not fork, the parent does it when asked for the result).  ``work`` must only read:
    what it changes in the helper is lost.

    Raises:
        ConfigError: ``VAULTSYNC_JOBS`` has a value that is not a positive integer.
    """
    return Background(work, fork=min_items >= MIN_ITEMS and not _in_helper and helper_allowed())


def _background_helper(
    work: Callable[[], object], read_end: int, write_end: int, parent: int, value: int
) -> None:  # pragma: no cover - runs in the helper, which leaves through os._exit
    """The background helper's whole life: do the work, send its value, leave without cleanup.

    Into ``value``, an anonymous file, when there is one (the pipe's end then closes empty, as
    the helper leaves); else through the pipe.
    """
    code = 1
    try:
        if not _helper_started(read_end, parent):
            return
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end if value == -1 else value, "wb") as out:
            out.write(data)
        code = 0
    except BaseException:  # noqa: S110 - the parent does the work again and raises its error
        pass
    finally:
        os._exit(code)


def _value_file() -> int:
    """An anonymous memory file for a helper's value (``-1``: none on this system)."""
    try:
        return os.memfd_create("vaultsync-helper", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        return -1


def _read_all(fd: int) -> bytes:
    """The whole content of the file ``fd`` from its start."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _close(fd: int) -> int:
    """Close ``fd`` if it is one; always ``-1``, for the attribute that held it."""
    if fd != -1:
        with contextlib.suppress(OSError):
            os.close(fd)
    return -1


def _read_until(fd: int, deadline: float) -> bytes | None:
    """What the helper sent until it closed its end; ``None`` when that took past ``deadline``."""
    chunks: list[bytes] = []
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
    return None


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


_in_helper = False
_FRAME = struct.Struct(">Q")
_BATCH = 256
"""Results pickled per frame: the helper never holds more than one batch in pickled form."""


def _helper(
    work: Callable[[T], R], share: Sequence[T], read_end: int, write_end: int, parent: int
) -> None:
    """The helper's whole life: do its share, send it in frames, leave without cleanup."""
    code = 1
    try:
        if not _helper_started(read_end, parent):
            return
        with os.fdopen(write_end, "wb") as pipe:
            for start in range(0, len(share), _BATCH):
                batch: list[object] = []
                for item in share[start : start + _BATCH]:
                    try:
                        batch.append(work(item))
                    except Exception:  # the parent redoes the item and raises its error
                        batch.append(_FAILED)
                data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(_FRAME.pack(len(data)) + data)
        code = 0
    finally:
        os._exit(code)


def _helper_started(read_end: int, parent: int) -> bool:
    """A forked helper's first steps; ``False`` when its parent died meanwhile (leave then)."""
    global _in_helper  # noqa: PLW0603 - a helper never forks helpers of its own
    _in_helper = True
    os.close(read_end)
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the request took effect
        return False
    gc.freeze()  # collect what the work leaves, never walk (and copy) the parent's objects
    return True


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (a no-op elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _receive(fd: int, inbox: _Inbox) -> None:
    """Read the helper's frames until it closes the pipe; stop at the first damaged one."""
    with os.fdopen(fd, "rb") as pipe:
        while len(head := pipe.read(_FRAME.size)) == _FRAME.size:
            (size,) = _FRAME.unpack(head)
            data = pipe.read(size)
            try:
                batch = pickle.loads(data)  # noqa: S301 - our own child wrote it, through a pipe
            except Exception:  # any damage: the parent does the helper's whole share
                inbox.damaged = True
                return
            if not isinstance(batch, list):
                inbox.damaged = True
                return
            inbox.results.extend(batch)
            progress.advance(len(batch))

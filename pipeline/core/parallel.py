"""Work items → results in order, shared with one forked helper process; no other side effect.

Rendering notes and writing git blobs are CPU-bound and independent per note, and the machines
vaultsync runs on have at least two cores.  Threads do not help (the work holds the GIL), and a
process pool would have to pickle the graph and the templates; a ``fork`` shares them for free.
So the parent forks one helper, which takes every other item while the parent does the rest, and
sends its results back pickled through a pipe.

The helper is best effort, never load-bearing:

* an item that fails in the helper is done again by the parent, and if any item fails the
  parent redoes the whole list in order, so the error raised (a template error, say) is the
  one the plain loop would raise, with its own type and message;
* if the helper dies (killed, out of memory, unpicklable result) the parent does its share;
  one that is stopped or stuck is killed after three times the parent's own time (10 s at
  least) and its share done by the parent;
* the helper dies with the parent (``PR_SET_PDEATHSIG`` on Linux), so a killed sync leaves no
  process behind, and it never runs the parent's ``atexit`` handlers or flushes its buffers.

Below ``min_items`` items, or where ``fork`` does not exist, everything runs in this process.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import pickle
import signal
import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS = 200
"""Fewer items than this are not worth a fork (about 10-30 ms with a large heap)."""
MIN_WAIT = 10.0
"""Seconds the parent waits at least for the helper's share, once its own is done."""

_PR_SET_PDEATHSIG = 1


class _Failed:
    """Stands for an item the helper could not do."""


_FAILED = _Failed()


def split_map(work: Callable[[T], R], items: Sequence[T], *, min_items: int = MIN_ITEMS) -> list[R]:
    """``[work(item) for item in items]``, with every other item done in a forked helper.

    The result, and the error raised if an item fails, are those of the plain loop.
    """
    if len(items) < max(min_items, 2) or not hasattr(os, "fork") or _in_helper:
        return [work(item) for item in items]
    parent = os.getpid()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the helper, which leaves through os._exit
        _helper(work, items[1::2], read_end, write_end, parent)
    os.close(write_end)
    received: list[object] = []
    reader = threading.Thread(target=_receive, args=(read_end, received), daemon=True)
    reader.start()  # read while working: the helper would block on a full pipe otherwise
    started = time.monotonic()
    failed = False
    try:
        mine = [work(item) for item in items[0::2]]
    except Exception:
        failed = True  # the loop below raises the first failure in item order
    except BaseException:
        _kill(pid)
        raise
    finally:
        # A helper that is stopped or stuck must not hold the sync: past a generous deadline
        # (three times the parent's own share) it is killed and its share done here.
        reader.join(timeout=0 if failed else max(MIN_WAIT, 3 * (time.monotonic() - started)))
        if reader.is_alive():
            _kill(pid)
            reader.join()
        _, status = os.waitpid(pid, 0)
    if failed:
        return [work(item) for item in items]
    complete = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    theirs = received if complete and len(received) == len(items) // 2 else []
    out: list[R] = []
    for index, item in enumerate(items):
        if index % 2 == 0:
            out.append(mine[index // 2])
            continue
        result = theirs[index // 2] if theirs else _FAILED
        out.append(work(item) if isinstance(result, _Failed) else cast("R", result))
    return out


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
    global _in_helper  # noqa: PLW0603 - a helper never forks helpers of its own
    _in_helper = True
    code = 1
    try:
        os.close(read_end)
        _die_with_parent()
        if os.getppid() != parent:  # the parent died before the request took effect
            return
        gc.freeze()  # collect what the work leaves, never walk (and copy) the parent's objects
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


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (a no-op elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _receive(fd: int, into: list[object]) -> None:
    """Read the helper's frames until it closes the pipe; stop at the first damaged one."""
    with os.fdopen(fd, "rb") as pipe:
        while len(head := pipe.read(_FRAME.size)) == _FRAME.size:
            (size,) = _FRAME.unpack(head)
            data = pipe.read(size)
            try:
                batch = pickle.loads(data)  # noqa: S301 - our own child wrote it, through a pipe
            except Exception:  # any damage: the parent does the helper's whole share
                into.clear()
                return
            if not isinstance(batch, list):
                into.clear()
                return
            into.extend(batch)

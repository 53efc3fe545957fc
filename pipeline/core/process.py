"""How this process ends: a one-shot run over a big graph freezes the heap and leaves fast.

``main`` marks the process as one-shot (the console script runs one command and ends; tests
may run commands in-process, which must not end the test run).  A big ``sync``, ``check`` or
``status`` then calls :func:`big_run`, and ``main`` leaves through ``os._exit`` once the
output is flushed.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from pathlib import Path

from vaultsync.core.cachefile import is_resident

BIG_RUN_NOTES = 2_000
"""From this many notes on, ``sync``, ``check`` and ``status`` freeze the heap for the collector
and leave through ``os._exit`` (see ``main``); below it neither saves anything worth measuring."""

one_shot = False
"""Set by ``main``: this process runs one command and ends."""
leave_fast = False
"""Set by :func:`big_run`: ``main`` leaves through ``os._exit`` (no atexit, no teardown)."""
_resume_deferred = 0
"""How many :func:`collector_resumes_at_end` blocks the process is in."""
_outliving: list[object] = []
"""What :func:`outlive` keeps until the process ends."""


def big_run(notes: int) -> None:
    """A one-shot ``sync``/``check``/``status`` of ``notes`` notes: freeze the heap, leave fast.

    The records, graph and specs live until the process ends: ``gc.freeze`` keeps the cyclic
    collector from walking them again on each collection rendering triggers (millions of
    objects at 100,000 notes), and tearing that heap down at exit takes up to a second and
    does nothing the kernel does not do anyway.  Only these commands: they hold nothing open
    at exit (every file they write is closed and durable, the search index's connection
    closed), while the others may rely on atexit handlers and sqlite closes.
    """
    global leave_fast  # noqa: PLW0603 - read by main once the command returns
    if not one_shot or notes < BIG_RUN_NOTES:
        return
    gc.freeze()
    leave_fast = True


def outlive(*values: object) -> None:
    """After :func:`big_run`, ``values`` live until the process ends or :func:`let_go`.

    A sync's notes, plan and vault records are millions of objects at 100,000 notes: freeing
    them as the function holding them returned took 0.29 s of a one-fact sync, work the
    process's exit (``os._exit``) does for free.  Anywhere else they are freed as usual: a
    test running commands in-process, and a resident process (``watch``), whose next sync may
    begin before it gives the last one's heap back (:func:`end_big_run`).
    """
    if leave_fast and not is_resident():
        _outliving.extend(values)


def let_go() -> None:
    """Free what :func:`outlive` kept: another run begins in this process.

    A sync again after a pull, the next vault of ``each`` run without forks: two runs' heaps
    must never be held at once.
    """
    _outliving.clear()


def end_big_run() -> None:
    """Undo :func:`big_run` in a process that lives on after the run (``watch``).

    The heap goes back to the collector (the run's graph is garbage now) and the process
    exits normally.  All of it collected now, between two syncs, rather than during the next.
    """
    global leave_fast  # noqa: PLW0603 - the process's exit policy
    if not leave_fast:
        return
    let_go()  # none in a resident process; cleared all the same
    gc.unfreeze()
    gc.collect()
    leave_fast = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off while millions of acyclic objects are made, then as it was.

    Left on, each full collection walks the whole heap again: at 100,000 notes, 17 of them
    took 1.7 s of a 12 s one-fact sync, most while the stores' memo, the graph's state and the
    graph were loaded and built.  (Records, nodes, links and specs make no cycles; the few
    a parser may leave wait for the next collection.)
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was and not _resume_deferred:
            _resume()


def _resume() -> None:
    # After big_run, what a pause made lives to the end as well (the plan, the manifest):
    # frozen, it is never walked, where resuming walked it all at once (0.1 s at 100,000).
    if leave_fast:
        gc.freeze()
    gc.enable()


@contextlib.contextmanager
def collector_resumes_at_end() -> Iterator[None]:
    """A collector :func:`paused_gc` paused inside stays paused to the end of this block.

    For the block that makes a sync's notes: what the patched build made lives until the
    command ends, and :func:`big_run` freezes it at the block's end.  Resumed any earlier,
    the collector's first collections would walk those millions of objects (0.6 s of a
    one-fact sync at 100,000 notes) only to promote them.
    """
    global _resume_deferred  # noqa: PLW0603 - the process's collector policy
    was = gc.isenabled()
    _resume_deferred += 1
    try:
        yield
    finally:
        _resume_deferred -= 1
        if was and not _resume_deferred:
            _resume()


STATM = Path("/proc/self/statm")
"""Linux's account of this process's memory, in pages: its second figure is the resident size."""


def resident_mib() -> float | None:
    """This process's resident memory now, in MiB (:data:`STATM`); ``None`` where unknown."""
    try:
        pages = int(STATM.read_bytes().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)

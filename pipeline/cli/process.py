"""How this process ends: a big one-shot run leaves fast; a long one stops between two steps.

SIGINT and SIGTERM end a long-running command (``watch``, ``sync --each``) between two steps:
:func:`stop_on_signals`.

``main`` marks the process as one-shot (the console script runs one command and ends; tests
may run commands in-process, which must not end the test run).  A big ``sync``, ``check`` or
``status`` then calls :func:`big_run`, and ``main`` leaves through ``os._exit`` once the
output is flushed.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType

BIG_RUN_NOTES = 2_000
"""From this many notes on, ``sync``, ``check`` and ``status`` freeze the heap for the collector
and leave through ``os._exit`` (see ``main``); below it neither saves anything worth measuring."""

one_shot = False
"""Set by ``main``: this process runs one command and ends."""
leave_fast = False
"""Set by :func:`big_run`: ``main`` leaves through ``os._exit`` (no atexit, no teardown)."""


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


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class Stop:
    """Set by the first SIGINT or SIGTERM: the command ends after its current step."""

    event: threading.Event = field(default_factory=threading.Event)
    signal_name: str = ""

    def is_set(self) -> bool:
        """Whether a stop was asked for."""
        return self.event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking at once when a stop is asked for."""
        return self.event.wait(seconds)


@contextlib.contextmanager
def stop_on_signals(*, second_ends_now: bool = False, say: str = "") -> Iterator[Stop]:
    """SIGINT/SIGTERM set the :class:`Stop` instead of ending the process; restored on exit.

    ``second_ends_now``: a second signal ends the process at once, as if never caught (the
    run was asked twice; what it was doing is crash-safe, see ``vault.write``).  ``say``: a
    line for stderr when the first arrives (``{signal}`` is its name), so the person who
    stopped the run knows it heard them.
    """
    stop = Stop()

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set() and second_ends_now:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        stop.signal_name = signal.Signals(signum).name
        stop.event.set()
        if say:
            sys.stderr.write(say.format(signal=stop.signal_name) + "\n")
            sys.stderr.flush()

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def ignore_stop_signals() -> None:
    """In a forked worker: SIGINT/SIGTERM are its parent's to act on (it finishes its step)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)

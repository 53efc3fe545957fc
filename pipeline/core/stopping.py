"""SIGINT and SIGTERM end a long-running command (``watch``, ``sync --each``) between two steps.

Its own module, imported by those commands only, so the no-op ``sync`` never loads ``signal``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from collections.abc import Iterator
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop:
    """Set by the first SIGINT or SIGTERM: the command ends after its current step.

    The signal handler takes no lock: it sets a flag and writes a byte to a pipe that
    :meth:`wait` selects on.  (A ``threading.Event`` set from a handler deadlocks when the
    signal lands while the main thread holds the event's own lock inside ``Event.wait``.)
    """

    def __init__(self) -> None:
        self.signal_name = ""
        self._asked = False
        self._wake_read, self._wake_write = os.pipe()
        for fd in (self._wake_read, self._wake_write):
            os.set_blocking(fd, False)

    def is_set(self) -> bool:
        """Whether a stop was asked for."""
        return self._asked

    def ask(self, signal_name: str) -> None:
        """Ask for the stop (safe inside a signal handler: no lock, one non-blocking write)."""
        self.signal_name = signal_name
        self._asked = True
        with contextlib.suppress(BlockingIOError):  # a full pipe already wakes the sleeper
            os.write(self._wake_write, b"!")

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking at once when a stop is asked for."""
        if not self._asked:
            select.select([self._wake_read], [], [], max(0.0, seconds))
        return self._asked

    def close(self) -> None:
        """Let go of the wake-up pipe."""
        for fd in (self._wake_read, self._wake_write):
            os.close(fd)


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
        if not second_ends_now:
            # Heard once is enough; a storm of them would run this handler inside itself, one
            # level per signal, until the interpreter's recursion limit.
            signal.signal(signum, signal.SIG_IGN)
        stop.ask(signal.Signals(signum).name)
        if say:
            _say_at_once(say.format(signal=stop.signal_name) + "\n")

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        stop.close()


def _say_at_once(line: str) -> None:
    """Write to stderr's file itself: the buffered stream may be mid-write in the main thread."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced stream without a file
        fd = 2
    with contextlib.suppress(OSError):
        os.write(fd, line.encode())


def ignore_stop_signals() -> None:
    """In a forked worker: SIGINT/SIGTERM are its parent's to act on (it finishes its step)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)

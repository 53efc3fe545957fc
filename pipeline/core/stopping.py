"""SIGINT and SIGTERM end a long-running command (``watch``, ``sync --each``) between two steps.

Its own module, imported by those commands only, so the no-op ``sync`` never loads ``signal``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType

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

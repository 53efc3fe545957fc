"""Progress of a long run, told to whoever listens; silent unless the CLI installs a listener.

Stages say which phase they are in and, when they know it, how many items it has
(``phase``), then count items done (``advance``).  Nothing listens by default, so the pure
core stays free of output: the CLI installs a bar on a terminal only (``cli.progress``), never
under cron or CI.  A forked rendering helper (``core.parallel``) never reports itself: its
parent counts the helper's results as they arrive, so the count covers both processes.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Protocol


class Listener(Protocol):
    """Who is told: the phase by name with its total (``None``: unknown), then items done."""

    def phase(self, name: str, total: int | None) -> None:
        """A new phase begins."""

    def advance(self, done: int) -> None:
        """``done`` more items of the current phase are finished."""

    def pause(self) -> None:
        """Stop drawing: the terminal is needed for a question."""

    def resume(self) -> None:
        """Draw again after :meth:`pause`."""

    def close(self) -> None:
        """The run is over."""


_listener: Listener | None = None
_owner = 0
"""The process that installed the listener: a forked helper inherits it and must stay quiet."""
_lock = threading.Lock()  # the parent's reader thread counts the helper's results


def _active() -> Listener | None:
    listener = _listener
    return listener if listener is not None and os.getpid() == _owner else None


def phase(name: str, total: int | None = None) -> None:
    """A new phase begins (``render``, 1,400 notes); ends the one before."""
    if (listener := _active()) is not None:
        with _lock:
            listener.phase(name, total)


def advance(done: int = 1) -> None:
    """``done`` more items of the current phase are finished."""
    if (listener := _active()) is not None:
        with _lock:
            listener.advance(done)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Tell ``listener`` the progress of what runs inside; it is closed on the way out."""
    global _listener, _owner  # one listener per process, like a log handler
    _listener, _owner = listener, os.getpid()
    try:
        yield
    finally:
        _listener, _owner = None, 0
        listener.close()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Nothing is drawn inside (a prompt on the terminal); drawing resumes on the way out."""
    listener = _active()
    if listener is None:
        yield
        return
    listener.pause()
    try:
        yield
    finally:
        listener.resume()

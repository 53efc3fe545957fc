"""File-system events as a wake-up: a polling loop looks at once, not at its next poll.

Events are a hint, never the truth: the caller still decides what changed from stat data
(``watch``'s fingerprint of the stores), so a missed, merged or spurious event costs time,
never correctness.  They come from ``watchfiles`` (Rust ``notify``: inotify, FSEvents,
ReadDirectoryChangesW) on a thread of its own, filtered by the caller's ``relevant`` paths.
Where they cannot be had — the system's limit of watches reached, a folder gone —
:attr:`Wakeups.failure` says why, and the caller polls as it did without them.

With ``remember``, the paths are kept with when each event came (this process's monotonic
clock), for :meth:`Wakeups.changed_since`: which relevant paths changed since a moment, or
``None`` when the events cannot vouch for all of that time (not listening yet, or failed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

WAKE_SLICE_S = 0.1
"""How often a sleeper looks whether an event came (a stop wakes it at once)."""
READY_TIMEOUT_MS = 1000
"""With ``remember``: the listener hears from ``watchfiles`` at least this often, the first
time once its watches are set up (from then on, every change is heard)."""


class Stop(Protocol):
    """Whether to stop, and a sleep that a stop wakes (``core.stopping.Stop``)."""

    def is_set(self) -> bool: ...  # noqa: D102

    def wait(self, seconds: float) -> bool: ...  # noqa: D102


class Wakeups:
    """Changes under ``roots`` (recursively) whose path is ``relevant``, as a wake-up."""

    def __init__(
        self, roots: Sequence[Path], relevant: Callable[[str], bool], *, remember: bool = False
    ) -> None:
        self.roots = tuple(root for root in roots if root.is_dir())
        self.relevant = relevant
        self.remember = remember
        self.failure = ""
        """Why events stopped coming, or never came (``""``: they come)."""
        self._woke = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._heard: dict[str, int] = {}
        """With ``remember``: each relevant path changed, and when its last event came (ns)."""
        self._complete_from: int | None = None
        """Since when every change was heard (ns; ``None``: not listening yet)."""

    def start(self) -> Wakeups:
        """Begin listening (on a daemon thread); :attr:`failure` says if it cannot."""
        if not self.roots:
            self.failure = "no folder to watch"
            return self
        self._thread = threading.Thread(target=self._listen, name="file-events", daemon=True)
        self._thread.start()
        return self

    def _listen(self) -> None:
        try:
            import watchfiles  # noqa: PLC0415 - its Rust extension only where events are used

            for changes in watchfiles.watch(
                *self.roots,
                watch_filter=self._kept,
                stop_event=self._done,
                raise_interrupt=False,
                rust_timeout=READY_TIMEOUT_MS if self.remember else 5000,
                yield_on_timeout=self.remember,
            ):
                if self.remember:
                    self._note(path for _, path in changes)
                if changes:
                    self._woke.set()
        except Exception as error:  # any failure only means polling
            self.failure = str(error) or type(error).__name__
        else:
            if not self._done.is_set():
                self.failure = "the file events ended"

    def _kept(self, _change: Any, path: str) -> bool:
        return self.relevant(path)

    def _note(self, paths: Iterable[str]) -> None:
        """Remember ``paths`` as heard now; the first call marks since when all are heard."""
        now = time.monotonic_ns()
        with self._lock:
            if self._complete_from is None:
                self._complete_from = now  # the watches were set up before the first answer
            for path in paths:
                self._heard[path] = now

    def changed_since(self, moment_ns: int) -> frozenset[str] | None:
        """The relevant paths with an event since ``moment_ns`` (``time.monotonic_ns``).

        ``None`` when the events cannot vouch for all that time: not listening yet then, failed
        since, or what was heard before it forgotten (:meth:`forget_before`).
        """
        with self._lock:
            began = self._complete_from
            if self.failure or began is None or moment_ns < began:
                return None
            return frozenset(path for path, at in self._heard.items() if at >= moment_ns)

    def forget_before(self, moment_ns: int) -> None:
        """Forget what was heard before ``moment_ns``: no one will ask about earlier moments."""
        with self._lock:
            if self._complete_from is None or moment_ns <= self._complete_from:
                return
            self._heard = {path: at for path, at in self._heard.items() if at >= moment_ns}
            self._complete_from = moment_ns

    def sleep(self, seconds: float, stop: Stop) -> bool:
        """Sleep up to ``seconds``; ``True`` when a relevant change woke it sooner.

        A stop wakes it at once (``False``).  A change seen since the last sleep wakes the
        next one at once: nothing that happened while the caller looked is lost.
        """
        deadline = time.monotonic() + seconds
        while not stop.is_set():
            if self._woke.is_set():
                self._woke.clear()
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            stop.wait(min(left, WAKE_SLICE_S))
        return False

    def close(self) -> None:
        """Stop listening (the thread ends within ``watchfiles``' step, 50 ms)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

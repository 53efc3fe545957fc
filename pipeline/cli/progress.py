"""The progress of ``sync``, ``check`` and ``status`` on a terminal: phases, counts and totals.

``core.progress`` tells which phase runs (graph, notes, render, write, commit) and how many of
its items are done, the forked rendering helper's included; this module shows it on stderr
with rich's progress bars, only when stderr is a terminal.  Under cron, CI, a pipe or
``--json`` into a file nothing is drawn, and rich is not even imported (it costs ~80 ms).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from vaultsync.core import progress

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

PHASES = {
    "graph": "reading the stores, building the graph",
    "notes": "preparing notes",
    "render": "rendering notes",
    "write": "writing notes",
    "durable": "flushing them to disk",
    "place": "putting notes in place",
    "commit": "committing",
}
"""What each phase of ``core.progress`` is called on screen."""


class Bars:
    """A ``core.progress.Listener`` drawing one line per phase; a finished phase shows done."""

    def __init__(self, shown: Progress) -> None:
        self._shown = shown
        self._task: TaskID | None = None

    def phase(self, name: str, total: int | None) -> None:
        """End the phase before (filled) and start ``name`` with its total, if known."""
        self._finish()
        label = PHASES.get(name, name)
        self._task = self._shown.add_task(label, total=total, counted=total is not None)

    def advance(self, done: int) -> None:
        """Count ``done`` more items of the current phase."""
        if self._task is not None:
            self._shown.advance(self._task, done)

    def pause(self) -> None:
        """Erase the bars while the terminal asks a question."""
        self._shown.stop()

    def resume(self) -> None:
        """Draw the bars again."""
        self._shown.start()

    def close(self) -> None:
        """The last phase is done; the bars stop drawing."""
        self._finish()
        self._shown.stop()

    def _finish(self) -> None:
        if self._task is None:
            return
        task = self._shown.tasks[self._task]
        total = task.total if task.total is not None else max(task.completed, 1)
        self._shown.update(self._task, total=total, completed=total)


@contextlib.contextmanager
def on_terminal() -> Iterator[None]:
    """Show the progress of what runs inside on stderr, when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        Task,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class Count(MofNCompleteColumn):
        """``done/total`` for a phase with a total; nothing for one without (the graph)."""

        def render(self, task: Task) -> Text:
            return super().render(task) if task.fields.get("counted") else Text("")

    shown = Progress(
        SpinnerColumn(finished_text="✓"),
        TextColumn("{task.description}"),
        BarColumn(),
        Count(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    shown.start()
    with progress.listening(Bars(shown)):
        yield

"""One ``vaultsync`` command sampled by py-spy: ``python bench/sample_command.py OUT.json -- ARGS``.

cProfile (``bench/profile_command.py``) counts calls but slows Python code down 1.5-2× and
charges no function for time spent outside one: freeing what a function made as it returns, a
C parse, a write.  py-spy reads the running process's stack from outside, ``RATE`` times a
second (pausing it only for that), idle time included, so a sampled profile's seconds are the
command's own wall-clock seconds.
It writes, as JSON, vaultsync's functions by the seconds they were on the stack (each counted
once per sample), and the vaultsync lines that were deepest on the stack by their seconds:
where our code waits on a parse, a write, git, or on freeing what it made (what found the
0.29 s a one-fact sync spent freeing its plan at 100,000 notes, which cProfile did not show).

Needs the ``py-spy`` program (the ``dev`` extra installs it) and leave to trace a child
process (ptrace); without either, ``OUT.json`` says why and holds no profile.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from profile_command import TOP, our_file  # bench/, beside this script

RATE = 200
"""Samples a second."""
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _frames(stack: str) -> list[tuple[str, str, str]]:
    """``(function, our file, line)`` of each of vaultsync's frames, outermost first."""
    found = []
    for frame in stack.split(";"):
        match = _FRAME.match(frame.strip())
        if match is None:
            continue
        file = our_file(match["file"])
        if file is not None:
            found.append((match["name"], file, match["line"] or "?"))
    return found


def summarize(collapsed: Iterable[str], rate: float = RATE) -> dict[str, Any]:
    """The profile of py-spy's raw output (``frame;frame;… count`` per line) at ``rate`` Hz."""
    on_stack: Counter[str] = Counter()
    deepest: Counter[str] = Counter()
    total = 0
    for row in collapsed:
        stack, _, count = row.rstrip("\n").rpartition(" ")
        if not count.isdigit():
            continue
        samples = int(count)
        total += samples
        frames = _frames(stack)
        for function in {f"{file} {name}" for name, file, _ in frames}:
            on_stack[function] += samples
        if frames:
            name, file, line = frames[-1]
            deepest[f"{file}:{line} {name}"] += samples
    return {
        "sampled_s": round(total / rate, 3),
        "top": _rows(on_stack, total, rate),
        "deepest": _rows(deepest, total, rate),
    }


def _rows(counts: Counter[str], total: int, rate: float) -> list[dict[str, Any]]:
    return [
        {"function": key, "seconds": round(samples / rate, 3),
         "share": round(samples / total, 3) if total else 0.0}
        for key, samples in counts.most_common(TOP)
    ]  # fmt: skip


def sampled(args: list[str]) -> dict[str, Any]:
    """``vaultsync ARGS`` run under py-spy: its profile, or ``{"problem": why not}``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        return {"command": ["vaultsync", *args], "problem": "py-spy is not installed"}
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "stacks.txt"
        done = subprocess.run(
            [spy, "record", "--rate", str(RATE), "--idle", "--full-filenames", "--format", "raw",
             "--output", str(raw), "--", sys.executable, "-m", "vaultsync", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not raw.exists():
            why = (done.stderr.strip().splitlines() or ["no samples"])[-1]
            return {"command": ["vaultsync", *args], "problem": f"py-spy: {why}"}
        found = summarize(raw.read_text(errors="replace").splitlines())
    return {"command": ["vaultsync", *args], **found}


def main() -> None:
    out = Path(sys.argv[1])
    args = sys.argv[sys.argv.index("--") + 1 :]
    out.write_text(json.dumps(sampled(args), indent=1) + "\n")


if __name__ == "__main__":
    main()

"""One ``vaultsync`` command under cProfile: ``python bench/profile_command.py OUT.json -- ARGS``.

Runs ``vaultsync ARGS`` in this process (``cli.main`` with ``standalone_mode=False``, so the
profile is written even where a big run would leave through ``os._exit``) and writes the
functions that took the most cumulative time, vaultsync's own first, and the functions of any
module that took the most time themselves (``pickle.load``, a sort, ``repr``: what nested
cumulative figures hide), as JSON: what ``make bench`` prints under a goal it missed.  Profiling slows Python code down (about 1.5-2×
here), so the figures are shares of one profiled run, never compared with the timed runs.
"""

from __future__ import annotations

import contextlib
import cProfile
import json
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TOP = 18


def our_file(filename: str) -> str | None:
    """``vaultsync/graph/build.py`` for a file of vaultsync's, installed editable or as a wheel
    (``renderers/…`` for a renderer of the source tree); ``None`` for any other file."""
    parts = Path(filename).parts
    for root, prefix in (("pipeline", "vaultsync"), ("renderers", "renderers")):
        if root in parts:
            return "/".join((prefix, *parts[parts.index(root) + 1 :]))
    if "site-packages" in parts:
        rest = parts[parts.index("site-packages") + 1 :]
        if rest[:1] == ("vaultsync",):
            return "/".join(rest)
    return None


def _where(filename: str, line: int, name: str) -> str:
    """``vaultsync/graph/build.py:55 build_graph`` for our code, the file's name otherwise."""
    ours = our_file(filename)
    if ours is not None:
        return f"{ours}:{line} {name}"
    path = Path(filename)
    if "site-packages" in path.parts:
        rest = path.parts[path.parts.index("site-packages") + 1 :]
        return f"{'/'.join(rest)}:{line} {name}"
    return f"{path.name}:{line} {name}" if filename != "~" else name


def top_functions(stats: pstats.Stats, total: float) -> list[dict[str, Any]]:
    """The ``TOP`` vaultsync functions by cumulative time, each with its share of the run."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    ours = [
        (cumulative, calls, key)
        for key, (_, calls, _, cumulative, _) in table.items()
        if "/pipeline/" in key[0] or "/renderers/" in key[0]
    ]
    ours.sort(key=lambda item: -item[0])
    return [
        {"function": _where(*key), "calls": calls, "seconds": round(cumulative, 3),
         "share": round(cumulative / total, 3) if total else 0.0}
        for cumulative, calls, key in ours[:TOP]
    ]  # fmt: skip


def top_own_time(stats: pstats.Stats, total: float) -> list[dict[str, Any]]:
    """The ``TOP`` functions of any module by time spent in themselves, not in their callees."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    own = sorted(
        ((tottime, calls, key) for key, (_, calls, tottime, _, _) in table.items()),
        key=lambda item: -item[0],
    )
    return [
        {"function": _where(*key), "calls": calls, "seconds": round(tottime, 3),
         "share": round(tottime / total, 3) if total else 0.0}
        for tottime, calls, key in own[:TOP]
    ]  # fmt: skip


def profiled_call(command: list[str], call: Callable[[], object]) -> dict[str, Any]:
    """``call()`` under cProfile: the profile as ``make bench`` prints it, named ``command``."""
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    with contextlib.suppress(SystemExit):
        call()
    profile.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(profile)
    return {"command": command, "profiled_s": round(total, 3),
            "top": top_functions(stats, total), "own": top_own_time(stats, total)}  # fmt: skip


def main() -> None:
    out = Path(sys.argv[1])
    args = sys.argv[sys.argv.index("--") + 1 :]
    from vaultsync.cli.main import cli

    data = profiled_call(
        ["vaultsync", *args],
        lambda: cli.main(args, prog_name="vaultsync", standalone_mode=False),
    )
    out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()

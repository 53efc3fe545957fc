"""One sync of a synthetic vault in its own process, for ``test_crash.py`` (plus spec helpers).

Usage: ``python tests/syncdriver.py VAULT SEED GENERATION COUNT [--die-at PHASE]``.

The driver builds ``COUNT`` synthetic notes for ``(SEED, GENERATION)``, prints ``go`` (flushed)
right before ``sync_vault`` so the test can time its kill, then prints ``done``. ``--die-at``
makes the process SIGKILL itself at a named point of ``vault.apply``'s steps instead
(deterministic crash windows): ``journal`` (after ``write_journal``), ``place:N`` (after the N-th
note is put in place), ``manifest`` (before ``write_manifest``), ``commit`` (before
``commit_changes``), ``index`` (after the commit, before ``sync_index``), ``end`` (before
``drop_journal``).
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vaultsync.core.model import NoteSpec

FIXED_TIME = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)
LATE_PATH = "Late/late.md"
"""A note the engine produces from generation 1 on (the crash test puts a user file there)."""


def make_spec(
    path: str, text: str, *, node: str = "", key: str | None = None, calls: list[str] | None = None
) -> NoteSpec:
    """A spec rendering ``text``; ``calls`` (if given) records every render."""

    def render() -> bytes:
        if calls is not None:
            calls.append(path)
        return text.encode("utf-8")

    digest = (
        key if key is not None else hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()
    )
    return NoteSpec(path=path, node_id=node or f"note:{path}", key=digest, render=render)


def _number(*parts: int) -> int:
    data = ":".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def note_path(index: int) -> str:
    """Where synthetic note ``index`` lives; every tenth note has a folder of its own."""
    if index % 10 == 3:
        return f"Solo/{index:04d}/note.md"
    return f"Notes/{index % 9}/note-{index:04d}.md"


def synthetic_specs(seed: int, generation: int, count: int) -> list[NoteSpec]:
    """Deterministic notes for one generation: about 1 in 7 is absent, each changes every 1-4
    generations, and ``LATE_PATH`` appears from generation 1 on."""
    specs = []
    for i in range(count):
        if generation and _number(seed, generation, i) % 7 == 0:
            continue
        version = generation // (1 + _number(seed, i) % 4)
        body = "".join(f"- line {j} of note {i}, seed {seed}\n" for j in range(20 + i % 30))
        text = f"# Note {i}\n\nversion {version}\n\n{body}"
        specs.append(make_spec(note_path(i), text, node=f"fact:{seed}-{i}"))
    if generation:
        specs.append(
            make_spec(LATE_PATH, f"# Late\n\ngeneration {generation}\n", node="topic:late")
        )
    return specs


def followed_specs(vault: Path, seed: int, generation: int, count: int) -> list[NoteSpec]:
    """``synthetic_specs`` with the notes the user moved at their new paths (as the CLI does)."""
    from dataclasses import replace

    from vaultsync.vault.sync import vault_moves

    chosen = vault_moves(vault).chosen
    specs = synthetic_specs(seed, generation, count)
    return [replace(s, path=chosen.get(s.node_id, s.path)) for s in specs]


def _die_at(phase: str) -> None:
    """Patch the sync so that the process SIGKILLs itself at ``phase`` (``vault.apply``'s steps)."""
    from vaultsync.vault import apply, write

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def wrap(
        owner: Any, name: str, before: Callable[..., bool], after: Callable[..., bool]
    ) -> None:
        original = getattr(owner, name)

        def patched(*args: Any, **kwargs: Any) -> Any:
            if before(*args, **kwargs):
                die()
            result = original(*args, **kwargs)
            if after(*args, **kwargs):
                die()
            return result

        setattr(owner, name, patched)

    never = lambda *a, **k: False  # noqa: E731
    always = lambda *a, **k: True  # noqa: E731
    if phase.startswith("place:"):
        left = [int(phase.split(":")[1])]

        def counted(*_a: Any, **_k: Any) -> bool:
            left[0] -= 1
            return left[0] <= 0

        wrap(write.VaultFS, "_place", never, counted)
        return
    steps = {
        "journal": ("write_journal", never, always),
        "manifest": ("write_manifest", always, never),
        "commit": ("commit_changes", always, never),
        "index": ("sync_index", always, never),
        "end": ("drop_journal", always, never),
    }
    if phase not in steps:
        raise SystemExit(f"unknown phase {phase}")
    step, before, after = steps[phase]
    wrap(apply, step, before, after)


def main(argv: list[str]) -> int:
    """Run one sync; exit 0 when it finished."""
    from vaultsync.vault.sync import sync_vault

    vault, seed, generation, count = Path(argv[0]), int(argv[1]), int(argv[2]), int(argv[3])
    if len(argv) > 5 and argv[4] == "--die-at":
        _die_at(argv[5])
    from vaultsync.vault.sync import vault_moves

    moves = vault_moves(vault)
    specs = followed_specs(vault, seed, generation, count)
    print("go", flush=True)
    report = sync_vault(vault, specs, clock=lambda: FIXED_TIME, moves=moves)
    print(f"done {len(report.created)} {len(report.updated)} {len(report.removed)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A secret known only from a store the extract memo could reuse is still known to the next sync.

The memo keeps masked values only, so a store that holds a secret of its own is read again on
every sync: the set of secrets a read knows is complete, memo or not, and the same value added
elsewhere (a card's title, where no rule would recognise it alone) is masked on that sync.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from vaultsync.cli.main import cli
from vaultsync.core import fsio

SECRET = "Xq7vR2mPz9Lk"  # noqa: S105 - planted, not a credential


def run(*args: str) -> None:
    """Run a command; it must succeed."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output


def edit_json(path: Path, change: object) -> None:
    """Load a JSON store file, let ``change`` edit it, write it back."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data), encoding="utf-8")


def holding(vault: Path, needle: str) -> list[str]:
    """The vault's files and git objects holding ``needle``."""
    found = [
        str(p)
        for p in sorted(vault.rglob("*"))
        if p.is_file() and needle.encode() in p.read_bytes() and ".git" not in p.parts
    ]
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=vault, capture_output=True, check=True,
    ).stdout  # fmt: skip
    return found + (["git objects"] if needle.encode() in objects else [])


def test_a_fact_secret_reused_from_the_memo_is_masked_in_a_new_title(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sync, add the fact's secret to a card title, sync with the memo warm: no byte holds it."""
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fsio, "RACY_NS", 0)  # the memo is trusted at once: it is warm
    index = demo_state / "memory/memory_index.json"
    edit_json(index, lambda d: d[0].update(content=f"staging db PGPASSWORD: {SECRET}"))
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    run("sync", *where)
    assert holding(vault, SECRET) == []
    board = demo_state / "board.json"
    edit_json(board, lambda d: d["cards"][0].update(title=f"Rotate {SECRET} now"))
    run("sync", *where)
    assert holding(vault, SECRET) == []

"""Item ids are bounded: one of megabytes is a bad item, skipped, never gigabytes of work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import invoke
from vaultsync.core.errors import StoreError
from vaultsync.extract.jsonio import MAX_ID_CHARS, get_id


def test_an_id_up_to_the_limit_is_read() -> None:
    """An id of MAX_ID_CHARS characters is an id like any other."""
    ident = "a" * MAX_ID_CHARS
    assert get_id({"id": ident}, Path("board.json"), "cards[0]") == ident


def test_a_longer_id_is_one_line_naming_where() -> None:
    """One character more: the file, the field and what is wrong, in one line."""
    with pytest.raises(StoreError) as caught:
        get_id({"id": "a" * (MAX_ID_CHARS + 1)}, Path("board.json"), "cards[0]")
    assert str(caught.value) == "board.json:cards[0].id: 513 characters long (ids are at most 512)"


def test_a_context_with_an_id_of_megabytes_is_skipped_and_its_notes_kept(
    demo_state: Path, tmp_path: Path
) -> None:
    """The sync warns, keeps the context's notes as they were, and the vault is in sync."""
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    assert invoke("sync", *where).returncode == 0
    notes = {path: path.read_bytes() for path in sorted(vault.rglob("*.md"))}
    context = sorted((demo_state / "contexts").glob("*.json"))[0]
    data = json.loads(context.read_text())
    data["id"] = "X" * 5_000_000
    context.write_text(json.dumps(data))
    done = invoke("sync", *where)
    assert done.returncode == 0
    assert "5,000,000 characters long (ids are at most 512); skipped" in done.stderr
    assert {path: path.read_bytes() for path in sorted(vault.rglob("*.md"))} == notes
    assert invoke("check", *where).returncode == 0

"""A state directory ChatCLI sealed at rest, synced as a user syncs it (the key in the environment).

The sealed bytes were written by an independent implementation of ChatCLI's at-rest format
(``tests/extract/sealgen``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import Done, invoke
from vaultsync.core.cachefile import cache_dir

SEALED = Path(__file__).resolve().parents[2] / "fixtures" / "stores" / "sealed"
KEY = "0123456789abcdef0123456789abcdef-long-key"


def sync(state: Path, vault: Path) -> Done:
    """``vaultsync sync`` of ``state`` into ``vault``, as a user runs it."""
    return invoke("sync", "--state", str(state), "--vault", str(vault))


def sealed_state(demo_state: Path) -> Path:
    """The demo store whose facts ChatCLI sealed for their place."""
    index = demo_state / "memory" / "memory_index.json"
    shutil.copyfile(SEALED / "v2-long-placed.bin", index)
    return demo_state


def every_byte(*folders: Path) -> bytes:
    return b"".join(p.read_bytes() for f in folders for p in f.rglob("*") if p.is_file())


def test_with_the_key_the_sealed_facts_become_notes(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CHATCLI_ENCRYPTION_KEY set: the sync opens the store; the key is in no byte written."""
    state = sealed_state(demo_state)
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY", KEY)
    vault = tmp_path / "vault"
    done = sync(state, vault)
    assert done.returncode == 0, done.stderr
    facts = [p.read_text() for p in (vault / "Facts").rglob("*.md")]
    assert any("sealed fact" in text for text in facts)
    assert KEY.encode() not in every_byte(vault, cache_dir(state))
    assert KEY not in done.stdout + done.stderr


def test_without_the_key_one_line_says_what_to_set(demo_state: Path, tmp_path: Path) -> None:
    """No key: one line naming the sealed store and the variable; the rest is synced."""
    state = sealed_state(demo_state)
    vault = tmp_path / "vault"
    done = sync(state, vault)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "memory/memory_index.json" in line]
    assert len(said) == 1 and "CHATCLI_ENCRYPTION_KEY" in said[0]
    assert "Traceback" not in done.stderr
    assert (vault / "Home.md").is_file()


def test_the_setting_off_refuses_to_open_it(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stores.open_sealed`` false: even with the key, no clear copy is made."""
    state = sealed_state(demo_state)
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY", KEY)
    monkeypatch.setenv("VAULTSYNC_STORES_OPEN_SEALED", "false")
    vault = tmp_path / "vault"
    done = sync(state, vault)
    assert done.returncode == 0 and "stores.open_sealed" in done.stderr
    assert b"sealed fact" not in every_byte(vault)


def test_the_clear_text_notice_is_said_on_the_first_sync_only(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first sync from sealed stores says the vault holds them in clear; the next does not."""
    state = sealed_state(demo_state)
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY", KEY)
    vault = tmp_path / "vault"
    first = sync(state, vault)
    assert first.returncode == 0 and first.stderr.count("in clear") == 1
    (state / "memory" / "memory_index.json").touch()
    again = sync(state, vault)
    assert again.returncode == 0 and "in clear" not in again.stderr

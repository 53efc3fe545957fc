"""ChatCLI's sealed stores open as its at-rest format does, checked against Go-made payloads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from vaultsync.core.environment import sealing_keys
from vaultsync.extract.atrest import (
    SealKeys,
    first_sealed,
    open_sealed,
    place_data,
    seal_version,
)
from vaultsync.extract.sources import keys_stamp


def seal_keys(variables: dict[str, str]) -> SealKeys:
    """The keys a process with ``variables`` opens the stores with."""
    return SealKeys(sealing_keys(variables))


SEALED = Path(__file__).resolve().parents[2] / "fixtures" / "stores" / "sealed"
LONG = "0123456789abcdef0123456789abcdef-long-key"
PASSPHRASE = "correct horse"  # noqa: S105 - a test fixture's passphrase, nothing real
RETIRED = "an-older-secret-that-is-long-enough-32"
PLAIN = b'[{"id":"f1","content":"sealed fact","category":"note"}]'
INDEX = place_data("memory/memory_index.json")


def payload(name: str) -> bytes:
    """A fixture written by tests/extract/sealgen (Go's crypto, not ours)."""
    return (SEALED / name).read_bytes()


def test_v1_opens_with_the_long_key() -> None:
    """A v1 payload opens with SHA-256 + HKDF and no additional data."""
    assert open_sealed(payload("v1-long.bin"), SealKeys((LONG,)), INDEX) == PLAIN


def test_v2_opens_bound_to_its_place() -> None:
    """A v2 payload sealed for its path opens with that path's additional data."""
    assert open_sealed(payload("v2-long-placed.bin"), SealKeys((LONG,)), INDEX) == PLAIN


def test_v2_sealed_without_a_place_opens_with_no_additional_data() -> None:
    """A v2 payload sealed with no place opens after the placed attempt fails."""
    assert open_sealed(payload("v2-long-unplaced.bin"), SealKeys((LONG,)), INDEX) == PLAIN


def test_a_short_passphrase_is_stretched_with_argon2id() -> None:
    """A secret under 32 bytes opens its v2 payload through Argon2id."""
    assert open_sealed(payload("v2-passphrase.bin"), SealKeys((PASSPHRASE,)), INDEX) == PLAIN


def test_a_retired_key_is_tried_after_the_current_one() -> None:
    """A payload sealed before a rotation opens with a key from the previous list."""
    keys = seal_keys({"CHATCLI_ENCRYPTION_KEY": LONG, "CHATCLI_ENCRYPTION_KEY_PREVIOUS": RETIRED})
    assert open_sealed(payload("v2-retired.bin"), keys, INDEX) == PLAIN


def test_the_tenant_is_part_of_the_place() -> None:
    """A tenant's payload opens with its slug in the additional data, and not without it."""
    data = payload("v2-tenant.bin")
    tenant = place_data("memory/memory_index.json", "alice-0a1b2c3d")
    assert open_sealed(data, SealKeys((LONG,)), tenant) == PLAIN
    assert open_sealed(data, SealKeys((LONG,)), INDEX) is None


def test_a_payload_moved_to_another_path_does_not_open() -> None:
    """A payload bound to one store does not open as another store."""
    other = place_data("memory/episodes.json")
    assert open_sealed(payload("v2-long-placed.bin"), SealKeys((LONG,)), other) is None


def test_a_wrong_key_does_not_open() -> None:
    """A wrong key gives no plaintext, and no error."""
    assert open_sealed(payload("v1-long.bin"), SealKeys(("x" * 40,)), INDEX) is None


def test_a_tampered_payload_does_not_open() -> None:
    """One flipped byte fails authentication."""
    data = bytearray(payload("v2-long-placed.bin"))
    data[-1] ^= 1
    assert open_sealed(bytes(data), SealKeys((LONG,)), INDEX) is None


@pytest.mark.parametrize(
    ("data", "version"), [(b"CHATCLI_ENC_v1\n..", 1), (b"CHATCLI_ENC_v7\n", 7)]
)
def test_every_header_version_is_recognised(data: bytes, version: int) -> None:
    """Any ``CHATCLI_ENC_v<n>`` header marks a sealed store, known or not."""
    assert seal_version(data) == version


def test_plain_json_is_not_sealed() -> None:
    """A plaintext store carries no header."""
    assert seal_version(b"[]") is None


def test_previous_keys_skip_blanks() -> None:
    """Retired keys are comma separated, trimmed, blanks skipped, after the current key."""
    keys = seal_keys({"CHATCLI_ENCRYPTION_KEY": "a", "CHATCLI_ENCRYPTION_KEY_PREVIOUS": " b, ,c"})
    assert keys.secrets == ("a", "b", "c")


def test_no_current_key_means_no_keys() -> None:
    """Retired keys alone open nothing: ChatCLI needs the current key set."""
    assert not seal_keys({"CHATCLI_ENCRYPTION_KEY_PREVIOUS": "b"})


def test_keys_never_show_in_their_repr() -> None:
    """A key cannot reach a log or an error through ``repr``."""
    assert LONG not in repr(seal_keys({"CHATCLI_ENCRYPTION_KEY": LONG}))


def test_only_how_many_keys_are_set_is_stamped() -> None:
    """The no-op sync's stamp counts the keys and holds none of them."""
    environ = {"CHATCLI_ENCRYPTION_KEY": LONG, "CHATCLI_ENCRYPTION_KEY_PREVIOUS": f"{RETIRED},"}
    assert keys_stamp(sealing_keys(environ)) == "sealing-keys=2"
    assert keys_stamp(sealing_keys({})) == ""
    assert keys_stamp(sealing_keys({"CHATCLI_ENCRYPTION_KEY_PREVIOUS": RETIRED})) == ""


def test_the_first_sealed_store_file_is_found(tmp_path: Path) -> None:
    """A state folder with a sealed store answers that file; a plain one answers none."""
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "topics.json").write_text("[]", encoding="utf-8")
    assert first_sealed(tmp_path) is None
    (tmp_path / "memory" / "episodes.json").write_bytes(payload("v2-long-placed.bin"))
    assert first_sealed(tmp_path) == tmp_path / "memory" / "episodes.json"


def test_a_fifo_in_place_of_a_store_is_never_waited_on(tmp_path: Path) -> None:
    """Looking for sealed files opens no FIFO for reading (it would block)."""
    (tmp_path / "memory").mkdir()
    os.mkfifo(tmp_path / "memory" / "topics.json")
    assert first_sealed(tmp_path) is None


def test_a_passphrase_is_stretched_once_per_process() -> None:
    """Many files sealed with one passphrase cost one Argon2id stretch, not one each."""
    from vaultsync.extract import atrest

    atrest._derive.cache_clear()
    for _ in range(3):
        assert open_sealed(payload("v2-passphrase.bin"), SealKeys((PASSPHRASE,)), INDEX) == PLAIN
    assert atrest._derive.cache_info().misses == 1

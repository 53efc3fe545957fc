"""Reading a state directory whose stores ChatCLI sealed: opened with the key, else skipped."""

from __future__ import annotations

from pathlib import Path

from helpers import build_tree
from vaultsync.extract import read_state
from vaultsync.extract.atrest import SealKeys
from vaultsync.extract.jsonio import Unsealing
from vaultsync.extract.tenants import state_sets

SEALED = Path(__file__).resolve().parents[2] / "fixtures" / "stores" / "sealed"
LONG = "0123456789abcdef0123456789abcdef-long-key"
INDEX = "memory/memory_index.json"
SESSION = "sessions/a.json"


def sealed_index(tmp_path: Path) -> Path:
    """A state directory whose memory index a Go implementation sealed for its place."""
    return build_tree(tmp_path, {INDEX: (SEALED / "v2-long-placed.bin").read_bytes()})


def test_the_key_opens_a_sealed_memory_store(tmp_path: Path) -> None:
    """With the key, the sealed facts are read and the file is listed as opened."""
    state = sealed_index(tmp_path)
    how = Unsealing(keys=SealKeys((LONG,)), root=state)
    records = read_state(state, unseal=how)
    assert [fact.content for fact in records.facts] == ["sealed fact"]
    assert how.opened == [(state / INDEX).as_posix()]
    assert "in clear" in str(how.notice())


def test_no_notice_when_nothing_was_sealed(tmp_path: Path) -> None:
    """A read of plaintext stores only has nothing to say about clear text."""
    state = build_tree(tmp_path, {INDEX: "[]"})
    how = Unsealing(keys=SealKeys((LONG,)), root=state)
    read_state(state, unseal=how)
    assert how.notice() is None


def test_the_setting_off_refuses_to_open(tmp_path: Path) -> None:
    """``stores.open_sealed = false`` leaves a sealed store closed even with the key."""
    state = sealed_index(tmp_path)
    how = Unsealing(keys=SealKeys((LONG,)), root=state, enabled=False)
    records = read_state(state, unseal=how)
    assert records.facts == ()
    assert "stores.open_sealed" in records.skipped[0].what
    assert how.opened == []


def test_a_store_moved_to_another_place_does_not_open(tmp_path: Path) -> None:
    """A payload sealed for the memory index does not open as the episodes store."""
    payload = (SEALED / "v2-long-placed.bin").read_bytes()
    state = build_tree(tmp_path, {"memory/episodes.json": payload})
    records = read_state(state, unseal=Unsealing(keys=SealKeys((LONG,)), root=state))
    assert [s.source for s in records.skipped] == ["memory/episodes.json"]
    assert "moved from another store's path" in records.skipped[0].what


def test_a_sealed_item_that_does_not_open_is_skipped(tmp_path: Path) -> None:
    """A session no key opens is skipped as any bad item is (its last good value kept)."""
    state = build_tree(tmp_path, {SESSION: b"CHATCLI_ENC_v2\n" + b"\0" * 40})
    how = Unsealing(keys=SealKeys((LONG,)), root=state)
    records = read_state(state, unseal=how)
    assert [s.source for s in records.skipped] == [SESSION]
    assert "no key opens it" in records.skipped[0].what


def test_no_key_is_never_in_a_skip_line(tmp_path: Path) -> None:
    """What a skipped sealed item says never holds the key."""
    state = build_tree(tmp_path, {SESSION: b"CHATCLI_ENC_v2\n" + b"\0" * 40})
    records = read_state(state, unseal=Unsealing(keys=SealKeys((LONG,)), root=state))
    assert LONG not in repr(records.skipped)


def test_a_tenant_store_opens_bound_to_its_tenant(tmp_path: Path) -> None:
    """A tenant's sealed index opens read as that tenant's store set."""
    payload = (SEALED / "v2-tenant.bin").read_bytes()
    state = build_tree(tmp_path, {f"tenants/alice-0a1b2c3d/{INDEX}": payload})
    (tenant,) = state_sets(state)
    how = Unsealing(keys=SealKeys((LONG,)), root=tenant.stores, tenant=tenant.tenant)
    records = read_state(tenant.stores, unseal=how)
    assert [fact.content for fact in records.facts] == ["sealed fact"]


def test_a_tenant_reads_the_roots_sealed_board_bound_as_the_roots(tmp_path: Path) -> None:
    """The shared board is sealed for the root (no tenant), and opens so from a tenant."""
    tenant = tmp_path / "tenants" / "alice-0a1b2c3d"
    how = Unsealing(keys=SealKeys((LONG,)), root=tenant, tenant=tenant.name)
    assert how.place(tmp_path / "board.json") == b"v2\0board.json\0"
    assert how.place(how.root / INDEX) == b"v2\0memory/memory_index.json\0alice-0a1b2c3d"


def test_a_store_outside_the_state_is_bound_by_its_folder_and_name(tmp_path: Path) -> None:
    """A custom path (``$CHATCLI_BOARD_PATH``) is bound as ChatCLI binds custom roots."""
    how = Unsealing(keys=SealKeys((LONG,)), root=tmp_path / "state")
    assert how.place(tmp_path / "elsewhere" / "board.json") == b"v2\0elsewhere/board.json\0"

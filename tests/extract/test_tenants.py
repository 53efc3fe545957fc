"""ChatCLI's per-sender store sets are found under ``tenants/``, sharing the root's skills."""

from __future__ import annotations

from pathlib import Path

from vaultsync.extract.sources import board_file, skill_folders
from vaultsync.extract.tenants import StateSet, shared_root, state_sets, tenant_of


def make(root: Path, *folders: str) -> Path:
    """``root`` with the given folders made under it."""
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
    return root


def test_a_root_without_tenants_is_one_set() -> None:
    """A plain state directory is its own, single, store set."""
    root = Path("/nonexistent-state")
    assert state_sets(root) == (StateSet(tenant="", stores=root, shared=root),)


def test_tenants_are_found_sorted_sharing_the_root(tmp_path: Path) -> None:
    """Each folder in ``tenants/`` is a set, by name, reading skills and board at the root."""
    make(tmp_path, "tenants/bob-0123abcd/memory", "tenants/alice-" + "f" * 32, "skills")
    found = state_sets(tmp_path)
    assert [s.tenant for s in found] == ["alice-" + "f" * 32, "bob-0123abcd"]
    assert {s.shared for s in found} == {tmp_path}
    assert found[1].stores == tmp_path / "tenants" / "bob-0123abcd"


def test_the_root_keeps_its_own_set_when_it_has_stores(tmp_path: Path) -> None:
    """A root with its own memory beside tenants is a set too, listed first."""
    make(tmp_path, "memory", "tenants/bob-0123abcd")
    assert [s.tenant for s in state_sets(tmp_path)] == ["", "bob-0123abcd"]


def test_a_tenants_folder_given_as_root(tmp_path: Path) -> None:
    """ROOT itself a ``tenants/`` folder: its children are the sets, its parent is shared."""
    tenants = make(tmp_path / "tenants", "bob-0123abcd")
    (found,) = state_sets(tenants)
    assert found == StateSet(
        tenant="bob-0123abcd", stores=tenants / "bob-0123abcd", shared=tmp_path
    )


def test_hidden_entries_and_files_are_not_tenants(tmp_path: Path) -> None:
    """Only visible folders are tenants (no ``.lock`` or dot folders)."""
    make(tmp_path, "tenants/.tmp", "tenants/bob-0123abcd")
    (tmp_path / "tenants" / "x.lock").write_text("")
    assert [s.tenant for s in state_sets(tmp_path)] == ["bob-0123abcd"]


def test_a_folder_in_a_tenants_folder_is_a_tenant() -> None:
    """The tenant is the folder's name, as ChatCLI's at-rest format takes it from the path."""
    assert tenant_of(Path("/hub/tenants/alice-0a1b2c3d")) == "alice-0a1b2c3d"
    assert tenant_of(Path("/hub/alice-0a1b2c3d")) == ""
    assert tenant_of(Path("/hub")) == ""


def test_a_tenants_shared_stores_are_the_roots() -> None:
    """Skills and the board of a tenant are read from the root above ``tenants/``."""
    tenant = Path("/hub/tenants/alice-0a1b2c3d")
    assert shared_root(tenant) == Path("/hub")
    assert skill_folders(tenant) == (Path("/hub/skills"),)
    assert board_file(tenant, {}) == Path("/hub/board.json")


def test_a_plain_state_shares_with_itself() -> None:
    """Outside a hub, skills and the board are the state folder's own."""
    assert shared_root(Path("/home/me/.chatcli")) == Path("/home/me/.chatcli")
    assert board_file(Path("/s"), {}) == Path("/s/board.json")

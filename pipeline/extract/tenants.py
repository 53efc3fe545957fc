"""ChatCLI's per-sender store sets (``tenants/<slug>-<hex>/``): found, never read, here.

With ``CHATCLI_HUB_ISOLATE=true`` ChatCLI's gateway keeps one set of stores (``memory/``,
``sessions/``, ``contexts/``, …) per sender under ``~/.chatcli/tenants/<slug>-<hex digest>/``;
skills and the board stay at the root, where every tenant reads them.  Pure: lists folders only.

A store set is a tenant by its path, as ChatCLI's at-rest format decides it: a folder directly
in a ``tenants/`` folder.  Its folder name is the tenant its sealed stores are bound to, and the
folder above ``tenants/`` is where its shared stores are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

TENANTS = "tenants"
OWN_STORES = ("memory", "sessions", "contexts")
"""Folders that make the root a store set of its own besides its tenants (the local CLI's)."""


@dataclass(frozen=True, slots=True)
class StateSet:
    """One store set: its tenant slug (``""`` for the root's own), folder, and shared root."""

    tenant: str
    stores: Path
    """Where memory, sessions and contexts are read (and the root of sealing's place)."""
    shared: Path
    """Where skills and the board are read: the state root, as ChatCLI reads them."""


def tenant_of(stores: Path) -> str:
    """The tenant slug a store set's sealed files are bound to; ``""`` when not a tenant."""
    return stores.name if stores.parent.name == TENANTS and stores.name else ""


def shared_root(stores: Path) -> Path:
    """Where a store set's skills and board are: the state root above ``tenants/``, else itself."""
    return stores.parent.parent if tenant_of(stores) else stores


def state_sets(root: Path) -> tuple[StateSet, ...]:
    """The tenants under ``root/tenants/`` (or ``root`` itself a ``tenants/`` folder), by slug.

    ``root`` with no tenants is one set, its own; with tenants, its own set comes first only
    when it holds stores of its own (the local CLI beside the gateway).  Every visible folder
    in ``tenants/`` is a tenant: its name (``<slug>-<hex digest>``, 8 or 32 hex by version) is
    the slug sealing binds to, taken as it is.
    """
    if root.name == TENANTS:
        return _tenants_in(root, shared=root.parent)
    own = StateSet(tenant="", stores=root, shared=root)
    found = _tenants_in(root / TENANTS, shared=root)
    if found and not any((root / name).is_dir() for name in OWN_STORES):
        return found
    return (own, *found)


def _tenants_in(folder: Path, *, shared: Path) -> tuple[StateSet, ...]:
    """Every tenant folder directly in ``folder``, sorted by slug; none when it is missing."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return ()
    return tuple(
        StateSet(tenant=entry.name, stores=entry, shared=shared)
        for entry in entries
        if entry.is_dir() and not entry.name.startswith(".")
    )

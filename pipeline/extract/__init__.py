"""Stage 1, extract: a ChatCLI state directory → ``Records``; reads files, writes nothing.

The stores' formats, and the ``store formats §N`` the readers cite, are in
``docs/reference/store-formats.md``.

``read_state`` reads every store that feeds the graph and returns frozen,
deterministically sorted records (:mod:`.read`, which imports every reader).
``store_fingerprint`` tells, from ``stat`` alone, whether any of those files changed since the
last run, and ``source_files`` lists them (:mod:`.sources`, the one listing the readers use
too; it imports no reader).

This package's import is light: the readers are imported the first time ``read_state``,
``read_state_keeping`` or ``DEFAULT_LIMIT`` is asked for, so the no-op sync, which needs only
the fingerprint, pays for none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from vaultsync.extract.sources import (
    LINKS,
    outside_fingerprint,
    source_files,
    store_fingerprint,
)

if TYPE_CHECKING:
    from vaultsync.extract.read import DEFAULT_LIMIT, read_state, read_state_keeping

__all__ = [
    "DEFAULT_LIMIT",
    "LINKS",
    "outside_fingerprint",
    "read_state",
    "read_state_keeping",
    "source_files",
    "store_fingerprint",
]

_LAZY = frozenset(("DEFAULT_LIMIT", "read_state", "read_state_keeping"))


def __getattr__(name: str) -> object:
    """The reading API, imported from :mod:`.read` on first use (module ``__getattr__``)."""
    if name in _LAZY:
        return getattr(importlib.import_module("vaultsync.extract.read"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

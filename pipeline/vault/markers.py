"""Git's conflict markers in a note: never an edit to merge into, and ``check`` stays red; pure.

Apart from the merge (``vault.merge``) so that ``status``, which only tests for them, loads
no merge code.
"""

from __future__ import annotations

import re

_MARKER = re.compile(rb"^(?:<{7}|>{7})(?: |\r?$)", re.MULTILINE)
MARKERS_REASON = "it holds git conflict markers: settle them (`vaultsync resolve PATH`)"
"""Why a note with conflict markers is a conflict, never an edit to merge into."""


def has_conflict_markers(data: bytes) -> bool:
    """Whether ``data`` holds a line git's conflict markers begin (``<<<<<<<``, ``>>>>>>>``)."""
    return _MARKER.search(data) is not None

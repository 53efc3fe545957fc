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


_OPEN, _BASE, _SPLIT, _CLOSE = b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>"
_PARTS = {
    _OPEN: (("",), "yours"),
    _BASE: (("yours",), "base"),
    _SPLIT: (("yours", "base"), "vaultsync"),
    _CLOSE: (("vaultsync",), ""),
}
"""Each marker: the parts of a block it may follow (``""``: outside one), and the part it begins."""


def take_side(data: bytes, side: str) -> bytes | None:
    """``data`` with each conflict block replaced by one side of it (``None``: not git's form).

    Not git's form: a block inside another, or one never closed.  ``side``: ``"yours"`` (the
    lines after ``<<<<<<<``, up to ``|||||||`` or ``=======``) or ``"vaultsync"`` (those after
    ``=======``), as ``VaultRepo.merge_lines`` labels them.
    """
    kept: list[bytes] = []
    part = ""
    for line in data.splitlines(keepends=True):
        mark = _mark(line)
        if mark is None:
            if part in ("", side):
                kept.append(line)
            continue
        after, begins = _PARTS[mark]
        if part not in after:
            return None
        part = begins
    return b"".join(kept) if part == "" else None


def _mark(line: bytes) -> bytes | None:
    """Which marker ``line`` is (``=======`` only alone on its line), else ``None``."""
    body = line.rstrip(b"\r\n")
    if body == _SPLIT:
        return _SPLIT
    for mark in (_OPEN, _BASE, _CLOSE):
        if body == mark or body.startswith(mark + b" "):
            return mark
    return None

"""What a plain vault path is, one path at a time or all at once; pure.

A plain path is relative and POSIX: every part non-empty and not starting with a dot (no
``.``/``..``, no ``.obsidian``, ``.git``, dotfiles), no backslash, no NUL, no drive letter
(``C:``).  ``vault.manifest.check_path`` raises on anything else (and lets the engine's own
control files through); the layout checks the paths it keeps from an earlier run with
:func:`all_safe` (a path it refuses only sends the layout the long way).
"""

from __future__ import annotations

import re

_DRIVE = re.compile(r"[A-Za-z]:")
_PLAIN = re.compile(r"[^./\\\x00][^/\\\x00]*(?:/[^./\\\x00][^/\\\x00]*)*")
"""Every part non-empty, not starting with ".", no "\\" or NUL."""
_NOT_IN_PLAIN = re.compile(r"\\|/[/.\x00]|\x00[\x00./]")
"""What the paths joined by NUL never hold when each is plain (``_PLAIN``): no backslash, no
empty part, no part starting with a dot; NUL itself is checked by counting.  One pass: seven
substring searches took 30 ms over 100,000 paths, this one 17."""


def is_safe(rel: str) -> bool:
    """Whether ``rel`` is a plain vault path."""
    return bool(_PLAIN.fullmatch(rel)) and not _DRIVE.match(rel)


def is_drive(rel: str) -> bool:
    """Whether ``rel`` starts with a drive letter (``C:``)."""
    return bool(_DRIVE.match(rel))


def all_safe(paths: list[str]) -> bool:
    """:func:`is_safe` of every path: searches over the paths joined by NUL.

    One regex per path costs 0.5 s at 100,000 paths; these scans take milliseconds.
    """
    if not paths:
        return True
    joined = "\x00".join(paths)
    if not joined or joined[0] in "./\x00" or joined[-1] in "/\x00":
        return False
    if joined.count("\x00") != len(paths) - 1:
        return False
    if _NOT_IN_PLAIN.search(joined):
        return False
    return ":" not in joined or not any(_DRIVE.match(p) for p in paths)

"""Three saved configs → one, for git's merge of ``.vaultsync/config.toml``; pure.

Like the manifest, the config merges per setting: a setting changed on one side takes that
side, one changed alike on both takes that, and the file keeps this side's comments and layout.
Only a setting two devices changed to different values is left to a person (``None``: git
reports the conflict, as for any file two people changed).
"""

from __future__ import annotations

from vaultsync.core.config import Value, edit_config, read_config
from vaultsync.core.errors import ConfigError


def _as_raw(value: Value) -> str | None:
    """A saved value as ``config set`` takes it (``None``: not set)."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def merge_configs(base: bytes | None, ours: bytes, theirs: bytes) -> bytes | None:
    """The merged config's bytes, or ``None`` when a setting clashes or a side is unreadable."""
    try:
        old, mine, other = read_config(base), read_config(ours), read_config(theirs)
    except ConfigError:
        return None
    merged = ours
    for key in sorted({*old, *mine, *other}):
        was, here, there = old.get(key), mine.get(key), other.get(key)
        if there in (was, here):
            continue  # theirs did not change it, or changed it as we did
        if here != was:
            return None  # both changed it, differently: a person decides
        merged = edit_config(merged, key, _as_raw(there))
    return merged

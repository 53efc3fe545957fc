"""Where the extract memo is kept: the masked records each unchanged store file gave.

One file per part (``extract.memo.part``) in the state's cache folder, in the one cache
envelope (:mod:`vaultsync.core.cachefile`), keyed by the memo version (the code, the readers'
and secret rules' versions, the caps and folders that shape a read).  A second read in a
resident process (``watch``, ``cachefile.resident``) reuses the very records it loaded or
saved, while the files are the ones it loaded or wrote.
"""

from __future__ import annotations

import functools
import importlib.metadata
import pickle
import sys
from pathlib import Path
from typing import Any

from vaultsync.core import cachefile
from vaultsync.core.cachefile import cache_dir
from vaultsync.core.digest import code_fingerprint
from vaultsync.core.redact import rules_version
from vaultsync.core.settings import Caps
from vaultsync.extract.memo import Memo, changed, memo_version, part

MEMO_VERSION = 2
MEMO_FILE = "extract-memo-{}.pickle"
"""One file per part (``extract.memo.part``): each reader's per-item entries (the contexts' are
large and rarely rewritten), each fixed store's (facts…): a changed fact rewrites the facts'."""


def memo_version_of(state: Path, caps: Caps, private_name: str) -> str:
    """The memo version of a read of ``state`` with ``caps`` (``extract.memo.memo_version``)."""
    folders = [str(folder) for folder in caps.sources.skills]
    code = f"{code_fingerprint()}:{_readers_version()}"
    return memo_version(code, rules_version(), caps.store_file_mib, folders, private_name)


@functools.cache
def _readers_version() -> str:
    """Python's and the YAML reader's versions: they decide what a store file reads as too."""
    try:
        yaml = importlib.metadata.version("ruamel.yaml")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a declared dependency
        yaml = "none"
    return f"{sys.version}:{yaml}"


def load_extract_memo(state: Path, version: str, salt: bytes) -> Memo:
    """The memo of the last read when it has this version; an empty one otherwise (never fails)."""
    entries: dict[str, Any] = {}
    written = {}
    try:
        paths = sorted(cache_dir(state).glob(MEMO_FILE.format("*")))
    except OSError:
        paths = []
    for path in paths:
        name = path.name[len("extract-memo-") : -len(".pickle")]
        entries_of, written[name] = _load_memo_part(path, version)
        entries.update(entries_of)
    return Memo(entries=entries, written=written, salt=salt)


def _memo_path(state: Path, name: str) -> Path:
    return cache_dir(state) / MEMO_FILE.format(name)


def _load_memo_part(path: Path, version: str) -> tuple[dict[str, Any], int]:
    """One memo file's entries and mtime; ``({}, 0)`` when missing, foreign or corrupt."""
    try:
        written = path.stat().st_mtime_ns
    except OSError:
        return {}, 0
    head = _memo_head(version)
    entries = cachefile.load_held(path, head, lambda: _dict_or_none(path, head))
    return (entries, written) if isinstance(entries, dict) else ({}, 0)


def _dict_or_none(path: Path, head: bytes) -> dict[str, Any] | None:
    loaded = cachefile.load_pickle(path, head)
    return loaded if isinstance(loaded, dict) else None


def save_extract_memo(state: Path, version: str, memo: Memo, entries: dict[str, Any]) -> bool:
    """Keep ``entries`` for the next read (0600): each memo file only when its part changed.

    ``False`` when a file could not be written.
    """
    saved = True
    for name in sorted({part(key) for key in (*entries, *memo.entries)}):
        now = {key: value for key, value in entries.items() if part(key) == name}
        loaded = {key: value for key, value in memo.entries.items() if part(key) == name}
        if changed(now, loaded, memo.fresh):
            saved = _save_memo_part(_memo_path(state, name), version, now) and saved
    return saved


def _save_memo_part(path: Path, version: str, entries: dict[str, Any]) -> bool:
    body = pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)
    head = _memo_head(version)
    if not cachefile.write(path, head, body):
        return False
    cachefile.hold(path, head, entries)
    return True


def _memo_head(version: str) -> bytes:
    return cachefile.envelope("extract-memo", MEMO_VERSION, version)

"""Where the extract memo is kept: the masked records each unchanged store file gave.

One file per part (``extract.memo.part``) in the state's cache folder, in the one cache
envelope (:mod:`vaultsync.core.cachefile`), keyed by the memo version (the code, the readers'
and secret rules' versions, the caps and folders that shape a read).  A second read in a
resident process (``watch``, ``cachefile.resident``) reuses the very records it loaded or
saved, while the files are the ones it loaded or wrote.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import pickle
import sys
from collections.abc import Mapping
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
"""One file per part (``extract.memo.part``): each reader's per-item entries in 16 files (a
changed context rewrites one), each fixed store's (facts…): a changed fact rewrites the facts'."""


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
    for path in _memo_files(state):
        name = _part_name(path)
        entries_of, written[name] = _load_memo_part(path, version)
        entries.update(entries_of)
    return Memo(entries=entries, written=written, salt=salt)


def _memo_files(state: Path) -> list[Path]:
    try:
        return sorted(cache_dir(state).glob(MEMO_FILE.format("*")))
    except OSError:
        return []


def _part_name(path: Path) -> str:
    return path.name[len("extract-memo-") : -len(".pickle")]


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

    A memo file of a part that holds nothing now is removed.  ``False`` when a file could not
    be written.
    """
    now, loaded = _by_part(entries), _by_part(memo.entries)
    saved = True
    for name in sorted(now.keys() | loaded.keys()):
        if changed(now.get(name, {}), loaded.get(name, {}), memo.fresh):
            saved = _save_memo_part(_memo_path(state, name), version, now.get(name, {})) and saved
    for path in _memo_files(state):
        if _part_name(path) not in now:
            with contextlib.suppress(OSError):
                path.unlink()
    return saved


def _by_part(entries: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    grouped: dict[str, dict[str, Any]] = {}
    for key, value in entries.items():
        grouped.setdefault(part(key), {})[key] = value
    return grouped


def _save_memo_part(path: Path, version: str, entries: dict[str, Any]) -> bool:
    body = pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)
    head = _memo_head(version)
    if not cachefile.write(path, head, body):
        return False
    cachefile.hold(path, head, entries)
    return True


def _memo_head(version: str) -> bytes:
    return cachefile.envelope("extract-memo", MEMO_VERSION, version)

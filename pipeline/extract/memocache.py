"""Where the extract memo is kept: the masked records each unchanged store file gave.

One file per part (``extract.memo.part``) in the state's cache folder, in the one cache
envelope (:mod:`vaultsync.core.cachefile`), keyed by the memo version (the code, the readers'
and secret rules' versions, the caps and folders that shape a read).  A second read in one
process (``watch``) reuses the very records it loaded, while the files' stat data say they
are the ones it loaded.
"""

from __future__ import annotations

import contextlib
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
_memo_loaded: dict[Path, tuple[tuple[int, int, int], str, dict[str, Any]]] = {}
"""Memo file → (its stat data, its version, its entries) as last loaded or saved in this
process: a second read in one process (``watch``) reuses the very same record objects.  Only
one state directory's files are held (``sync --each`` reads many)."""


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
        info = path.stat()
    except OSError:
        return {}, 0
    key = (info.st_size, info.st_mtime_ns, info.st_ino)
    held = _memo_loaded.get(path)
    if held is not None and held[0] == key:
        return (held[2], info.st_mtime_ns) if held[1] == version else ({}, 0)
    entries = cachefile.load_pickle(path, _memo_head(version))
    if not isinstance(entries, dict):
        return {}, 0
    _hold(path, (key, version, entries))
    return entries, info.st_mtime_ns


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
    if not cachefile.write(path, _memo_head(version), body):
        return False
    with contextlib.suppress(OSError):
        info = path.stat()
        _hold(path, ((info.st_size, info.st_mtime_ns, info.st_ino), version, entries))
    return True


def _memo_head(version: str) -> bytes:
    return cachefile.envelope("extract-memo", MEMO_VERSION, version)


def _hold(path: Path, held: tuple[tuple[int, int, int], str, dict[str, Any]]) -> None:
    """Keep one memo file's entries in this process, forgetting other state directories'."""
    for other in [other for other in _memo_loaded if other.parent != path.parent]:
        del _memo_loaded[other]
    _memo_loaded[path] = held

"""Vault + inputs digest → whether a sync would change nothing; reads stat data only.

A sync with nothing to do is the common case (cron, pre-commit, CI).  When the inputs — the
stores' stat data, vaultsync's own code, the templates, the caps — are those of the last
conflict-free sync, and every file that sync saw or wrote still has the stat data it recorded,
the sync's answer is already known: nothing to write.  This module decides that from a few
thousand ``lstat`` calls, without importing git, Jinja or the graph, so a no-op sync costs
little more than the interpreter's start.  Anything unusual (no cache, a journal of an
interrupted sync, a racy timestamp, a file touched, a note deleted) says "changed" and the
full sync runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultsync.core.digest import code_fingerprint, inputs_digest
from vaultsync.core.fsio import RACY_NS
from vaultsync.extract import store_fingerprint
from vaultsync.vault.manifest import CACHE, JOURNAL, MANIFEST, load_cache, load_manifest


def templates_digest(folder: Path | None) -> str:
    """Stat data of a ``--templates`` folder (its files may change between syncs)."""
    if folder is None:
        return "builtin"
    lines = []
    for path in sorted(folder.rglob("*")):
        st = path.stat()
        lines.append(f"{path.relative_to(folder).as_posix()}|{st.st_size}|{st.st_mtime_ns}")
    return inputs_digest(lines)


def sync_inputs(state: Path, settings_key: str, templates: Path | None) -> str:
    """Everything a vault's bytes depend on besides the vault, from stat data and source.

    ``settings_key`` is every chosen setting as text (``Settings.as_key``): the caps, the time
    zone, the templates folder and whatever else the saved config holds.
    """
    return inputs_digest(
        (
            code_fingerprint(),
            templates_digest(templates),
            settings_key,
            str(state.resolve()),
            store_fingerprint(state),
        )
    )


def unchanged_since_last_sync(vault: Path, inputs: str) -> bool:
    """``True`` only when a sync with these inputs would certainly find nothing to do."""
    try:
        if (vault / JOURNAL).exists():
            return False
        cache_path = vault / CACHE
        cache = load_cache(cache_path.read_bytes(), written_ns=cache_path.stat().st_mtime_ns)
        manifest = load_manifest((vault / MANIFEST).read_bytes(), fingerprint="quick")
    except OSError:
        return False
    if not cache.inputs or cache.inputs != inputs or manifest.corrupt:
        return False
    # A file modified within the racy window of the cache's own write may have changed without
    # its stat data showing it (timestamp granularity): only a hash could tell, so do not skip.
    # ``is_racy`` inlined and paths joined as text: this loop runs per note on every no-op sync.
    racy_from, root = cache.written_ns - RACY_NS, os.fspath(vault)
    untouched = all(
        recorded[1] < racy_from and _stat(f"{root}/{path}") == recorded
        for path, (recorded, _) in cache.entries.items()
    )
    return untouched and not any(
        os.path.lexists(f"{root}/{path}") for path in manifest.entries if path not in cache.entries
    )


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)

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

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from pipeline.extract import store_fingerprint
from pipeline.manifest import CACHE, JOURNAL, MANIFEST, RACY_NS, load_cache, load_manifest
from pipeline.settings import Caps


def inputs_digest(parts: Iterable[str | bytes]) -> str:
    """One digest of several parts; each is length-prefixed, so no two lists of parts collide."""
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def files_digest(paths: Iterable[Path], root: Path) -> str:
    """Digest of files' names (relative to ``root``) and bytes; a missing file counts as ``-``."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"-")
    return digest.hexdigest()


def tree_digest(folder: Path, suffixes: tuple[str, ...] = (".py", ".j2")) -> str:
    """Digest of the source files under a folder (names and bytes)."""
    return files_digest((p for p in sorted(folder.rglob("*")) if p.suffix in suffixes), folder)


def code_digest() -> str:
    """Vaultsync's own source: the stages, the renderers and the built-in templates."""
    root = Path(__file__).resolve().parent.parent
    return inputs_digest(
        tree_digest(root / name) for name in ("pipeline", "renderers", "templates")
    )


def templates_digest(folder: Path | None) -> str:
    """Stat data of a ``--templates`` folder (its files may change between syncs)."""
    if folder is None:
        return "builtin"
    lines = []
    for path in sorted(folder.rglob("*")):
        st = path.stat()
        lines.append(f"{path.relative_to(folder).as_posix()}|{st.st_size}|{st.st_mtime_ns}")
    return inputs_digest(lines)


def sync_inputs(state: Path, caps: Caps, templates: Path | None) -> str:
    """Everything a vault's bytes depend on besides the vault, from stat data and source."""
    return inputs_digest(
        (
            code_digest(),
            templates_digest(templates),
            caps.as_key(),
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
    limit = cache.written_ns - RACY_NS
    untouched = all(
        _stat(vault / path) == recorded and recorded[1] < limit
        for path, (recorded, _) in cache.entries.items()
    )
    return untouched and not any(
        os.path.lexists(vault / path) for path in manifest.entries if path not in cache.entries
    )


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)

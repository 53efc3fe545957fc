"""Helpers for the search and API tests (no tests here): small vaults on disk, the demo vault."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from vaultsync.vault.manifest import blob_id


def write_vault(
    root: Path, notes: Mapping[str, str], *, engine: Mapping[str, str] | None = None
) -> Path:
    """Write ``notes`` (path → text) under ``root``; ``engine`` (path → node id) adds a manifest."""
    for rel, text in notes.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    if engine is not None:
        entries = {
            path: {
                "blob": blob_id((root / path).read_bytes()),
                "key": "0" * 64,
                "node": node,
            }
            for path, node in engine.items()
        }
        manifest = {"schema": 1, "engine": "vaultsync", "entries": entries, "deleted": []}
        control = root / ".vaultsync"
        control.mkdir(exist_ok=True)
        (control / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def engine_note(node_id: str, kind: str, title: str, body: str = "", links: str = "") -> str:
    """A note in the shape the engine writes: front matter, heading, body, ``## Links``."""
    return (
        f'---\nvaultsync_id: "{node_id}"\nkind: "{kind}"\naliases: []\ntags: []\n---\n\n'
        f"# {title}\n\n{body}\n\n## Links\n\n{links or 'No links yet.'}\n"
    )


def touch_later(path: Path, seconds: int = 10) -> None:
    """Move a file's mtime forward, as an edit some time after the index saw it would."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 1_000_000_000))


def age(path: Path, seconds: int = 60) -> None:
    """Move a file's mtime back, out of the racy window, so the stat shortcut applies."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - seconds * 1_000_000_000))


def demo_vault(state: Path, vault: Path) -> Path:
    """Render the demo store's vault with the project's own pipeline (no commit)."""
    from vaultsync.core.settings import Caps
    from vaultsync.graph.load import build
    from vaultsync.render.specs import build_note_specs, make_environment
    from vaultsync.vault.sync import sync_vault

    records, built = build(state, Caps())
    specs = build_note_specs(records, built.graph, built.resolver, make_environment())
    sync_vault(vault, specs, commit=False)
    return vault


def index_state(vault: Path) -> dict[str, object]:
    """Everything the search index says, by path (row ids and stat data left out)."""
    from vaultsync.search.index import index_path

    conn = sqlite3.connect(index_path(vault))
    try:
        paths = dict(conn.execute("SELECT nid, path FROM notes"))
        return {
            "notes": sorted(
                conn.execute(
                    "SELECT path, id, claimed, engine, title, kind, aliases, tags, sha256,"
                    " outdegree, pkey FROM notes"
                )
            ),
            "links": sorted(
                (paths[s], q, kind, t, "" if d is None else paths[d])
                for s, q, kind, t, d in conn.execute(
                    "SELECT src, seq, link_type, target, dst FROM links"
                )
            ),
            "names": sorted((k, paths[n]) for k, n in conn.execute("SELECT key, nid FROM names")),
            "text": sorted(
                (paths[r], *rest)
                for r, *rest in conn.execute(
                    "SELECT rowid, title, aliases, tags, path, body FROM fts"
                )
            ),
        }
    finally:
        conn.close()


def rebuilt_index_state(vault: Path, scratch: Path) -> dict[str, object]:
    """The state of an index built from scratch over a copy of ``vault`` (in ``scratch``)."""
    from vaultsync.search.index import update_index

    copy = scratch / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(vault, copy, ignore=shutil.ignore_patterns("search.db*", ".git"))
    update_index(copy)
    return index_state(copy)

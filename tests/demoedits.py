"""Changes to a copy of the demo store the way ChatCLI makes them, and where a note went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOPIC = "topic:telemetry"
"""The demo store's first topic, which :func:`edit_topic` changes."""


def _edit_first(state: Path, store: str, field: str, value: str) -> dict[str, Any]:
    """Set ``field`` of the first item of ``memory/<store>`` and write it back as ChatCLI does
    (a temp file, then renamed over the store); the item."""
    path = state / "memory" / store
    items = json.loads(path.read_text(encoding="utf-8"))
    items[0][field] = value
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(items, indent=2), encoding="utf-8")
    temp.replace(path)
    return dict(items[0])


def edit_first_fact(state: Path, text: str) -> str:
    """Give the store's first fact new content (its note is renamed with it); its note's id."""
    return f"fact:{_edit_first(state, 'memory_index.json', 'content', text)['id']}"


def edit_topic(state: Path, summary: str) -> str:
    """Give the store's first topic a new summary (its note keeps its path); its note's id."""
    return f"topic:{_edit_first(state, 'topics.json', 'summary', summary)['name']}"


def note_of(vault: Path, node: str) -> Path:
    """Where the vault's manifest says ``node``'s note is."""
    manifest = json.loads((vault / ".vaultsync" / "manifest.json").read_text(encoding="utf-8"))
    entries: dict[str, dict[str, str]] = manifest["entries"]
    return vault / next(p for p, entry in entries.items() if entry["node"] == node)

"""Changes to a copy of the demo store the way ChatCLI makes them, and where a note went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TOPIC = "topic:telemetry"
"""The demo store's first topic, which :func:`edit_topic` changes."""


def _rewrite(path: Path, items: list[dict[str, Any]]) -> None:
    """Write ``items`` as ChatCLI does: a temp file, then renamed over the store."""
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(items, indent=2), encoding="utf-8")
    temp.replace(path)


def edit_first_fact(state: Path, text: str) -> str:
    """Give the store's first fact new content (its note is renamed with it); its note's id."""
    path = state / "memory" / "memory_index.json"
    facts = json.loads(path.read_text(encoding="utf-8"))
    facts[0]["content"] = text
    _rewrite(path, facts)
    return f"fact:{facts[0]['id']}"


def edit_topic(state: Path, summary: str) -> str:
    """Give the store's first topic a new summary (its note keeps its path); its note's id."""
    path = state / "memory" / "topics.json"
    topics = json.loads(path.read_text(encoding="utf-8"))
    topics[0]["summary"] = summary
    _rewrite(path, topics)
    return f"topic:{topics[0]['name']}"


def note_of(vault: Path, node: str) -> Path:
    """Where the vault's manifest says ``node``'s note is."""
    manifest = json.loads((vault / ".vaultsync" / "manifest.json").read_text(encoding="utf-8"))
    entries: dict[str, dict[str, str]] = manifest["entries"]
    return vault / next(p for p, entry in entries.items() if entry["node"] == node)

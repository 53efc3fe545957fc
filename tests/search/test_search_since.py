"""An update told what a sync changed equals an index built from scratch."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from vaults import engine_note, index_state, rebuilt_index_state, write_vault
from vaultsync.search.index import Since, update_index
from vaultsync.vault.manifest import MANIFEST, Manifest, blob_id, load_manifest

_PATHS = ["a.md", "A/b.md", "B/b.md", "Note.md", "A/note.md", "N o.md", "B/x.md.md"]
_NODES = ["topic:a", "topic:b", "topic:c", "topic:d"]
_TARGETS = [
    "a",
    "b",
    "B/b",
    "note",
    "./b",
    "../a",
    "A/../note",
    "./x/..",
    "N%20o",
    "x.md",
    "missing",
]


def _text(body: tuple[str, str | None, tuple[str, ...]]) -> str:
    """A note: a title, maybe an id it claims, and links by name."""
    title, claimed, targets = body
    links = " ".join(f"[[{t}]]" for t in targets)
    if claimed is None:
        return f"# {title}\n\n{links}\n"
    return engine_note(claimed, "topic", title, links)


_BODIES = st.tuples(
    st.sampled_from(["Alpha", "Beta", "Gamma"]),
    st.one_of(st.none(), st.sampled_from(_NODES)),
    st.lists(st.sampled_from(_TARGETS), max_size=3).map(tuple),
)
_CHANGE = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(_PATHS), _BODIES),
    st.tuples(st.just("remove"), st.sampled_from(_PATHS), st.none()),
    st.tuples(st.just("list"), st.sampled_from(_PATHS), st.sampled_from(_NODES)),
    st.tuples(st.just("unlist"), st.sampled_from(_PATHS), st.none()),
)
_STEP = st.tuples(st.lists(_CHANGE, max_size=4), st.lists(_CHANGE, max_size=2))
"""What a sync changes, then what the user changes besides."""


def _apply(vault: Path, listed: dict[str, str], change: tuple[str, str, Any]) -> str | None:
    """One change made; the note path whose file it changed (None: only the manifest's)."""
    kind, path, value = change
    if kind == "write":
        write_vault(vault, {path: _text(value)})
        return path
    if kind == "remove":
        (vault / path).unlink(missing_ok=True)
        return path
    if kind == "list":
        listed[path] = str(value)
    else:
        listed.pop(path, None)
    return None


def _write_manifest(vault: Path, listed: dict[str, str]) -> None:
    """The manifest listing the notes of ``listed`` that are there (as a sync leaves it)."""
    present = {p: n for p, n in listed.items() if (vault / p).is_file()}
    write_vault(vault, {}, engine=present)


def _manifest(vault: Path) -> Manifest:
    data = (vault / MANIFEST).read_bytes()
    return load_manifest(data, fingerprint=blob_id(data))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_CHANGE, max_size=6), st.lists(_STEP, min_size=1, max_size=4))
@example(  # the manifest names another node at a path whose bytes stay
    [("write", "a.md", ("Alpha", None, ())), ("list", "a.md", "topic:a")],
    [([("list", "a.md", "topic:b")], [])],
)
@example(  # the id a note claims changes, nothing else
    [("write", "a.md", ("Alpha", "topic:a", ()))],
    [([("write", "a.md", ("Alpha", "topic:b", ()))], [])],
)
@example(  # links that resolve by their path, percent-decoded, or climbing a folder
    [("write", "A/b.md", ("Beta", None, ("../a", "N%20o", "./x/..")))],
    [([("write", "a.md", ("Alpha", None, ())), ("write", "N o.md", ("Gamma", None, ()))], [])],
)
@example(  # [[x.md]] names the note x.md.md when there is no x.md
    [("write", "A/b.md", ("Beta", None, ("x.md",)))],
    [([("write", "B/x.md.md", ("Gamma", None, ()))], [])],
)
def test_an_update_since_a_sync_equals_a_build(
    first: list[tuple[str, str, Any]],
    steps: list[tuple[list[tuple[str, str, Any]], list[tuple[str, str, Any]]]],
) -> None:
    """After each sync, the update told its paths equals a build; with user edits, the next
    plain update does."""
    with tempfile.TemporaryDirectory() as scratch:
        vault = Path(scratch) / "vault"
        vault.mkdir()
        listed: dict[str, str] = {}
        for change in first:
            _apply(vault, listed, change)
        _write_manifest(vault, listed)
        update_index(vault)
        for synced, edited in steps:
            before = _manifest(vault)
            touched = {p for change in synced if (p := _apply(vault, listed, change))}
            _write_manifest(vault, listed)
            update_index(vault, since=Since(manifest=before, paths=frozenset(touched)))
            for change in edited:
                _apply(vault, listed, change)
            if edited:
                _write_manifest(vault, listed)
                update_index(vault)
            assert index_state(vault) == rebuilt_index_state(vault, Path(scratch)), json.dumps(
                steps
            )

"""Golden notes: every note of the sample vault (one or more of every kind) as a ``.md`` file.

Each note is one syrupy single-file snapshot under ``__snapshots__/test_render_snapshots/``,
named by its vault path percent-encoded (syrupy's own name cleaning would merge ``a/b.md`` and
``ab.md``).  ``pytest --snapshot-update`` rewrites them; review the diff like any source change.

To snapshot another store (e.g. the demo store), render it with ``render_vault`` and pass the
result to ``assert_vault_snapshots``::

    records = read_records(DEMO_STORE)
    build = build_graph(records, Caps())
    assert_vault_snapshots(render_vault(records, build.graph, build.resolver), md_snapshot)
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from samples import render_vault, sample
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.load import read_records
from vaultsync.render.specs import build_note_specs, make_environment


class MarkdownSnapshot(SingleFileSnapshotExtension):
    """One ``.md`` file per snapshot, compared as bytes (BINARY mode: no newline rewriting)."""

    file_extension = "md"


@pytest.fixture
def md_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(MarkdownSnapshot)


def assert_vault_snapshots(files: dict[str, bytes], md_snapshot: SnapshotAssertion) -> None:
    """Each rendered note equals its snapshot, named by its percent-encoded vault path."""
    for path in sorted(files):
        assert files[path] == md_snapshot(name=quote(path, safe=""))


def test_sample_vault(md_snapshot: SnapshotAssertion) -> None:
    """Every note of the hand-made sample vault renders exactly as reviewed."""
    files = render_vault(*sample())
    kinds = {path.split("/")[0] for path in files}
    assert kinds == {
        "Board",
        "Contexts",
        "Episodes",
        "Facts",
        "Home.md",
        "Journal",
        "Profile",
        "Projects",
        "Sessions",
        "Skills",
        "Topics",
    }
    assert_vault_snapshots(files, md_snapshot)


# Notes of the demo store that show a rule at work, beside one note of every kind.
DEMO_SPECIAL = (
    "Contexts/handbook/ops/runbooks/db-failover.md",  # secrets masked in a document
    "Journal/Daily/2026-10-22.md",  # an AWS key id and a URL password masked in a journal note
    "Contexts/handbook/ops/runbooks/rotate-certs.sh.md",  # source code fenced, never rewritten
)


def test_demo_store_notes(demo_state: Path, md_snapshot: SnapshotAssertion) -> None:
    """One rendered note of every kind from the demo store, and the notes that mask secrets."""
    records = read_records(demo_state)
    build = build_graph(records, Caps())
    files = render_vault(records, build.graph, build.resolver)
    first_of_kind: dict[str, str] = {}
    for spec in build_note_specs(records, build.graph, build.resolver, make_environment()):
        kind = build.graph.by_id[spec.node_id].kind.value if spec.node_id else "home"
        first_of_kind.setdefault(kind, spec.path)
    chosen = {*first_of_kind.values(), *DEMO_SPECIAL}
    assert len(first_of_kind) == 13  # Home and every kind but tags (front matter, not notes)
    assert_vault_snapshots({path: files[path] for path in chosen}, md_snapshot)

"""The manifest's merge driver: per path, three-way, never a conflict between two syncs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.vault.manifest import Entry, dump_manifest, load_manifest
from vaultsync.vault.manifestmerge import merge_manifests

PATHS = ("Facts/a.md", "Facts/b.md", "Topics/c.md", "Home.md")
BLOBS = ("1" * 40, "2" * 40, "3" * 40)


def _entry(blob: str) -> Entry:
    return Entry(node="fact:x", key="k" * 64, blob=blob)


def _manifest(entries: dict[str, str], deleted: frozenset[str] = frozenset()) -> bytes:
    return dump_manifest({p: _entry(b) for p, b in entries.items()}, deleted)


def _blobs(data: bytes) -> dict[str, str]:
    return {p: e.blob for p, e in load_manifest(data).entries.items()}


def test_changes_to_neighbouring_notes_merge() -> None:
    """One side changes a, the other b (adjacent lines, a git conflict): both are kept."""
    base = _manifest({"Facts/a.md": BLOBS[0], "Facts/b.md": BLOBS[0]})
    ours = _manifest({"Facts/a.md": BLOBS[1], "Facts/b.md": BLOBS[0]})
    theirs = _manifest({"Facts/a.md": BLOBS[0], "Facts/b.md": BLOBS[2]})
    merged = merge_manifests(base, ours, theirs)
    assert merged is not None
    assert _blobs(merged) == {"Facts/a.md": BLOBS[1], "Facts/b.md": BLOBS[2]}


def test_a_note_changed_differently_on_both_sides_keeps_the_common_record() -> None:
    """Both sides rewrote a differently: the ancestor's record stays, so a sync merges."""
    base = _manifest({"Facts/a.md": BLOBS[0]})
    ours = _manifest({"Facts/a.md": BLOBS[1]})
    theirs = _manifest({"Facts/a.md": BLOBS[2]})
    merged = merge_manifests(base, ours, theirs)
    assert merged is not None and _blobs(merged) == {"Facts/a.md": BLOBS[0]}


def test_an_unreadable_side_is_a_conflict() -> None:
    """A side that is not a manifest is left to git as a conflict."""
    base = _manifest({"Facts/a.md": BLOBS[0]})
    assert merge_manifests(base, b"<<<<<<< ours\n", base) is None


_SIDE = st.dictionaries(st.sampled_from(PATHS), st.sampled_from(BLOBS))
_GONE = st.frozensets(st.sampled_from(PATHS))


@given(_SIDE, _SIDE, _SIDE, _GONE, _GONE, _GONE)
def test_merge_is_symmetric_and_keeps_one_sided_changes(
    base: dict[str, str],
    ours: dict[str, str],
    theirs: dict[str, str],
    gone_base: frozenset[str],
    gone_ours: frozenset[str],
    gone_theirs: frozenset[str],
) -> None:
    """Swapping the sides changes nothing, and a path only one side changed takes that side."""
    b = _manifest(base, gone_base)
    o, t = _manifest(ours, gone_ours), _manifest(theirs, gone_theirs)
    merged = merge_manifests(b, o, t)
    assert merged is not None and merged == merge_manifests(b, t, o)
    result = _blobs(merged)
    for path in PATHS:
        if theirs.get(path) == base.get(path):
            assert result.get(path) == ours.get(path)
        if ours.get(path) == base.get(path):
            assert result.get(path) == theirs.get(path)
    assert merge_manifests(b, o, o) == o

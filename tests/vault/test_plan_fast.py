"""The plan's fast path for unchanged notes decides what the full path decides."""

from __future__ import annotations

from types import MappingProxyType

from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.model import NoteSpec
from vaultsync.vault.manifest import Entry, Manifest
from vaultsync.vault.plan import (
    ABSENT,
    FileKind,
    FileState,
    _produced_step,
    _unchanged,
    _unchanged_step,
    file_state,
)

_BLOBS = st.sampled_from(["a" * 40, "b" * 40])
_ENTRY = st.builds(
    Entry,
    node=st.sampled_from(["n", "m"]),
    key=st.sampled_from(["k", "j"]),
    blob=_BLOBS,
    theirs=st.sampled_from(["", "c" * 40]),
)
_STATE = st.one_of(
    st.just(ABSENT),
    st.builds(lambda b: file_state(b, (1, 2, 3)), _BLOBS),
    st.just(FileState(kind=FileKind.OTHER, detail="x")),
)


@given(st.none() | _ENTRY, _STATE, st.sampled_from(["n", "m"]), st.sampled_from(["k", "j"]))
def test_unchanged_fast_path_is_the_full_step(
    entry: Entry | None, state: FileState, node: str, key: str
) -> None:
    """Where the fast path takes a note as unchanged, the full path gives the same step."""
    spec = NoteSpec(path="a.md", node_id=node, key=key, render=lambda: b"")
    entries = MappingProxyType({"a.md": entry} if entry is not None else {})
    manifest = Manifest(entries=entries, fingerprint="f")
    fast = _unchanged(spec, entry, state)
    step, kept = _produced_step(spec, manifest, {"a.md": state}, {}, clash=None, force=False)
    if fast is not None:
        assert (_unchanged_step(spec, state), fast) == (step, kept)
    else:
        assert step.action != "unchanged" or kept != entry


def test_file_state_is_the_constructed_one() -> None:
    """A file state built through its slots equals, hashes and prints as the constructed one."""
    built = FileState(kind=FileKind.FILE, blob="a" * 40, stat=(1, 2, 3))
    fast = file_state("a" * 40, (1, 2, 3))
    assert (fast, hash(fast), repr(fast)) == (built, hash(built), repr(built))

"""A commit's tree is patched folder by folder and equals the tree an index would write."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st
from pygit2 import IndexEntry
from pygit2.enums import FileMode
from vaultsync.vault.vcs import patched_tree

_NAMES = st.sampled_from(["a", "b", "x.md", "y.md"])
_PATHS = st.lists(_NAMES, min_size=1, max_size=3).map("/".join)
_MODES = st.sampled_from([FileMode.BLOB, FileMode.BLOB_EXECUTABLE])
_FILES = st.dictionaries(_PATHS, st.tuples(st.binary(max_size=3), _MODES), max_size=8)
_EDITS = st.dictionaries(_PATHS, st.none() | st.tuples(st.binary(max_size=3), _MODES), max_size=6)


def _blob(repo: pygit2.Repository, data: bytes) -> pygit2.Oid:
    return repo.create_blob(data)


def _index_tree(
    repo: pygit2.Repository,
    base: pygit2.Tree | None,
    edits: Mapping[str, tuple[pygit2.Oid, int] | None],
) -> pygit2.Oid:
    """The reference: ``base`` read into an index, the edits applied in path order, written."""
    index = pygit2.Index()
    if base is not None:
        index.read_tree(base)
    for path, edit in sorted(edits.items()):
        if edit is None:
            if path in index:
                index.remove(path)
        else:
            index.add(IndexEntry(path, edit[0], FileMode(edit[1])))
    return index.write_tree(repo)


def _tree_of(repo: pygit2.Repository, files: Mapping[str, tuple[bytes, FileMode]]) -> pygit2.Tree:
    index = pygit2.Index()
    for path, (data, mode) in sorted(files.items()):
        index.add(IndexEntry(path, _blob(repo, data), mode))
    found = repo[index.write_tree(repo)]
    assert isinstance(found, pygit2.Tree)
    return found


@settings(max_examples=150, deadline=None)
@given(_FILES, _EDITS)
def test_a_patched_tree_is_the_tree_an_index_writes(
    files: dict[str, tuple[bytes, FileMode]], edits: dict[str, tuple[bytes, FileMode] | None]
) -> None:
    """Files replaced, added, removed (folders emptied, a file where a folder was): equal."""
    with tempfile.TemporaryDirectory() as folder:
        repo = pygit2.init_repository(folder)
        base = _tree_of(repo, files)
        index = pygit2.Index()
        index.read_tree(base)
        applied = {
            path: None if edit is None else (_blob(repo, edit[0]), edit[1])
            for path, edit in edits.items()
            if (edit is not None or path in index)  # a commit removes only files it has
            and not _folder_or_file_clash(path, [*files, *edits])  # no disk holds both
        }
        expected = _index_tree(repo, base, applied)
        assert (patched_tree(repo, base, applied) or _empty(repo)) == expected


def _folder_or_file_clash(path: str, others: list[str]) -> bool:
    """Whether ``path`` is a folder of another path, or another path is a folder of it."""
    return any(other.startswith(f"{path}/") or path.startswith(f"{other}/") for other in others)


def test_a_file_where_a_folder_was_replaces_it(tmp_path: Path) -> None:
    """A file set at a folder's path replaces the folder, and a folder set below a file too."""
    repo = pygit2.init_repository(tmp_path)
    base = _tree_of(repo, {"a": (b"1", FileMode.BLOB), "b/a": (b"2", FileMode.BLOB)})
    blob = _blob(repo, b"3")
    expected = _tree_of(repo, {"a": (b"1", FileMode.BLOB), "b": (b"3", FileMode.BLOB)})
    assert patched_tree(repo, base, {"b": (blob, FileMode.BLOB)}) == expected.id
    expected = _tree_of(repo, {"a/c": (b"3", FileMode.BLOB), "b/a": (b"2", FileMode.BLOB)})
    assert patched_tree(repo, base, {"a/c": (blob, FileMode.BLOB)}) == expected.id


def test_no_edit_gives_the_very_same_tree(tmp_path: Path) -> None:
    """Nothing to apply: the base tree itself, not a copy of it."""
    repo = pygit2.init_repository(tmp_path)
    base = _tree_of(repo, {"F/x.md": (b"1", FileMode.BLOB), "y.md": (b"2", FileMode.BLOB)})
    assert patched_tree(repo, base, {}) == base.id


def test_every_file_removed_leaves_no_tree(tmp_path: Path) -> None:
    """The last file of the last folder removed: nothing is left (the commit's tree is empty)."""
    repo = pygit2.init_repository(tmp_path)
    base = _tree_of(repo, {"F/G/x.md": (b"1", FileMode.BLOB)})
    assert patched_tree(repo, base, {"F/G/x.md": None}) is None


def _empty(repo: pygit2.Repository) -> pygit2.Oid:
    return repo.TreeBuilder().write()

"""vaultsync.vault.merge: a note's three-way merge, with libgit2's line merge of a real repo."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaultsync.core.notes import read_front_matter
from vaultsync.render.yamlfm import yaml_scalar
from vaultsync.vault.merge import LineMerge, key_blocks, merge_note
from vaultsync.vault.vcs import VaultRepo


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> LineMerge:
    """The line merge of a real repository (the one `vault.decide` hands the merge)."""
    repo = VaultRepo.open(tmp_path_factory.mktemp("merge-repo"), create=True)
    assert repo is not None
    return repo.merge_lines


def note(front: str, body: str) -> bytes:
    return f"---\n{front}---\n\n{body}".encode()


BASE = note(
    'status: "active"\ntags:\n  - "go"\n  - "kafka"\npriority: 2\n',
    "# orbital\n\n- **Status:** active\n\n## Links\n\n- in project → [[x]]\n",
)


def test_store_change_and_appended_paragraph_both_survive(lines: LineMerge) -> None:
    """The stores' new status and the user's new paragraph are both in the merge."""
    ours = BASE + b"\nMy own paragraph.\n"
    theirs = BASE.replace(b"active", b"paused")
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert merged.clean
    assert merged.data == theirs + b"\nMy own paragraph.\n"


def test_tag_lists_merge_by_item(lines: LineMerge) -> None:
    """The user's extra tag stays, the stores' new one is added, a dropped one goes."""
    ours = BASE.replace(b'  - "kafka"\n', b'  - "kafka"\n  - "mine"\n')
    theirs = BASE.replace(b'  - "go"\n  - "kafka"\n', b'  - "kafka"\n  - "grpc"\n')
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert merged.clean
    assert read_front_matter(merged.data.decode()).values["tags"] == ["kafka", "mine", "grpc"]


def test_adjacent_keys_changed_apart_merge_by_key(lines: LineMerge) -> None:
    """Keys on neighbouring lines, one changed by each side: a line merge would conflict."""
    ours = BASE.replace(b"priority: 2", b"priority: 1")
    theirs = BASE.replace(b'  - "kafka"\n', b'  - "kafka"\n  - "grpc"\n')
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert merged.clean
    values = read_front_matter(merged.data.decode()).values
    assert values["priority"] == 1
    assert values["tags"] == ["go", "kafka", "grpc"]


def test_same_key_changed_apart_is_a_conflict(lines: LineMerge) -> None:
    """Both sides set ``status`` differently: a conflict naming the key, with markers."""
    ours = BASE.replace(b'status: "active"', b'status: "mine"')
    theirs = BASE.replace(b'status: "active"', b'status: "paused"')
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert not merged.clean
    assert merged.overlaps == ("front matter: status",)
    assert b"<<<<<<< yours" in merged.data
    assert b">>>>>>> vaultsync" in merged.data


def test_body_lines_changed_apart_are_a_conflict(lines: LineMerge) -> None:
    """Both sides rewrite the status line of the body: a conflict in the body."""
    ours = BASE.replace(b"**Status:** active", b"**Status:** mine")
    theirs = BASE.replace(b"**Status:** active", b"**Status:** paused")
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert (merged.clean, merged.overlaps) == (False, ("body",))


def test_user_key_order_is_kept_and_new_keys_follow_their_predecessor(lines: LineMerge) -> None:
    """The user's order stays; a key the stores add goes after the key it follows there."""
    ours = note('priority: 2\nstatus: "active"\ntags:\n  - "go"\n  - "kafka"\n', "# orbital\n")
    base = note('status: "active"\ntags:\n  - "go"\n  - "kafka"\npriority: 2\n', "# orbital\n")
    theirs = note(
        'status: "active"\nowner: "ana"\ntags:\n  - "go"\n  - "kafka"\npriority: 2\n',
        "# orbital\n",
    )
    merged = merge_note(base, ours, theirs, merge_lines=lines)
    assert merged.clean
    blocks = key_blocks(merged.data.decode().split("---\n")[1])
    assert blocks is not None
    assert [key for key, _ in blocks] == ["priority", "status", "owner", "tags"]


def test_key_the_user_deleted_stays_deleted(lines: LineMerge) -> None:
    """A key the user removed and the stores left alone is not brought back."""
    ours = BASE.replace(b"priority: 2\n", b"")
    theirs = BASE.replace(b'status: "active"', b'status: "paused"')
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert merged.clean
    assert b"priority" not in merged.data
    assert b'status: "paused"' in merged.data


def test_user_formatting_of_untouched_keys_survives(lines: LineMerge) -> None:
    """Values are moved as text: the user's flow list and comment stay byte for byte."""
    ours = BASE.replace(b'tags:\n  - "go"\n  - "kafka"\n', b"tags: [go, kafka]  # mine\n")
    theirs = BASE.replace(b'status: "active"', b'status: "paused"')
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert merged.clean
    assert b"tags: [go, kafka]  # mine\n" in merged.data


def test_note_that_is_not_utf8_is_never_merged(lines: LineMerge) -> None:
    """Bytes that are not UTF-8 on one side: a conflict, the user's bytes untouched."""
    ours = BASE + b"\xff\xfe\n"
    theirs = b"\xfe" + BASE.replace(b"active", b"paused")
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert not merged.clean


def test_user_removed_front_matter_merges_as_a_whole(lines: LineMerge) -> None:
    """Without front matter on one side, the whole note merges by lines."""
    ours = BASE.split(b"---\n\n", 1)[1] + b"\nMine.\n"
    theirs = BASE.replace(b"**Status:** active", b"**Status:** paused")
    merged = merge_note(BASE, ours, theirs, merge_lines=lines)
    assert merged.clean
    assert merged.data.startswith(b"# orbital") and b"paused" in merged.data


def test_repeated_key_gives_no_blocks() -> None:
    """A key written twice cannot be merged by key."""
    assert key_blocks("a: 1\nb: 2\na: 3\n") is None
    assert key_blocks("# c\na: 1\nb:\n  - x\n") == (
        ("", "# c\n"),
        ("a", "a: 1\n"),
        ("b", "b:\n  - x\n"),
    )


KEYS = st.sampled_from(["status", "owner", "priority", "title", "kind", "area"])
VALUES = st.one_of(st.integers(-5, 5), st.text("abcdef xyz", min_size=1, max_size=8))


def _front(values: dict[str, object]) -> str:
    return "".join(f"{key}: {yaml_scalar(value)}\n" for key, value in values.items())


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.dictionaries(KEYS, VALUES, min_size=2),
    ours_changes=st.dictionaries(KEYS, VALUES, max_size=2),
    theirs_changes=st.dictionaries(KEYS, VALUES, max_size=2),
)
def test_disjoint_key_changes_merge_to_both(
    lines: LineMerge,
    base: dict[str, object],
    ours_changes: dict[str, object],
    theirs_changes: dict[str, object],
) -> None:
    """Changes of different keys by each side always merge clean, to both changes."""
    theirs_changes = {k: v for k, v in theirs_changes.items() if k not in ours_changes}
    body = "# n\n\ntext\n"
    merged = merge_note(
        note(_front(base), body),
        note(_front({**base, **ours_changes}), body),
        note(_front({**base, **theirs_changes}), body),
        merge_lines=lines,
    )
    assert merged.clean
    values = read_front_matter(merged.data.decode()).values
    assert dict(values) == {**base, **ours_changes, **theirs_changes}


def test_merge_repo_is_real(tmp_path: Path) -> None:
    """The line merge stores its sides in the repository's object store."""
    repo = VaultRepo.open(tmp_path, create=True)
    assert repo is not None
    data, clean = repo.merge_lines(b"a\nb\nc\n", b"a\nb\nc\nd\n", b"A\nb\nc\n")
    assert (data, clean) == (b"A\nb\nc\nd\n", True)
    assert repo.read_blob("0" * 40) is None

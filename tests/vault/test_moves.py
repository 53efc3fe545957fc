"""vaultsync.vault.moves: notes the user moved are found and followed; link rewrites are no edit."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pygit2
from syncdriver import make_spec
from vaultsync.vault.manifest import MANIFEST, Entry, Manifest, blob_id, load_manifest
from vaultsync.vault.moves import LinkTargets, find_moves, follow, same_but_links
from vaultsync.vault.sync import sync_vault, vault_moves

NOTE = b'---\nvaultsync_id: "project:skiff"\n---\n\n# skiff\n'


def manifest(entries: dict[str, Entry]) -> Manifest:
    return Manifest(entries=MappingProxyType(entries), fingerprint="f")


def entry(node: str, data: bytes, *, chosen: bool = False) -> Entry:
    return Entry(node=node, key="k", blob=blob_id(data), chosen=chosen)


def write(vault: Path, rel: str, data: bytes) -> None:
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_bytes(data)


def test_moved_note_is_found_by_its_id(tmp_path: Path) -> None:
    """A missing note found elsewhere by ``vaultsync_id`` is renamed and chosen."""
    write(tmp_path, "Boats/Skiff (boat).md", NOTE + b"edited\n")
    moves = find_moves(tmp_path, manifest({"Projects/skiff.md": entry("project:skiff", NOTE)}))
    assert dict(moves.renamed) == {"Projects/skiff.md": "Boats/Skiff (boat).md"}
    assert dict(moves.chosen) == {"project:skiff": "Boats/Skiff (boat).md"}


def test_moved_note_without_its_id_line_is_found_by_its_bytes(tmp_path: Path) -> None:
    """The id line gone but the bytes vaultsync wrote intact: still followed."""
    data = b"# skiff\n\nno front matter\n"
    write(tmp_path, "elsewhere.md", data)
    moves = find_moves(tmp_path, manifest({"Projects/skiff.md": entry("project:skiff", data)}))
    assert dict(moves.renamed) == {"Projects/skiff.md": "elsewhere.md"}


def test_nothing_is_searched_while_every_note_is_in_place(tmp_path: Path) -> None:
    """No missing note: no move, only the paths chosen before."""
    write(tmp_path, "a.md", NOTE)
    write(tmp_path, "copy.md", NOTE)
    found = find_moves(tmp_path, manifest({"a.md": entry("project:skiff", NOTE, chosen=True)}))
    assert dict(found.renamed) == {}
    assert dict(found.chosen) == {"project:skiff": "a.md"}


def test_two_copies_the_first_by_path_is_the_note(tmp_path: Path) -> None:
    """Two files carry the id: the first by path is followed, the other stays the user's."""
    write(tmp_path, "b.md", NOTE)
    write(tmp_path, "a.md", NOTE)
    moves = find_moves(tmp_path, manifest({"gone.md": entry("project:skiff", NOTE)}))
    assert dict(moves.renamed) == {"gone.md": "a.md"}


def test_follow_rekeys_the_entry_and_marks_it_chosen() -> None:
    """The entry moves to the new path, marked chosen."""
    before = manifest({"old.md": entry("n", NOTE)})
    after = follow(before, {"old.md": "new.md"})
    assert list(after.entries) == ["new.md"]
    assert after.entries["new.md"] == Entry(node="n", key="k", blob=blob_id(NOTE), chosen=True)


def test_links_rewritten_to_the_same_note_are_no_edit() -> None:
    """Obsidian's shortest-form links to the moved note equal vaultsync's full paths."""
    before = manifest(
        {"Projects/skiff.md": entry("project:skiff", NOTE), "Topics/go.md": entry("topic:go", b"")}
    )
    targets = LinkTargets.of(before, {"Projects/skiff.md": "Projects/Skiff (boat).md"})
    base = b"# go\n\n- uses \xe2\x86\x92 [[Projects/skiff|skiff]]\n"
    ours = b"# go\n\n- uses \xe2\x86\x92 [[Skiff (boat)|skiff]]\n"
    assert same_but_links(ours, base, "Topics/go.md", targets)
    assert not same_but_links(ours + b"\nmine\n", base, "Topics/go.md", targets)
    other = b"# go\n\n- uses \xe2\x86\x92 [[Topics/go|skiff]]\n"
    assert not same_but_links(other, base, "Topics/go.md", targets)


def test_sync_follows_a_rename_and_commits_it(tmp_path: Path) -> None:
    """After a user's mv, the sync records the new path and the commit holds the rename."""
    vault = tmp_path / "vault"
    spec = make_spec("a.md", '---\nvaultsync_id: "n:a"\n---\n\n# a\n', node="n:a")
    sync_vault(vault, [spec])
    (vault / "a.md").rename(vault / "b.md")
    moves = vault_moves(vault)
    assert dict(moves.renamed) == {"a.md": "b.md"}
    moved = make_spec("b.md", '---\nvaultsync_id: "n:a"\n---\n\n# a\n', node="n:a")
    report = sync_vault(vault, [moved], moves=moves)
    assert report.kept_deleted == () and report.kept_edited == ()
    loaded = load_manifest((vault / MANIFEST).read_bytes())
    assert list(loaded.entries) == ["b.md"] and loaded.entries["b.md"].chosen
    assert loaded.deleted == frozenset()
    tree = pygit2.Repository(str(vault)).revparse_single(report.commit).peel(pygit2.Tree)
    assert "b.md" in tree and "a.md" not in tree


def test_note_moved_and_edited_without_its_id_is_found_by_git(tmp_path: Path) -> None:
    """Id line deleted and the text edited along the move: git's rename detection finds it."""
    vault = tmp_path / "vault"
    body = "".join(f"- line {i} of a long enough note\n" for i in range(30))
    text = f'---\nvaultsync_id: "n:a"\n---\n\n# a\n\n{body}'
    sync_vault(vault, [make_spec("a.md", text, node="n:a")])
    (vault / "a.md").unlink()
    (vault / "Elsewhere").mkdir()
    (vault / "Elsewhere" / "b.md").write_text(f"# a\n\n{body}one more line of mine\n")
    moves = vault_moves(vault)
    assert dict(moves.renamed) == {"a.md": "Elsewhere/b.md"}
    assert dict(moves.chosen) == {"n:a": "Elsewhere/b.md"}


def test_a_note_moved_to_obsidians_trash_is_a_deletion(tmp_path: Path) -> None:
    """A note Obsidian moved to ``.trash`` (its delete) is deleted, never followed there."""
    vault = tmp_path / "vault"
    sync_vault(vault, [make_spec("a.md", "# a\n\nsome text\n", node="n:a")])
    (vault / ".trash").mkdir()
    (vault / "a.md").rename(vault / ".trash" / "a.md")
    moves = vault_moves(vault)
    assert dict(moves.renamed) == {}
    assert moves.deleted == {"a.md"}


def test_a_deleted_note_with_nowhere_to_go_asks_git_nothing(tmp_path: Path) -> None:
    """With no note vaultsync does not own, git's rename detection is not asked."""
    data = b"# skiff\n"
    write(tmp_path, "other.md", b"# other\n")
    asked: list[list[str]] = []

    def similar(paths: list[str]) -> dict[str, str]:
        asked.append(paths)
        return {}

    owned = {"Projects/skiff.md": entry("project:skiff", data), "other.md": entry("n:o", b"x")}
    moves = find_moves(tmp_path, manifest(owned), similar=similar)
    assert asked == []
    assert moves.deleted == {"Projects/skiff.md"}

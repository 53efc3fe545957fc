"""The registry: front matter, a note's fields, the vault walk, note ids."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from vaults import write_vault
from vaultsync.core.vaultpath import is_safe
from vaultsync.render.yamlfm import yaml_scalar
from vaultsync.search.registry import IdClaim, assign_ids, read_note, scan_vault, string_list


class TestFrontMatter:
    def test_engine_shape(self) -> None:
        """The engine's quoted scalars and block lists are read exactly; a number is a number."""
        note = read_note(
            "x.md",
            b'---\nvaultsync_id: "fact:ab"\nkind: "fact"\naliases:\n  - "x: y"\n  - "#z"\n'
            b"tags: []\nn: 3\n---\nBody\n",
        )
        assert (note.claimed_id, note.kind, note.aliases, note.tags) == (
            "fact:ab",
            "fact",
            ("x: y", "#z"),
            (),
        )
        assert note.body == "Body\n"

    def test_user_yaml(self) -> None:
        """Flow lists and plain scalars written by people go through the YAML parser."""
        note = read_note("x.md", b"---\ntags: [a, b]\ntitle: Plain title # note\n---\n")
        assert (note.tags, note.title) == (("a", "b"), "Plain title")

    def test_keys_are_case_folded(self) -> None:
        """``Title`` and ``Tags`` are the ``title`` and ``tags`` properties, as in Obsidian."""
        note = read_note("x.md", b"---\nTitle: Mine\nTags: [a]\n---\n")
        assert (note.title, note.tags) == ("Mine", ("a",))

    def test_broken_yaml_keeps_the_body(self) -> None:
        """YAML that does not parse gives no fields, and the body after it is still the body."""
        note = read_note("x.md", b"---\ntags: [a\n---\n# Title\n")
        assert (note.tags, note.body, note.title) == ((), "# Title\n", "Title")

    def test_no_closing_line(self) -> None:
        """Without a closing ``---`` there is no front matter: the whole text is the body."""
        text = "---\ntitle: x\n\nno end\n"
        note = read_note("n.md", text.encode())
        assert (note.body, note.title) == (text, "n")

    def test_not_a_mapping(self) -> None:
        """A list as front matter gives no fields."""
        assert read_note("x.md", b"---\n- a\n- b\n---\nx").kind == "user"

    @given(st.text(max_size=40).filter(str.strip))
    def test_engine_strings_read_back(self, value: str) -> None:
        """Any string the engine writes (``yaml_scalar``) reads back unchanged (then trimmed)."""
        note = read_note("x.md", f"---\ntitle: {yaml_scalar(value)}\n---\n".encode())
        assert note.title == value.strip()


class TestStringList:
    def test_tags_split(self) -> None:
        """A tag string splits at commas and spaces, and loses its ``#``."""
        assert string_list({"tags": "#a, b c"}, "tags", split=True) == ("a", "b", "c")

    def test_aliases_kept_whole(self) -> None:
        """An alias string is one alias; non-strings in a list are dropped or made text."""
        assert string_list({"aliases": "a, b"}, "aliases") == ("a, b",)
        assert string_list({"aliases": ["x", 2, None, True, "x"]}, "aliases") == ("x", "2")


class TestReadNote:
    def test_title_from_front_matter(self) -> None:
        """Front matter ``title`` beats the first heading."""
        note = read_note("a/b.md", b"---\ntitle: T\n---\n# H\n")
        assert note.title == "T"

    def test_title_from_heading_outside_code(self) -> None:
        """The first ``# heading`` outside code is the title."""
        note = read_note("a/b.md", b"```\n# not this\n```\n\n# This one\n")
        assert note.title == "This one"

    def test_title_from_setext_heading(self) -> None:
        """A ``===`` underlined heading is a title too; a ``## heading`` is not."""
        assert read_note("a/b.md", b"## Section\n\nGateway\n=======\n").title == "Gateway"
        assert read_note("a/b.md", b"## Section\n\ntext\n").title == "b"

    def test_title_from_file_name(self) -> None:
        """Without title or heading, the file name without ``.md`` is the title."""
        assert read_note("a/My note.md", b"text").title == "My note"

    def test_user_note_defaults(self) -> None:
        """A note without front matter is of kind ``user`` and claims no id."""
        note = read_note("x.md", b"hello")
        assert (note.kind, note.claimed_id, note.aliases, note.tags) == ("user", "", (), ())

    def test_hash_and_size_are_of_the_bytes(self) -> None:
        """SHA-256 and size describe the file's bytes, BOM and CRLF included."""
        data = "\ufeffa\r\nb".encode()
        note = read_note("x.md", data)
        assert note.size == len(data)
        assert note.sha256 == hashlib.sha256(data).hexdigest()
        assert note.body == "a\nb"

    def test_invalid_utf8_is_replaced(self) -> None:
        """Invalid UTF-8 never stops a note from being read."""
        assert "\ufffd" in read_note("x.md", b"ok \xff ok").body


class TestScanVault:
    def test_skips_dot_folders_and_other_files(self, tmp_path: Path) -> None:
        """Only ``*.md`` notes outside dot folders are listed, sorted by path."""
        write_vault(
            tmp_path,
            {
                "b.md": "",
                "A/c.MD": "",
                ".obsidian/x.md": "",
                ".hidden.md": "",
                "img.png": "",
                ".vaultsync/y.md": "",
            },
        )
        assert [f.path for f in scan_vault(tmp_path)] == ["A/c.MD", "b.md"]

    def test_never_follows_symlinks(self, tmp_path: Path) -> None:
        """Symlinked notes and folders, in or out of the vault, are not listed."""
        outside = write_vault(tmp_path / "outside", {"secret.md": "s", "dir/deep.md": "d"})
        vault = write_vault(tmp_path / "vault", {"real.md": "r"})
        (vault / "link.md").symlink_to(outside / "secret.md")
        (vault / "linked-dir").symlink_to(outside / "dir")
        (vault / "inside.md").symlink_to(vault / "real.md")
        assert [f.path for f in scan_vault(vault)] == ["real.md"]

    def test_names_no_vault_write_could_make_are_skipped(self, tmp_path: Path) -> None:
        """A backslash in a name, bytes that are not UTF-8, or a drive prefix at the root."""
        write_vault(tmp_path, {"ok.md": "", "a\\b.md": "", "C:x.md": "", "sub/C:y.md": ""})
        (tmp_path / os.fsdecode(b"bad\xff.md")).write_text("")
        assert [f.path for f in scan_vault(tmp_path)] == ["ok.md", "sub/C:y.md"]
        assert all(is_safe(f.path) for f in scan_vault(tmp_path))

    def test_stat_data(self, tmp_path: Path) -> None:
        """Each note carries its size, mtime and inode."""
        write_vault(tmp_path, {"n.md": "12345"})
        (found,) = scan_vault(tmp_path)
        info = (tmp_path / "n.md").stat()
        assert (found.size, found.mtime_ns, found.inode) == (5, info.st_mtime_ns, info.st_ino)


class TestAssignIds:
    def test_engine_note_takes_the_manifest_node(self) -> None:
        """An engine note's id is the node the manifest records, whatever its front matter says."""
        ids = assign_ids([IdClaim(path="F/a.md", claimed_id="fact:other", manifest_node="fact:aa")])
        assert ids == {"F/a.md": "fact:aa"}

    def test_engine_note_without_node_keeps_its_claim(self) -> None:
        """``Home.md`` (no node in the manifest) keeps its front matter id."""
        assert assign_ids([IdClaim(path="Home.md", claimed_id="home", manifest_node="")]) == {
            "Home.md": "home"
        }

    def test_user_note_id(self) -> None:
        """A note without a claim is ``vault:<path>``."""
        ids = assign_ids([IdClaim(path="Inbox/idea.md", claimed_id="", manifest_node=None)])
        assert ids == {"Inbox/idea.md": "vault:Inbox/idea.md"}

    def test_copied_front_matter_never_steals_an_id(self) -> None:
        """A user's copy of an engine note does not take the engine note's id, wherever it sorts."""
        ids = assign_ids(
            [
                IdClaim(path="A copy.md", claimed_id="project:x", manifest_node=None),
                IdClaim(path="Projects/x.md", claimed_id="project:x", manifest_node="project:x"),
            ]
        )
        assert ids == {"A copy.md": "vault:A copy.md", "Projects/x.md": "project:x"}

    def test_first_claim_wins_among_user_notes(self) -> None:
        """Of two user notes claiming one id, the first by path keeps it."""
        ids = assign_ids(
            [
                IdClaim(path="b.md", claimed_id="topic:t", manifest_node=None),
                IdClaim(path="a.md", claimed_id="topic:t", manifest_node=None),
            ]
        )
        assert ids == {"a.md": "topic:t", "b.md": "vault:b.md"}

    def test_vault_prefix_cannot_be_claimed(self) -> None:
        """A claim in the ``vault:`` namespace is ignored, so user-note ids stay unique."""
        ids = assign_ids(
            [
                IdClaim(path="a.md", claimed_id="vault:b.md", manifest_node=None),
                IdClaim(path="b.md", claimed_id="", manifest_node=None),
            ]
        )
        assert ids == {"a.md": "vault:a.md", "b.md": "vault:b.md"}

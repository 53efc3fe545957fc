"""Obsidian's wikilink-to-file resolution (obsidian-links.md §2)."""

from __future__ import annotations

import random

from hypothesis import example, given, settings
from hypothesis import strategies as st
from vaultsync.links.pathresolve import ObsidianIndex, file_name_key, link_name_keys

# The vault of the observations in obsidian-links.md §2, plus attachments and odd names.
VAULT = (
    "Note.md",
    "b/Note.md",
    "a/b/Note.md",
    "zzzz/Note.md",
    "zzzz/deep/Source.md",
    "zzzz/Other.md",
    "a/Only.md",
    "Log.md",
    "Ext.md",
    "img/Figure 1.png",
    "docs/report.pdf",
    "same/Twin.md",
    "same/Source.md",
    "far/Twin.md",
    "x/Shared.md",
    "y/Shared.md",
    "Nöte.md",
    "My Note.md",
    "100%25 sure.md",
)
INDEX = ObsidianIndex.build(VAULT)


def resolve(target: str, source: str = "zzzz/deep/Source.md") -> str | None:
    return INDEX.resolve(target, source)


class TestOrder:
    def test_exact_path_wins(self) -> None:
        """[[Note]] is the root Note.md even from a folder that has its own Note.md."""
        assert resolve("Note", "b/Other.md") == "Note.md"

    def test_exact_folder_path_wins(self) -> None:
        """[[b/Note]] is b/Note.md even from a/, where a/b/Note.md sits beside the source."""
        assert resolve("b/Note", "a/Source.md") == "b/Note.md"

    def test_source_folder_second(self) -> None:
        """Without an exact path, the source's own folder beats the shorter far/Twin.md."""
        assert resolve("Twin", "same/Source.md") == "same/Twin.md"

    def test_ancestor_not_preferred_over_shorter(self) -> None:
        """From zzzz/deep/, zzzz/Dup.md (an ancestor's) loses to the shorter b/Dup.md."""
        index = ObsidianIndex.build(["zzzz/Dup.md", "b/Dup.md", "zzzz/deep/Source.md"])
        assert index.resolve("Dup", "zzzz/deep/Source.md") == "b/Dup.md"

    def test_shortest_path_string(self) -> None:
        """a/b/Note.md beats zzzz/Note.md: the shorter string, not the fewer segments."""
        index = ObsidianIndex.build(["a/b/Note.md", "zzzz/Note.md", "q/Source.md"])
        assert index.resolve("Note", "q/Source.md") == "a/b/Note.md"

    def test_shortest_beats_tree_order(self) -> None:
        """b/Note.md beats a/b/Note.md: not tree order, not fewest segments."""
        index = ObsidianIndex.build(["a/b/Note.md", "b/Note.md", "q/Source.md"])
        assert index.resolve("Note", "q/Source.md") == "b/Note.md"

    def test_tie_broken_by_path(self) -> None:
        """Equal lengths go to the lexicographically smaller path."""
        assert resolve("Shared", "q/Source.md") == "x/Shared.md"

    def test_path_suffix_match(self) -> None:
        """[[b/Note]] matches a path ending in /b/Note.md when no exact path exists."""
        index = ObsidianIndex.build(["a/b/Note.md", "c/Note.md", "q/Source.md"])
        assert index.resolve("b/Note", "q/Source.md") == "a/b/Note.md"

    def test_suffix_must_match_whole_segments(self) -> None:
        """[[ote]] does not match Note.md."""
        assert resolve("ote") is None

    def test_input_order_does_not_matter(self) -> None:
        """Shuffled paths give the same answers."""
        shuffled = list(VAULT)
        random.Random(7).shuffle(shuffled)
        index = ObsidianIndex.build(shuffled)
        for target in ("Note", "Shared", "Twin", "b/Note", "Only"):
            assert index.resolve(target, "q/S.md") == INDEX.resolve(target, "q/S.md")


class TestNames:
    def test_case_insensitive(self) -> None:
        """[[log]] and [[LOG]] are Log.md."""
        assert resolve("log") == resolve("LOG") == "Log.md"

    def test_md_extension_optional_any_case(self) -> None:
        """[[Ext.MD]] is Ext.md."""
        assert resolve("Ext.MD") == "Ext.md"

    def test_other_extensions_required(self) -> None:
        """[[Figure 1.png]] finds the image; [[Figure 1]] does not."""
        assert resolve("Figure 1.png") == "img/Figure 1.png"
        assert resolve("Figure 1") is None

    def test_attachment_by_folder_path(self) -> None:
        """An attachment can be named with its folder."""
        assert resolve("docs/report.pdf") == "docs/report.pdf"

    def test_nfc_and_nfd(self) -> None:
        """An NFD link finds an NFC file name."""
        assert resolve("No\u0308te") == "Nöte.md"

    def test_nfd_file_names(self) -> None:
        """An NFC link finds an NFD file name, and the path is returned as given."""
        index = ObsidianIndex.build(["No\u0308te.md"])
        assert index.resolve("Nöte", "x.md") == "No\u0308te.md"

    def test_percent_decoded_fallback(self) -> None:
        """[[My%20Note]] finds My Note.md when nothing is literally named so."""
        assert resolve("My%20Note") == "My Note.md"

    def test_literal_percent_wins(self) -> None:
        """A note literally named with %25 is found as written."""
        assert resolve("100%25 sure") == "100%25 sure.md"

    def test_whitespace_trimmed(self) -> None:
        """Spaces around the target do not count."""
        assert resolve("  Log ") == "Log.md"

    def test_case_variants_prefer_exact_case(self) -> None:
        """When two files differ only by case, the exact case wins."""
        index = ObsidianIndex.build(["Note.md", "note.md"])
        assert index.resolve("note", "x.md") == "note.md"
        assert index.resolve("Note", "x.md") == "Note.md"

    def test_note_preferred_over_extensionless_file(self) -> None:
        """[[Name]] is Name.md rather than a file called Name."""
        index = ObsidianIndex.build(["Name", "Name.md"])
        assert index.resolve("Name", "x.md") == "Name.md"

    def test_aliases_and_titles_do_not_resolve(self) -> None:
        """Only file paths resolve here."""
        assert resolve("Nothing by that name") is None


class TestSpecialTargets:
    def test_empty_target_is_the_source(self) -> None:
        """[[#Heading]] links to the note itself."""
        assert resolve("", "a/Only.md") == "a/Only.md"

    def test_dot_slash_exact_only(self) -> None:
        """./x is looked up beside the source and nowhere else."""
        assert resolve("./Only", "a/Source.md") == "a/Only.md"
        assert resolve("./Log", "a/Source.md") is None

    def test_dot_dot(self) -> None:
        """../x climbs from the source folder."""
        assert resolve("../Other", "zzzz/deep/Source.md") == "zzzz/Other.md"

    def test_dot_dot_above_vault(self) -> None:
        """Climbing above the vault is unresolved."""
        assert resolve("../../Log", "a/Source.md") is None

    def test_leading_slash_is_vault_path(self) -> None:
        """/x is an exact vault path."""
        assert resolve("/b/Note") == "b/Note.md"
        assert resolve("/Only") is None

    def test_url_is_an_unresolved_note(self) -> None:
        """[[https://…]] is a note name, which nothing matches."""
        assert resolve("https://example.com") is None

    def test_windows_paths(self) -> None:
        r"""Paths given with \ match as /."""
        index = ObsidianIndex.build(["docs\\guide\\Setup.md", "docs\\x.md"])
        assert index.resolve("guide/Setup", "docs\\x.md") == "docs\\guide\\Setup.md"


class TestProperties:
    @given(st.text(max_size=30), st.sampled_from(VAULT))
    def test_result_is_indexed_or_none(self, target: str, source: str) -> None:
        """resolve returns an indexed path, the source itself, or None."""
        found = INDEX.resolve(target, source)
        assert found is None or found in VAULT

    @given(st.sampled_from([p for p in VAULT if p.endswith(".md")]))
    def test_every_note_reachable_by_full_path(self, path: str) -> None:
        """A note's own vault path without .md always finds it."""
        assert INDEX.resolve(path[:-3], "elsewhere/S.md") == path


_FOLDERS = ["", "a/", "b/a/", "B/"]
_STEMS = ["Note", "note", "x", "x.md", "a", "N%20o", "N o", "N\u00f6te", "No\u0308te"]
_FILES = st.tuples(
    st.sampled_from(_FOLDERS), st.sampled_from(_STEMS), st.sampled_from([".md", ".MD", ""])
).map("".join)
_TARGETS = st.tuples(
    st.sampled_from(["", "./", "../", "/", "a/", "b/a/", "a/../", "./b/", "../a/"]),
    st.sampled_from([*_STEMS, ""]),
    st.sampled_from(["", ".md", ".MD", "/", "/.."]),
).map("".join)


class TestResolvableNames:
    @given(st.lists(_FILES), st.one_of(_TARGETS, st.text(max_size=8)), st.sampled_from(_FOLDERS))
    @example(["N o.md"], "N%20o", "")  # found only percent-decoded
    @example(["a.md"], "./b/..", "a/")  # found where the relative path leads, not by its name
    @settings(max_examples=300)
    def test_the_files_of_those_names_resolve_as_the_whole_vault(
        self, files: list[str], target: str, folder: str
    ) -> None:
        """An index of only the files resolvable_names names (and the source) answers alike."""
        from vaultsync.links.pathresolve import resolvable_names

        source = folder + "S.md"
        paths = {*files, source}
        names = resolvable_names(target, source)
        few = {p for p in paths if file_name_key(p) in names} | {source}
        whole = ObsidianIndex.build(paths).resolve(target, source)
        assert ObsidianIndex.build(few).resolve(target, source) == whole

    @given(st.one_of(_TARGETS, st.text(max_size=8)), st.sampled_from(_FOLDERS), _FILES)
    def test_a_file_it_may_reach_has_one_of_its_keys(
        self, target: str, folder: str, path: str
    ) -> None:
        """A file resolvable_names allows is reached by keys that link_name_keys gives."""
        from vaultsync.links.pathresolve import keys_reaching, resolvable_names

        source = folder + "S.md"
        if file_name_key(path) in resolvable_names(target, source):
            assert keys_reaching(path) & set(link_name_keys(target, source)) - {""}


class TestLinkNameKeys:
    def test_matches_path_key(self) -> None:
        """A target and the note it names share a key: case, ``.md`` and folders aside."""
        assert link_name_keys("Folder/My NOTE.md", "S.md")[0] == file_name_key("Other/my note.md")

    def test_percent_decoded_alternative(self) -> None:
        """A percent-encoded target also keys by its decoded name."""
        assert link_name_keys("My%20Note", "S.md") == ("my%20note", "my note")

    def test_nfc(self) -> None:
        """Decomposed and composed accents give one key."""
        assert link_name_keys("Cafe\u0301", "S.md")[0] == file_name_key("Café.md")

    def test_a_relative_target_keys_by_where_it_leads(self) -> None:
        """``./x/..`` from ``A/S.md`` looks up ``a``: its key is ``a``, not ``..``."""
        assert link_name_keys("./x/..", "A/S.md") == ("a", "")

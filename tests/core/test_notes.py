"""The one note reader: walk, front matter, the ``## Links`` section, the first heading."""

from __future__ import annotations

import json
import math
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaults import demo_vault, write_vault
from vaultsync.core.notes import (
    NoteReader,
    _quick,
    first_heading,
    fold_keys,
    links_section,
    load_yaml,
    read_front_matter,
    relation_slug,
    split_front_matter,
    walk_vault,
)
from vaultsync.links.codespans import fenced_blocks
from vaultsync.render.specs import make_environment
from vaultsync.render.yamlfm import FieldValue, clean_fields, property_time
from vaultsync.renderers.base import LinkItem, link_to, one_line, relation_words

ENV = make_environment()
FRONT = ENV.from_string('{% import "_macros.j2" as m %}{{ m.front_matter(fields) }}\n')
LINKS = ENV.from_string('{% import "_macros.j2" as m %}# T\n\nText.\n\n{{ m.links(items) }}\n')


def body_of(text: str) -> str:
    return text[read_front_matter(text).body_start :]


def loader_view(block: str) -> object:
    """What ruamel alone reads from a block, keys folded as the note reader folds them."""
    data, problem = load_yaml(block)
    if problem is not None:
        return problem
    if data is None:
        return {}
    return dict(fold_keys(data)) if isinstance(data, dict) else data


class TestSplit:
    def test_closers_bom_and_crlf(self) -> None:
        """``---`` or ``...`` closes the block; a BOM and CRLF line endings are accepted."""
        block = split_front_matter("\ufeff---\r\na: 1\r\n...\r\nbody")
        assert block is not None
        assert (block.yaml, block.body_line) == ("a: 1\r\n", 4)
        assert "\ufeff---\r\na: 1\r\n...\r\nbody"[block.body_start :] == "body"

    def test_no_closing_line_is_no_front_matter(self) -> None:
        """Without a closing line the whole text is body (Obsidian's rule)."""
        assert split_front_matter("---\ntitle: x\nbody\n") is None
        assert read_front_matter("---\ntitle: x\n").values == {}

    def test_block_must_open_the_note(self) -> None:
        """A ``---`` later in the text is a thematic break."""
        assert split_front_matter("\n---\na: 1\n---\n") is None


class TestYaml:
    def test_yaml_1_2(self) -> None:
        """``yes`` stays a string and ``42`` is an integer: YAML 1.2, one answer for all."""
        values = read_front_matter("---\nyes: on\npriority: 42\nwhen: 2024-01-02\n---\n").values
        assert values["yes"] == "on"
        assert values["priority"] == 42
        assert str(values["when"]) == "2024-01-02"

    def test_first_value_of_a_repeated_key_wins(self) -> None:
        """A key written twice, or in two cases, keeps its first value."""
        assert read_front_matter("---\nA: 1\na: 2\nA: 3\n---\n").values == {"a": 1}

    def test_error_has_the_note_line_and_column(self) -> None:
        """A YAML error is data: the 1-based line and column in the note, never a traceback."""
        front = read_front_matter("---\nname: x\ntags: [a, b\n---\nbody")
        assert front.problem is not None
        assert (front.problem.line, front.problem.column) == (4, 1)
        assert front.values == {}
        assert front.body_line == 5

    def test_bad_scalars_are_problems(self) -> None:
        """A date YAML matches but Python cannot build is a problem, not an exception."""
        front = read_front_matter("---\nwhen: 2024-13-45\n---\n")
        assert front.problem is not None
        assert "month" in front.problem.message

    def test_text_scalars(self) -> None:
        """With ``text_scalars`` every scalar is the text written; null stays None."""
        data, _ = load_yaml("a: 1.10\nb: True\nc: 2024-01-02\nd: ~\ne: 0x1F\n", text_scalars=True)
        assert data == {"a": "1.10", "b": "True", "c": "2024-01-02", "d": None, "e": "0x1F"}

    def test_unique_keys(self) -> None:
        """With ``unique_keys`` a repeated key is a problem on its line."""
        _, problem = load_yaml("a: 1\na: 2\n", first_line=2, unique_keys=True)
        assert problem is not None
        assert problem.line == 3

    def test_loaders_are_per_thread(self) -> None:
        """Reading in several threads at once gives every thread its own answers."""
        results: list[object] = []

        def read(value: int) -> None:
            for _ in range(20):
                results.append(load_yaml(f"a: [{value}, {{b: {value}}}]\n")[0])

        threads = [threading.Thread(target=read, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(json.dumps(r) for r in results) == sorted(
            json.dumps({"a": [n, {"b": n}]}) for n in range(4) for _ in range(20)
        )


KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
SCALARS = st.one_of(
    st.text(),
    st.integers(-(10**12), 10**12),
    st.booleans(),
    st.floats(allow_nan=False),
    st.datetimes(timezones=st.just(UTC)),
)
VALUES = st.one_of(SCALARS, st.lists(st.text(), max_size=3))


def expected(fields: tuple[tuple[str, FieldValue], ...]) -> dict[str, object]:
    """What a reader must give back for the fields the renderer writes."""
    values: dict[str, object] = {}
    for key, written in fields:
        value: object = written
        if isinstance(written, tuple):
            value = list(written)
        elif isinstance(written, datetime):
            value = property_time(written)  # a quoted Date & time property, in UTC
        elif isinstance(written, float) and not math.isfinite(written):
            value = repr(written)
        values.setdefault(key, value)
    return values


class TestWriterReadsBack:
    @settings(max_examples=300)
    @given(st.lists(st.tuples(KEYS, VALUES), max_size=6, unique_by=lambda kv: kv[0]))
    def test_rendered_front_matter_reads_back(self, raw: list[tuple[str, FieldValue]]) -> None:
        """What the templates write (``render.yamlfm``) reads back to the same values."""
        fields = clean_fields(raw)
        text = FRONT.render(fields=fields)
        front = read_front_matter(text + "body")
        assert front.problem is None
        assert dict(front.values) == expected(fields)
        assert text[front.body_start :] == ""

    @settings(max_examples=300)
    @given(st.lists(st.tuples(KEYS, VALUES), max_size=6, unique_by=lambda kv: kv[0]))
    def test_fast_path_reads_as_ruamel_reads(self, raw: list[tuple[str, FieldValue]]) -> None:
        """The engine-shape fast path gives exactly what the YAML loader gives."""
        text = FRONT.render(fields=clean_fields(raw))
        block = split_front_matter(text)
        assert block is not None
        assert dict(read_front_matter(text).values) == loader_view(block.yaml)

    @settings(max_examples=500)
    @given(st.text(alphabet=st.sampled_from(list('ab:"- \n[]01\\u#tyn\t{}~.')), max_size=40))
    def test_any_block_reads_as_ruamel_or_is_a_problem(self, block: str) -> None:
        """On any block, the result is the loader's mapping, or a problem when it has none."""
        text = f"---\n{block}\n---\n"
        front = read_front_matter(text)
        split = split_front_matter(text)
        assert split is not None
        if not split.yaml.strip():  # blank: empty properties, whatever a tab means to YAML
            assert (dict(front.values), front.problem) == ({}, None)
            return
        seen = loader_view(split.yaml)
        if isinstance(seen, dict):
            assert (dict(front.values), front.problem) == (seen, None)
        else:
            assert front.values == {}
            assert front.problem is not None


USER_TEXT = st.text(
    alphabet=st.sampled_from(list("aZé日 1:#'\",.-![]{}\t\\&*?|>%@`~")), min_size=0, max_size=12
)
SIMPLE_TEXT = st.from_regex(r"[A-Za-zé日][A-Za-z0-9é日 ,.'!?()/&*#-]{0,10}", fullmatch=True)
SIMPLE_SCALARS = st.one_of(
    SIMPLE_TEXT,
    st.from_regex(r"20[0-9]{2}-[01][0-9]-[0-3][0-9]", fullmatch=True),
    st.integers(-1000, 1000).map(str),
    st.text(max_size=8).map(lambda t: json.dumps(t, ensure_ascii=False)),
)
USER_SCALARS = st.one_of(
    SIMPLE_TEXT,
    USER_TEXT,
    st.sampled_from(["true", "False", "NULL", "nULL", "yes", "~", "C#", "a #b", "http://x"]),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True),
    st.integers(-1000, 1000).map(str),
    st.text(max_size=8).map(lambda t: json.dumps(t, ensure_ascii=False)),
)


USER_KEYS = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,6}", fullmatch=True),
    st.sampled_from(["true", "Null", "yes", "a b"]),
)


@st.composite
def user_blocks(draw: st.DrawFn, *, simple: bool = False) -> str:
    """Front matter of the shapes people write, and (unless ``simple``) near misses of them."""
    keys = USER_KEYS if not simple else st.from_regex(r"[a-z][a-z0-9_-]{0,6}", fullmatch=True)
    scalars = SIMPLE_SCALARS if simple else USER_SCALARS
    indents = st.sampled_from(["  "] if simple else ["", "  ", "    "])
    lines = []
    for key in draw(st.lists(keys, min_size=1, max_size=5, unique=simple)):
        shape = draw(st.sampled_from(["scalar", "flow", "block", "empty"]))
        if shape == "scalar":
            lines.append(f"{key}: {draw(scalars)}")
        elif shape == "flow":
            items = draw(st.lists(scalars, max_size=3))
            lines.append(f"{key}: [{draw(st.sampled_from([', ', ',', ' , '])).join(items)}]")
        else:
            lines.append(f"{key}:")
            count = draw(st.integers(0, 3)) if shape == "block" else 0
            lines.extend(f"{draw(indents)}- {draw(scalars)}" for _ in range(count))
    return "\n".join(lines) + "\n"


class TestUserFrontMatter:
    @settings(max_examples=500)
    @given(st.one_of(user_blocks(), user_blocks(simple=True)))
    def test_simple_shapes_read_as_ruamel_reads(self, block: str) -> None:
        """Front matter people write reads exactly as ruamel reads it, fast path or not."""
        front = read_front_matter(f"---\n{block}---\n")
        seen = loader_view(block)
        if isinstance(seen, dict):
            assert (dict(front.values), front.problem) == (seen, None)
        else:
            assert front.values == {}
            assert front.problem is not None

    def test_typical_blocks_skip_the_loader(self) -> None:
        """The usual hand-written shapes are read without the (slow) YAML loader."""
        blocks = [
            'state: evergreen\nsources: ["[[A note]]", "doi:10.1234/x"]\n',
            "title: Kafka ordering, again\ncreated: 2024-03-02\ntags: [kafka, ordering]\n",
            "aliases:\n- First\n- Second\ndate-created: 2024-01-02\nurl: https://x.org/a\n",
        ]
        assert all(_quick(block) == loader_view(block) for block in blocks)


class TestHeadings:
    @pytest.mark.parametrize(
        ("text", "title"),
        [
            ("intro\n\n## Getting set up ##\n", "Getting set up"),
            ("# C#\n", "C#"),
            ("Gateway\n=======\n\ntext\n", "Gateway"),
            ("Two\nlines\n---\n", "Two lines"),
            ("```\n# not this\n```\n\n# This one\n", "This one"),
            ("#tag only\n\n# Real\n", "Real"),
            ("- item\n---\n\n# After\n", "After"),
            ("    indented\n===\n\n# After\n", "After"),
        ],
    )
    def test_first_heading(self, text: str, title: str) -> None:
        """ATX and setext headings count; code, tags, list items and indented code do not."""
        heading = first_heading(text, fences=fenced_blocks(text))
        assert heading is not None
        assert heading.text == title

    def test_max_level(self) -> None:
        """With ``max_level=1`` only ``#`` and ``===`` headings are titles."""
        text = "## Section\n\nSub\n---\n\nMain\n===\n"
        heading = first_heading(text, fences=(), max_level=1)
        assert heading is not None
        assert (heading.level, heading.text) == (1, "Main")

    def test_unclosed_fence_hides_the_rest(self) -> None:
        """An unclosed fence runs to the end: nothing after it is a heading."""
        text = "```\n# no\n"
        assert first_heading(text, fences=fenced_blocks(text)) is None


SLUGS = st.from_regex(r"[a-z]{1,6}(?:[_-][a-z]{1,6}){0,2}", fullmatch=True)
TITLES = st.text(max_size=20)
PATHS = st.from_regex(r"\w(?:[\w ()-]{0,8}\w)?(?:/\w(?:[\w -]{0,8}\w)?)?", fullmatch=True)


@st.composite
def link_items(draw: st.DrawFn) -> list[tuple[str, LinkItem]]:
    """Links as ``renderers.base.note_link`` makes them, with their relation slug."""
    items = []
    for _ in range(draw(st.integers(0, 5))):
        slug, path, title = draw(SLUGS), draw(PATHS), one_line(draw(TITLES)) or "x"
        by_user = draw(st.booleans())
        note = one_line(draw(st.text(max_size=20))) if by_user else ""
        item = LinkItem(rel=relation_words(slug), path=path, title=title,
                        wikilink=link_to(path, title), by_user=by_user, note=note)  # fmt: skip
        items.append((slug, item))
    return items


class TestLinksSection:
    @settings(max_examples=300)
    @given(link_items())
    def test_rendered_links_parse_back(self, drawn: list[tuple[str, LinkItem]]) -> None:
        """A rendered ``## Links`` section parses back to the links that were rendered."""
        body = LINKS.render(items=[item for _, item in drawn])
        parsed = links_section(body, fences=fenced_blocks(body))
        assert [(p.rel, p.words, p.link, p.by_user, p.note) for p in parsed] == [
            (slug, item["rel"], item["wikilink"], item["by_user"], item["note"])
            for slug, item in drawn
        ]
        assert all(body.startswith(p.link, p.start) for p in parsed)

    def test_heading_per_relation_and_section_end(self) -> None:
        """``### words`` gives its items a relation; the section ends at the next ``##``."""
        body = "## Links\n\n### part of\n\n- [[P]]\n\n## Later\n\n- in → [[Q]]\n"
        assert [(p.rel, p.link) for p in links_section(body, fences=())] == [("part_of", "[[P]]")]

    def test_last_section_outside_code(self) -> None:
        """A ``## Links`` inside a fence, or an earlier one, is not the engine's section."""
        body = "## Links\n\n- a → [[A]]\n\n```\n## Links\n- b → [[B]]\n```\n"
        assert [p.link for p in links_section(body, fences=fenced_blocks(body))] == ["[[A]]"]

    @given(SLUGS)
    def test_slug_inverts_relation_words(self, slug: str) -> None:
        """``relation_slug`` undoes ``renderers.base.relation_words``."""
        assert relation_slug(relation_words(slug)) == slug


class TestWalk:
    def test_symlinks_dot_folders_and_odd_names(self, tmp_path: Path) -> None:
        """No symlink is followed, dot entries are skipped, unnameable names are left out."""
        outside = write_vault(tmp_path / "outside", {"secret.md": "s"})
        vault = write_vault(
            tmp_path / "vault",
            {"a.md": "", "img.png": "", "sub/b.MD": "", ".obsidian/c.md": "", "x\\y.md": ""},
        )
        (vault / "out.md").symlink_to(outside / "secret.md")
        (vault / "dir").symlink_to(outside, target_is_directory=True)
        (vault / "twice").symlink_to(vault / "sub", target_is_directory=True)
        (vault / os.fsdecode(b"\xff.md")).write_text("")
        listing = walk_vault(vault)
        assert listing.files == ("a.md", "img.png", "sub/b.MD")
        assert [note.path for note in listing.notes] == ["a.md", "sub/b.MD"]

    def test_root_may_be_a_symlink(self, tmp_path: Path) -> None:
        """The vault folder itself may be a symlink: the user chose it."""
        real = write_vault(tmp_path / "real", {"a.md": ""})
        (tmp_path / "link").symlink_to(real, target_is_directory=True)
        assert walk_vault(tmp_path / "link").files == ("a.md",)

    def test_missing_root(self, tmp_path: Path) -> None:
        """A vault that is not there lists nothing."""
        assert walk_vault(tmp_path / "none").files == ()

    def test_reader_refuses_symlinks(self, tmp_path: Path) -> None:
        """The reader reads regular files only, never through a symlinked file or folder."""
        vault = write_vault(tmp_path / "vault", {"a.md": "A", "sub/b.md": "B"})
        (vault / "l.md").symlink_to(vault / "a.md")
        (vault / "ls").symlink_to(vault / "sub", target_is_directory=True)
        with NoteReader(vault) as reader:
            found = [reader.read(p) for p in ("a.md", "sub/b.md", "l.md", "ls/b.md", "no.md")]
        assert found == [b"A", b"B", None, None, None]

    def test_reader_keeps_few_folders_open(self, tmp_path: Path) -> None:
        """Reading notes in many folders keeps a bounded number of descriptors open."""
        vault = write_vault(tmp_path, {f"f{i}/g/n.md": str(i) for i in range(80)})
        fds = Path("/proc/self/fd")
        before = len(list(fds.iterdir()))
        with NoteReader(vault) as reader:
            assert [reader.read(f"f{i}/g/n.md") for i in range(80)] == [
                str(i).encode() for i in range(80)
            ]
            assert len(list(fds.iterdir())) - before <= 40
        assert len(list(fds.iterdir())) == before


class TestDemoVault:
    def test_walk_reader_and_renderer_agree(self, demo_state: Path, tmp_path: Path) -> None:
        """On every note the demo store renders, the walk, the reader and the parsers agree."""
        vault = demo_vault(demo_state, tmp_path / "vault")
        manifest = json.loads((vault / ".vaultsync" / "manifest.json").read_text())
        written = manifest["entries"]
        listing = walk_vault(vault)
        assert [note.path for note in listing.notes] == sorted(written)
        with NoteReader(vault) as reader:
            for note in listing.notes:
                data = reader.read(note.path)
                assert data == (vault / note.path).read_bytes()
                text = data.decode()
                front = read_front_matter(text)
                block = split_front_matter(text)
                assert block is not None and front.problem is None
                assert dict(front.values) == loader_view(block.yaml), note.path
                assert front.values["vaultsync_id"] == (written[note.path]["node"] or "home")
                body = text[front.body_start :]
                heading = first_heading(body, fences=fenced_blocks(body), max_level=1)
                assert heading is not None and heading.start == body.index("# ")
                section = body[body.rfind("\n## Links\n") :] if "\n## Links\n" in body else ""
                lines = [line for line in section.splitlines() if " → [[" in line]
                assert len(links_section(body, fences=fenced_blocks(body))) == len(lines)

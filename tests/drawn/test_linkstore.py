"""links.json: drawing, removing, merging, quarantine, caps, supersession, compaction, export."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from random import Random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.errors import LinkStoreError, SealedStoreError, StoreError
from vaultsync.core.model import ExplicitLink, Fact
from vaultsync.drawn.fileformat import LinkFile, StoredLink, Tombstone, dump_document, settle
from vaultsync.drawn.rules import (
    MAX_NOTE_BYTES,
    normalize_note,
    relation_slug,
    superseded_ids,
)
from vaultsync.drawn.store import (
    LinkStore,
    follow_supersession,
    links_path,
    read_links,
    supersession_map,
)

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 10, 1, 10, 0, tzinfo=UTC)
DAY = timedelta(days=1)
OLD, MID, NEW = "a" * 24, "b" * 24, "c" * 24


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path


def stored(state: Path) -> Any:
    return json.loads(links_path(state).read_text(encoding="utf-8"))


def keys(links: tuple[ExplicitLink, ...]) -> list[tuple[str, str, str]]:
    return [(link.source, link.target, link.rel) for link in links]


def fact(fact_id: str, provenance: str = "", created: datetime = T0) -> Fact:
    return Fact(
        id=fact_id, content=fact_id, category="general", provenance=provenance, created_at=created
    )


class TestAddListRemove:
    def test_added_link_is_read_back(self, state: Path) -> None:
        """A drawn link is returned by read_links with its relation, note and time."""
        result = LinkStore(state).add("topic:telemetry", "project:orbital", "about", "TLS", now=T0)
        assert result.status == "added"
        assert read_links(state) == (
            ExplicitLink(
                source="topic:telemetry",
                target="project:orbital",
                rel="about",
                note="TLS",
                created_at=T0,
            ),
        )

    def test_missing_file_reads_empty(self, state: Path) -> None:
        """A state directory without links.json has no links."""
        assert read_links(state) == ()

    def test_file_is_private_and_deterministic(self, state: Path) -> None:
        """The file is 0600, sorted, 2-space indented and ends with a newline."""
        LinkStore(state).add("topic:b", "project:x", now=T0)
        LinkStore(state).add("topic:a", "project:x", now=T0)
        text = links_path(state).read_text(encoding="utf-8")
        assert stat.S_IMODE(links_path(state).stat().st_mode) == 0o600
        assert stat.S_IMODE(links_path(state).with_name("links.json.lock").stat().st_mode) == 0o600
        assert text.endswith("}\n")
        assert text.startswith('{\n  "links": [\n    {\n      "created_at"')
        assert keys(read_links(state)) == [
            ("topic:a", "project:x", "related"),
            ("topic:b", "project:x", "related"),
        ]

    def test_same_links_give_same_bytes_in_any_order(self, tmp_path: Path) -> None:
        """Drawing the same links in another order writes the same bytes."""
        a, b = tmp_path / "a", tmp_path / "b"
        a.mkdir()
        b.mkdir()
        pairs = [("topic:x", "project:p"), ("fact:" + OLD, "topic:x"), ("doc:c:r.md", "tag:go")]
        for source, target in pairs:
            LinkStore(a).add(source, target, now=T0)
        for source, target in reversed(pairs):
            LinkStore(b).add(source, target, now=T0)
        assert links_path(a).read_bytes() == links_path(b).read_bytes()

    def test_existing_link_gets_the_new_note(self, state: Path) -> None:
        """Drawing an existing (from, to, rel) again updates its note and reports it."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", "about", "first", now=T0)
        result = store.add("topic:a", "project:x", "about", "second", now=T0 + DAY)
        assert result.status == "updated"
        assert [link.note for link in read_links(state)] == ["second"]
        assert read_links(state)[0].created_at == T0

    def test_remove_returns_and_forgets_the_link(self, state: Path) -> None:
        """Removing a link returns it, and it is no longer read."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", "about", now=T0)
        store.add("topic:a", "project:y", "about", now=T0)
        result = store.remove("topic:a", "project:x", "about", now=T0 + DAY)
        assert keys(result.removed) == [("topic:a", "project:x", "about")]
        assert keys(read_links(state)) == [("topic:a", "project:y", "about")]

    def test_remove_without_relation_removes_every_relation(self, state: Path) -> None:
        """Without a relation, every link from one note to the other goes."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", "about", now=T0)
        store.add("topic:a", "project:x", "uses", now=T0)
        assert len(store.remove("topic:a", "project:x", None, now=T0 + DAY).removed) == 2
        assert read_links(state) == ()

    def test_remove_of_unknown_link_writes_nothing(self, state: Path) -> None:
        """Removing a link that does not exist changes nothing and creates no file."""
        assert LinkStore(state).remove("topic:a", "project:x", now=T0).removed == ()
        assert not links_path(state).exists()

    @pytest.mark.parametrize("bad", ["", "orbital", " topic:a", "topic:", "topic:a\nb"])
    def test_endpoint_must_be_a_node_id(self, state: Path, bad: str) -> None:
        """An endpoint that is not a one-line node id is refused."""
        with pytest.raises(LinkStoreError):
            LinkStore(state).add(bad, "project:x", now=T0)

    def test_self_link_is_refused(self, state: Path) -> None:
        """A note cannot be linked to itself."""
        with pytest.raises(LinkStoreError, match="itself"):
            LinkStore(state).add("project:x", "project:x", now=T0)


class TestTombstones:
    def test_tombstone_is_kept_29_days(self, state: Path) -> None:
        """A tombstone is still in the file 29 days after the removal."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", now=T0)
        store.remove("topic:a", "project:x", now=T0 + DAY)
        store.add("topic:b", "project:x", now=T0 + 30 * DAY)
        assert [t["from"] for t in stored(state)["tombstones"]] == ["topic:a"]

    def test_tombstone_is_pruned_after_31_days(self, state: Path) -> None:
        """A tombstone older than 30 days is dropped on the next write."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", now=T0)
        store.remove("topic:a", "project:x", now=T0 + DAY)
        store.add("topic:b", "project:x", now=T0 + 32 * DAY)
        assert stored(state)["tombstones"] == []

    def test_stale_process_cannot_resurrect(self, state: Path) -> None:
        """A process holding an old copy with the link does not bring it back when it writes."""
        stale, other = LinkStore(state), LinkStore(state)
        stale.add("topic:a", "project:x", now=T0)
        other.remove("topic:a", "project:x", now=T0 + DAY)
        stale.add("topic:b", "project:x", now=T0 + 2 * DAY)
        assert keys(read_links(state)) == [("topic:b", "project:x", "related")]

    def test_stale_export_cannot_resurrect(self, state: Path) -> None:
        """Importing an export taken before a removal does not bring the link back."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", now=T0)
        old_copy = store.export_jsonl()
        store.remove("topic:a", "project:x", now=T0 + DAY)
        report = store.import_jsonl(old_copy, now=T0 + 2 * DAY)
        assert (report.added, report.skipped) == (0, 1)
        assert read_links(state) == ()

    def test_redraw_after_removal_brings_it_back(self, state: Path) -> None:
        """Drawing a removed link again restores it and drops its tombstone."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", now=T0)
        store.remove("topic:a", "project:x", now=T0 + DAY)
        assert store.add("topic:a", "project:x", now=T0 + 2 * DAY).status == "added"
        assert read_links(state)[0].created_at == T0 + 2 * DAY
        assert stored(state)["tombstones"] == []


_links = st.builds(
    StoredLink,
    source=st.sampled_from(["topic:a", "topic:b"]),
    target=st.sampled_from(["project:x", "project:y"]),
    rel=st.sampled_from(["related", "about"]),
    note=st.sampled_from(["", "one", "two"]),
    created_at=st.integers(0, 5).map(lambda d: T0 + d * DAY),
    updated_at=st.integers(5, 8).map(lambda d: T0 + d * DAY),
)
_graves = st.builds(
    Tombstone,
    source=st.sampled_from(["topic:a", "topic:b"]),
    target=st.sampled_from(["project:x", "project:y"]),
    rel=st.sampled_from(["related", "about"]),
    deleted_at=st.integers(0, 5).map(lambda d: T0 + d * DAY),
)


class TestMerge:
    @given(st.lists(_links), st.lists(_graves), st.randoms())
    def test_merge_does_not_depend_on_order(
        self, links: list[StoredLink], graves: list[Tombstone], rnd: Random
    ) -> None:
        """Settling copies of the store gives the same result in any order."""
        shuffled_links, shuffled_graves = links[:], graves[:]
        rnd.shuffle(shuffled_links)
        rnd.shuffle(shuffled_graves)
        assert settle(links, graves) == settle(shuffled_links, shuffled_graves)

    @given(st.lists(_links), st.lists(_graves))
    def test_no_link_outlives_a_later_tombstone(
        self, links: list[StoredLink], graves: list[Tombstone]
    ) -> None:
        """Every settled link was drawn after any tombstone of its key, which is then gone."""
        doc = settle(links, graves)
        dead = {grave.key for grave in doc.tombstones}
        assert all(link.key not in dead for link in doc.links)
        for link in doc.links:
            assert all(link.created_at > g.deleted_at for g in graves if g.key == link.key)


class TestCorruptFile:
    def test_write_quarantines_a_corrupt_file(self, state: Path) -> None:
        """A write moves a corrupt file aside byte for byte, reports where, and starts empty."""
        path = links_path(state)
        path.parent.mkdir()
        garbage = b'{"version": 1, "links": [\xff oops'
        path.write_bytes(garbage)
        result = LinkStore(state).add("topic:a", "project:x", now=T0)
        assert result.quarantined is not None
        assert result.quarantined.path == path.with_name("links.json.corrupt-20261001T100000Z")
        assert result.quarantined.path.read_bytes() == garbage
        assert "invalid UTF-8" in result.quarantined.reason
        assert keys(read_links(state)) == [("topic:a", "project:x", "related")]

    def test_quarantine_never_overwrites(self, state: Path) -> None:
        """A second corrupt file in the same second gets its own name."""
        path = links_path(state)
        path.parent.mkdir()
        path.write_text("[1, 2", encoding="utf-8")
        first = LinkStore(state).add("topic:a", "project:x", now=T0).quarantined
        path.write_text('{"version": 1, "links": 3}', encoding="utf-8")
        second = LinkStore(state).add("topic:a", "project:x", now=T0).quarantined
        assert first is not None
        assert second is not None
        assert first.path != second.path
        assert first.path.read_text(encoding="utf-8") == "[1, 2"
        assert second.path.name == "links.json.corrupt-20261001T100000Z-1"

    def test_read_raises_on_bad_json_with_line_and_column(self, state: Path) -> None:
        """read_links names the file, line and column of a syntax error and renames nothing."""
        path = links_path(state)
        path.parent.mkdir()
        path.write_text('{\n  "version": 1,\n  "links": [,]\n}\n', encoding="utf-8")
        with pytest.raises(StoreError, match=r"links\.json:3:13: invalid JSON"):
            read_links(state)
        assert sorted(p.name for p in path.parent.iterdir()) == ["links.json"]

    def test_read_raises_on_wrong_shape_with_field(self, state: Path) -> None:
        """read_links names the field of a wrong-shaped record."""
        path = links_path(state)
        path.parent.mkdir()
        record = {"from": "topic:a", "to": "project:x", "created_at": 5}
        path.write_text(json.dumps({"version": 1, "links": [record]}), encoding="utf-8")
        with pytest.raises(StoreError, match=r"links\[0\]\.created_at: expected an RFC 3339"):
            read_links(state)

    @pytest.mark.parametrize("data", [b"CHATCLI_ENC_v1\n\x00\x01", b"enc:AAAA"])
    def test_sealed_file_is_read_only(self, state: Path, data: bytes) -> None:
        """A sealed file raises SealedStoreError on read and is refused, untouched, on write."""
        path = links_path(state)
        path.parent.mkdir()
        path.write_bytes(data)
        with pytest.raises(SealedStoreError):
            read_links(state)
        with pytest.raises(LinkStoreError, match="read-only"):
            LinkStore(state).add("topic:a", "project:x", now=T0)
        assert path.read_bytes() == data

    def test_newer_format_is_refused_not_quarantined(self, state: Path) -> None:
        """A file of a newer version is not corrupt: writes are refused and it stays."""
        path = links_path(state)
        path.parent.mkdir()
        path.write_text('{"version": 2, "links": []}', encoding="utf-8")
        with pytest.raises(LinkStoreError, match="newer"):
            LinkStore(state).add("topic:a", "project:x", now=T0)
        assert sorted(p.name for p in path.parent.iterdir()) == ["links.json", "links.json.lock"]


class TestCap:
    def test_link_past_the_cap_is_refused(self, state: Path) -> None:
        """With 10,000 links stored, a new link is refused naming the cap; a note update is not."""
        links = tuple(
            StoredLink(
                source=f"topic:t{i:05d}",
                target="project:x",
                rel="related",
                note="",
                created_at=T0,
                updated_at=T0,
            )
            for i in range(10_000)
        )
        links_path(state).parent.mkdir()
        links_path(state).write_bytes(dump_document(LinkFile(links=links)))
        store = LinkStore(state)
        with pytest.raises(LinkStoreError, match="10,000"):
            store.add("topic:new", "project:x", now=T0 + DAY)
        assert store.add("topic:t00042", "project:x", note="n", now=T0 + DAY).status == "updated"
        assert len(read_links(state)) == 10_000


class TestNote:
    def test_long_multibyte_note_is_cut_with_an_ellipsis(self) -> None:
        """A long note of 3-byte characters is cut on a character boundary and ends with …."""
        note = normalize_note("日本語" * 200)
        assert note.endswith("…")
        assert len(note.encode("utf-8")) <= MAX_NOTE_BYTES
        assert note[:-1] == "日本語" * 30 + "日本"

    def test_newlines_become_spaces(self) -> None:
        """A note on several lines is stored as one line."""
        assert normalize_note("first\r\n  second\nthird\t") == "first second third"

    def test_stored_note_is_normalized(self, state: Path) -> None:
        """The note of a drawn link is stored normalized."""
        LinkStore(state).add("topic:a", "project:x", note="é\n" * 400, now=T0)
        assert len(read_links(state)[0].note.encode("utf-8")) <= MAX_NOTE_BYTES

    @given(st.text())
    def test_any_note_fits_in_one_valid_line(self, text: str) -> None:
        """Any note becomes at most 280 bytes of valid UTF-8 on one line, and stays so."""
        note = normalize_note(text)
        data = note.encode("utf-8")
        assert len(data) <= MAX_NOTE_BYTES
        assert data.decode("utf-8") == note
        assert "\n" not in note
        assert "\r" not in note
        assert normalize_note(note) == note


class TestRelation:
    @pytest.mark.parametrize(
        ("name", "slug"),
        [
            ("Depends On", "depends_on"),
            ("depends-on", "depends_on"),
            ("", "related"),
            ("  ", "related"),
            ("mention", "mentions"),
            ("References", "links_to"),
            ("reference", "links_to"),
            ("link", "links_to"),
            ("belongs to", "part_of"),
            ("Project", "in_project"),
            ("about", "about"),
        ],
    )
    def test_relation_slug(self, name: str, slug: str) -> None:
        """Relation names are slugged and common words mapped to the built-in relations."""
        assert relation_slug(name) == slug

    @given(st.text())
    def test_slug_is_idempotent(self, name: str) -> None:
        """A stored relation slugs to itself."""
        assert relation_slug(relation_slug(name)) == relation_slug(name)

    def test_stored_relation_is_slugged(self, state: Path) -> None:
        """add stores the slug, and remove finds the link by any spelling of it."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", "Belongs To", now=T0)
        assert read_links(state)[0].rel == "part_of"
        assert len(store.remove("topic:a", "project:x", "belongs_to", now=T0).removed) == 1


class TestSupersession:
    def test_provenance_rule(self) -> None:
        """'supersedes' followed by a list of 24-hex ids is a record; 'superseded by' is not."""
        assert superseded_ids(f"user (supersedes {OLD})") == (OLD,)
        assert superseded_ids(f"Supersedes: fact:{OLD}, {MID.upper()} and {NEW}") == (
            OLD,
            MID,
            NEW,
        )
        assert superseded_ids(f"superseded by {OLD}") == ()
        assert superseded_ids(f"supersedes {OLD}ff") == ()

    def test_chain_is_followed_to_the_newest_fact(self) -> None:
        """A superseded by B superseded by C maps both A and B to C."""
        facts = [
            fact(MID, f"extraction (supersedes {OLD})", T0 + DAY),
            fact(NEW, f"user (supersedes {MID})", T0 + 2 * DAY),
        ]
        assert supersession_map(facts) == {OLD: NEW, MID: NEW}

    def test_cycle_is_left_unmapped(self) -> None:
        """Facts that supersede each other map nothing."""
        facts = [fact(OLD, f"supersedes {MID}"), fact(MID, f"supersedes {OLD}")]
        assert supersession_map(facts) == {}

    def test_relearned_fact_is_not_superseded(self) -> None:
        """A fact created again after its replacement stands on its own."""
        facts = [fact(MID, f"supersedes {OLD}", T0), fact(OLD, "user", T0 + DAY)]
        assert supersession_map(facts) == {}

    def test_links_follow_the_newest_fact(self) -> None:
        """Links to a superseded fact move to the newer one; a resulting self-link is dropped."""
        links = [
            ExplicitLink(source=f"fact:{OLD}", target="project:x", rel="about", created_at=T0),
            ExplicitLink(source=f"fact:{OLD}", target=f"fact:{NEW}", created_at=T0),
            ExplicitLink(source="topic:t", target=f"fact:{MID}", created_at=T0),
        ]
        moved = follow_supersession(links, {OLD: NEW, MID: NEW})
        assert keys(moved) == [
            (f"fact:{NEW}", "project:x", "about"),
            ("topic:t", f"fact:{NEW}", "related"),
        ]


class TestCompact:
    def test_compact_persists_the_supersession_move(self, state: Path) -> None:
        """compact rewrites links off a superseded fact and tombstones the old link."""
        store = LinkStore(state)
        store.add(f"fact:{OLD}", "project:x", "about", "keep me", now=T0)
        report = store.compact([fact(NEW, f"user (supersedes {OLD})")], ["project:x"], now=T0 + DAY)
        assert [(b.source, a.source if a else None) for b, a in report.moved] == [
            (f"fact:{OLD}", f"fact:{NEW}")
        ]
        assert [(link.source, link.note) for link in read_links(state)] == [
            (f"fact:{NEW}", "keep me")
        ]
        assert [t["from"] for t in stored(state)["tombstones"]] == [f"fact:{OLD}"]

    def test_compact_applies_extra_moves(self, state: Path) -> None:
        """Moves from memory compaction (old fact → consolidated fact) are applied too."""
        store = LinkStore(state)
        store.add("project:x", f"fact:{OLD}", now=T0)
        store.compact([], ["project:x"], now=T0 + DAY, moves={OLD: NEW})
        assert keys(read_links(state)) == [("project:x", f"fact:{NEW}", "related")]

    def test_link_to_a_gone_note_is_dropped_after_30_days(self, state: Path) -> None:
        """A link to a note gone from the stores is kept 29 days, and dropped after 30."""
        store = LinkStore(state)
        store.add("topic:gone", "project:x", now=T0)
        present = ["project:x"]
        assert store.compact([], present, now=T0).missing == (("topic:gone", T0),)
        assert store.compact([], present, now=T0 + 29 * DAY).collected == ()
        assert len(read_links(state)) == 1
        report = store.compact([], present, now=T0 + 31 * DAY)
        assert keys(report.collected) == [("topic:gone", "project:x", "related")]
        assert read_links(state) == ()
        assert stored(state)["missing_since"] == {}

    def test_present_tag_and_unknown_ids_are_never_dropped(self, state: Path) -> None:
        """Present notes (even past the caps), tags and unknown id forms are never collected."""
        store = LinkStore(state)
        store.add("session:old-one", "tag:go", now=T0)
        store.add("session:old-one", "weird:thing", now=T0)
        store.add("session:old-one", "fact:not-a-hash", now=T0)
        for day in (0, 40, 80):
            report = store.compact([], ["session:old-one"], now=T0 + day * DAY)
            assert report.collected == ()
            assert report.missing == ()
        assert len(read_links(state)) == 3

    def test_a_note_that_comes_back_restarts_the_clock(self, state: Path) -> None:
        """A note seen again clears its missing time, so a later absence starts from zero."""
        store = LinkStore(state)
        store.add("topic:t", "project:x", now=T0)
        store.compact([], ["project:x"], now=T0)
        store.compact([], ["project:x", "topic:t"], now=T0 + 20 * DAY)
        store.compact([], ["project:x"], now=T0 + 25 * DAY)
        assert store.compact([], ["project:x"], now=T0 + 40 * DAY).collected == ()
        assert stored(state)["missing_since"] == {"topic:t": "2026-10-26T10:00:00Z"}


class TestExportImport:
    def test_round_trip_into_a_fresh_state_dir(self, tmp_path: Path) -> None:
        """An export imported into an empty state directory gives the same links."""
        a, b = tmp_path / "a", tmp_path / "b"
        a.mkdir()
        b.mkdir()
        source = LinkStore(a)
        source.add(f"fact:{OLD}", "project:orbital", "about", "TLS → mTLS\nsection", now=T0)
        source.add("doc:ctx:guide/setup.md", "topic:telemetry security", "explains", now=T0)
        text = source.export_jsonl()
        assert text.splitlines()[0] == '{"kind":"header","version":1}'
        report = LinkStore(b).import_jsonl(text, now=T0 + DAY)
        assert (report.added, report.updated, report.skipped) == (2, 0, 0)
        assert read_links(b) == read_links(a)
        assert LinkStore(b).export_jsonl() == text

    def test_import_keeps_the_newer_note(self, state: Path) -> None:
        """An imported link already present replaces the note only when its note is newer."""
        store = LinkStore(state)
        store.add("topic:a", "project:x", note="local", now=T0 + DAY)
        header = '{"kind":"header","version":1}\n'
        line = '{"from":"topic:a","to":"project:x","rel":"related","note":"%s","created_at":"%s"}\n'
        older = header + line % ("older", "2026-10-01T10:00:00Z")
        newer = header + line % ("newer", "2026-10-03T10:00:00Z")
        assert store.import_jsonl(older, now=T0 + 2 * DAY).skipped == 1
        assert store.import_jsonl(newer, now=T0 + 3 * DAY).updated == 1
        assert [link.note for link in read_links(state)] == ["newer"]

    def test_malformed_lines_are_refused_by_number(self, state: Path) -> None:
        """Bad lines are reported with their numbers in one error, and nothing is written."""
        text = "\n".join(
            [
                '{"kind":"header","version":1}',
                '{"from":"topic:a","to":"project:x","created_at":"2026-10-01T10:00:00Z"}',
                '{"from":"topic:a","created_at":"2026-10-01T10:00:00Z"}',
                "not json",
                '{"from":"topic:b","to":"project:x"}',
            ]
        )
        with pytest.raises(LinkStoreError) as caught:
            LinkStore(state).import_jsonl(text, now=T0, source="links.jsonl")
        assert str(caught.value) == (
            "links.jsonl:3: to: expected a node id string, got null (and 2 more bad lines: 4, 5)"
        )
        assert not links_path(state).exists()

    def test_import_without_header_is_refused(self, state: Path) -> None:
        """An export must start with its header line."""
        with pytest.raises(LinkStoreError, match=":1: expected the header"):
            LinkStore(state).import_jsonl('{"from":"topic:a","to":"project:x"}\n', now=T0)


def _race(state: Path, tmp_path: Path, count: int) -> None:
    """Two processes draw ``count`` links each at once: every link is in the file after."""
    start = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "tests" / "linkracer.py"),
                str(state),
                name,
                str(count),
                str(start),
            ],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("left", "right")
    ]
    start.touch()
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
    links = read_links(state)
    drawn = {link.source for link in links}
    assert len(drawn) == 2 * count
    expected = {f"topic:{name}-{i:04d}" for name in ("left", "right") for i in range(count)}
    assert drawn == expected
    spans = [
        [link.created_at or T0 for link in links if link.source.startswith(f"topic:{name}-")]
        for name in ("left", "right")
    ]
    assert max(min(span) for span in spans) < min(max(span) for span in spans)  # overlapped


class TestRace:
    def test_two_processes_lose_no_link(self, state: Path, tmp_path: Path) -> None:
        """Two processes drawing 100 links each at the same time leave all 200 in the file."""
        _race(state, tmp_path, 100)

    @pytest.mark.slow
    def test_two_processes_lose_none_of_many_links(self, state: Path, tmp_path: Path) -> None:
        """The long variant: 500 links each, 1,000 in the file."""
        _race(state, tmp_path, 500)

    def test_lock_held_too_long_is_an_error(self, state: Path) -> None:
        """A writer gives up with LinkStoreError when the lock stays taken past its timeout."""
        LinkStore(state).add("topic:a", "project:x", now=T0)
        lock = links_path(state).with_name("links.json.lock")
        with lock.open("rb") as held:
            fcntl.flock(held.fileno(), fcntl.LOCK_EX)
            with pytest.raises(LinkStoreError, match="could not take the lock"):
                LinkStore(state, lock_timeout=0.2).add("topic:b", "project:x", now=T0)
        assert LinkStore(state, lock_timeout=5).add("topic:b", "project:x", now=T0).status == (
            "added"
        )

    def test_missing_state_dir_is_an_error(self, tmp_path: Path) -> None:
        """A write into a state directory that does not exist is refused, not created."""
        with pytest.raises(LinkStoreError, match="does not exist"):
            LinkStore(tmp_path / "nope").add("topic:a", "project:x", now=T0)
        assert not (tmp_path / "nope").exists()

"""Memory stores: facts and tombstones, topics, projects, profile (with privacy), episodes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import build_tree, dumps
from vaultsync.core.errors import StoreError
from vaultsync.core.model import ProfileField
from vaultsync.core.privacy import PRIVATE_TERMS, is_private_key, key_words
from vaultsync.extract import read_state
from vaultsync.extract.memory import episode_id, fact_id, normalize_status

FACT = {
    "id": "5e0c1b9a7d3f2e4c8a6b0d1f",
    "content": "Staging runs Postgres 16 with pgvector",
    "category": "architecture",
    "tags": ["postgres"],
    "created_at": "2026-07-02T14:05:11.48Z",
    "last_accessed": "2026-07-09T08:40:02Z",
    "access_count": 3,
    "score": 2.57,
    "source_project": "/home/ana/src/orbital",
    "confidence": 0.9,
    "provenance": "user",
}


class TestFacts:
    def test_every_field_read(self, tmp_path: Path) -> None:
        """A fact keeps every field the store records."""
        build_tree(tmp_path, {"memory/memory_index.json": dumps([FACT])})
        (fact,) = read_state(tmp_path).facts
        assert fact.id == FACT["id"]
        assert fact.content == FACT["content"]
        assert fact.category == "architecture"
        assert fact.tags == ("postgres",)
        assert fact.created_at == datetime(2026, 7, 2, 14, 5, 11, 480000, tzinfo=UTC)
        assert fact.last_accessed == datetime(2026, 7, 9, 8, 40, 2, tzinfo=UTC)
        assert (fact.access_count, fact.score, fact.confidence) == (3, 2.57, 0.9)
        assert (fact.source_project, fact.provenance) == ("/home/ana/src/orbital", "user")

    def test_sorted_by_id(self, tmp_path: Path) -> None:
        """Facts come out sorted by id, whatever the store's (score) order."""
        facts = [{**FACT, "id": i, "content": i} for i in ("c", "a", "b")]
        build_tree(tmp_path, {"memory/memory_index.json": dumps(facts)})
        assert [f.id for f in read_state(tmp_path).facts] == ["a", "b", "c"]

    def test_missing_id_is_derived_from_content(self, tmp_path: Path) -> None:
        """A fact without id gets ChatCLI's id: sha256 of the trimmed, lowercased content."""
        build_tree(tmp_path, {"memory/memory_index.json": '[{"content": " Hello World "}]'})
        assert read_state(tmp_path).facts[0].id == fact_id("hello world")
        assert len(fact_id("x")) == 24

    def test_no_id_and_no_content(self, tmp_path: Path) -> None:
        """A fact with neither id nor content is an error."""
        build_tree(tmp_path, {"memory/memory_index.json": '[{"category": "general"}]'})
        with pytest.raises(StoreError) as caught:
            read_state(tmp_path)
        assert str(caught.value).endswith(
            "memory_index.json:[0].id: missing, and there is no content to derive it from"
        )

    def test_repeated_id_keeps_newest_whatever_the_order(self, tmp_path: Path) -> None:
        """Of two copies of one fact, the newest wins in either input order."""
        old = {**FACT, "content": "old", "created_at": "2026-01-01T00:00:00Z"}
        new = {**FACT, "content": "new", "created_at": "2026-02-01T00:00:00Z"}
        for order in ([old, new], [new, old]):
            build_tree(tmp_path, {"memory/memory_index.json": dumps(order)})
            assert [f.content for f in read_state(tmp_path).facts] == ["new"]


class TestTombstones:
    def test_later_tombstone_deletes(self, tmp_path: Path) -> None:
        """A tombstone dated after the fact's creation removes it."""
        build_tree(
            tmp_path,
            {
                "memory/memory_index.json": dumps([FACT]),
                "memory/memory_tombstones.json": dumps({FACT["id"]: "2026-07-05T10:00:00Z"}),
            },
        )
        assert read_state(tmp_path).facts == ()

    def test_relearned_fact_survives_older_tombstone(self, tmp_path: Path) -> None:
        """A fact created after its tombstone (re-learned) is kept."""
        build_tree(
            tmp_path,
            {
                "memory/memory_index.json": dumps([FACT]),
                "memory/memory_tombstones.json": dumps({FACT["id"]: "2026-07-01T10:00:00Z"}),
            },
        )
        assert [f.id for f in read_state(tmp_path).facts] == [FACT["id"]]

    def test_tombstone_for_other_id(self, tmp_path: Path) -> None:
        """A tombstone only deletes the fact with its id."""
        build_tree(
            tmp_path,
            {
                "memory/memory_index.json": dumps([FACT]),
                "memory/memory_tombstones.json": dumps({"other": "2026-07-05T10:00:00Z"}),
            },
        )
        assert len(read_state(tmp_path).facts) == 1

    def test_malformed_tombstone(self, tmp_path: Path) -> None:
        """A tombstone that is not a timestamp names its fact id."""
        build_tree(tmp_path, {"memory/memory_tombstones.json": '{"abc": 5}'})
        with pytest.raises(StoreError) as caught:
            read_state(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path / 'memory/memory_tombstones.json'}:abc: "
            "expected an RFC 3339 timestamp string, got 5"
        )


class TestTopics:
    def test_read_and_sorted_by_name(self, tmp_path: Path) -> None:
        """Topics keep their fields and come out sorted by name, case kept."""
        topics = [
            {"name": "telemetry", "mentions": 7, "summary": "OTLP", "related_fact_ids": ["f1"]},
            {"name": "Auth", "mentions": 2, "first_seen": "2026-06-11T09:00:00Z"},
            {"name": "auth", "mentions": 1},
        ]
        build_tree(tmp_path, {"memory/topics.json": dumps(topics)})
        read = read_state(tmp_path).topics
        assert [t.name for t in read] == ["Auth", "auth", "telemetry"]
        assert read[2].mentions == 7
        assert read[2].related_fact_ids == ("f1",)
        assert read[0].first_seen == datetime(2026, 6, 11, 9, tzinfo=UTC)

    def test_nameless_topic(self, tmp_path: Path) -> None:
        """A topic without a name is an error."""
        build_tree(tmp_path, {"memory/topics.json": '[{"mentions": 3}]'})
        with pytest.raises(StoreError, match=r"topics.json:\[0\].name: missing$"):
            read_state(tmp_path)


class TestProjects:
    def test_name_lowercased_and_fields_read(self, tmp_path: Path) -> None:
        """Project names are lowercased; the other fields are kept."""
        project = {
            "name": "Orbital",
            "path": "C:\\src\\orbital",
            "description": "Ingest gateway",
            "status": "active",
            "technologies": ["go", "Go", "postgres", "GO"],
            "key_files": ["main.go"],
            "last_active": "2026-07-09T08:00:00Z",
            "priority": 2,
            "metadata": {"x": "y"},
        }
        build_tree(tmp_path, {"memory/projects.json": dumps([project])})
        (read,) = read_state(tmp_path).projects
        assert read.name == "orbital"
        assert read.path == "C:\\src\\orbital"
        assert read.technologies == ("go", "postgres")
        assert (read.key_files, read.priority) == (("main.go",), 2)

    @pytest.mark.parametrize(
        ("written", "status"),
        [
            ("active", "active"),
            ("Ativo", "active"),
            ("pausado", "paused"),
            ("PAUSED", "paused"),
            ("done", "completed"),
            ("concluído", "completed"),
            ("completed", "completed"),
            ("archived", "archived"),
            ("On Hold", "On Hold"),
            ("", ""),
        ],
    )
    def test_status_normalized(self, written: str, status: str) -> None:
        """Known status spellings are normalized; anything else is kept as written."""
        assert normalize_status(written) == status

    def test_sorted_by_name(self, tmp_path: Path) -> None:
        """Projects come out sorted by name."""
        build_tree(tmp_path, {"memory/projects.json": '[{"name": "b"}, {"name": "A"}]'})
        assert [p.name for p in read_state(tmp_path).projects] == ["a", "b"]


class TestEpisodes:
    def test_read_and_sorted_by_date_then_id(self, tmp_path: Path) -> None:
        """Episodes keep their fields and come out sorted by (date, id)."""
        episodes = [
            {"id": "ep_b", "date": "2026-07-08T15:30:00Z", "summary": "second"},
            {"id": "ep_a", "date": "2026-07-08T15:30:00Z", "summary": "first", "refs": ["r"]},
            {"id": "ep_0", "date": "2026-07-09T09:00:00+02:00", "project": "/p", "outcome": "ok"},
        ]
        build_tree(tmp_path, {"memory/episodes.json": dumps(episodes)})
        read = read_state(tmp_path).episodes
        assert [e.id for e in read] == ["ep_a", "ep_b", "ep_0"]
        assert read[0].refs == ("r",)
        assert (read[2].project, read[2].outcome) == ("/p", "ok")

    def test_missing_id_is_derived(self, tmp_path: Path) -> None:
        """An episode without id gets ChatCLI's id from date, project and summary."""
        episode = {"date": "2026-07-08T15:30:00Z", "project": "/p", "summary": "Fixed  Retry"}
        build_tree(tmp_path, {"memory/episodes.json": dumps([episode])})
        assert read_state(tmp_path).episodes[0].id == episode_id("2026-07-08", "/p", "fixed retry")

    def test_missing_date_falls_back_to_created_at(self, tmp_path: Path) -> None:
        """An episode with a zero date is dated by its creation."""
        episode = {"id": "e", "date": "0001-01-01T00:00:00Z", "created_at": "2026-07-08T18:02:10Z"}
        build_tree(tmp_path, {"memory/episodes.json": dumps([episode])})
        assert read_state(tmp_path).episodes[0].date == datetime(2026, 7, 8, 18, 2, 10, tzinfo=UTC)

    def test_no_date_at_all(self, tmp_path: Path) -> None:
        """An episode with neither date nor created_at is an error."""
        build_tree(tmp_path, {"memory/episodes.json": '[{"id": "e"}]'})
        with pytest.raises(StoreError, match=r"\[0\].date: missing"):
            read_state(tmp_path)


PROFILE = {
    "name": "Ana",
    "role": "SRE",
    "company": "Acme",
    "location": "",
    "skills": ["go", "terraform"],
    "goals": ["CKA"],
    "interests": [],
    "milestones": [{"date": "2026-05", "text": "Passed CKAD"}],
    "stances": [{"position": "Prefer Go", "reason": "static binaries", "updated_at": "x"}],
    "environment": {"SHELL": "zsh", "OS": "linux"},
    "top_commands": {"git": 12},
    "preferences": {"editor": "vim", "home_email": "ana@example.org"},
    "field_meta": {"company": {"source": "user", "sensitive": True}},
    "last_updated": "2026-07-09T08:00:00Z",
    "unknown_future_field": {"a": 1},
}


class TestProfile:
    def test_fields_in_store_order(self, tmp_path: Path) -> None:
        """Every non-empty known field is listed, in store order, with its value shape."""
        build_tree(tmp_path, {"memory/user_profile.json": dumps(PROFILE)})
        profile = read_state(tmp_path).profile
        assert profile is not None
        assert profile.fields == (
            ProfileField(key="name", value="Ana"),
            ProfileField(key="role", value="SRE"),
            ProfileField(key="company", value="Acme", private=True),
            ProfileField(key="skills", value=("go", "terraform")),
            ProfileField(key="goals", value=("CKA",)),
            ProfileField(key="milestones", value=(("2026-05", "Passed CKAD"),)),
            ProfileField(key="stances", value=(("Prefer Go", "static binaries"),)),
            ProfileField(key="environment", value=(("OS", "linux"), ("SHELL", "zsh"))),
            ProfileField(key="top_commands", value=(("git", "12"),)),
            ProfileField(
                key="preferences",
                # read in for the masking boundary, which drops it (core.scrub)
                value=(("editor", "vim"), ("home_email", "ana@example.org")),
                private_entries=("home_email",),
            ),
        )
        assert (profile.name, profile.skills, profile.goals) == (
            "Ana",
            ("go", "terraform"),
            ("CKA",),
        )
        assert profile.last_updated == datetime(2026, 7, 9, 8, tzinfo=UTC)

    def test_sensitive_name_hides_display_name(self, tmp_path: Path) -> None:
        """A name flagged sensitive is private, and the display name falls back to ``user``."""
        profile = {"name": "Ana", "skills": ["go"], "field_meta": {"name": {"sensitive": True}}}
        build_tree(tmp_path, {"memory/user_profile.json": dumps(profile)})
        read = read_state(tmp_path).profile
        assert read is not None
        assert (read.name_private, read.display_name, read.skills_private) == (True, "user", False)

    def test_sensitive_lists(self, tmp_path: Path) -> None:
        """Skills and goals flagged sensitive are private."""
        meta = {"skills": {"sensitive": True}, "goals": {"sensitive": True}}
        profile = {"skills": ["go"], "goals": ["x"], "field_meta": meta}
        build_tree(tmp_path, {"memory/user_profile.json": dumps(profile)})
        read = read_state(tmp_path).profile
        assert read is not None
        assert (read.skills_private, read.goals_private) == (True, True)
        assert all(f.private for f in read.fields)

    def test_absent_profile_is_none(self, tmp_path: Path) -> None:
        """Without a profile file there is no profile."""
        assert read_state(tmp_path).profile is None

    def test_map_value_of_wrong_type(self, tmp_path: Path) -> None:
        """A nested value inside a map field names its path."""
        build_tree(tmp_path, {"memory/user_profile.json": '{"preferences": {"a": [1]}}'})
        with pytest.raises(StoreError) as caught:
            read_state(tmp_path)
        assert str(caught.value) == (
            f"{tmp_path / 'memory/user_profile.json'}:preferences.a: "
            "expected a string or a number, got an array"
        )


class TestPrivacy:
    @pytest.mark.parametrize(
        "key",
        [
            "finance",
            "monthly_salary",
            "bankAccount",
            "tax-id",
            "documents",
            "passport_number",
            "SSN",
            "id_number",
            "IDNumber",
            "emergency_contact",
            "phoneNumber",
            "email",
            "home address",
            "health",
            "medical.history",
            "diagnosis",
            "family",
            "spouse",
            "children",
            "religion",
            "saúde",
        ],
    )
    def test_private_keys(self, key: str) -> None:
        """Keys naming personal data are private, whatever their casing and separators."""
        assert is_private_key(key)

    @pytest.mark.parametrize(
        "key",
        [
            "name",
            "role",
            "company",
            "skills",
            "goals",
            "preferred_language",
            "syntax",
            "taxonomy",
            "identity_provider",
            "addressing_mode",
            "communication_style",
            "environment",
        ],
    )
    def test_public_keys(self, key: str) -> None:
        """Words are matched whole: ``syntax`` and ``language`` are not ``tax`` and ``age``."""
        assert not is_private_key(key)

    def test_words_split_every_style(self) -> None:
        """Snake, kebab, camel and acronym boundaries all split words."""
        assert key_words("homeAddress_line-2 HTTPServer") == (
            "home",
            "address",
            "line",
            "2",
            "http",
            "server",
        )

    def test_terms_are_normalized(self) -> None:
        """The term list holds only lowercase ASCII words joined by ``_``."""
        assert all(term == "_".join(key_words(term)) for term in PRIVATE_TERMS)

"""Graph build: nodes, every relation of the table, wikilinks, mentions, caps, order."""

from __future__ import annotations

import random
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.core.model import (
    Card,
    Context,
    Document,
    Episode,
    ExplicitLink,
    Fact,
    JournalNote,
    Kind,
    Origin,
    Profile,
    Project,
    Records,
    Session,
    Skill,
    Topic,
)
from vaultsync.core.settings import Caps
from vaultsync.extract.workspace import saved_time
from vaultsync.graph.build import build_graph

T0 = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)


def fact(fid: str, content: str, **kw: object) -> Fact:
    return Fact(id=fid, content=content, category=str(kw.pop("category", "general")), **kw)  # type: ignore[arg-type]


def links_of(records: Records, caps: Caps | None = None) -> set[tuple[str, str, str, str]]:
    built = build_graph(records, caps or Caps())
    return {(l.source, l.target, l.rel, l.origin.value) for l in built.graph.links}


def has(records: Records, source: str, target: str, rel: str, origin: str = "structural") -> bool:
    return (source, target, rel, origin) in links_of(records)


ORBITAL = Project(name="orbital", path="/src/orbital", technologies=("go", "Postgres"))


class TestNodes:
    def test_every_kind_has_its_id(self) -> None:
        """Each store item becomes a note with the id form of its kind."""
        records = Records(
            facts=(fact("a" * 24, "Staging runs Postgres"),),
            topics=(Topic(name="telemetry"),),
            projects=(ORBITAL,),
            profile=Profile(name="Ana"),
            episodes=(Episode(id="ep_1", date=T0, summary="Fixed retry"),),
            journal=(JournalNote(period="daily", label="2026-10-05", text="x", source_path="m"),),
            sessions=(Session(name="s1", title="retry policy"),),
            skills=(Skill(name="pg-tuning"),),
            cards=(Card(id="card-1", title="Rotate certs", column="doing"),),
            contexts=(
                Context(
                    id="k1",
                    name="handbook",
                    mode="knowledge",
                    documents=(Document(source="docs/a.md", content="# A"),),
                ),
                Context(id="c2", name="scan", mode="full"),
            ),
        )
        ids = {n.id for n in build_graph(records, Caps()).graph.nodes}
        assert {
            f"fact:{'a' * 24}",
            "topic:telemetry",
            "project:orbital",
            "profile:user",
            "episode:ep_1",
            "note:daily:2026-10-05",
            "session:s1",
            "skill:pg-tuning",
            "card:card-1",
            "kb:k1",
            "ctx:c2",
            "doc:k1:docs/a.md",
            "tag:go",
            "tag:postgres",
            "tag:general",
        } <= ids

    def test_project_alias_is_path_base_name(self) -> None:
        """A project whose folder has another name gets that name as alias."""
        records = Records(projects=(Project(name="orbital", path="/src/orbital-gw"),))
        (node,) = build_graph(records, Caps()).graph.nodes
        assert node.aliases == ("orbital-gw",)

    def test_card_title_carries_column(self) -> None:
        """A card's title shows its column; its bare title is its alias."""
        records = Records(cards=(Card(id="card-1", title="Rotate certs", column="doing"),))
        (node,) = build_graph(records, Caps()).graph.nodes
        assert node.title == "[doing] Rotate certs" and node.aliases == ("Rotate certs",)

    def test_private_profile_name_becomes_user(self) -> None:
        """A private name never reaches the graph."""
        records = Records(profile=Profile(name="Ana", name_private=True))
        (node,) = build_graph(records, Caps()).graph.nodes
        assert node.title == "user"

    def test_episode_cap_keeps_most_recent(self) -> None:
        """Only the most recent episodes become notes."""
        episodes = tuple(
            Episode(id=f"ep_{i}", date=T0 + timedelta(days=i), summary=f"e{i}") for i in range(5)
        )
        graph = build_graph(Records(episodes=episodes), replace(Caps(), episodes=2)).graph
        assert [n.id for n in graph.nodes] == ["episode:ep_3", "episode:ep_4"]

    def test_session_cap_keeps_named_then_newest_autosaves(self) -> None:
        """Under the cap, the sessions the user named come first, then the newest autosaves."""
        names = (
            "autosave-20261001-090000",
            "autosave-20261003-090000",
            "autosave-20261002-090000",
            "mcp-abc",
            "zeta",
            "alpha",
        )
        sessions = tuple(Session(name=n, saved=saved_time(n)) for n in names)

        def kept(cap: int) -> list[str]:
            graph = build_graph(Records(sessions=sessions), replace(Caps(), sessions=cap)).graph
            return [n.id.removeprefix("session:") for n in graph.nodes]

        assert kept(2) == ["alpha", "zeta"]
        assert kept(4) == ["alpha", "autosave-20261002-090000", "autosave-20261003-090000", "zeta"]
        assert kept(5)[-1] == "zeta" and "mcp-abc" not in kept(5)

    def test_document_caps_favour_first_contexts(self) -> None:
        """The contexts created first keep their documents under the total cap."""

        def context(cid: str) -> Context:
            docs = tuple(Document(source=f"d/{i}.md", content="") for i in range(3))
            return Context(id=cid, name=cid, mode="knowledge", documents=docs)

        caps = replace(Caps(), docs_total=4, docs_per_context=3)
        graph = build_graph(Records(contexts=(context("a"), context("b"))), caps).graph
        docs = [n.id for n in graph.nodes if n.kind is Kind.DOC]
        assert sum(d.startswith("doc:a:") for d in docs) == 3
        assert sum(d.startswith("doc:b:") for d in docs) == 1


class TestStructuralLinks:
    def test_fact_tags_and_category(self) -> None:
        """A fact links its tags (tagged, 1) and its category (category, 0.5)."""
        records = Records(facts=(fact("f" * 24, "x", tags=("grpc",), category="gotcha"),))
        built = build_graph(records, Caps()).graph
        rels = {(l.target, l.rel, l.weight) for l in built.links}
        assert rels == {("tag:grpc", "tagged", 1), ("tag:gotcha", "category", 0.5)}

    def test_fact_in_project_by_path_and_subfolder(self) -> None:
        """A fact whose source is the project's folder or below it is in the project."""
        records = Records(
            projects=(ORBITAL,),
            facts=(
                fact("1" * 24, "a", source_project="/src/orbital"),
                fact("2" * 24, "b", source_project="/src/orbital/cmd/gw"),
                fact("3" * 24, "c", source_project="/src/orbital-other"),
            ),
        )
        links = links_of(records)
        assert (f"fact:{'1' * 24}", "project:orbital", "in_project", "structural") in links
        assert (f"fact:{'2' * 24}", "project:orbital", "in_project", "structural") in links
        assert not any(l[0] == f"fact:{'3' * 24}" and l[2] == "in_project" for l in links)

    def test_topic_about_existing_facts_only(self) -> None:
        """A topic links its related facts that exist; unknown ids are skipped."""
        records = Records(
            facts=(fact("a" * 24, "x"),),
            topics=(Topic(name="auth", related_fact_ids=("a" * 24, "b" * 24)),),
        )
        about = {l for l in links_of(records) if l[2] == "about"}
        assert about == {("topic:auth", f"fact:{'a' * 24}", "about", "structural")}

    def test_project_uses_technologies(self) -> None:
        """A project links its technologies as tags."""
        assert has(Records(projects=(ORBITAL,)), "project:orbital", "tag:postgres", "uses")

    def test_profile_has_skills_unless_private(self) -> None:
        """Skill and goal tags come from the profile unless the list is private."""
        public = Records(profile=Profile(skills=("go",), goals=("CKA",)))
        assert has(public, "profile:user", "tag:cka", "has")
        private = Records(profile=Profile(skills=("go",), skills_private=True))
        assert not any(l[2] == "has" for l in links_of(private))

    def test_episode_project_and_same_day_facts(self) -> None:
        """An episode is in its project and links that project's facts learned the same day."""
        records = Records(
            projects=(ORBITAL,),
            facts=(
                fact("a" * 24, "x", source_project="/src/orbital", created_at=T0),
                fact(
                    "b" * 24, "y", source_project="/src/orbital", created_at=T0 + timedelta(days=1)
                ),
            ),
            episodes=(Episode(id="ep_1", date=T0, project="/src/orbital", summary="s"),),
        )
        links = links_of(records)
        assert ("episode:ep_1", "project:orbital", "in_project", "structural") in links
        assert ("episode:ep_1", f"fact:{'a' * 24}", "same_day", "structural") in links
        assert ("episode:ep_1", f"fact:{'b' * 24}", "same_day", "structural") not in links

    def test_session_project_by_whole_word(self) -> None:
        """A session matches a project by whole words, never by substring."""
        records = Records(
            projects=(Project(name="go"), ORBITAL),
            sessions=(Session(name="orbital-retry", title="google maps"),),
        )
        links = links_of(records)
        assert ("session:orbital-retry", "project:orbital", "in_project", "structural") in links
        assert ("session:orbital-retry", "project:go", "in_project", "structural") not in links

    def test_session_same_day_episode(self) -> None:
        """An autosave named on an episode's day links that episode; a named session has no day."""
        autosave = "autosave-20261005-234500"
        records = Records(
            episodes=(Episode(id="ep_1", date=T0, summary="s"),),
            sessions=(Session(name=autosave, saved=saved_time(autosave)), Session(name="s")),
        )
        assert has(records, f"session:{autosave}", "episode:ep_1", "same_day")
        assert not any(l[0] == "session:s" and l[2] == "same_day" for l in links_of(records))

    def test_days_counted_in_the_configured_zone(self) -> None:
        """Every day boundary uses caps.timezone, not the offset the store recorded."""
        late = datetime(2026, 10, 5, 23, 30, tzinfo=timezone(timedelta(hours=-2)))  # 01:30Z on 6th
        records = Records(
            episodes=(Episode(id="ep_1", date=late, summary="s"),),
            journal=tuple(
                JournalNote(period="daily", label=day, text="", source_path=day)
                for day in ("2026-10-05", "2026-10-06")
            ),
        )
        utc = links_of(records)
        assert ("note:daily:2026-10-06", "episode:ep_1", "same_day", "structural") in utc
        there = links_of(records, replace(Caps(), timezone="America/Sao_Paulo"))
        assert ("note:daily:2026-10-05", "episode:ep_1", "same_day", "structural") in there
        assert ("note:daily:2026-10-06", "episode:ep_1", "same_day", "structural") not in there

    def test_a_moment_the_zone_cannot_hold_stays_in_utc(self) -> None:
        """Year 1 west of UTC (or 9999 east of it) falls back to UTC, never an error."""
        first = datetime(1, 1, 1, 0, 0, 1, tzinfo=UTC)
        records = Records(
            episodes=(Episode(id="ep_1", date=first, summary="s"),),
            journal=(JournalNote(period="daily", label="0001-01-01", text="", source_path="d"),),
        )
        west = links_of(records, replace(Caps(), timezone="America/New_York"))
        assert ("note:daily:0001-01-01", "episode:ep_1", "same_day", "structural") in west

    def test_daily_note_links_its_day_up_to_cap(self) -> None:
        """A daily note links the episodes and facts of its day, at most the cap."""
        facts = tuple(fact(f"{i:024x}", f"f{i}", created_at=T0) for i in range(5))
        records = Records(
            facts=facts,
            journal=(JournalNote(period="daily", label="2026-10-05", text="", source_path="x"),),
        )
        built = build_graph(records, replace(Caps(), same_day_per_daily=3)).graph
        assert sum(1 for l in built.links if l.rel == "same_day") == 3

    def test_digests_summarize(self) -> None:
        """A weekly digest summarizes its days; a monthly digest its weeks."""
        journal = (
            JournalNote(period="daily", label="2026-10-05", text="", source_path="a"),
            JournalNote(period="weekly", label="2026-W41", text="", source_path="b"),
            JournalNote(period="monthly", label="2026-10", text="", source_path="c"),
        )
        links = links_of(Records(journal=journal))
        assert (
            "note:weekly:2026-W41",
            "note:daily:2026-10-05",
            "summarizes",
            "structural",
        ) in links
        assert ("note:monthly:2026-10", "note:weekly:2026-W41", "summarizes", "structural") in links

    def test_skill_triggers(self) -> None:
        """A skill links the topic a trigger names (1) and the trigger tag (0.5)."""
        records = Records(
            topics=(Topic(name="Postgres"),),
            skills=(Skill(name="pg", triggers=("postgres", "vacuum")),),
        )
        built = build_graph(records, Caps()).graph
        rels = {(l.target, l.weight) for l in built.links if l.rel == "triggered_by"}
        assert rels == {("topic:Postgres", 1), ("tag:postgres", 0.5), ("tag:vacuum", 0.5)}

    def test_card_assignee_and_document_part_of(self) -> None:
        """A card links its assignee tag; a document is part of its context."""
        records = Records(
            cards=(Card(id="card-1", title="t", column="doing", assignee="ops"),),
            contexts=(
                Context(
                    id="k",
                    name="h",
                    mode="knowledge",
                    documents=(Document(source="a.md", content=""),),
                ),
            ),
        )
        links = links_of(records)
        assert ("card:card-1", "tag:ops", "assigned", "structural") in links
        assert ("doc:k:a.md", "kb:k", "part_of", "structural") in links


class TestWikilinks:
    def test_resolves_by_normalized_title(self) -> None:
        """Accents, case and space/-/_ differences do not matter."""
        records = Records(
            topics=(Topic(name="configuracao-do_servidor"),),
            facts=(fact("a" * 24, "see [[Configuração do servidor]]"),),
        )
        assert has(
            records, f"fact:{'a' * 24}", "topic:configuracao-do_servidor", "links_to", "wikilink"
        )

    def test_exact_node_id_wins(self) -> None:
        """An exact node id resolves before any title."""
        records = Records(
            topics=(Topic(name="auth"),),
            projects=(Project(name="topic:auth"),),
            facts=(fact("a" * 24, "[[topic:auth]]"),),
        )
        assert has(records, f"fact:{'a' * 24}", "topic:auth", "links_to", "wikilink")

    def test_more_specific_kind_wins_a_shared_name(self) -> None:
        """A project beats a topic and a tag of the same name."""
        records = Records(
            projects=(Project(name="telemetry", technologies=("telemetry",)),),
            topics=(Topic(name="telemetry"),),
            facts=(fact("a" * 24, "[[telemetry|the telemetry work]]"),),
        )
        assert has(records, f"fact:{'a' * 24}", "project:telemetry", "links_to", "wikilink")

    def test_percent_encoded_target_is_decoded_after_the_literal(self) -> None:
        """[[My%20Note]] reaches "My Note"; a name that really holds "%" is tried first."""
        records = Records(
            topics=(Topic(name="My Note"), Topic(name="100%25 sure"), Topic(name="100% sure")),
            facts=(fact("a" * 24, "[[My%20Note]] and [[100%25 sure]]"),),
        )
        found = {l.target for l in build_graph(records, Caps()).graph.links if l.rel == "links_to"}
        assert found == {"topic:My Note", "topic:100%25 sure"}

    def test_unresolved_is_kept_not_an_error(self) -> None:
        """A target naming nothing is reported as unresolved and draws no link."""
        records = Records(facts=(fact("a" * 24, "Dashboards live in [[nothing here]]"),))
        built = build_graph(records, Caps())
        assert built.unresolved == ((f"fact:{'a' * 24}", "nothing here"),)
        assert not any(l.rel == "links_to" for l in built.graph.links)

    def test_document_resolves_same_folder_first(self) -> None:
        """A document's [[Note]] resolves to the same-folder file before a shorter path."""
        docs = (
            Document(source="d/aa/page.md", content="[[Note]]"),
            Document(source="d/aa/Note.md", content=""),
            Document(source="d/z/Note.md", content=""),
        )
        records = Records(contexts=(Context(id="k", name="h", mode="knowledge", documents=docs),))
        assert has(records, "doc:k:d/aa/page.md", "doc:k:d/aa/Note.md", "links_to", "wikilink")

    def test_document_exact_path_beats_same_folder(self) -> None:
        """Obsidian's first rule: a note at the exact path wins over one beside the source."""
        docs = (
            Document(source="d/a/page.md", content="[[Note]]"),
            Document(source="d/a/Note.md", content=""),
            Document(source="d/Note.md", content=""),
        )
        records = Records(contexts=(Context(id="k", name="h", mode="knowledge", documents=docs),))
        assert has(records, "doc:k:d/a/page.md", "doc:k:d/Note.md", "links_to", "wikilink")

    def test_document_reaches_memory_notes(self) -> None:
        """A wikilink in a document resolves across the graph when its context has no match."""
        records = Records(
            projects=(ORBITAL,),
            contexts=(
                Context(
                    id="k",
                    name="h",
                    mode="knowledge",
                    documents=(Document(source="a.md", content="[[Orbital]]"),),
                ),
            ),
        )
        assert has(records, "doc:k:a.md", "project:orbital", "links_to", "wikilink")

    def test_markdown_links_between_documents(self) -> None:
        """A relative markdown link between documents is a links_to of origin markdown."""
        docs = (
            Document(source="docs/guide/setup.md", content="[cfg](../reference/config.md#tls)"),
            Document(source="docs/reference/config.md", content=""),
        )
        records = Records(contexts=(Context(id="k", name="h", mode="knowledge", documents=docs),))
        assert has(
            records,
            "doc:k:docs/guide/setup.md",
            "doc:k:docs/reference/config.md",
            "links_to",
            "markdown",
        )

    def test_markdown_link_is_a_path_never_a_title(self) -> None:
        """[Custom name](Example.md) with no Example.md is unresolved, whatever the titles."""
        docs = (
            Document(source="d/a.md", content="See [Custom name](Example.md)."),
            Document(source="d/guide.md", content="# Example\n\nThe example.\n"),
        )
        records = Records(contexts=(Context(id="k", name="h", mode="knowledge", documents=docs),))
        assert not any(l[0] == "doc:k:d/a.md" and l[2] == "links_to" for l in links_of(records))

    def test_wikilink_with_a_code_label_links(self) -> None:
        """[[Functions#hasTag|`hasTag`]] in a document links Functions.md."""
        docs = (
            Document(source="d/a.md", content="Use [[Functions#hasTag|`hasTag`]]."),
            Document(source="d/Functions.md", content="# Functions\n"),
        )
        records = Records(contexts=(Context(id="k", name="h", mode="knowledge", documents=docs),))
        assert has(records, "doc:k:d/a.md", "doc:k:d/Functions.md", "links_to", "wikilink")

    def test_links_per_document_cap(self) -> None:
        """A document draws at most the capped number of links."""
        docs = tuple(Document(source=f"d/{i}.md", content="") for i in range(10))
        hub = Document(source="d/hub.md", content=" ".join(f"[[{i}]]" for i in range(10)))
        records = Records(
            contexts=(Context(id="k", name="h", mode="knowledge", documents=(hub, *docs)),)
        )
        built = build_graph(records, replace(Caps(), links_per_doc=4)).graph
        assert (
            len([l for l in built.links if l.source == "doc:k:d/hub.md" and l.rel == "links_to"])
            == 4
        )


class TestMentions:
    def test_prose_mentions_a_project(self) -> None:
        """A project named in a fact's prose gets a mentions link."""
        records = Records(projects=(ORBITAL,), facts=(fact("a" * 24, "Orbital uses mTLS"),))
        assert has(records, f"fact:{'a' * 24}", "project:orbital", "mentions", "mention")

    def test_never_restates_an_existing_link(self) -> None:
        """A mention is dropped when the two notes already have a link."""
        records = Records(
            projects=(ORBITAL,),
            facts=(fact("a" * 24, "Orbital uses mTLS", source_project="/src/orbital"),),
        )
        rels = {l[2] for l in links_of(records) if l[1] == "project:orbital"}
        assert rels == {"in_project"}

    def test_never_restates_a_link_the_other_way(self) -> None:
        """A mention is dropped when the mentioned note already links to the mentioning one."""
        about = Topic(name="ledger rules", related_fact_ids=("a" * 24,))
        records = Records(topics=(about,), facts=(fact("a" * 24, "see the ledger rules"),))
        pairs = {(l[0], l[1], l[2]) for l in links_of(records)}
        assert ("topic:ledger rules", f"fact:{'a' * 24}", "about") in pairs
        assert not any(rel == "mentions" for _, _, rel in pairs)

    def test_documents_and_tags_are_not_targets(self) -> None:
        """Document names and tag words never autolink."""
        records = Records(
            facts=(fact("a" * 24, "postgres handbook page", tags=("other",)),),
            projects=(Project(name="x", technologies=("postgres",)),),
            contexts=(
                Context(
                    id="k",
                    name="h",
                    mode="knowledge",
                    documents=(Document(source="handbook page.md", content=""),),
                ),
            ),
        )
        assert not any(l[2] == "mentions" for l in links_of(records))

    def test_no_mention_in_code(self) -> None:
        """A project name in inline code or a fenced block draws no mentions link."""
        text = "run `orbital deploy`\n\n```\norbital status\n```\n"
        records = Records(projects=(ORBITAL,), facts=(fact("a" * 24, text),))
        assert not any(l[2] == "mentions" for l in links_of(records))

    def test_no_mention_inside_link_syntax(self) -> None:
        """An unresolved [[Orbital roadmap]] is a link, so it mentions no Orbital."""
        records = Records(projects=(ORBITAL,), facts=(fact("a" * 24, "see [[Orbital roadmap]]"),))
        assert not any(l[2] == "mentions" for l in links_of(records))

    def test_at_most_eight_per_note(self) -> None:
        """A note gets at most the capped number of mentions."""
        topics = tuple(Topic(name=f"subject{i:02d}") for i in range(12))
        text = " ".join(t.name for t in topics)
        built = build_graph(Records(topics=topics, facts=(fact("a" * 24, text),)), Caps()).graph
        assert sum(1 for l in built.links if l.rel == "mentions") == 8


class TestExplicitLinks:
    def test_user_link_weighs_two_with_note(self) -> None:
        """A link drawn by hand has origin user, weight 2 and keeps its note."""
        records = Records(
            projects=(ORBITAL,),
            topics=(Topic(name="auth"),),
            links=(
                ExplicitLink(source="topic:auth", target="project:orbital", rel="about", note="n"),
            ),
        )
        (link,) = [l for l in build_graph(records, Caps()).graph.links if l.origin is Origin.USER]
        assert (link.rel, link.weight, link.note) == ("about", 2.0, "n")

    def test_link_to_a_superseded_fact_follows_the_newer_fact(self) -> None:
        """A link drawn to a fact that a newer fact supersedes points at the newer fact."""
        old, new = "a" * 24, "b" * 24
        records = Records(
            topics=(Topic(name="auth"),),
            facts=(
                fact(
                    new,
                    "Collectors use mTLS",
                    provenance=f"extraction (supersedes {old})",
                    created_at=T0 + timedelta(days=1),
                ),
            ),
            links=(ExplicitLink(source="topic:auth", target=f"fact:{old}", rel="about"),),
        )
        user = [l for l in build_graph(records, Caps()).graph.links if l.origin is Origin.USER]
        assert [(l.source, l.target) for l in user] == [("topic:auth", f"fact:{new}")]

    def test_link_to_missing_note_is_not_drawn(self) -> None:
        """An explicit link whose note is not in the graph draws nothing."""
        records = Records(links=(ExplicitLink(source="topic:gone", target="project:x"),))
        assert build_graph(records, Caps()).graph.links == ()


def sample_records() -> Records:
    return Records(
        projects=(ORBITAL, Project(name="billing", path="/src/billing", technologies=("go",))),
        topics=(Topic(name="telemetry", summary="see [[orbital]]", related_fact_ids=("a" * 24,)),),
        facts=tuple(
            fact(
                f"{i:024x}",
                f"fact {i} about Orbital and billing",
                tags=("go",),
                source_project="/src/orbital",
                created_at=T0,
            )
            for i in range(6)
        ),
        episodes=tuple(
            Episode(id=f"ep_{i}", date=T0, project="/src/orbital", summary="work") for i in range(3)
        ),
        journal=(
            JournalNote(period="daily", label="2026-10-05", text="[[telemetry]]", source_path="x"),
        ),
    )


@settings(max_examples=25, deadline=None)
@given(st.randoms(use_true_random=False))
def test_graph_does_not_depend_on_input_order(rng: random.Random) -> None:
    """Shuffling every store's records gives the same graph."""
    records = sample_records()
    changes: dict[str, Any] = {
        field.name: tuple(rng.sample(value, len(value)))
        for field in fields(records)
        if isinstance(value := getattr(records, field.name), tuple)
    }
    shuffled = replace(records, **changes)
    assert build_graph(shuffled, Caps()).graph == build_graph(records, Caps()).graph

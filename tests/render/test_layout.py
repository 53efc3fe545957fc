"""Vault layout: one portable, case-insensitively unique path per note, a pure function."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pathvalidate import is_valid_filename
from vaultsync.core.model import (
    Card,
    Context,
    Document,
    Episode,
    Fact,
    Graph,
    JournalNote,
    Kind,
    Node,
    Profile,
    Project,
    Records,
    Session,
    Skill,
    Topic,
)
from vaultsync.render.filenames import MAX_NAME_BYTES
from vaultsync.render.layout import (
    HOME_PATH,
    short_id,
    vault_layout,
    vault_paths,
)
from vaultsync.renderers.records import RecordIndex

T = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)
T_item = TypeVar("T_item")


def graph_of(*nodes: Node) -> Graph:
    return Graph(nodes=tuple(sorted(nodes, key=lambda n: n.id)), links=())


def fact_node(fid: str, title: str) -> Node:
    return Node(id=f"fact:{fid}", kind=Kind.FACT, title=title)


def context_records(*contexts: Context) -> tuple[Records, Graph]:
    nodes = []
    for context in contexts:
        prefix = "kb" if context.is_knowledge else "ctx"
        nodes.append(
            Node(
                id=f"{prefix}:{context.id}",
                kind=Kind.KBCONTEXT if context.is_knowledge else Kind.CONTEXT,
                title=context.name,
            )
        )
        for doc in context.documents:
            name = doc.source.replace("\\", "/").rsplit("/", 1)[-1]
            nodes.append(Node(id=f"doc:{context.id}:{doc.source}", kind=Kind.DOC, title=name))
    return Records(contexts=contexts), graph_of(*nodes)


def paths_of(*contexts: Context) -> dict[str, str]:
    records, graph = context_records(*contexts)
    return dict(vault_paths(graph, records))


class TestShortId:
    @pytest.mark.parametrize(
        ("node_id", "short"),
        [
            ("fact:ab37259d1cbc0a08a73db347", "ab37259d"),
            ("episode:ep_9f2e0c7a1b3d5e6f708192a3", "9f2e0c7a"),
            ("episode:legacy", "legacy"),
            ("card:card-4", "card-4"),
            ("topic:auth", ""),
        ],
    )
    def test_short_ids(self, node_id: str, short: str) -> None:
        """Facts: 8 hex; episodes: 8 characters after ep_; cards: the whole card id."""
        assert short_id(node_id) == short


class TestKinds:
    def test_every_kind(self) -> None:
        """Each kind lands in its folder, named as the seed's layout says."""
        plus2 = timezone(timedelta(hours=2))
        records = Records(
            facts=(Fact(id="ab37259d1cbc0a08a73db347", content="x", category="gotcha"),),
            topics=(Topic(name="telemetry"),),
            projects=(Project(name="orbital"),),
            profile=Profile(name="Ana", name_private=True),
            episodes=(
                Episode(
                    id="ep_9f2e0c7a1b3d5e6f708192a3", date=datetime(2026, 1, 1, 0, 30, tzinfo=plus2)
                ),
            ),
            journal=(
                JournalNote(period="daily", label="2026-10-24", text="", source_path=""),
                JournalNote(period="weekly", label="2026-W43", text="", source_path=""),
                JournalNote(period="monthly", label="2026-10", text="", source_path=""),
            ),
            sessions=(Session(name="pg16-upgrade", title="Checklist: PG 16"),),
            skills=(Skill(name="pg-tuning"),),
            cards=(Card(id="card-4", title="Rotate TLS certs", column="doing"),),
        )
        graph = graph_of(
            fact_node("ab37259d1cbc0a08a73db347", "Staging: runs #Postgres [16]"),
            Node(id="topic:telemetry", kind=Kind.TOPIC, title="telemetry"),
            Node(id="project:orbital", kind=Kind.PROJECT, title="orbital"),
            Node(id="profile:user", kind=Kind.PROFILE, title="user"),
            Node(id="episode:ep_9f2e0c7a1b3d5e6f708192a3", kind=Kind.EPISODE, title="Fixed retry"),
            Node(id="note:daily:2026-10-24", kind=Kind.NOTE, title="2026-10-24"),
            Node(id="note:weekly:2026-W43", kind=Kind.NOTE, title="2026-W43"),
            Node(id="note:monthly:2026-10", kind=Kind.NOTE, title="2026-10"),
            Node(id="session:pg16-upgrade", kind=Kind.SESSION, title="Checklist: PG 16"),
            Node(id="skill:pg-tuning", kind=Kind.SKILL, title="pg-tuning"),
            Node(id="card:card-4", kind=Kind.CARD, title="[doing] Rotate TLS certs"),
            Node(id="tag:go", kind=Kind.TAG, title="go"),
        )
        episode = "episode:ep_9f2e0c7a1b3d5e6f708192a3"
        there = vault_paths(graph, records, zone=plus2)[episode]  # render.timezone, not UTC
        assert there == "Episodes/2026/2026-01-01 Fixed retry (9f2e0c7a).md"
        assert dict(vault_paths(graph, records)) == {
            "card:card-4": "Board/doing/Rotate TLS certs (card-4).md",
            episode: "Episodes/2025/2025-12-31 Fixed retry (9f2e0c7a).md",
            "fact:ab37259d1cbc0a08a73db347": (
                "Facts/gotcha/Staging- runs -Postgres (16) (ab37259d).md"
            ),
            "note:daily:2026-10-24": "Journal/Daily/2026-10-24.md",
            "note:monthly:2026-10": "Journal/Monthly/2026-10.md",
            "note:weekly:2026-W43": "Journal/Weekly/2026-W43.md",
            "profile:user": "Profile/user.md",
            "project:orbital": "Projects/orbital.md",
            "session:pg16-upgrade": "Sessions/pg16-upgrade.md",
            "skill:pg-tuning": "Skills/pg-tuning.md",
            "topic:telemetry": "Topics/telemetry.md",
        }

    def test_nodes_without_records(self) -> None:
        """A node whose record is missing still gets a sensible path from its id and title."""
        graph = graph_of(
            fact_node("0" * 24, "Lonely"),
            Node(id="episode:ep_1234567890", kind=Kind.EPISODE, title="Undated"),
            Node(id="doc:c1:a/b.md", kind=Kind.DOC, title="b"),
        )
        paths = vault_paths(graph, Records())
        assert paths["fact:" + "0" * 24] == "Facts/general/Lonely (00000000).md"
        assert paths["episode:ep_1234567890"] == "Episodes/undated/Undated (12345678).md"
        assert paths["doc:c1:a/b.md"] == "Contexts/c1/b.md"

    def test_home_is_reserved(self) -> None:
        """Home.md sits at the root; no note is ever placed there."""
        assert HOME_PATH == "Home.md"
        graph = graph_of(Node(id="topic:Home", kind=Kind.TOPIC, title="Home"))
        assert vault_paths(graph, Records())["topic:Home"] == "Topics/Home.md"


class TestDocuments:
    def test_relative_to_shared_folder(self) -> None:
        """Paths are relative to the shared folder; .md names kept, others get .md appended."""
        context = Context(
            id="c1",
            name="handbook",
            mode="knowledge",
            documents=(
                Document(source="repo/docs/guide/setup.md", content=""),
                Document(source="repo/docs/scripts/run.sh", content=""),
                Document(source="repo/docs/.env", content=""),
                Document(source="repo/docs/Notes.MD", content=""),
                Document(source="repo/docs/a/../b.md", content=""),
            ),
        )
        paths = paths_of(context)
        assert sorted(paths.values()) == [
            "Contexts/handbook/Notes.md",
            "Contexts/handbook/a/b.md",
            "Contexts/handbook/env.md",
            "Contexts/handbook/guide/setup.md",
            "Contexts/handbook/handbook.md",
            "Contexts/handbook/scripts/run.sh.md",
        ]

    def test_windows_paths(self) -> None:
        """Backslash paths are folders too."""
        context = Context(
            id="c2",
            name="skiff",
            mode="full",
            documents=(
                Document(source="C:\\src\\skiff\\cmd\\main.go", content=""),
                Document(source="C:\\src\\skiff\\README.md", content=""),
            ),
        )
        paths = paths_of(context)
        assert paths["doc:c2:C:\\src\\skiff\\cmd\\main.go"] == "Contexts/skiff/cmd/main.go.md"
        assert paths["doc:c2:C:\\src\\skiff\\README.md"] == "Contexts/skiff/README.md"
        assert paths["ctx:c2"] == "Contexts/skiff/skiff.md"

    def test_document_named_like_the_folder_note(self) -> None:
        """The folder note keeps its name; the document gets a suffix."""
        context = Context(
            id="c1",
            name="Handbook",
            mode="knowledge",
            documents=(
                Document(source="d/handbook.md", content=""),
                Document(source="d/x/y.md", content=""),
            ),
        )
        paths = paths_of(context)
        assert paths["kb:c1"] == "Contexts/Handbook/Handbook.md"
        assert paths["doc:c1:d/handbook.md"].startswith("Contexts/Handbook/handbook (")

    def test_contexts_sharing_a_name(self) -> None:
        """The older context keeps the folder; the newer one gets its id's first 8 characters."""
        older = Context(
            id="zzzz1111-x",
            name="docs",
            mode="full",
            created_at=T,
            documents=(Document(source="a.md", content=""),),
        )
        newer = Context(
            id="aaaa2222-y",
            name="Docs",
            mode="knowledge",
            created_at=T + timedelta(days=1),
            documents=(Document(source="a.md", content=""),),
        )
        paths = paths_of(older, newer)
        assert paths["ctx:zzzz1111-x"] == "Contexts/docs/docs.md"
        assert paths["doc:zzzz1111-x:a.md"] == "Contexts/docs/a.md"
        assert paths["kb:aaaa2222-y"] == "Contexts/Docs (aaaa2222)/Docs (aaaa2222).md"
        assert paths["doc:aaaa2222-y:a.md"] == "Contexts/Docs (aaaa2222)/a.md"


class TestCollisions:
    def test_topics_differing_by_case(self) -> None:
        """The older topic keeps the name; the other gets a stable hash suffix."""
        records = Records(
            topics=(
                Topic(name="auth", first_seen=T),
                Topic(name="Auth", first_seen=T + timedelta(1)),
            )
        )
        graph = graph_of(
            *(Node(id=f"topic:{t.name}", kind=Kind.TOPIC, title=t.name) for t in records.topics)
        )
        paths = vault_paths(graph, records)
        assert paths["topic:auth"] == "Topics/auth.md"
        assert paths["topic:Auth"].startswith("Topics/Auth (") and paths["topic:Auth"].endswith(
            ").md"
        )

    def test_a_new_collision_renames_nobody(self) -> None:
        """Adding a third colliding topic leaves the first two paths as they were."""
        topics = (Topic(name="auth", first_seen=T), Topic(name="Auth", first_seen=T + timedelta(1)))
        newer = Topic(name="AUTH", first_seen=T + timedelta(2))

        def paths_of(*ts: Topic) -> dict[str, str]:
            nodes = [Node(id=f"topic:{t.name}", kind=Kind.TOPIC, title=t.name) for t in ts]
            return dict(vault_paths(graph_of(*nodes), Records(topics=ts)))

        before = paths_of(*topics)
        after = paths_of(*topics, newer)
        assert {k: after[k] for k in before} == before
        assert len({p.casefold() for p in after.values()}) == 3

    def test_categories_differing_by_case_share_one_folder(self) -> None:
        """Gotcha and gotcha facts land in one folder spelled one way."""
        records = Records(
            facts=(
                Fact(id="a" * 24, content="x", category="gotcha"),
                Fact(id="b" * 24, content="y", category="Gotcha"),
            )
        )
        graph = graph_of(fact_node("a" * 24, "x"), fact_node("b" * 24, "y"))
        folders = {p.rsplit("/", 1)[0] for p in vault_paths(graph, records).values()}
        assert folders == {"Facts/Gotcha"}

    def test_same_title_same_short_id(self) -> None:
        """Two facts whose titles and first 8 hex digits agree still get two files."""
        graph = graph_of(
            fact_node("abcdef01" + "0" * 16, "Same"), fact_node("abcdef01" + "1" * 16, "same")
        )
        paths = sorted(vault_paths(graph, Records()).values())
        assert paths[0] == "Facts/general/Same (abcdef01).md"
        assert paths[1].startswith("Facts/general/same (abcdef01) (")

    def test_file_and_folder_never_clash(self) -> None:
        """A document whose path equals a folder another document needs gets another name."""
        context = Context(
            id="c1",
            name="h",
            mode="full",
            documents=(
                Document(source="r/guide.md/x.md", content=""),
                Document(source="r/guide", content=""),
            ),
        )
        paths = paths_of(context)
        assert paths["doc:c1:r/guide.md/x.md"] == "Contexts/h/guide.md/x.md"
        assert paths["doc:c1:r/guide"].startswith("Contexts/h/guide (")


names = st.text(min_size=0, max_size=120)


def named_vault(
    topics: list[str], titles: list[str], sources: list[list[str]]
) -> tuple[Records, Graph]:
    """Topics, facts (title = category) and one context's documents, all named as given."""
    docs = tuple(Document(source="/".join(parts), content="") for parts in sources)
    docs = tuple({d.source: d for d in docs}.values())
    context = Context(
        id="c1", name=topics[0] if topics else "ctx", mode="knowledge", documents=docs
    )
    records, ctx_graph = context_records(context)
    records = Records(
        topics=tuple(Topic(name=t) for t in topics),
        facts=tuple(Fact(id=f"{i:024x}", content=t, category=t) for i, t in enumerate(titles)),
        contexts=records.contexts,
    )
    nodes = [
        *ctx_graph.nodes,
        *(Node(id=f"topic:{t}", kind=Kind.TOPIC, title=t) for t in topics),
        *(fact_node(f"{i:024x}", t) for i, t in enumerate(titles)),
    ]
    return records, graph_of(*nodes)


def assert_safe_path(path: str, folders: set[str]) -> None:
    """A relative ``.md`` path of portable, bounded parts that is no folder's path."""
    assert path.endswith(".md") and not path.startswith("/")
    for part in path.split("/"):
        assert part not in ("", ".", "..")
        assert is_valid_filename(part, platform="universal")
        assert len(part.encode()) <= MAX_NAME_BYTES
    assert path.casefold() not in folders


def shuffled(items: tuple[T_item, ...], seed: int) -> tuple[T_item, ...]:
    out = list(items)
    random.Random(seed).shuffle(out)
    return tuple(out)


class TestProperties:
    @settings(max_examples=60, deadline=None)
    @given(
        topics=st.lists(names, max_size=12, unique=True),
        titles=st.lists(names, max_size=12),
        sources=st.lists(st.lists(names, min_size=1, max_size=4), max_size=8),
    )
    def test_unique_valid_bounded_and_order_independent(
        self, topics: list[str], titles: list[str], sources: list[list[str]]
    ) -> None:
        """Any names give unique (case-insensitively), safe, bounded paths, whatever the order."""
        records, graph = named_vault(topics, titles, sources)
        paths = vault_paths(graph, records)
        assert len(paths) == len(graph.nodes)
        folded = [p.casefold() for p in (*paths.values(), HOME_PATH)]
        assert len(set(folded)) == len(folded)
        folders = {p.rsplit("/", 1)[0].casefold() for p in paths.values()}
        for path in paths.values():
            assert_safe_path(path, folders)
        # Nodes and records in another order (not re-sorted): who wins a name must not change.
        reordered = Records(
            topics=shuffled(records.topics, 1),
            facts=shuffled(records.facts, 2),
            contexts=records.contexts,
        )
        again = vault_paths(Graph(nodes=shuffled(graph.nodes, 0), links=()), reordered)
        assert dict(again) == dict(paths)


class TestReusedPaths:
    """A layout given the last run's placement and paths reuses them only while they hold."""

    @staticmethod
    def _topics(*names: str) -> tuple[Graph, RecordIndex]:
        topics = tuple(Topic(name=n, first_seen=T) for n in names)
        nodes = [Node(id=f"topic:{t.name}", kind=Kind.TOPIC, title=t.name) for t in topics]
        return graph_of(*nodes), RecordIndex.build(Records(topics=topics))

    def test_unchanged_places_give_the_last_paths(self) -> None:
        """Places as they were: the last run's paths are the answer, the uniqueness pass skipped."""
        graph, index = self._topics("auth", "deploy")
        first = vault_layout(graph, index)
        # Paths no uniqueness pass gives: seeing them back proves they were reused.
        marked = {node_id: f"Kept/{path}" for node_id, path in first.paths.items()}
        again = vault_layout(graph, index, previous=first.placement, previous_paths=marked)
        assert dict(again.paths) == marked
        assert list(again.paths) == sorted(marked)

    @staticmethod
    def _facts(*titles: str) -> tuple[Graph, RecordIndex]:
        facts = tuple(
            Fact(id=f"f{i}", content=title, category="general", created_at=T)
            for i, title in enumerate(titles)
        )
        nodes = [Node(id=f"fact:{f.id}", kind=Kind.FACT, title=f.content) for f in facts]
        return graph_of(*nodes), RecordIndex.build(Records(facts=facts))

    def test_a_changed_place_runs_the_uniqueness_pass(self) -> None:
        """A note retitled has another place: the paths are made again, not reused."""
        graph, index = self._facts("alpha", "beta")
        first = vault_layout(graph, index)
        marked = {node_id: f"Kept/{path}" for node_id, path in first.paths.items()}
        retitled, retitled_index = self._facts("alpha", "gamma")
        again = vault_layout(
            retitled,
            retitled_index,
            previous=first.placement,
            previous_paths=marked,
            changed={"fact:f1"},
        )
        assert dict(again.paths) == dict(vault_layout(retitled, retitled_index).paths)

    def test_another_set_of_notes_runs_the_uniqueness_pass(self) -> None:
        """Paths for other notes than those placed are not reused."""
        graph, index = self._topics("auth", "deploy")
        first = vault_layout(graph, index)
        fewer = {"topic:auth": first.paths["topic:auth"]}
        again = vault_layout(graph, index, previous=first.placement, previous_paths=fewer)
        assert dict(again.paths) == dict(first.paths)

    @pytest.mark.parametrize("bad", ["../escape.md", "Topics//auth.md", "Topics\\auth.md", ""])
    def test_an_unsafe_kept_path_is_not_reused(self, bad: str) -> None:
        """A kept path that is not a safe vault path sends the layout the long way."""
        graph, index = self._topics("auth", "deploy")
        first = vault_layout(graph, index)
        tampered = {**first.paths, "topic:auth": bad}
        again = vault_layout(graph, index, previous=first.placement, previous_paths=tampered)
        assert dict(again.paths) == dict(first.paths)

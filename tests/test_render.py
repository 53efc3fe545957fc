"""Stage 4, render: notes, front matter, links, wikilinks, privacy, secrets, keys, templates.

``sample()`` is a small hand-made vault with one note (or more) of every kind; the snapshot
tests render it too.  ``render_vault`` turns any records + graph + resolver into
``{path: bytes}``, so the demo store can be rendered the same way.
"""

from __future__ import annotations

import io
import re
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import frontmatter
import pytest
from frontmatter.default_handlers import YAMLHandler
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from pipeline import render as render_module
from pipeline.errors import ConfigError, TemplateError
from pipeline.model import (
    KIND_PRIORITY,
    Card,
    CardNote,
    Context,
    Document,
    Episode,
    Fact,
    Graph,
    JournalNote,
    Kind,
    Link,
    Node,
    Origin,
    Profile,
    ProfileField,
    Project,
    Records,
    Session,
    Skill,
    Topic,
)
from pipeline.names import normalize_name
from pipeline.redact import MASK
from pipeline.render import build_note_specs, make_environment, template_fingerprint
from renderers.base import PRIVATE, obsidian_tag
from renderers.document import MAX_BYTES

T = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)
F1 = "ab37259d1cbc0a08a73db347"
F2 = "5e0c1b9a7d3f2e4c8a6b0d1f"
EP = "ep_9f2e0c7a1b3d5e6f708192a3"
KB = "3f0e8f1c-2b6a-4c1e-9d7a-5b2f0c9e1a44"
CTX = "e4d2a1f0-5b3c-4f8e-9a6d-2c1b0e9f8a73"
GITHUB_PAT = "ghp_" + "1234567890abcdefghij" + "ABCDEFGHIJ123456"


# ---------------------------------------------------------------------------------------------
# Helpers (usable with any records + graph + resolver, e.g. the demo store)


class StubResolver:
    """Exact node id, else title/alias by ``normalize_name``; the more specific kind wins."""

    def __init__(self, graph: Graph) -> None:
        self.ids = {node.id for node in graph.nodes}
        ranked: dict[str, tuple[int, str]] = {}
        for node in graph.nodes:
            for name in (node.title, *node.aliases):
                key = normalize_name(name)
                rank = (KIND_PRIORITY[node.kind], node.id)
                if key and (key not in ranked or rank < ranked[key]):
                    ranked[key] = rank
        self.names = {key: node_id for key, (_, node_id) in ranked.items()}

    def resolve_wikilink(self, target: str, source_id: str) -> str | None:
        if target in self.ids:
            return target
        return self.names.get(normalize_name(target))


def render_vault(
    records: Records, graph: Graph, resolver: Any, templates: Path | None = None
) -> dict[str, bytes]:
    """Every note of the vault: ``{path: bytes}``, in path order."""
    specs = build_note_specs(records, graph, resolver, make_environment(templates))
    return {spec.path: spec.render() for spec in specs}


class _YAMLHandler(YAMLHandler):
    """python-frontmatter reading with ruamel (YAML 1.2), never PyYAML."""

    def load(self, fm: str, **kwargs: object) -> Any:
        return YAML(typ="safe", pure=True).load(io.StringIO(fm))


def parse_note(data: bytes) -> tuple[dict[str, Any], str]:
    """Front matter (ruamel) and body of a rendered note."""
    post = frontmatter.loads(data.decode("utf-8"), handler=_YAMLHandler())
    return dict(post.metadata), post.content


# ---------------------------------------------------------------------------------------------
# The sample vault


def link(source: str, target: str, rel: str, origin: Origin = Origin.STRUCTURAL, **kw: Any) -> Link:
    return Link(source=source, target=target, rel=rel, origin=origin, weight=1.0, **kw)


def sample_records() -> Records:
    local = timezone(timedelta(hours=2))
    return Records(
        facts=(
            Fact(
                id=F1,
                content=(
                    "Orbital streams telemetry over gRPC with mTLS. See [[orbital]], "
                    "[[Orbital#Setup|the setup]], [[missing note]], [[grpc]] and `[[in code]]`."
                ),
                category="architecture",
                tags=("grpc", "security"),
                created_at=T,
                last_accessed=T,
                source_project="/repo/orbital",
                confidence=0.7,
                provenance="extraction",
            ),
            Fact(id=F2, content="Staging runs Postgres 16 | with pgvector", category="Gotcha"),
        ),
        topics=(
            Topic(
                name="telemetry security",
                mentions=7,
                summary="mTLS between collectors and the [[Ingest gateway]].",
                first_seen=T - timedelta(days=30),
                last_seen=T,
                related_fact_ids=(F1, "0" * 24),
            ),
            Topic(name="Auth", mentions=1),
            Topic(name="auth", mentions=2),
        ),
        projects=(
            Project(
                name="orbital",
                path="/repo/orbital",
                description="Ingest gateway for telemetry.",
                status="active",
                technologies=("go", "postgres"),
                key_files=("cmd/main.go", "a`b.go"),
                last_active=T,
            ),
        ),
        profile=Profile(
            name="Ana Souza",
            name_private=True,
            fields=(
                ProfileField(key="name", value="Ana Souza", private=True),
                ProfileField(key="role", value="SRE"),
                ProfileField(key="company", value="Acme", private=True),
                ProfileField(key="skills", value=("go", "terraform")),
                ProfileField(key="environment", value=(("os", "linux"), ("shell", "zsh"))),
                ProfileField(key="milestones", value=(("2026-01-02", "Joined orbital"),)),
            ),
            skills=("go", "terraform"),
            last_updated=T,
        ),
        episodes=(
            Episode(
                id=EP,
                date=datetime(2026, 10, 24, 23, 30, tzinfo=local),
                project="/repo/orbital",
                summary="Fixed OTLP batch retry in [[orbital]]",
                outcome="merged",
                refs=("PR #12",),
                source="extraction",
                created_at=T,
            ),
        ),
        journal=(
            JournalNote(
                period="daily",
                label="2026-10-24",
                text=(
                    f"\n## 09:42\n\nSwitched the exporter to gzip; see [[telemetry security]].\n"
                    f"\n## 10:15\n\nDB password: hunter2\nand token {GITHUB_PAT}\n"
                ),
                source_path="memory/202610/20261024.md",
            ),
            JournalNote(
                period="weekly",
                label="2026-W43",
                text="# Week 2026-W43 (2026-10-19 to 2026-10-25)\n\n- rotated certs\n",
                source_path="memory/weekly/2026-W43.md",
            ),
            JournalNote(
                period="monthly",
                label="2026-10",
                text="# Month 2026-10\n\n- orbital shipped\n",
                source_path="memory/monthly/2026-10.md",
            ),
        ),
        sessions=(
            Session(name="orbital-mtls-rollout", title="mTLS rollout for orbital", modified=T),
        ),
        skills=(
            Skill(
                name="pg-tuning",
                description="Tune Postgres for write-heavy workloads.",
                triggers=("postgres", "vacuum"),
                category="database",
                source_path="skills/pg-tuning/SKILL.md",
            ),
        ),
        cards=(
            Card(
                id="card-4",
                title="Rotate TLS certs",
                column="doing",
                description="Before the deploy window; see [[orbital]].",
                assignee="ops",
                notes=(CardNote(author="ana", text="Started.\nSecond line.", at=T),),
                created_at=T - timedelta(days=2),
                updated_at=T,
            ),
        ),
        contexts=(
            Context(
                id=KB,
                name="handbook",
                mode="knowledge",
                description="Gateway docs.",
                tags=("docs", "2026"),
                created_at=T - timedelta(days=90),
                updated_at=T,
                documents=(
                    Document(
                        source="docs/guide/setup.md",
                        content=(
                            "---\ntitle: Getting set up\n---\n# Setup\n\n"
                            "See [[gateway]], [[Orbital]] and [[nowhere]].\n\n"
                            "```\n[[in fence]]\n```\n"
                        ),
                        type="Markdown",
                    ),
                    Document(
                        source="docs/guide/gateway.md",
                        content=(
                            f"# Ingest gateway\r\n\r\nTerminates mTLS.\r\nToken: {GITHUB_PAT}\r\n"
                        ),
                        type="Markdown",
                    ),
                    Document(source="docs/handbook.md", content="# Handbook\n", type="Markdown"),
                    Document(
                        source="docs/scripts/run.sh",
                        content=(
                            "#!/bin/sh\necho '````' [[not rewritten]]\nexport PASSWORD=swordfish\n"
                        ),
                        type="Shell",
                    ),
                ),
            ),
            Context(
                id=CTX,
                name="Handbook",
                mode="full",
                created_at=T,
                documents=(
                    Document(source="C:\\proj\\src\\main.go", content="package main\n", type="Go"),
                    Document(source="C:\\proj\\README.md", content="Read me.\n", type="Markdown"),
                ),
            ),
        ),
    )


def sample_graph() -> Graph:
    fact1, fact2, ep = f"fact:{F1}", f"fact:{F2}", f"episode:{EP}"
    setup, gateway = f"doc:{KB}:docs/guide/setup.md", f"doc:{KB}:docs/guide/gateway.md"
    handbook_doc, run = f"doc:{KB}:docs/handbook.md", f"doc:{KB}:docs/scripts/run.sh"
    main_go, readme = f"doc:{CTX}:C:\\proj\\src\\main.go", f"doc:{CTX}:C:\\proj\\README.md"
    nodes = [
        Node(id=fact1, kind=Kind.FACT, title="Orbital streams telemetry over gRPC with mTLS."),
        Node(id=fact2, kind=Kind.FACT, title="Staging runs Postgres 16 | with pgvector"),
        Node(id="topic:telemetry security", kind=Kind.TOPIC, title="telemetry security"),
        Node(id="topic:Auth", kind=Kind.TOPIC, title="Auth"),
        Node(id="topic:auth", kind=Kind.TOPIC, title="auth"),
        Node(id="project:orbital", kind=Kind.PROJECT, title="orbital"),
        Node(id="profile:user", kind=Kind.PROFILE, title="user"),
        Node(id=ep, kind=Kind.EPISODE, title="Fixed OTLP batch retry in [[orbital]]"),
        Node(id="note:daily:2026-10-24", kind=Kind.NOTE, title="2026-10-24"),
        Node(id="note:weekly:2026-W43", kind=Kind.NOTE, title="2026-W43"),
        Node(id="note:monthly:2026-10", kind=Kind.NOTE, title="2026-10"),
        Node(
            id="session:orbital-mtls-rollout",
            kind=Kind.SESSION,
            title="mTLS rollout for orbital",
            aliases=("orbital-mtls-rollout",),
        ),
        Node(id="skill:pg-tuning", kind=Kind.SKILL, title="pg-tuning"),
        Node(
            id="card:card-4",
            kind=Kind.CARD,
            title="[doing] Rotate TLS certs",
            aliases=("Rotate TLS certs",),
        ),
        Node(id=f"kb:{KB}", kind=Kind.KBCONTEXT, title="handbook"),
        Node(id=f"ctx:{CTX}", kind=Kind.CONTEXT, title="Handbook"),
        Node(id=setup, kind=Kind.DOC, title="Getting set up", aliases=("setup",)),
        Node(id=gateway, kind=Kind.DOC, title="Ingest gateway", aliases=("gateway",)),
        Node(id=handbook_doc, kind=Kind.DOC, title="Handbook"),
        Node(id=run, kind=Kind.DOC, title="run.sh", aliases=("run",)),
        Node(id=main_go, kind=Kind.DOC, title="main.go", aliases=("main",)),
        Node(id=readme, kind=Kind.DOC, title="README.md", aliases=("README",)),
    ]
    for label in ("grpc", "security", "architecture", "gotcha", "go", "postgres", "terraform"):
        nodes.append(Node(id=f"tag:{label}", kind=Kind.TAG, title=label))
    for label in ("vacuum", "ops", "docs", "2026", "c++ tips"):
        nodes.append(Node(id=f"tag:{label}", kind=Kind.TAG, title=label))
    links = [
        link(fact1, "tag:grpc", "tagged"),
        link(fact1, "tag:security", "tagged"),
        link(fact1, "tag:architecture", "category"),
        link(fact1, "project:orbital", "in_project"),
        link(fact1, "project:orbital", "links_to", Origin.WIKILINK),
        link(fact2, "tag:gotcha", "category"),
        link("topic:telemetry security", fact1, "about"),
        link("topic:telemetry security", gateway, "links_to", Origin.WIKILINK),
        link(
            "topic:telemetry security",
            "project:orbital",
            "about",
            Origin.USER,
            note="keeps the gateway notes together",
        ),
        link("topic:telemetry security", "tag:c++ tips", "related", Origin.USER),
        link("project:orbital", "tag:go", "uses"),
        link("project:orbital", "tag:postgres", "uses"),
        link("profile:user", "tag:go", "has"),
        link("profile:user", "tag:terraform", "has"),
        link(ep, "project:orbital", "in_project"),
        link(ep, fact1, "same_day"),
        link("note:daily:2026-10-24", ep, "same_day"),
        link("note:daily:2026-10-24", "topic:telemetry security", "links_to", Origin.WIKILINK),
        link("note:weekly:2026-W43", "note:daily:2026-10-24", "summarizes"),
        link("note:monthly:2026-10", "note:weekly:2026-W43", "summarizes"),
        link("session:orbital-mtls-rollout", "project:orbital", "in_project"),
        link("session:orbital-mtls-rollout", ep, "same_day"),
        link("skill:pg-tuning", "tag:postgres", "triggered_by"),
        link("skill:pg-tuning", "tag:vacuum", "triggered_by"),
        link("card:card-4", "tag:ops", "assigned"),
        link("card:card-4", "project:orbital", "links_to", Origin.WIKILINK),
        link(f"kb:{KB}", "tag:docs", "tagged"),
        link(f"kb:{KB}", "tag:2026", "tagged"),
        link(setup, gateway, "links_to", Origin.WIKILINK),
        link(setup, "project:orbital", "links_to", Origin.WIKILINK),
    ]
    for doc in (setup, gateway, handbook_doc, run):
        links.append(link(doc, f"kb:{KB}", "part_of"))
    for doc in (main_go, readme):
        links.append(link(doc, f"ctx:{CTX}", "part_of"))
    return Graph(
        nodes=tuple(sorted(nodes, key=lambda n: n.id)),
        links=tuple(sorted(links, key=lambda lk: lk.key)),
    )


def sample() -> tuple[Records, Graph, StubResolver]:
    graph = sample_graph()
    return sample_records(), graph, StubResolver(graph)


@pytest.fixture(scope="module")
def vault() -> dict[str, bytes]:
    return render_vault(*sample())


def note(vault: dict[str, bytes], prefix: str) -> str:
    (path,) = [p for p in vault if p.startswith(prefix)]
    return vault[path].decode("utf-8")


# ---------------------------------------------------------------------------------------------
# Tests


class TestEveryNote:
    def test_layout(self, vault: dict[str, bytes]) -> None:
        """One file per non-tag node plus Home.md, at the documented places."""
        assert sorted(vault) == [
            "Board/doing/Rotate TLS certs (card-4).md",
            "Contexts/Handbook (e4d2a1f0)/Handbook (e4d2a1f0).md",
            "Contexts/Handbook (e4d2a1f0)/README.md",
            "Contexts/Handbook (e4d2a1f0)/src/main.go.md",
            "Contexts/handbook/guide/gateway.md",
            "Contexts/handbook/guide/setup.md",
            "Contexts/handbook/handbook (a198cccb).md",
            "Contexts/handbook/handbook.md",
            "Contexts/handbook/scripts/run.sh.md",
            "Episodes/2026/2026-10-24 Fixed OTLP batch retry in ((orbital)) (9f2e0c7a).md",
            "Facts/Gotcha/Staging runs Postgres 16 - with pgvector (5e0c1b9a).md",
            "Facts/architecture/Orbital streams telemetry over gRPC with mTLS (ab37259d).md",
            "Home.md",
            "Journal/Daily/2026-10-24.md",
            "Journal/Monthly/2026-10.md",
            "Journal/Weekly/2026-W43.md",
            "Profile/user.md",
            "Projects/orbital.md",
            "Sessions/orbital-mtls-rollout.md",
            "Skills/pg-tuning.md",
            "Topics/Auth.md",
            "Topics/auth (ab627c80).md",
            "Topics/telemetry security.md",
        ]

    def test_front_matter_reads_back_everywhere(self, vault: dict[str, bytes]) -> None:
        """Every note's front matter parses (ruamel and PyYAML) with the required keys."""
        yaml = pytest.importorskip("yaml")
        for path, data in vault.items():
            meta, body = parse_note(data)
            text = data.decode()
            assert text.startswith("---\n")
            assert yaml.safe_load(text.split("---\n")[1]) == meta, path
            assert {"vaultsync_id", "kind", "aliases", "tags"} <= meta.keys(), path
            assert isinstance(meta["aliases"], list)
            assert isinstance(meta["tags"], list)
            assert all(isinstance(v, str) for v in meta["aliases"] + meta["tags"])
            assert body.startswith("# "), path

    def test_bytes_are_clean(self, vault: dict[str, bytes]) -> None:
        """UTF-8, LF only, exactly one final newline, no trailing spaces on the last line."""
        for path, data in vault.items():
            assert b"\r" not in data, path
            assert data.endswith(b"\n") and not data.endswith(b"\n\n"), path
            data.decode("utf-8")

    def test_links_section_last(self, vault: dict[str, bytes]) -> None:
        """Every graph note ends with its Links section."""
        for path, data in vault.items():
            if path != "Home.md":
                assert "\n## Links\n\n" in data.decode(), path

    def test_deterministic(self) -> None:
        """Two renders of the same input are byte-identical, keys included."""
        records, graph, resolver = sample()
        env = make_environment()
        first = build_note_specs(records, graph, resolver, env)
        second = build_note_specs(records, graph, resolver, make_environment())
        assert [(s.path, s.key) for s in first] == [(s.path, s.key) for s in second]
        assert [s.render() for s in first] == [s.render() for s in second]


class TestFrontMatter:
    def test_fact_fields(self, vault: dict[str, bytes]) -> None:
        """The seed's fact fields; confidence a quoted string; the title as alias."""
        meta, _ = parse_note(
            vault["Facts/architecture/Orbital streams telemetry over gRPC with mTLS (ab37259d).md"]
        )
        assert meta == {
            "vaultsync_id": f"fact:{F1}",
            "kind": "fact",
            "aliases": ["Orbital streams telemetry over gRPC with mTLS."],
            "tags": ["architecture", "grpc", "security"],
            "category": "architecture",
            "confidence": "0.70",
            "provenance": "extraction",
            "source_project": "/repo/orbital",
            "created": "2026-10-24T12:00:00Z",
            "last_accessed": "2026-10-24T12:00:00Z",
        }

    def test_empty_values_omitted(self, vault: dict[str, bytes]) -> None:
        """Unset confidence, provenance and times are not written."""
        meta, _ = parse_note(
            vault["Facts/Gotcha/Staging runs Postgres 16 - with pgvector (5e0c1b9a).md"]
        )
        assert meta.keys() == {"vaultsync_id", "kind", "aliases", "tags", "category"}

    @pytest.mark.parametrize(
        ("prefix", "fields"),
        [
            ("Topics/telemetry", {"mentions": 7, "first_seen": "2026-09-24T12:00:00Z"}),
            ("Projects/orbital", {"path": "/repo/orbital", "technologies": ["go", "postgres"]}),
            ("Episodes/", {"date": "2026-10-24T21:30:00Z", "project": "/repo/orbital"}),
            ("Board/", {"column": "doing", "assignee": "ops", "updated": "2026-10-24T12:00:00Z"}),
            ("Contexts/handbook/handbook.md", {"mode": "knowledge", "files": 4}),
            (
                "Contexts/handbook/guide/setup",
                {"source": "docs/guide/setup.md", "context": "handbook"},
            ),
        ],
    )
    def test_kind_fields(
        self, vault: dict[str, bytes], prefix: str, fields: dict[str, Any]
    ) -> None:
        """Per-kind fields of the seed's table, numbers as numbers."""
        meta, _ = parse_note(note(vault, prefix).encode())
        assert {k: meta.get(k) for k in fields} == fields

    def test_tags_are_obsidian_valid(self, vault: dict[str, bytes]) -> None:
        """All-digit tags get a prefix; punctuation becomes dashes; hand-drawn tag links count."""
        meta, _ = parse_note(vault["Contexts/handbook/handbook.md"])
        assert meta["tags"] == ["_2026", "docs"]
        meta, _ = parse_note(vault["Topics/telemetry security.md"])
        assert meta["tags"] == ["c-tips"]

    @settings(max_examples=80, deadline=None)
    @given(
        title=st.text(min_size=1),
        category=st.text(),
        provenance=st.text(),
        source=st.text(),
        labels=st.lists(st.text(min_size=1), max_size=4),
    )
    def test_property_whole_front_matter_reads_back(
        self, title: str, category: str, provenance: str, source: str, labels: list[str]
    ) -> None:
        """Arbitrary values read back unchanged with python-frontmatter (ruamel) and PyYAML."""
        yaml = pytest.importorskip("yaml")
        fid = "f" * 24
        records = Records(
            facts=(
                Fact(
                    id=fid,
                    content=title,
                    category=category,
                    provenance=provenance,
                    source_project=source,
                ),
            )
        )
        tags = [Node(id=f"tag:{i}", kind=Kind.TAG, title=label) for i, label in enumerate(labels)]
        graph = Graph(
            nodes=(Node(id=f"fact:{fid}", kind=Kind.FACT, title=title), *tags),
            links=tuple(link(f"fact:{fid}", t.id, "tagged") for t in tags),
        )
        files = render_vault(records, graph, StubResolver(graph))
        (path,) = [p for p in files if p.startswith("Facts/")]
        meta, _ = parse_note(files[path])
        assert yaml.safe_load(files[path].decode().split("\n---\n")[0][4:]) == meta
        expected = {"category": category, "provenance": provenance, "source_project": source}
        assert {k: meta.get(k, "") for k in expected} == expected
        assert meta["tags"] == sorted({obsidian_tag(label) for label in labels} - {""})
        assert all("\n" not in alias for alias in meta["aliases"])

    @pytest.mark.parametrize(
        ("label", "tag"),
        [
            ("Go", "go"),
            ("machine learning", "machine-learning"),
            ("C++", "c"),
            ("1984", "_1984"),
            ("inbox/to-read", "inbox/to-read"),
            ("Configuração", "configuração"),
            ("//a//b//", "a/b"),
            ("!!!", ""),
        ],
    )
    def test_obsidian_tag(self, label: str, tag: str) -> None:
        """Tags keep letters, digits, _, - and /, lowercase, never all digits."""
        assert obsidian_tag(label) == tag


class TestLinksSection:
    def test_grouped_sorted_without_tags(self, vault: dict[str, bytes]) -> None:
        """Outgoing links by relation in words, exact paths, tags left out, user links marked."""
        text = note(vault, "Topics/telemetry security")
        links = text.split("## Links\n\n")[1].splitlines()
        assert links == [
            "- about → [[Projects/orbital|orbital]] · linked by you"
            " — keeps the gateway notes together",
            "- about → [[Facts/architecture/Orbital streams telemetry over gRPC with mTLS"
            " (ab37259d)|Orbital streams telemetry over gRPC with mTLS.]]",
            "- links to → [[Contexts/handbook/guide/gateway|Ingest gateway]]",
        ]

    def test_pipe_in_title_does_not_break_the_link(self, vault: dict[str, bytes]) -> None:
        """A | in a title is replaced in the label."""
        records, graph, resolver = sample()
        extra = link("project:orbital", f"fact:{F2}", "about", Origin.USER)
        graph = Graph(
            nodes=graph.nodes, links=tuple(sorted((*graph.links, extra), key=lambda lk: lk.key))
        )
        text = render_vault(records, graph, resolver)["Projects/orbital.md"].decode()
        assert (
            "[[Facts/Gotcha/Staging runs Postgres 16 - with pgvector (5e0c1b9a)"
            "|Staging runs Postgres 16 ¦ with pgvector]]" in text
        )

    def test_relations_in_words(self, vault: dict[str, bytes]) -> None:
        """in_project → in project, same_day → same day, part_of → part of."""
        text = note(vault, "Episodes/")
        assert "- in project → [[Projects/orbital|orbital]]" in text
        assert "- same day → [[Facts/" in text
        assert "- part of → [[Contexts/handbook/handbook|handbook]]" in note(
            vault, "Contexts/handbook/guide/setup"
        )


class TestWikilinksInText:
    def test_fact_rewrites(self, vault: dict[str, bytes]) -> None:
        """Resolved targets point at exact paths with the written text as label; the rest stays."""
        text = note(vault, "Facts/architecture")
        assert (
            "See [[Projects/orbital|orbital]], [[Projects/orbital#Setup|the setup]], "
            "[[missing note]], [[grpc]] and `[[in code]]`." in text
        )

    def test_document_rewrites_outside_code(self, vault: dict[str, bytes]) -> None:
        """Markdown documents: links rewritten, fenced code untouched, unresolved kept."""
        text = note(vault, "Contexts/handbook/guide/setup")
        assert (
            "See [[Contexts/handbook/guide/gateway|gateway]], [[Projects/orbital|Orbital]]"
            " and [[nowhere]]." in text
        )
        assert "```\n[[in fence]]\n```" in text

    def test_journal_and_topic(self, vault: dict[str, bytes]) -> None:
        """Journal and topic texts are rewritten too."""
        assert "see [[Topics/telemetry security|telemetry security]]." in note(
            vault, "Journal/Daily"
        )
        assert "[[Contexts/handbook/guide/gateway|Ingest gateway]]" in note(
            vault, "Topics/telemetry"
        )

    def test_heading_embed_block_and_table(self) -> None:
        """#heading, ^block, embeds (no label added) and table-escaped pipes are kept."""
        records, graph, resolver = sample()
        content = (
            "[[orbital#Key files]] ![[orbital]] [[orbital#^abc-1]] | [[orbital\\|cell]] |"
            " [[#Local heading]] [[Orbital|Shown]]"
        )
        facts = (replace(records.facts[0], content=content), records.facts[1])
        text = render_vault(replace(records, facts=facts), graph, resolver)
        body = text[
            "Facts/architecture/Orbital streams telemetry over gRPC with mTLS (ab37259d).md"
        ].decode()
        assert (
            "[[Projects/orbital#Key files|orbital]] ![[Projects/orbital]] "
            "[[Projects/orbital#^abc-1|orbital]] | [[Projects/orbital\\|cell]] | "
            "[[#Local heading]] [[Projects/orbital|Shown]]" in body
        )


class TestPrivacy:
    def test_private_fields_and_name(self, vault: dict[str, bytes]) -> None:
        """Private values show the private marker; the private name appears nowhere."""
        text = vault["Profile/user.md"].decode()
        assert f"- **name:** {PRIVATE}" in text
        assert f"- **company:** {PRIVATE}" in text
        assert "- **role:** SRE" in text
        assert "- **skills:** go, terraform" in text
        assert "  - os: linux" in text
        assert "# user\n" in text
        for data in vault.values():
            assert b"Ana" not in data
            assert b"Acme" not in data

    def test_home_lists_user(self, vault: dict[str, bytes]) -> None:
        """Home links the profile as user."""
        assert "- [[Profile/user|user]]" in vault["Home.md"].decode()

    def test_secrets_masked(self, vault: dict[str, bytes]) -> None:
        """Journal notes and documents (Markdown and code) have their secrets masked."""
        daily = note(vault, "Journal/Daily")
        assert f"DB password: {MASK}\nand token {MASK}" in daily
        assert f"Token: {MASK}" in note(vault, "Contexts/handbook/guide/gateway")
        assert f"export PASSWORD={MASK}" in note(vault, "Contexts/handbook/scripts/run.sh")
        for data in vault.values():
            assert GITHUB_PAT.encode() not in data
            assert b"hunter2" not in data

    def test_session_has_no_transcript(self, vault: dict[str, bytes]) -> None:
        """A session note is its title, its name and its links."""
        meta, body = parse_note(vault["Sessions/orbital-mtls-rollout.md"])
        assert meta["modified"] == "2026-10-24T12:00:00Z"
        assert body.split("\n## Links")[0].rstrip() == (
            "# mTLS rollout for orbital\n\nSaved conversation `orbital-mtls-rollout`."
        )


class TestDocuments:
    def test_source_line_and_front_matter_as_code(self, vault: dict[str, bytes]) -> None:
        """The > Source line, then the document's own front matter as a yaml block."""
        text = note(vault, "Contexts/handbook/guide/setup")
        assert (
            "\n> Source: handbook :: docs/guide/setup.md\n\n"
            "```yaml\ntitle: Getting set up\n```\n\n# Setup\n" in text
        )

    def test_code_in_a_longer_fence(self, vault: dict[str, bytes]) -> None:
        """Non-Markdown content is fenced longer than any backtick run and never rewritten."""
        text = note(vault, "Contexts/handbook/scripts/run.sh")
        assert "`````sh\n#!/bin/sh\necho '````' [[not rewritten]]\n" in text
        assert text.count("`````") == 2

    def test_windows_paths(self, vault: dict[str, bytes]) -> None:
        """Backslash paths become folders relative to the shared root; .go gets .md appended."""
        text = vault["Contexts/Handbook (e4d2a1f0)/src/main.go.md"].decode()
        assert "> Source: Handbook :: C:\\proj\\src\\main.go" in text
        assert "```go\npackage main\n```" in text

    def test_folder_note_lists_documents(self, vault: dict[str, bytes]) -> None:
        """The context's folder note links every document note, by path."""
        text = vault["Contexts/handbook/handbook.md"].decode()
        section = text.split("## Documents\n\n")[1].split("\n\n")[0]
        assert section.splitlines() == [
            "- [[Contexts/handbook/guide/gateway|Ingest gateway]]",
            "- [[Contexts/handbook/guide/setup|Getting set up]]",
            "- [[Contexts/handbook/handbook (a198cccb)|Handbook]]",
            "- [[Contexts/handbook/scripts/run.sh|run.sh]]",
        ]

    def test_cap_one_mebibyte(self) -> None:
        """Content past 1 MiB is cut on a character boundary, a fence closed, a notice added."""
        records, graph, resolver = sample()
        big = "# Big\n\n```\n" + ("é" * 99 + "\n") * 6000  # ~1.2 MB inside an unclosed fence
        kb = records.contexts[0]
        docs = (replace(kb.documents[0], content=big), *kb.documents[1:])
        records = replace(records, contexts=(replace(kb, documents=docs), records.contexts[1]))
        text = render_vault(records, graph, resolver)["Contexts/handbook/guide/setup.md"].decode()
        body = text.split("> Source: handbook :: docs/guide/setup.md\n\n")[1]
        content = body.split("\n```\n\n> [!note] Truncated\n")[0]
        assert len(content.encode()) <= MAX_BYTES
        assert content.endswith("é" * 99)
        assert f"> This document has {len(big.encode())} bytes" in text


class TestHome:
    def test_map_of_content(self, vault: dict[str, bytes]) -> None:
        """The index card, then every listed kind; journal newest first by period."""
        text = vault["Home.md"].decode()
        assert "\n\nKnowledge graph: 34 notes, 36 links (profile 1, project 1, topic 3," in text
        headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
        assert headings == [
            "Profile",
            "Projects",
            "Topics",
            "Contexts",
            "Skills",
            "Board",
            "Journal",
            "Sessions",
        ]
        journal = text.split("## Journal\n\n")[1].split("\n\n")[0].splitlines()
        assert journal == [
            "- [[Journal/Daily/2026-10-24|2026-10-24]]",
            "- [[Journal/Weekly/2026-W43|2026-W43]]",
            "- [[Journal/Monthly/2026-10|2026-10]]",
        ]
        assert "Facts/" not in text and "Episodes/" not in text


class TestKeys:
    def keys(self, records: Records, graph: Graph, resolver: Any) -> dict[str, str]:
        specs = build_note_specs(records, graph, resolver, make_environment())
        return {spec.path: spec.key for spec in specs}

    def test_target_title_change_changes_linking_notes_only(self) -> None:
        """Renaming a project re-keys the notes that link to it, not unrelated ones."""
        records, graph, resolver = sample()
        before = self.keys(records, graph, resolver)
        nodes = tuple(
            replace(n, title="Orbital!") if n.id == "project:orbital" else n for n in graph.nodes
        )
        after = self.keys(records, Graph(nodes=nodes, links=graph.links), resolver)
        changed = {p for p in before if before[p] != after.get(p)}
        assert "Board/doing/Rotate TLS certs (card-4).md" in changed
        assert "Projects/orbital.md" in changed
        assert "Home.md" in changed
        assert "Skills/pg-tuning.md" not in changed
        assert "Topics/Auth.md" not in changed

    def test_document_content_changes_its_key(self) -> None:
        """A document's content is part of its key (hashed, not parsed)."""
        records, graph, resolver = sample()
        before = self.keys(records, graph, resolver)
        kb = records.contexts[0]
        docs = (kb.documents[0], replace(kb.documents[1], content="changed"), *kb.documents[2:])
        records = replace(records, contexts=(replace(kb, documents=docs), records.contexts[1]))
        after = self.keys(records, graph, resolver)
        assert {p for p in before if before[p] != after[p]} == {
            "Contexts/handbook/guide/gateway.md"
        }

    def test_resolution_of_text_links_is_in_the_key(self) -> None:
        """A wikilink in a fact that starts resolving elsewhere re-keys the fact."""
        records, graph, resolver = sample()
        before = self.keys(records, graph, resolver)
        resolver.names[normalize_name("missing note")] = "skill:pg-tuning"
        after = self.keys(records, graph, resolver)
        assert {p for p in before if before[p] != after[p]} == {
            "Facts/architecture/Orbital streams telemetry over gRPC with mTLS (ab37259d).md"
        }

    def test_building_specs_renders_nothing(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Templates run only when a spec's render() is called."""
        calls: list[str] = []
        original = render_module._render

        def counting(*args: Any) -> bytes:
            calls.append(args[3])
            return original(*args)

        monkeypatch.setattr(render_module, "_render", counting)
        specs = build_note_specs(*sample(), make_environment())
        assert calls == []
        specs[0].render()
        assert calls == [specs[0].path]

    def test_keys_are_cheaper_than_rendering(self) -> None:
        """Building specs for 2,000 facts costs a fraction of rendering them (best of 3)."""
        records, graph, resolver = sample()
        facts = tuple(
            Fact(
                id=f"{i:024x}",
                content=f"Fact {i} about [[orbital]] and Postgres.",
                category="pattern",
            )
            for i in range(2000)
        )
        nodes = (
            *graph.nodes,
            *(Node(id=f"fact:{f.id}", kind=Kind.FACT, title=f.content) for f in facts),
        )
        extra = [
            link(f"fact:{f.id}", "project:orbital", "links_to", Origin.WIKILINK) for f in facts
        ]
        big = Graph(
            nodes=tuple(sorted(nodes, key=lambda n: n.id)),
            links=tuple(sorted((*graph.links, *extra), key=lambda lk: lk.key)),
        )
        records = replace(records, facts=records.facts + facts)
        env = make_environment()
        resolver = StubResolver(big)
        keyed = rendered = float("inf")
        for _ in range(3):  # CPU time, best of 3: other processes do not skew it
            started = time.process_time()
            specs = build_note_specs(records, big, resolver, env)
            keyed = min(keyed, time.process_time() - started)
            started = time.process_time()
            for spec in specs:
                spec.render()
            rendered = min(rendered, time.process_time() - started)
        assert len(specs) == 2023
        assert keyed < rendered / 2


class TestTemplates:
    def test_override_wins_and_extends_builtin(self, tmp_path: Path) -> None:
        """A user fact template can extend the built-in one; other kinds fall back."""
        (tmp_path / "fact.md.j2").write_text(
            '{% extends "!builtin/fact.md.j2" %}\n'
            "{% block body %}\n\n> Custom fact, {{ front_matter | length }} fields.\n"
            "{{ super() }}{% endblock %}\n"
        )
        records, graph, resolver = sample()
        vault = render_vault(records, graph, resolver, tmp_path)
        fact = note(vault, "Facts/architecture")
        assert "> Custom fact, 10 fields.\n\nOrbital streams" in fact
        assert (
            vault["Projects/orbital.md"]
            == render_vault(records, graph, resolver)["Projects/orbital.md"]
        )

    def test_override_changes_keys_of_its_kind_only(self, tmp_path: Path) -> None:
        """The template fingerprint enters the key of the notes that use it."""
        (tmp_path / "skill.md.j2").write_text('{% extends "!builtin/skill.md.j2" %}\n')
        builtin = make_environment()
        custom = make_environment(tmp_path)
        assert template_fingerprint(builtin, "skill.md.j2") != template_fingerprint(
            custom, "skill.md.j2"
        )
        assert template_fingerprint(builtin, "fact.md.j2") == template_fingerprint(
            custom, "fact.md.j2"
        )

    def test_shared_macro_override_reaches_every_kind(self, tmp_path: Path) -> None:
        """Overriding _macros.j2 changes every note template's fingerprint."""
        source = (Path(__file__).parent.parent / "templates" / "_macros.j2").read_text()
        (tmp_path / "_macros.j2").write_text(source.replace("No links yet.", "Nothing yet."))
        assert template_fingerprint(make_environment(), "card.md.j2") != template_fingerprint(
            make_environment(tmp_path), "card.md.j2"
        )

    def test_render_error_names_template_and_note(self, tmp_path: Path) -> None:
        """An undefined variable fails at render time naming template and note; keys build."""
        (tmp_path / "skill.md.j2").write_text("{{ nonexistent }}\n")
        records, graph, resolver = sample()
        specs = build_note_specs(records, graph, resolver, make_environment(tmp_path))
        (spec,) = [s for s in specs if s.node_id == "skill:pg-tuning"]
        with pytest.raises(
            TemplateError,
            match=r"'skill.md.j2' failed for note Skills/pg-tuning.md \(skill:pg-tuning\)",
        ):
            spec.render()

    def test_syntax_error_names_template(self, tmp_path: Path) -> None:
        """A template that does not parse is reported when the specs are built."""
        (tmp_path / "topic.md.j2").write_text("{% if %}\n")
        records, graph, resolver = sample()
        with pytest.raises(TemplateError, match=r"topic\.md\.j2"):
            build_note_specs(records, graph, resolver, make_environment(tmp_path))

    def test_missing_override_dir(self, tmp_path: Path) -> None:
        """--templates must name a folder."""
        with pytest.raises(ConfigError):
            make_environment(tmp_path / "nope")

    def test_builtin_templates_listed(self) -> None:
        """The built-in templates come from the package (importlib.resources)."""
        names = make_environment().list_templates()
        for kind in ("fact", "topic", "project", "profile", "episode", "journal", "session"):
            assert f"{kind}.md.j2" in names
        assert "_macros.j2" in names and "!builtin/home.md.j2" in names

"""A small hand-made vault with one note (or more) of every kind, and helpers to render any
records + graph + resolver into ``{path: bytes}`` (the render and snapshot tests share them)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import frontmatter
from frontmatter.default_handlers import YAMLHandler
from ruamel.yaml import YAML
from vaultsync.core.model import (
    KIND_PRIORITY,
    Card,
    CardMove,
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
from vaultsync.core.scrub import scrub
from vaultsync.links.names import normalize_name
from vaultsync.render.specs import build_note_specs, make_environment

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
    """Every note of the vault: ``{path: bytes}``, in path order.

    The records are masked first (``core.scrub``), as ``graph.load`` does for every sync.
    """
    specs = build_note_specs(scrub(records), graph, resolver, make_environment(templates))
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
                priority=2,
                metadata=(("jira", "ORB"), ("wiki", "https://wiki.example.org/orbital")),
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
                ProfileField(
                    key="milestones",
                    value=(("2026-01-02", "Joined orbital"), ("0001-01-01T00:00:00Z", "Got a cat")),
                ),
                ProfileField(
                    key="preferences",
                    value=(("bank_account", ""), ("editor", "vim")),
                    private_entries=("bank_account",),
                ),
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
        sessions=(Session(name="orbital-mtls-rollout", title="mTLS rollout for orbital"),),
        skills=(
            Skill(
                name="pg-tuning",
                description="Tune Postgres for write-heavy workloads.",
                triggers=("postgres", "vacuum"),
                tags=("database", "Write Path"),
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
                history=(
                    CardMove(from_column="backlog", to_column="doing", by="ana", at=T),
                    CardMove(from_column="doing", to_column="review"),
                ),
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
                metadata=(
                    ("kb.commit", "9f3c2e1"),
                    ("kb.repo_url", "https://github.com/acme/orbital-docs"),
                ),
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

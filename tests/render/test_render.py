"""Stage 4, render: notes, front matter, links, wikilinks, privacy, secrets, keys, templates.

The vault under test is ``samples.sample()``, rendered once per module.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn
from zoneinfo import ZoneInfo

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from samples import (
    F1,
    F2,
    GITHUB_PAT,
    StubResolver,
    link,
    parse_note,
    render_vault,
    sample,
)
from vaultsync.core.errors import ConfigError, TemplateError
from vaultsync.core.model import (
    Fact,
    Graph,
    Kind,
    Node,
    Origin,
    Records,
    Session,
)
from vaultsync.core.redact import mask
from vaultsync.core.scrub import scrub
from vaultsync.core.settings import Caps
from vaultsync.extract.workspace import saved_time
from vaultsync.graph.build import build_graph
from vaultsync.links.names import normalize_name
from vaultsync.render import specs as render_module
from vaultsync.render.specs import build_note_specs, make_environment, template_fingerprint
from vaultsync.renderers import RENDERERS, home
from vaultsync.renderers.base import PRIVATE, obsidian_tag
from vaultsync.renderers.document import MAX_BYTES


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
        """The seed's fact fields; confidence a number, the project a link; the title as alias."""
        meta, _ = parse_note(
            vault["Facts/architecture/Orbital streams telemetry over gRPC with mTLS (ab37259d).md"]
        )
        assert meta == {
            "vaultsync_id": f"fact:{F1}",
            "kind": "fact",
            "aliases": ["Orbital streams telemetry over gRPC with mTLS."],
            "tags": ["architecture", "grpc", "security"],
            "category": "architecture",
            "confidence": 0.7,
            "provenance": "extraction",
            "project": "[[Projects/orbital]]",
            "source_project": "/repo/orbital",
            "created": "2026-10-24T12:00:00",
            "last_accessed": "2026-10-24T12:00:00",
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
            ("Topics/telemetry", {"mentions": 7, "first_seen": "2026-09-24T12:00:00"}),
            ("Projects/orbital", {"path": "/repo/orbital", "technologies": ["go", "postgres"]}),
            (
                "Episodes/",
                {
                    "date": "2026-10-24",
                    "time": "2026-10-24T21:30:00",
                    "project": "[[Projects/orbital]]",
                    "project_path": "/repo/orbital",
                },
            ),
            ("Board/", {"column": "doing", "assignee": "ops", "updated": "2026-10-24T12:00:00"}),
            ("Contexts/handbook/handbook.md", {"mode": "knowledge", "files": 4}),
            (
                "Contexts/handbook/guide/setup",
                {
                    "source": "docs/guide/setup.md",
                    "context": "[[Contexts/handbook/handbook]]",
                    "context_name": "handbook",
                },
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
        shown = scrub(records).facts[0]  # masked, control characters dropped, as a sync does
        expected = {
            "category": shown.category,
            "provenance": shown.provenance,
            "source_project": shown.source_project,
        }
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
            "- links to → [[Contexts/handbook/guide/gateway|Ingest gateway]]",
        ]

    def test_topic_lists_a_related_fact_once(self, vault: dict[str, bytes]) -> None:
        """A related fact is under "Related facts" and not again in ## Links."""
        text = note(vault, "Topics/telemetry security")
        fact = "[[Facts/architecture/Orbital streams telemetry over gRPC with mTLS (ab37259d)|"
        assert text.count(fact) == 1
        assert text.index(fact) < text.index("## Links")

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

    def test_private_map_entry_is_shown_hidden(self, vault: dict[str, bytes]) -> None:
        """preferences.bank_account is listed as private, not dropped; editor shows its value."""
        text = vault["Profile/user.md"].decode()
        assert f"  - bank_account: {PRIVATE}\n  - editor: vim\n" in text

    def test_home_lists_user(self, vault: dict[str, bytes]) -> None:
        """Home links the profile as user."""
        assert "- [[Profile/user|user]]" in vault["Home.md"].decode()

    def test_secrets_masked(self, vault: dict[str, bytes]) -> None:
        """Journal notes and documents (Markdown and code) have their secrets masked."""
        daily = note(vault, "Journal/Daily")
        assert f"DB password: {mask('hunter2')}\nand token {mask(GITHUB_PAT)}" in daily
        assert f"Token: {mask(GITHUB_PAT)}" in note(vault, "Contexts/handbook/guide/gateway")
        script = note(vault, "Contexts/handbook/scripts/run.sh")
        assert f"export PASSWORD={mask('swordfish')}" in script
        for data in vault.values():
            assert GITHUB_PAT.encode() not in data
            assert b"hunter2" not in data

    def test_session_has_no_transcript(self, vault: dict[str, bytes]) -> None:
        """A session note is its title, its name and its links."""
        meta, body = parse_note(vault["Sessions/orbital-mtls-rollout.md"])
        assert "saved" not in meta and "modified" not in meta  # a named session has no time
        assert body.split("\n## Links")[0].rstrip() == (
            "# mTLS rollout for orbital\n\nSaved conversation `orbital-mtls-rollout`."
        )


class TestStoreFieldsShown:
    """Fields ChatCLI shows that the vault shows too (#13 §3)."""

    def test_project_priority_is_a_property(self, vault: dict[str, bytes]) -> None:
        """A set priority is a number property and a line of the body."""
        meta, body = parse_note(vault["Projects/orbital.md"])
        assert meta["priority"] == 2
        assert "- **Priority:** 2\n" in body

    def test_project_priority_zero_is_no_priority(self) -> None:
        """ChatCLI writes 0 for a project nobody prioritised: no property, no line."""
        records, graph, resolver = sample()
        projects = tuple(replace(p, priority=0) for p in records.projects)
        meta, body = parse_note(
            render_vault(replace(records, projects=projects), graph, resolver)[
                "Projects/orbital.md"
            ]
        )
        assert "priority" not in meta and "Priority" not in body

    def test_project_metadata_listed(self, vault: dict[str, bytes]) -> None:
        """The metadata map is listed by key; a web address stays clickable, text is code."""
        _, body = parse_note(vault["Projects/orbital.md"])
        assert (
            "## Metadata\n\n- `jira`: `ORB`\n- `wiki`: https://wiki.example.org/orbital\n" in body
        )

    def test_metadata_value_never_links(self) -> None:
        """A metadata value holding [[…]] is shown as code, so it links nothing."""
        records, graph, resolver = sample()
        projects = tuple(replace(p, metadata=(("see", "[[Auth]]"),)) for p in records.projects)
        _, body = parse_note(
            render_vault(replace(records, projects=projects), graph, resolver)[
                "Projects/orbital.md"
            ]
        )
        assert "- `see`: `[[Auth]]`\n" in body

    def test_context_repository_and_commit(self, vault: dict[str, bytes]) -> None:
        """kb.repo_url and kb.commit are the context's repo_url and commit properties."""
        meta, _ = parse_note(vault["Contexts/handbook/handbook.md"])
        assert (meta["repo_url"], meta["commit"]) == (
            "https://github.com/acme/orbital-docs",
            "9f3c2e1",
        )

    def test_context_metadata_listed(self, vault: dict[str, bytes]) -> None:
        """Every metadata entry of a context is listed in its folder note."""
        _, body = parse_note(vault["Contexts/handbook/handbook.md"])
        assert "- `kb.commit`: `9f3c2e1`\n" in body

    def test_skill_tags_join_the_note_tags(self, vault: dict[str, bytes]) -> None:
        """A skill's own tags are Obsidian tags of its note, made valid."""
        meta, _ = parse_note(vault["Skills/pg-tuning.md"])
        assert {"database", "write-path"} <= set(meta["tags"])

    def test_skill_category_and_tags_in_the_body(self, vault: dict[str, bytes]) -> None:
        """The body says the skill's category and tags as ChatCLI's list does."""
        _, body = parse_note(vault["Skills/pg-tuning.md"])
        assert "- **Category:** database\n- **Tags:** `database`, `Write Path`\n" in body

    def test_card_history_in_order(self, vault: dict[str, bytes]) -> None:
        """Column moves are listed oldest first with when and who."""
        _, body = parse_note(vault["Board/doing/Rotate TLS certs (card-4).md"])
        assert "## History\n\n- 2026-10-24 12:00 · backlog → doing · by ana\n" in body

    def test_move_without_time_has_no_date(self, vault: dict[str, bytes]) -> None:
        """A move at Go's zero time shows no date at all."""
        _, body = parse_note(vault["Board/doing/Rotate TLS certs (card-4).md"])
        assert "\n- doing → review\n" in body
        assert "0001" not in body

    def test_milestone_at_zero_time_has_no_date(self, vault: dict[str, bytes]) -> None:
        """A milestone dated with Go's zero time is listed by its text alone."""
        text = vault["Profile/user.md"].decode()
        assert "\n  - Got a cat\n" in text and "0001-01-01" not in text


class TestDocuments:
    def test_source_line_and_front_matter_as_code(self, vault: dict[str, bytes]) -> None:
        """The document's own H1 as the heading, the > Source line, its front matter as yaml."""
        text = note(vault, "Contexts/handbook/guide/setup")
        assert (
            "\n# Setup\n\n> Source: handbook :: docs/guide/setup.md\n\n"
            "```yaml\ntitle: Getting set up\n```\n\nSee " in text
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

    def test_keys_of_thousands_of_notes_render_nothing(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """2,023 keys build, unchanged, with every note context and template made to fail."""
        records, graph, _ = sample()
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
        expected = self.keys(records, big, StubResolver(big))

        # What rendering costs, refused: enough notes that half the keys are built in the
        # forked helper, which inherits the refusals (a failure there is redone and raised).
        class Rendered(Exception):
            pass

        def refuse(*_args: object, **_kwargs: object) -> NoReturn:
            raise Rendered

        refusing = {kind: replace(r, context=refuse) for kind, r in RENDERERS.items()}
        monkeypatch.setattr(render_module, "RENDERERS", refusing)
        monkeypatch.setattr(home, "context", refuse)
        monkeypatch.setattr(jinja2.Template, "render", refuse)
        specs = build_note_specs(records, big, StubResolver(big), env)
        assert len(specs) == 2023
        assert {spec.path: spec.key for spec in specs} == expected
        with pytest.raises(Rendered):
            specs[0].render()


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
        assert "> Custom fact, 11 fields.\n\nOrbital streams" in fact
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
        source = (Path(__file__).parents[2] / "templates" / "_macros.j2").read_text()
        (tmp_path / "_macros.j2").write_text(source.replace("No outgoing links;", "Nothing;"))
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


class TestTimeZone:
    """Every rendered time and date is in render.timezone, never the process's zone."""

    def test_times_in_the_zone(self) -> None:
        """Front-matter times, card history and an episode's path use the zone given."""
        records, graph, resolver = sample()
        specs = build_note_specs(
            records, graph, resolver, make_environment(), zone=ZoneInfo("Pacific/Kiritimati")
        )
        notes = {spec.path: spec.render() for spec in specs}
        (episode,) = [p for p in notes if p.startswith("Episodes/")]
        assert episode.startswith("Episodes/2026/2026-10-25 ")  # 21:30Z is 11:30 next day there
        assert parse_note(notes[episode])[0]["date"] == "2026-10-25"
        assert parse_note(notes[episode])[0]["time"] == "2026-10-25T11:30:00"
        _, body = parse_note(notes["Board/doing/Rotate TLS certs (card-4).md"])
        assert "- 2026-10-25 02:00 · backlog → doing · by ana\n" in body

    def test_zone_is_part_of_every_key(self) -> None:
        """A note's key changes with the zone (Home shows no time: its paths are its key)."""
        records, graph, resolver = sample()
        env = make_environment()
        utc = build_note_specs(records, graph, resolver, env)
        lisbon = build_note_specs(records, graph, resolver, env, zone=ZoneInfo("Europe/Lisbon"))
        assert [s.path for s in utc] == [s.path for s in lisbon]
        changed = {a.path for a, b in zip(utc, lisbon, strict=True) if a.key != b.key}
        assert changed == {s.path for s in utc} - {"Home.md"}

    @pytest.mark.parametrize(
        ("zone", "shown"),
        [("UTC", "2026-10-19T15:42:10"), ("Europe/Lisbon", "2026-10-19T15:42:10")],
    )
    def test_autosave_saved_is_its_name_read_in_the_zone(self, zone: str, shown: str) -> None:
        """An autosave's saved time is the wall clock in its name, in render.timezone."""
        name = "autosave-20261019-154210"
        records = Records(sessions=(Session(name=name, saved=saved_time(name)),))
        built = build_graph(records, Caps(timezone=zone))
        specs = build_note_specs(
            records, built.graph, built.resolver, make_environment(), zone=ZoneInfo(zone)
        )
        (spec,) = [s for s in specs if s.path == f"Sessions/{name}.md"]
        assert parse_note(spec.render())[0]["saved"] == shown

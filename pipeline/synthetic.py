"""A seed and a size → a synthetic ChatCLI state directory with a real store's proportions; edge.

At 2,800 notes the store holds about 2,000 documents in a few knowledge contexts and yields
about 7,900 links, as the reference store of the performance figures.  Every kind of store is
present, texts carry wikilinks of every form, markdown links between documents, mentions of
project and topic names, tags and journal notes.  The same seed and size always write the same
bytes, so benchmark runs compare like with like.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WORDS = [
    "gateway",
    "cluster",
    "retry",
    "backoff",
    "latency",
    "budget",
    "schema",
    "migration",
    "index",
    "replica",
    "shard",
    "cache",
    "token",
    "rotation",
    "certificate",
    "deploy",
    "rollout",
    "canary",
    "alert",
    "runbook",
    "incident",
    "postmortem",
    "queue",
    "consumer",
    "producer",
    "batch",
    "stream",
    "partition",
    "offset",
    "lease",
    "quorum",
    "snapshot",
    "compaction",
    "vacuum",
    "tenant",
    "billing",
    "invoice",
    "ledger",
    "reconcile",
    "export",
    "import",
    "pipeline",
    "worker",
    "scheduler",
    "cron",
    "sampling",
    "exporter",
    "collector",
    "trace",
    "span",
    "metric",
    "histogram",
    "dashboard",
    "panel",
    "threshold",
    "quota",
]
CATEGORIES = ("architecture", "pattern", "preference", "gotcha", "project", "personal", "general")
COLUMNS = ("backlog", "doing", "review", "blocked", "done")
EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Proportions:
    """How many records of each kind a store of ``notes`` notes holds."""

    facts: int
    topics: int
    projects: int
    episodes: int
    days: int
    sessions: int
    skills: int
    cards: int
    contexts: int
    documents: int

    @classmethod
    def for_size(cls, notes: int) -> Proportions:
        """The reference mix: about 71 % documents, the rest spread over the memory stores."""

        def share(fraction: float, least: int = 1) -> int:
            return max(least, round(notes * fraction))

        return cls(
            facts=share(0.135), topics=share(0.014), projects=share(0.0036, 2),
            episodes=share(0.071), days=share(0.018), sessions=share(0.014), skills=share(0.007),
            cards=share(0.014), contexts=max(1, min(64, notes // 900)), documents=share(0.714),
        )  # fmt: skip


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _dump(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")


class _Writer:
    def __init__(self, root: Path, notes: int, seed: int) -> None:
        self.root = root
        self.rng = random.Random(seed)  # noqa: S311 - benchmark text, not secrets
        self.size = Proportions.for_size(notes)
        self.projects = [f"project{i:03d}" for i in range(self.size.projects)]
        self.topics = [
            f"{self.rng.choice(WORDS)} {self.rng.choice(WORDS)} {i}"
            for i in range(self.size.topics)
        ]

    def sentence(self, words: int = 12) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(words)).capitalize()

    def prose(self) -> str:
        """A sentence with a mention, and sometimes a wikilink in one of its forms."""
        parts = [self.sentence(), f"Relates to {self.rng.choice(self.projects)}."]
        roll = self.rng.random()
        topic = self.rng.choice(self.topics)
        if roll < 0.25:
            parts.append(f"See [[{topic}]].")
        elif roll < 0.35:
            parts.append(
                f"See [[{topic}|that topic]] and [[{self.rng.choice(self.projects)}#Status]]."
            )
        elif roll < 0.45:
            parts.append(f"Mentioned under {topic}.")
        return " ".join(parts)

    def write(self) -> None:
        memory = self.root / "memory"
        size = self.size
        facts = []
        for i in range(size.facts):
            content = f"{self.prose()} ({i})"
            project = self.rng.choice(self.projects)
            facts.append({
                "id": hashlib.sha256(content.strip().lower().encode()).hexdigest()[:24],
                "content": content, "category": CATEGORIES[i % len(CATEGORIES)],
                "tags": self.rng.sample(WORDS, 2),
                "created_at": _stamp(EPOCH + timedelta(hours=7 * i)),
                "last_accessed": _stamp(EPOCH + timedelta(hours=7 * i + 3)), "access_count": i % 9,
                "score": 1.0, "source_project": f"/src/{project}", "confidence": 0.7,
                "provenance": "extraction",
            })  # fmt: skip
        _dump(memory / "memory_index.json", facts)
        _dump(memory / "topics.json", [
            {"name": name, "mentions": 3, "summary": self.prose(),
             "first_seen": _stamp(EPOCH), "last_seen": _stamp(EPOCH + timedelta(days=30)),
             "related_fact_ids": [f["id"] for f in self.rng.sample(facts, min(3, len(facts)))]}
            for name in self.topics
        ])  # fmt: skip
        _dump(memory / "projects.json", [
            {"name": name, "path": f"/src/{name}", "description": self.sentence(),
             "status": "active", "technologies": self.rng.sample(WORDS, 3),
             "last_active": _stamp(EPOCH + timedelta(days=40)), "priority": 1}
            for name in self.projects
        ])  # fmt: skip
        _dump(memory / "user_profile.json", {
            "name": "Bench", "role": "SRE", "skills": ["go", "python"], "goals": ["CKA"],
            "last_updated": _stamp(EPOCH),
        })  # fmt: skip
        _dump(memory / "episodes.json", [
            {"id": f"ep_{i:024x}", "date": _stamp(EPOCH + timedelta(hours=11 * i)),
             "project": f"/src/{self.rng.choice(self.projects)}", "summary": self.prose(),
             "outcome": "merged", "source": "extraction",
             "created_at": _stamp(EPOCH + timedelta(hours=11 * i + 1))}
            for i in range(size.episodes)
        ])  # fmt: skip
        for day in range(size.days):
            moment = EPOCH + timedelta(days=day)
            path = memory / moment.strftime("%Y%m") / moment.strftime("%Y%m%d.md")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"\n## 09:30\n\n{self.prose()}\n\n## 17:10\n\n{self.prose()}\n")
        self._workspace()
        self._contexts()

    def _workspace(self) -> None:
        size = self.size
        for i in range(size.sessions):
            name = f"{self.rng.choice(self.projects)}-session-{i}"
            _dump(self.root / "sessions" / f"{name}.json",
                  {"version": 2, "title": self.sentence(6), "chat_history": []})  # fmt: skip
        for i in range(size.skills):
            folder = self.root / "skills" / f"skill-{i}"
            folder.mkdir(parents=True, exist_ok=True)
            trigger = self.rng.choice(self.topics)
            (folder / "SKILL.md").write_text(
                f"---\nname: skill-{i}\ndescription: {self.sentence(6)}\n"
                f"triggers: [{json.dumps(trigger)}]\n---\nBody.\n"
            )
        cards = [
            {"id": f"card-{i}", "title": self.sentence(5), "column": COLUMNS[i % 5],
             "description": self.prose(), "assignee": "ops",
             "created_at": _stamp(EPOCH), "updated_at": _stamp(EPOCH + timedelta(days=i))}
            for i in range(size.cards)
        ]  # fmt: skip
        _dump(self.root / "board.json", {"schema_version": 1, "seq": size.cards, "cards": cards})

    def _contexts(self) -> None:
        size = self.size
        per_context = -(-size.documents // size.contexts)
        for c in range(size.contexts):
            count = min(per_context, size.documents - c * per_context)
            paths = [f"docs/section{i % 17}/page{i}.md" for i in range(count)]
            files = []
            for i, path in enumerate(paths):
                # Site-absolute, from the corpus root (the folder the documents share).
                near = paths[(i + 1) % count].removeprefix("docs/")
                far = paths[self.rng.randrange(count)].rsplit("/", 1)[-1][:-3]
                # About 1.5 links a document, as the reference store (7,900 links at 2,800 notes).
                far_link = f" and [[{far}]]" if i % 4 == 0 else ""
                topic_link = f" Also [[{self.rng.choice(self.topics)}]]." if i % 6 == 0 else ""
                body = (
                    f"# Page {c}-{i}\n\n{self.sentence()}\n\n"
                    f"See [next](/{near}){far_link}.{topic_link}\n\n"
                    f"```\n[[not a link]] [x](nowhere.md)\n```\n\n{self.sentence(40)}\n"
                )
                files.append({"Path": path, "Content": body, "Size": len(body), "Type": "Markdown"})
            uid = f"00000000-0000-4000-8000-{c:012d}"
            created = _stamp(EPOCH + timedelta(days=c))
            _dump(self.root / "contexts" / f"{uid}.json", {
                "id": uid, "name": f"corpus-{c}", "description": "synthetic", "files": files,
                "mode": "knowledge", "total_size": sum(f["Size"] for f in files),
                "file_count": count, "created_at": created, "updated_at": created,
                "tags": ["bench"], "metadata": None, "is_chunked": False,
            })  # fmt: skip


def generate_store(root: Path, *, notes: int, seed: int = 1) -> Proportions:
    """Write a synthetic state directory of about ``notes`` notes under ``root``."""
    writer = _Writer(root, notes, seed)
    writer.write()
    return writer.size

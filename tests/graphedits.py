"""Test helper: random edits of the stores' records, to hold incremental builds equal to full ones.

``edits`` draws one edit (an item put or dropped, of any kind); :func:`apply` makes it on a
table of items, :func:`records_of` turns the table into ``Records``.  Few ids, names and days,
so edits collide: titles that capture links, mentions, caps that bind.
"""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st
from vaultsync.core.model import (
    Context,
    Document,
    Episode,
    ExplicitLink,
    Fact,
    JournalNote,
    Project,
    Records,
    Session,
    Skill,
    Topic,
)
from vaultsync.core.settings import Caps
from vaultsync.graph import cache
from vaultsync.graph.patch import PatchState

T0 = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)
DAYS = [T0 + timedelta(days=d, hours=h) for d in range(3) for h in (0, 20)]
FACT_IDS = [c * 24 for c in "abcd"]
NAMES = ["orbital", "Telemetry", "auth flow", "ledger", "handbook", "Guide", "user"]
PATHS = ["", "/src/orbital", "/src/orbital/api", "/src/ledger"]
DOC_PATHS = ["docs/a.md", "docs/b.md", "docs/sub/Guide.md", "notes.txt", "README.md"]
WORDS = [
    *NAMES,
    "plain",
    "words",
    "[[orbital]]",
    "[[Telemetry|tele]]",
    "[[Guide]]",
    "[[handbook]]",
    "[[missing]]",
    "[[sub/Guide]]",
    f"[[fact:{FACT_IDS[0]}]]",
    "`orbital`",
    "[b](b.md)",
    "[guide](sub/Guide.md)",
    "https://x/orbital",
    "\n# ",
]
CAPS = Caps(
    episodes=2,
    sessions=2,
    docs_per_context=2,
    docs_total=3,
    links_per_doc=2,
    mentions_per_note=2,
    same_day_per_daily=2,
)

texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
names = st.sampled_from(NAMES)
days = st.sampled_from(DAYS)
tags = st.lists(st.sampled_from(["go", "Postgres", "ops"]), max_size=2, unique=True).map(tuple)

facts = st.builds(
    lambda fid, content, tags, day, path, newer: Fact(
        id=fid,
        content=content or "x",
        category="general",
        tags=tags,
        created_at=day,
        source_project=path,
        provenance=f"supersedes {newer}" if newer else "",
    ),
    st.sampled_from(FACT_IDS),
    texts,
    tags,
    days,
    st.sampled_from(PATHS),
    st.sampled_from(["", *FACT_IDS]),
)
documents = st.lists(
    st.builds(
        Document,
        source=st.sampled_from(DOC_PATHS),
        content=texts,
        type=st.sampled_from(["Text", "Markdown"]),  # the one field a context's key does not hold
    ),
    max_size=4,
    unique_by=lambda d: d.source,
).map(tuple)
contexts = st.builds(
    Context,
    id=st.sampled_from(["c1", "c2", "c3"]),
    name=names,
    mode=st.sampled_from(["knowledge", "full"]),
    created_at=days,
    tags=tags,
    documents=documents,
)
episodes = st.builds(
    Episode,
    id=st.sampled_from(["e1", "e2", "e3", "e4"]),
    date=days,
    project=st.sampled_from(PATHS),
    summary=texts,
)
ITEMS: dict[str, Any] = {
    "facts": (facts, lambda f: f.id),
    "topics": (
        st.builds(
            Topic,
            name=names,
            summary=texts,
            related_fact_ids=st.lists(st.sampled_from(FACT_IDS), max_size=2).map(tuple),
        ),
        lambda t: t.name,
    ),
    "projects": (
        st.builds(
            Project, name=names, path=st.sampled_from(PATHS), description=texts, technologies=tags
        ),
        lambda p: p.name,
    ),
    "contexts": (contexts, lambda c: c.id),
    "episodes": (episodes, lambda e: e.id),
    "sessions": (
        st.builds(Session, name=st.sampled_from(["s1", "s2", "s3"]), title=names),
        lambda s: s.name,
    ),
    "skills": (
        st.builds(Skill, name=names, description=texts, triggers=tags),
        lambda s: s.name,
    ),
    "journal": (
        st.builds(
            JournalNote,
            period=st.just("daily"),
            label=st.sampled_from(["2026-10-05", "2026-10-06"]),
            text=texts,
            source_path=st.just("m"),
        ),
        lambda n: n.label,
    ),
    "links": (
        st.builds(
            ExplicitLink,
            # drawn from documents too: their entries keep their links' digests only without
            source=st.sampled_from(
                [f"fact:{i}" for i in FACT_IDS] + ["project:orbital", "doc:c1:docs/a.md"]
            ),
            target=st.sampled_from([f"fact:{i}" for i in FACT_IDS] + ["topic:ledger"]),
            rel=st.sampled_from(["related", "depends_on"]),
            note=st.sampled_from(["", "why"]),
        ),
        lambda link: (link.source, link.target, link.rel),
    ),
}
edits = st.one_of(
    *(st.tuples(st.just(kind), st.just("put"), item) for kind, (item, _) in ITEMS.items()),
    st.tuples(st.sampled_from(sorted(ITEMS)), st.just("drop"), st.integers(0, 3)),
)


def apply(items: dict[str, dict[Any, Any]], edit: tuple[str, str, Any]) -> None:
    """Put an item (replacing the one with its key) or drop the n-th one of a kind."""
    kind, action, value = edit
    table = items.setdefault(kind, {})
    if action == "put":
        table[ITEMS[kind][1](value)] = value
    elif table:
        del table[sorted(table)[value % len(table)]]


def records_of(items: dict[str, dict[Any, Any]]) -> Records:
    fields: dict[str, Any] = {k: tuple(v for _, v in sorted(t.items())) for k, t in items.items()}
    return Records(**fields)


def reloaded(state: PatchState | None) -> PatchState | None:
    """The state as the next run reads it: pickled and loaded again."""
    return None if state is None else pickle.loads(cache.pickle_patch_state(state))  # noqa: S301

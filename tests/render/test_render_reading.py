"""Notes people like to read: skill instructions, readable times, a name for an untitled card."""

from __future__ import annotations

from datetime import UTC, datetime

from samples import GITHUB_PAT, parse_note
from vaultsync.core.model import Card, CardMove, Episode, Records, Skill
from vaultsync.core.scrub import scrub
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.render.specs import build_note_specs, make_environment

T = datetime(2026, 10, 15, 8, 0, 30, tzinfo=UTC)


def render(records: Records) -> dict[str, str]:
    """Every note of the vault the (masked) records make: ``{path: text}``."""
    records = scrub(records)
    built = build_graph(records, Caps())
    specs = build_note_specs(records, built.graph, built.resolver, make_environment())
    return {spec.path: spec.render().decode("utf-8") for spec in specs}


def skill_note(instructions: str) -> str:
    """The note of one skill whose file body is ``instructions``."""
    skill = Skill(name="pg-tuning", description="Tune Postgres.", instructions=instructions)
    return render(Records(skills=(skill,)))["Skills/pg-tuning.md"]


def test_skill_note_shows_its_instructions() -> None:
    """The SKILL.md body is the note's "Instructions" section."""
    text = skill_note("When asked about vacuum:\n\n1. Read the table sizes.\n")
    assert "## Instructions\n\nWhen asked about vacuum:\n\n1. Read the table sizes.\n" in text


def test_skill_instructions_are_masked() -> None:
    """A secret in the instructions never reaches the note."""
    text = skill_note(f"Use the token {GITHUB_PAT} to clone.\n")
    assert GITHUB_PAT not in text
    assert "## Instructions" in text


def test_skill_heading_repeating_its_name_is_dropped() -> None:
    """A leading ``# pg-tuning`` is not a second H1: the note has its own."""
    text = skill_note("# pg-tuning\n\nSteps.\n")
    assert text.count("# pg-tuning") == 1
    assert "## Instructions\n\nSteps.\n" in text


def test_card_history_reads_as_a_person_writes_a_time() -> None:
    """A move shows ``2026-10-15 08:00``; ``updated`` stays a typed Date & time property."""
    card = Card(
        id="card-4",
        title="Rotate certs",
        column="doing",
        history=(CardMove(from_column="backlog", to_column="doing", by="ana", at=T),),
        updated_at=T,
    )
    note = render(Records(cards=(card,)))["Board/doing/Rotate certs (card-4).md"]
    meta, body = parse_note(note.encode())
    assert "- 2026-10-15 08:00 · backlog → doing · by ana\n" in body
    assert meta["updated"] == "2026-10-15T08:00:30"


def test_episode_says_when_as_people_read_it() -> None:
    """An episode's body starts with its time, ``2026-10-15 08:00``; ``time`` stays typed."""
    episode = Episode(id="ep_0123456789abcdef01234567", summary="Shipped it.", date=T)
    notes = render(Records(episodes=(episode,)))
    (path,) = [p for p in notes if p.startswith("Episodes/")]
    meta, body = parse_note(notes[path].encode())
    assert "\n*2026-10-15 08:00*\n" in body
    assert meta["time"] == "2026-10-15T08:00:30"


def test_card_without_a_title_is_named_by_its_description() -> None:
    """An untitled card takes its description's first line as its name and heading."""
    card = Card(id="card-12", title="", column="backlog", description="Fix the login bug\nmore")
    notes = render(Records(cards=(card,)))
    text = notes["Board/backlog/Fix the login bug (card-12).md"]
    assert "\n# [backlog] Fix the login bug\n" in text


def test_card_without_title_or_description_is_untitled() -> None:
    """With nothing to name it, a card is "Untitled card", never a bare column."""
    notes = render(Records(cards=(Card(id="card-12", title="", column="backlog"),)))
    text = notes["Board/backlog/Untitled card (card-12).md"]
    assert "\n# [backlog] Untitled card\n" in text


def test_skill_headings_nest_under_instructions() -> None:
    """The body's own H1 becomes an H3 under ## Instructions: the note keeps one H1."""
    text = skill_note("# Debugging pods\n\n## Steps\n\n```sh\n# a comment\n```\n")
    assert (
        "## Instructions\n\n### Debugging pods\n\n#### Steps\n\n```sh\n# a comment\n```\n" in text
    )

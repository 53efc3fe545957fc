"""Skill node → ``skill.md.j2`` context: description, category, tags, triggers, instructions; pure.

The ``tags`` of a skill's front matter join the note's Obsidian tags and, with its ``category``,
a line of the body, as ChatCLI's skill list shows them.  The instructions are the body of the
skill file (masked at the one boundary, like every text), wikilinks rewritten; a leading H1
that only repeats the skill's name (``# Incident comms`` for ``incident-comms``) is dropped,
since the note has its own, and the others nest under ``## Instructions`` (``#`` → ``###``).
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Node, Skill
from vaultsync.links.names import normalize_name
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    leading_h1,
    nest_headings,
    one_line,
    prepare_text,
)

TEMPLATE = "skill.md.j2"


class SkillContext(NoteContext):
    """An installed skill."""

    description: str
    category: str
    tags: list[str]
    triggers: list[str]
    instructions: str


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The skill's description and instructions."""
    skill = inputs.records.get(node.id, Skill)
    return (skill.description, skill.instructions) if skill is not None else ()


def instructions_text(skill: Skill, node_id: str, inputs: RenderInputs) -> str:
    """The skill file's body under ``## Instructions``: headings nested, a name-only H1 dropped."""
    text = prepare_text(skill.instructions, node_id, inputs)
    heading = leading_h1(text)
    if heading is not None and normalize_name(heading[0]) == normalize_name(skill.name):
        text = heading[1]
    return nest_headings(text, 2)


def context(node: Node, inputs: RenderInputs) -> SkillContext:
    """Front matter: tags (the skill's own too), category, source (where the skill file is)."""
    skill = inputs.records.get(node.id, Skill) or Skill(name=node.title)
    base = base_context(
        node,
        inputs,
        [("category", skill.category), ("source", skill.source_path)],
        own_tags=skill.tags,
    )
    return SkillContext(
        **base,
        description=prepare_text(skill.description, node.id, inputs),
        category=one_line(skill.category),
        tags=[one_line(t) for t in skill.tags if t.strip()],
        triggers=[one_line(t) for t in skill.triggers if t.strip()],
        instructions=instructions_text(skill, node.id, inputs),
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

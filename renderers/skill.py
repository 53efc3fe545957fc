"""Skill node → ``skill.md.j2`` context: description, category, tags and triggers; pure.

The ``tags`` of a skill's front matter join the note's Obsidian tags and, with its ``category``,
a line of the body, as ChatCLI's skill list shows them.
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Node, Skill
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
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


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The skill's description."""
    skill = inputs.records.get(node.id, Skill)
    return (skill.description,) if skill is not None else ()


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
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

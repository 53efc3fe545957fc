"""Skill node → ``skill.md.j2`` context: description and triggers; pure."""

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
    triggers: list[str]


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The skill's description."""
    skill = inputs.records.get(node.id, Skill)
    return (skill.description,) if skill is not None else ()


def context(node: Node, inputs: RenderInputs) -> SkillContext:
    """Front matter: category, source (where the skill file is)."""
    skill = inputs.records.get(node.id, Skill) or Skill(name=node.title)
    base = base_context(node, inputs, [("category", skill.category), ("source", skill.source_path)])
    return SkillContext(
        **base,
        description=prepare_text(skill.description, node.id, inputs),
        triggers=[one_line(t) for t in skill.triggers if t.strip()],
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

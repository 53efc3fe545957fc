"""Renderers: one module per note kind, each building its template's context; pure.

``RENDERERS`` is the explicit registry (no discovery): kind → :class:`renderers.base.Renderer`
(template name, context builder, texts whose wikilinks are rewritten).  ``Home.md`` is not a
graph note and has its own module, :mod:`renderers.home`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vaultsync.core.model import Kind
from vaultsync.renderers import (
    card,
    context,
    document,
    episode,
    fact,
    journal,
    profile,
    project,
    session,
    skill,
    topic,
)
from vaultsync.renderers.base import Renderer

__all__ = ["RENDERERS"]

RENDERERS: Mapping[Kind, Renderer] = MappingProxyType(
    {
        Kind.FACT: fact.RENDERER,
        Kind.TOPIC: topic.RENDERER,
        Kind.PROJECT: project.RENDERER,
        Kind.PROFILE: profile.RENDERER,
        Kind.EPISODE: episode.RENDERER,
        Kind.NOTE: journal.RENDERER,
        Kind.SESSION: session.RENDERER,
        Kind.SKILL: skill.RENDERER,
        Kind.CARD: card.RENDERER,
        Kind.KBCONTEXT: context.RENDERER,
        Kind.CONTEXT: context.RENDERER,
        Kind.DOC: document.RENDERER,
    }
)
"""Every kind that becomes a note; ``Kind.TAG`` has no file (tags are front matter)."""

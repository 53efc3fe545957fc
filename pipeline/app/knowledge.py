"""The knowledge model's health queries, answered as ``vaultsync query … --json`` prints them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultsync.app.workspace import Workspace
from vaultsync.core.errors import UsageError

if TYPE_CHECKING:
    from vaultsync.knowledge.model import KnowledgeModel

HEALTH_QUERIES = (
    "orphans",
    "leaves",
    "hubs",
    "unsourced",
    "claims-without-sources",
    "sources",
    "maturity",
    "questions",
    "unresolved",
)


def _answers() -> dict[str, Callable[[Any], Any]]:
    from vaultsync.knowledge import queries as q
    from vaultsync.knowledge import views as v

    def ideas(found: Any) -> list[Any]:
        return [v.idea_json(i) for i in found]

    return {
        "orphans": lambda m: ideas(q.orphans(m)),
        "leaves": lambda m: ideas(q.leaves(m)),
        "hubs": lambda m: ideas(q.hubs(m, q.DEFAULT_HUB_DEGREE)),
        "unsourced": lambda m: ideas(q.unsourced(m)),
        "claims-without-sources": lambda m: v.claims_json(q.claims_without_sources(m)),
        "sources": lambda m: v.sources_json(q.sources_by_reference_count(m)),
        "maturity": lambda m: v.maturity_json(q.by_maturity(m)),
        "questions": lambda m: v.questions_json(q.unanswered_questions(m)),
        "unresolved": lambda m: v.unresolved_json(q.unresolved_links(m)),
    }


def model(vault: Path) -> KnowledgeModel:
    """The vault's knowledge model (read from the vault's notes, cached by their stat data)."""
    from vaultsync.knowledge.scan import load_model

    return load_model(vault).model


def health(ws: Workspace, question: str) -> Any:
    """The answer to one health query of the vault's knowledge model, as plain data.

    Raises:
        UsageError: not one of :data:`HEALTH_QUERIES`.
    """
    if question not in HEALTH_QUERIES:
        known = ", ".join(HEALTH_QUERIES)
        raise UsageError(f"unknown health query {question!r}; one of: {known}")
    return _answers()[question](model(ws.vault))

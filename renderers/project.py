"""Project node → ``project.md.j2`` context: description, path, technologies, key files; pure.

``priority`` is a property and a line of the body when it is set: ChatCLI writes 0 for a project
nobody prioritised (the field has no ``omitempty``), so 0 is shown as nothing.  The ``metadata``
map is listed under ``## Metadata``: its keys are free, so they are not properties (they could
clash with ours, and Obsidian's properties are flat names).
"""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Node, Project
from vaultsync.renderers.base import (
    NoteContext,
    Renderer,
    RenderInputs,
    base_context,
    metadata_items,
    prepare_text,
)

TEMPLATE = "project.md.j2"


class ProjectContext(NoteContext):
    """A project as the store tracks it."""

    description: str
    project_path: str
    status: str
    technologies: list[str]
    key_files: list[str]
    priority: int
    """0: no priority set."""
    metadata: list[tuple[str, str]]


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The project's description."""
    project = inputs.records.get(node.id, Project)
    return (project.description,) if project is not None else ()


def context(node: Node, inputs: RenderInputs) -> ProjectContext:
    """Front matter: path, status, priority, last active, technologies."""
    project = inputs.records.get(node.id, Project) or Project(name=node.title)
    base = base_context(
        node,
        inputs,
        [
            ("path", project.path),
            ("status", project.status),
            ("priority", project.priority or None),
            ("last_active", project.last_active),
            ("technologies", project.technologies),
        ],
    )
    return ProjectContext(
        **base,
        description=prepare_text(project.description, node.id, inputs),
        project_path=project.path,
        status=project.status,
        technologies=list(project.technologies),
        key_files=list(project.key_files),
        priority=project.priority,
        metadata=metadata_items(project.metadata),
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

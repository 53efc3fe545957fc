"""Project node → ``project.md.j2`` context: description, path, technologies, key files; pure."""

from __future__ import annotations

from collections.abc import Iterable

from vaultsync.core.model import Node, Project
from vaultsync.renderers.base import NoteContext, Renderer, RenderInputs, base_context, prepare_text

TEMPLATE = "project.md.j2"


class ProjectContext(NoteContext):
    """A project as the store tracks it."""

    description: str
    project_path: str
    status: str
    technologies: list[str]
    key_files: list[str]


def texts(node: Node, inputs: RenderInputs) -> Iterable[str]:
    """The project's description."""
    project = inputs.records.get(node.id, Project)
    return (project.description,) if project is not None else ()


def context(node: Node, inputs: RenderInputs) -> ProjectContext:
    """Front matter: path, status, last active, technologies."""
    project = inputs.records.get(node.id, Project) or Project(name=node.title)
    base = base_context(
        node,
        inputs,
        [
            ("path", project.path),
            ("status", project.status),
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
    )


RENDERER = Renderer(template=TEMPLATE, context=context, texts=texts)

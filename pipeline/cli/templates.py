"""``vaultsync templates``: each kind's template and what it is given, to write an override.

The variables and properties come from :mod:`vaultsync.render.catalog`, read from the
renderers' own context classes, so this never drifts from what a template really gets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from vaultsync.cli.options import emit, json_option, templates_option
from vaultsync.render.catalog import TemplateInfo, catalog


def _kinds() -> list[str]:
    return [info.kind for info in catalog()]


def _info(kind: str) -> TemplateInfo:
    return next(info for info in catalog() if info.kind == kind)


@click.group()
def templates() -> None:
    """The note templates, their variables and properties (to write your own with --templates)."""


@templates.command(name="list")
@json_option
def templates_list(as_json: bool) -> None:
    """Every kind, its template file and its context class."""
    infos = catalog()
    emit(
        as_json,
        lambda: [{"kind": i.kind, "template": i.template, "context": i.context} for i in infos],
        lambda: "\n".join(f"{i.kind:<10} {i.template:<18} {i.context}" for i in infos),
    )


@templates.command(name="show")
@click.argument("kind", type=click.Choice(_kinds()), metavar="KIND")
@templates_option
@json_option
def templates_show(kind: str, templates: Path | None, as_json: bool) -> None:
    """One kind's properties, variables and template source (yours when --templates has it)."""
    from vaultsync.render.specs import make_environment

    info = _info(kind)
    env = make_environment(templates)
    assert env.loader is not None  # noqa: S101 - make_environment always sets one
    source, filename, _ = env.loader.get_source(env, info.template)
    origin = (
        filename
        if templates is not None and filename and Path(filename).parent == templates
        else "built-in"
    )
    emit(
        as_json, lambda: _show_json(info, origin, source), lambda: _show_text(info, origin, source)
    )


def _show_json(info: TemplateInfo, origin: str, source: str) -> dict[str, Any]:
    return {
        "kind": info.kind,
        "template": info.template,
        "from": origin,
        "context": info.context,
        "properties": list(info.properties),
        "variables": [{"name": v.name, "type": v.type, "doc": v.doc} for v in info.variables],
        "source": source,
    }


def _show_text(info: TemplateInfo, origin: str, source: str) -> str:
    width = max(len(v.name) for v in info.variables)
    kinds = max(len(v.type) for v in info.variables)
    lines = [
        f"{info.kind}: {info.template} ({origin}), context {info.context}",
        "",
        "properties (front matter, in this order; each is also properties.<key>):",
        "  " + ", ".join(info.properties),
        "",
        "variables:",
        *(f"  {v.name:<{width}}  {v.type:<{kinds}}  {v.doc}".rstrip() for v in info.variables),
        "",
        "template:",
        source.rstrip("\n"),
    ]
    return "\n".join(lines)

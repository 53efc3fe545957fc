"""What each template gets: its variables and properties, read from the renderers' code; pure.

``vaultsync templates list``/``show`` print this, so the documentation of a template cannot
drift from what it is given:

* **variables** are the keys of the kind's context ``TypedDict`` (its own and those of the
  ``TypedDict`` it extends, :class:`renderers.base.NoteContext` first), with the annotation as
  written and the docstring under each key; a key whose type is a list of another
  ``TypedDict`` (``links: list[LinkItem]``) lists that one's keys as ``links[].rel`` …
* **properties** are the front-matter keys the context builder can write: the four every note
  has, then the ``("key", value)`` pairs of the kind's ``context`` function, in order.

It reads source text (``inspect``/``ast``) of modules that ship with vaultsync; nothing else.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, get_args, get_origin, get_type_hints, is_typeddict

from vaultsync.renderers import RENDERERS, home

__all__ = ["BASE_PROPERTIES", "TemplateInfo", "Variable", "catalog", "template_info"]

BASE_PROPERTIES = ("vaultsync_id", "kind", "aliases", "tags")
"""The front-matter keys of every graph note, first and in this order."""


@dataclass(frozen=True, slots=True)
class Variable:
    """One name a template can use."""

    name: str
    type: str
    doc: str


@dataclass(frozen=True, slots=True)
class TemplateInfo:
    """One kind's template: its file, its context class, its variables and properties."""

    kind: str
    """The template's name without ``.md.j2``: ``fact``, ``document``, ``home`` …"""
    template: str
    context: str
    variables: tuple[Variable, ...]
    properties: tuple[str, ...]


def _fields(cls: type) -> Iterator[tuple[str, str, str]]:
    """``(name, annotation, doc)`` of the keys ``cls`` itself declares, from its source."""
    tree = ast.parse(inspect.getsource(cls).lstrip())
    body = tree.body[0].body if isinstance(tree.body[0], ast.ClassDef) else []
    for index, statement in enumerate(body):
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            after = body[index + 1] if index + 1 < len(body) else None
            doc = ""
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                doc = " ".join(str(after.value.value).split())
            yield statement.target.id, ast.unparse(statement.annotation), doc


def _chain(cls: type) -> list[type]:
    """``cls`` and the ``TypedDict`` classes it extends, the farthest base first.

    A ``TypedDict``'s bases are not kept at run time, so they are read from its source.
    """
    tree = ast.parse(inspect.getsource(cls).lstrip())
    module = sys.modules[cls.__module__]
    chain = []
    if isinstance(tree.body[0], ast.ClassDef):
        for base in tree.body[0].bases:
            found = getattr(module, ast.unparse(base), None)
            if isinstance(found, type) and is_typeddict(found):
                chain.extend(_chain(found))
    return [*chain, cls]


def _nested(hint: object) -> tuple[str, type] | None:
    """``("[].", X)`` for a ``list[X]`` hint, ``(".", X)`` for ``X``, when X is a TypedDict."""
    args = get_args(hint)
    if get_origin(hint) is list and args and isinstance(args[0], type) and is_typeddict(args[0]):
        return "[].", args[0]
    if isinstance(hint, type) and is_typeddict(hint):
        return ".", hint
    return None


def variables_of(cls: type) -> tuple[Variable, ...]:
    """Every key of the context class ``cls``, with the keys of nested ``TypedDict`` values."""
    hints = get_type_hints(cls)
    found: list[Variable] = []
    for part in _chain(cls):
        for name, annotation, doc in _fields(part):
            found.append(Variable(name, annotation, doc))
            nested = _nested(hints.get(name))
            if nested is not None:
                separator, inner = nested
                found.extend(
                    Variable(f"{name}{separator}{variable.name}", variable.type, variable.doc)
                    for variable in variables_of(inner)
                )
    return tuple(found)


def _pairs(function: Callable[..., Any]) -> Iterator[str]:
    """The keys of the ``("key", value)`` tuples written in ``function``'s source."""
    tree = ast.parse(inspect.getsource(function))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Tuple) or len(node.elts) != len(("key", "value")):
            continue
        key = node.elts[0]
        if (
            isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and key.value.isidentifier()
        ):
            yield key.value


def _properties(function: Callable[..., Any], *, graph_note: bool) -> tuple[str, ...]:
    own = tuple(dict.fromkeys(_pairs(function)))
    return (*BASE_PROPERTIES, *own) if graph_note else own


def template_info(template: str, context: Callable[..., Any], *, graph_note: bool) -> TemplateInfo:
    """The :class:`TemplateInfo` of one template and the function that builds its context."""
    cls = get_type_hints(context)["return"]
    return TemplateInfo(
        kind=template.removesuffix(".md.j2"),
        template=template,
        context=cls.__name__,
        variables=variables_of(cls),
        properties=_properties(context, graph_note=graph_note),
    )


@functools.cache
def catalog() -> tuple[TemplateInfo, ...]:
    """Every template a note is rendered with, by kind name."""
    by_template = {r.template: r.context for r in RENDERERS.values()}
    infos = [template_info(t, c, graph_note=True) for t, c in by_template.items()]
    infos.append(template_info(home.TEMPLATE, home.context, graph_note=False))
    return tuple(sorted(infos, key=lambda info: info.kind))

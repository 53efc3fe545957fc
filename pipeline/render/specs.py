"""Stage 4, render: Graph + Records → ``tuple[NoteSpec, ...]``; pure given the environment.

* :func:`make_environment` (edge: reads templates) loads the built-in templates of the
  ``templates`` package through ``importlib.resources`` (so an installed vaultsync finds them)
  behind an optional override folder (``--templates DIR``): a user template with the same name
  wins, may ``{% extends "!builtin/fact.md.j2" %}``, and any name it lacks falls back to the
  built-in one (Pelican's ``ChoiceLoader`` + ``PrefixLoader``).
* :func:`build_note_specs` lays the vault out (:mod:`vaultsync.render.layout`) and returns one
  :class:`NoteSpec` per note plus ``Home.md``, sorted by path.  Nothing is rendered there: each
  spec carries a ``key`` (cheap) and a ``render`` closure (the sync calls it only for notes it
  must write).

The key is a SHA-256 over everything the note's bytes depend on: the renderer code and the
kingfisher version, the source of the note's template and every template it pulls in, the
time zone (``render.timezone``), the node, a digest of its record (a document's content is
hashed, never parsed), its outgoing links with their targets' kinds, titles and paths, the
paths the wikilinks of its short texts resolve to, and the extra notes it lists (a topic's
facts, a context's documents).  A document's
wikilinks are covered by its graph links (the graph resolved them with the same resolver).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.resources
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta
from jinja2.loaders import split_template_path
from vaultsync.core import progress
from vaultsync.core.digest import code_fingerprint as package_fingerprint
from vaultsync.core.digest import inputs_digest
from vaultsync.core.errors import ConfigError, TemplateError
from vaultsync.core.model import Graph, Kind, Node, NoteSpec, Records, Skipped
from vaultsync.core.parallel import split_map
from vaultsync.core.settings import Caps
from vaultsync.graph.load import build
from vaultsync.render.layout import HOME_PATH, vault_paths
from vaultsync.render.yamlfm import is_yaml_list, yaml_scalar
from vaultsync.renderers import RENDERERS, context, home, topic
from vaultsync.renderers.base import (
    Renderer,
    RenderInputs,
    Resolver,
    code_span,
    link_to,
    resolved_targets,
)
from vaultsync.renderers.records import RecordIndex, record_digest

__all__ = [
    "BUILTIN_PREFIX",
    "build_note_specs",
    "make_environment",
    "register_filters",
    "template_fingerprint",
]

BUILTIN_PREFIX = "!builtin"
"""``{% extends "!builtin/fact.md.j2" %}`` names the built-in template from an override."""

KEY_VERSION = "vaultsync-render-1"


class _PackageLoader(jinja2.BaseLoader):
    """The built-in templates, read from the ``templates`` package wherever it is installed."""

    def __init__(self, package: str = "vaultsync.templates") -> None:
        self._root = importlib.resources.files(package)

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        node = self._root
        for piece in split_template_path(template):
            node = node.joinpath(piece)
        if not node.is_file():
            raise jinja2.TemplateNotFound(template)
        return node.read_text(encoding="utf-8"), str(node), lambda: True

    def list_templates(self) -> list[str]:
        return sorted(item.name for item in self._root.iterdir() if item.name.endswith(".j2"))


def register_filters(env: jinja2.Environment) -> None:
    """The filters and tests templates use: ``yaml``, ``code``, ``wikilink``, ``yaml_list``."""
    env.filters["yaml"] = yaml_scalar
    env.filters["code"] = code_span
    env.filters["wikilink"] = link_to
    env.tests["yaml_list"] = is_yaml_list


def make_environment(override_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja environment: user templates from ``override_dir`` first, then the built-ins.

    Raises:
        ConfigError: ``override_dir`` is given but is not a folder.
    """
    if override_dir is None:
        return _builtin_environment()
    if not override_dir.is_dir():
        raise ConfigError(f"--templates {override_dir}: not a folder")
    return _environment(jinja2.FileSystemLoader(str(override_dir), encoding="utf-8"))


@functools.cache
def _builtin_environment() -> jinja2.Environment:
    """The built-ins' environment, one per process (its templates never change while it runs).

    Its compiled templates then serve every vault of a ``sync --each``.
    """
    return _environment(None)


def _environment(override: jinja2.BaseLoader | None) -> jinja2.Environment:
    builtin = _PackageLoader()
    loaders: list[jinja2.BaseLoader] = [] if override is None else [override]
    loaders += [builtin, jinja2.PrefixLoader({BUILTIN_PREFIX: builtin}, delimiter="/")]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - the output is Markdown, not HTML
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    register_filters(env)
    return env


# ---------------------------------------------------------------------------------------------
# Keys


@functools.cache
def code_fingerprint() -> str:
    """Digest of vaultsync's code (every module: none can escape) and the secret rules' version."""
    try:
        rules = importlib.metadata.version("kingfisher-secret-scanner")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a declared dependency
        rules = "no-kingfisher"
    return inputs_digest((KEY_VERSION, package_fingerprint(), rules))


def template_fingerprint(env: jinja2.Environment, name: str) -> str:
    """Digest of template ``name`` and of every template it extends, imports or includes.

    Raises:
        TemplateError: a template is missing or does not parse.
    """
    loader = env.loader
    assert loader is not None  # noqa: S101 - make_environment always sets one
    digest = hashlib.sha256()
    pending = [name]
    seen: set[str] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            source, filename, _ = loader.get_source(env, current)
            references = _references(env, source, current, filename)
        except jinja2.TemplateSyntaxError as err:
            place = f"{err.filename or current}, line {err.lineno}"
            raise TemplateError(f"template {place} (used by {name!r}): {err.message}") from err
        except jinja2.TemplateError as err:
            raise TemplateError(f"template {current!r} (used by {name!r}): {err}") from err
        digest.update(f"{current}\0{source}\0".encode())
        for reference in references:
            if reference is None:  # a computed name: any template may be used
                pending.extend(env.list_templates())
            else:
                pending.append(reference)
    return digest.hexdigest()


_REFERENCES: dict[tuple[str, str, str | None], tuple[str | None, ...]] = {}
"""Parsed templates' references, by (source, name, file): ``sync --each`` parses each once."""


def _references(
    env: jinja2.Environment, source: str, name: str, filename: str | None
) -> tuple[str | None, ...]:
    """The templates ``source`` names; parsed once per process for each source text.

    The environment is left out of the key: every one comes from :func:`make_environment`,
    whose parse settings never vary, and an edited template is a different ``source``.
    """
    key = (source, name, filename)
    if key not in _REFERENCES:
        if len(_REFERENCES) >= 512:  # a long `watch` with templates edited over and over
            _REFERENCES.clear()
        _REFERENCES[key] = tuple(meta.find_referenced_templates(env.parse(source, name, filename)))
    return _REFERENCES[key]


def _listed(node_ids: Iterable[str], inputs: RenderInputs) -> Iterable[str]:
    for node_id in node_ids:
        node = inputs.graph.by_id.get(node_id)
        title = node.title if node is not None else ""
        yield f"{node_id}\0{inputs.paths.get(node_id, '')}\0{title}"


_EXTRA_KEYS: Mapping[Kind, Callable[[Node, RenderInputs], Iterable[str]]] = {
    Kind.TOPIC: lambda node, inputs: _listed(topic.related_fact_ids(node, inputs), inputs),
    Kind.KBCONTEXT: lambda node, inputs: _listed(context.document_ids(node, inputs), inputs),
    Kind.CONTEXT: lambda node, inputs: _listed(context.document_ids(node, inputs), inputs),
}


def _note_key(node: Node, renderer: Renderer, inputs: RenderInputs, template_fp: str) -> str:
    by_id = inputs.graph.by_id

    def parts() -> Iterable[str | bytes]:
        yield code_fingerprint()
        yield template_fp
        yield f"zone\0{inputs.zone}"
        yield f"{node.id}\0{node.kind.value}\0{node.title}\0" + "\0".join(node.aliases)
        yield inputs.paths[node.id]
        yield record_digest(inputs.records.by_id.get(node.id))
        for link in inputs.graph.links_from(node.id):
            target = by_id.get(link.target)
            kind = target.kind.value if target is not None else ""
            title = target.title if target is not None else ""
            yield (
                f"{link.rel}\0{link.origin.value}\0{link.note}\0{link.target}\0{kind}\0"
                f"{title}\0{inputs.paths.get(link.target, '')}"
            )
        yield "texts"
        yield from resolved_targets((node.title, *renderer.texts(node, inputs)), node.id, inputs)
        extra = _EXTRA_KEYS.get(node.kind)
        if extra is not None:
            yield "extra"
            yield from extra(node, inputs)

    return inputs_digest(parts())


def _home_key(inputs: RenderInputs, template_fp: str) -> str:
    def parts() -> Iterable[str | bytes]:
        yield code_fingerprint()
        yield template_fp
        yield home.context_card(inputs)
        for heading, node_ids in home.listed_ids(inputs):
            yield heading
            yield from _listed(node_ids, inputs)

    return inputs_digest(parts())


# ---------------------------------------------------------------------------------------------
# Rendering


def _finish(text: str) -> bytes:
    """LF line endings, exactly one final newline, UTF-8."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return (text.rstrip("\n") + "\n").encode("utf-8", "replace")


def _render(
    env: jinja2.Environment,
    template: str,
    build: Callable[[], Mapping[str, Any]],
    path: str,
    node_id: str,
) -> bytes:
    try:
        return _finish(env.get_template(template).render(build()))
    except jinja2.TemplateError as err:
        where = f" line {err.lineno}" if isinstance(err, jinja2.TemplateSyntaxError) else ""
        note = f"{path} ({node_id})" if node_id else path
        raise TemplateError(f"template {template!r}{where} failed for note {note}: {err}") from err


def build_note_specs(
    records: Records,
    graph: Graph,
    resolver: Resolver,
    env: jinja2.Environment,
    *,
    zone: tzinfo = UTC,
    chosen: Mapping[str, str] | None = None,
    deleted: frozenset[str] = frozenset(),
) -> tuple[NoteSpec, ...]:
    """One spec per note of the vault (every non-tag node, plus ``Home.md``), sorted by path.

    Args:
        records: the extracted stores (per-kind fields come from them).
        graph: the built graph (ids, titles, links, which notes made the caps).
        resolver: resolves wikilink targets written in note texts to node ids.
        env: from :func:`make_environment`.
        zone: ``render.timezone``: episode dates and every rendered time are in it.
        chosen: node id → the path the user moved its note to (kept, and linked to).
        deleted: the vault paths of the notes the user deleted (``Home.md`` omits them).

    Returns:
        The specs; ``render`` runs the template only when called.

    Raises:
        TemplateError: a template the vault needs is missing or does not parse.
    """
    index = RecordIndex.build(records)
    paths = vault_paths(graph, records, index=index, zone=zone, chosen=chosen)
    inputs = RenderInputs(
        graph=graph, records=index, paths=paths, resolver=resolver, zone=zone, deleted=deleted
    )
    fingerprints: dict[str, str] = {}

    def fingerprint(template: str) -> str:
        if template not in fingerprints:
            fingerprints[template] = template_fingerprint(env, template)
        return fingerprints[template]

    noted = [node for node in graph.nodes if node.kind in RENDERERS and node.id in paths]
    for template in sorted({RENDERERS[node.kind].template for node in noted}):
        fingerprint(template)

    def key_of(node: Node) -> str:
        renderer = RENDERERS[node.kind]
        return _note_key(node, renderer, inputs, fingerprints[renderer.template])

    specs: list[NoteSpec] = []
    progress.phase("notes", len(noted))
    for node, key in zip(noted, split_map(key_of, noted), strict=True):
        renderer = RENDERERS[node.kind]
        path = paths[node.id]
        specs.append(
            NoteSpec(
                path=path,
                node_id=node.id,
                key=key,
                render=functools.partial(
                    _render,
                    env,
                    renderer.template,
                    functools.partial(renderer.context, node, inputs),
                    path,
                    node.id,
                ),
            )
        )
    specs.append(
        NoteSpec(
            path=HOME_PATH,
            node_id="",
            key=_home_key(inputs, fingerprint(home.TEMPLATE)),
            render=functools.partial(
                _render,
                env,
                home.TEMPLATE,
                functools.partial(home.context, inputs, HOME_PATH),
                HOME_PATH,
                "",
            ),
        )
    )
    specs.sort(key=lambda spec: spec.path)
    return tuple(specs)


def vault_specs(state: Path, caps: Caps, templates: Path | None = None) -> tuple[NoteSpec, ...]:
    """Every note the vault should hold, each rendered only when the sync needs its bytes."""
    return vault_specs_skipped(state, caps, templates)[0]


def vault_specs_skipped(
    state: Path,
    caps: Caps,
    templates: Path | None = None,
    *,
    repair: bool = False,
    chosen: Mapping[str, str] | None = None,
    deleted: frozenset[str] = frozenset(),
) -> tuple[tuple[NoteSpec, ...], tuple[Skipped, ...]]:
    """``vault_specs``, and the store files skipped (``repair``: the sync's links.json move).

    ``chosen``: node id → the path the user moved its note to; ``deleted``: the vault paths of
    the notes the user deleted.
    """
    progress.phase("graph")
    records, built = build(state, caps, repair=repair)
    env = make_environment(templates)
    specs = build_note_specs(
        records, built.graph, built.resolver, env, zone=caps.zone, chosen=chosen, deleted=deleted
    )
    return specs, records.skipped

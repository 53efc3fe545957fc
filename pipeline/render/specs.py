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
from dataclasses import dataclass
from datetime import UTC, tzinfo
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

import jinja2
from jinja2 import meta
from jinja2.loaders import split_template_path
from vaultsync.core import cachefile, progress
from vaultsync.core.digest import code_fingerprint as package_fingerprint
from vaultsync.core.digest import inputs_digest
from vaultsync.core.errors import ConfigError, TemplateError
from vaultsync.core.model import Context, Graph, Kind, Node, NoteSpec, Records, Skipped
from vaultsync.core.parallel import split_map
from vaultsync.core.process import paused_gc
from vaultsync.core.settings import Caps
from vaultsync.graph.build import GraphDelta
from vaultsync.graph.load import build
from vaultsync.graph.resolve import wikilink_name_key
from vaultsync.links.names import normalize_name
from vaultsync.render.keycache import (
    NoteMemo,
    SpecsMemo,
    load_specs_memo,
    save_specs_memo,
)
from vaultsync.render.layout import HOME_PATH, Layout, vault_layout
from vaultsync.render.yamlfm import is_yaml_list, yaml_scalar
from vaultsync.renderers import RENDERERS, context, home, topic
from vaultsync.renderers.base import (
    Renderer,
    RenderInputs,
    Resolver,
    code_span,
    link_to,
    target_resolutions,
)
from vaultsync.renderers.records import DocumentRecord, RecordIndex, record_digest

__all__ = [
    "BUILTIN_PREFIX",
    "NoteSpecs",
    "build_note_specs",
    "make_environment",
    "note_specs",
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


_EXTRA_IDS: Mapping[Kind, Callable[[Node, RenderInputs], Iterable[str]]] = {
    Kind.TOPIC: topic.related_fact_ids,
    Kind.KBCONTEXT: context.document_ids,
    Kind.CONTEXT: context.document_ids,
}


def _lookup_keys(target: str) -> Iterable[str]:
    """The keys a resolver may look ``target`` up by (id folded, name; also percent-decoded)."""
    for written in (target, unquote(target)) if "%" in target else (target,):
        stripped = written.strip()
        yield stripped.casefold()
        yield wikilink_name_key(stripped)


def _note_memo(
    node: Node,
    renderer: Renderer,
    inputs: RenderInputs,
    template_fp: str,
    contexts: dict[int, bytes],
) -> NoteMemo:
    by_id = inputs.graph.by_id
    deps: set[str] = set()
    names: set[str] = set()

    def parts() -> Iterable[str | bytes]:
        yield code_fingerprint()
        yield template_fp
        yield f"zone\0{inputs.zone}"
        yield f"{node.id}\0{node.kind.value}\0{node.title}\0" + "\0".join(node.aliases)
        yield inputs.paths[node.id]
        yield record_digest(inputs.records.by_id.get(node.id), contexts)
        for link in inputs.graph.links_from(node.id):
            deps.add(link.target)
            target = by_id.get(link.target)
            kind = target.kind.value if target is not None else ""
            title = target.title if target is not None else ""
            yield (
                f"{link.rel}\0{link.origin.value}\0{link.note}\0{link.target}\0{kind}\0"
                f"{title}\0{inputs.paths.get(link.target, '')}"
            )
        yield "texts"
        texts = (node.title, *renderer.texts(node, inputs))
        for written, node_id, path in target_resolutions(texts, node.id, inputs):
            names.update(_lookup_keys(written))
            if node_id is not None:
                deps.add(node_id)
            yield f"{written}\0{path or ''}"
        extra = _EXTRA_IDS.get(node.kind)
        if extra is not None:
            yield "extra"
            listed = extra(node, inputs)
            deps.update(listed)
            yield from _listed(listed, inputs)

    key = inputs_digest(parts())
    return NoteMemo(inputs.paths[node.id], key, frozenset(deps), frozenset(names))


def _home_key(inputs: RenderInputs, template_fp: str, card: str) -> str:
    def parts() -> Iterable[str | bytes]:
        yield code_fingerprint()
        yield template_fp
        yield card
        for heading, node_ids in home.listed_ids(inputs):
            yield heading
            yield from _listed(node_ids, inputs)

    return inputs_digest(parts())


# ---------------------------------------------------------------------------------------------
# What changed since the last run


def _changed_names(graph: Graph, delta: GraphDelta) -> set[str]:
    """Lookup keys a wikilink may now resolve differently by: names and ids of changed nodes."""
    names = set(delta.names)
    for node_id in delta.nodes:
        names.add(node_id.casefold())
        node = graph.by_id.get(node_id)
        if node is not None:
            names.update(normalize_name(name) for name in (node.title, *node.aliases))
    return names


def _context_documents(graph: Graph, index: RecordIndex, delta: GraphDelta) -> set[str]:
    """Documents of contexts whose record changed (a document's record digest shows it)."""
    contexts = {
        record.id
        for node_id in delta.records
        if (record := index.get(node_id, Context)) is not None
    }
    if not contexts:
        return set()
    return {
        node_id
        for node_id, record in index.by_id.items()
        if isinstance(record, DocumentRecord) and record.context.id in contexts
    }


def _stale_notes(
    previous: Mapping[str, NoteMemo],
    delta: GraphDelta,
    inputs: RenderInputs,
) -> set[str]:
    """The notes whose key may differ from the one ``previous`` holds; the rest keep theirs.

    A key reads the note's node, record, path and outgoing links, the kind, title and path of
    the notes it links to, names and lists, and how its wikilinks resolve: a note is stale when
    any of those is among what ``delta`` says changed, or when a path moved.
    """
    graph, paths = inputs.graph, inputs.paths
    moved = {
        n for n, path in paths.items() if (memo := previous.get(n)) is None or memo.path != path
    }
    moved.update(previous.keys() - paths.keys())
    shown = delta.nodes | delta.sources | moved
    stale = set(delta.nodes | delta.records | delta.sources | moved)
    for source in delta.sources:  # a context lists the documents that link to it
        stale.update(link.target for link in graph.links_from(source))
    stale.update(_context_documents(graph, inputs.records, delta))
    names = _changed_names(graph, delta)
    documents_changed = any(node_id.startswith("doc:") for node_id in delta.nodes)
    for node_id, memo in previous.items():
        if node_id in stale:
            continue
        if not shown.isdisjoint(memo.deps) or not names.isdisjoint(memo.names):
            stale.add(node_id)
        elif documents_changed and memo.names and node_id.startswith("doc:"):
            stale.add(node_id)  # a document's wikilinks resolve within its context first
    return stale & paths.keys()


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
    built = note_specs(records, graph, resolver, env, zone=zone, chosen=chosen, deleted=deleted)
    return built.specs


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteSpecs:
    """The specs, the memo for the next run, and how many note keys were computed."""

    specs: tuple[NoteSpec, ...]
    memo: SpecsMemo
    keyed: int


def _setting(zone: tzinfo, chosen: Mapping[str, str], fingerprints: Mapping[str, str]) -> str:
    """What a memo must have been made under to be reused."""
    return inputs_digest(
        (
            code_fingerprint(),
            f"{zone!s}\0{zone!r}",
            *(f"{node_id}\0{path}" for node_id, path in sorted(chosen.items())),
            "templates",
            *(f"{name}\0{fp}" for name, fp in sorted(fingerprints.items())),
        )
    )


def note_specs(
    records: Records,
    graph: Graph,
    resolver: Resolver,
    env: jinja2.Environment,
    *,
    zone: tzinfo = UTC,
    chosen: Mapping[str, str] | None = None,
    deleted: frozenset[str] = frozenset(),
    delta: GraphDelta | None = None,
    previous: SpecsMemo | None = None,
) -> NoteSpecs:
    """:func:`build_note_specs`, reusing ``previous`` for what ``delta`` says did not change.

    ``previous``: the memo of the last run; ``delta``: what differs between the graph and
    records it was made from and these.  Both given and made under the same settings, only the
    notes whose inputs may have changed are placed and keyed again; otherwise (``None``, other
    settings) every note is.  The specs are the same either way.
    """
    chosen = chosen or {}
    index = RecordIndex.build(records)
    templates = {RENDERERS[n.kind].template for n in graph.nodes if n.kind in RENDERERS}
    fingerprints = {t: template_fingerprint(env, t) for t in sorted({*templates, home.TEMPLATE})}
    setting = _setting(zone, chosen, fingerprints)
    usable = _usable(previous, delta, setting)
    layout = _layout(graph, index, zone, chosen, usable)
    inputs = RenderInputs(
        graph=graph,
        records=index,
        paths=layout.paths,
        resolver=resolver,
        zone=zone,
        deleted=deleted,
    )
    noted = [node for node in graph.nodes if node.kind in RENDERERS and node.id in layout.paths]
    notes, keyed = _keys(noted, inputs, fingerprints, usable)
    specs = [_note_spec(env, node, inputs, notes[node.id].key) for node in noted]
    same_graph = usable is not None and not (usable[1].nodes or usable[1].sources)
    card = usable[0].card if same_graph and usable is not None else home.context_card(inputs)
    specs.append(_home_spec(env, inputs, _home_key(inputs, fingerprints[home.TEMPLATE], card)))
    specs.sort(key=lambda spec: spec.path)
    memo = SpecsMemo(
        setting=setting,
        placement=layout.placement,
        notes=MappingProxyType(notes),
        card=card,
        reads=_same_reads(usable, layout, notes),
    )
    return NoteSpecs(specs=tuple(specs), memo=memo, keyed=keyed)


def _usable(
    previous: SpecsMemo | None, delta: GraphDelta | None, setting: str
) -> tuple[SpecsMemo, GraphDelta] | None:
    """The last run's memo and what changed since, when it may be reused."""
    if previous is None or delta is None or previous.setting != setting:
        return None
    return previous, delta


def _layout(
    graph: Graph,
    index: RecordIndex,
    zone: tzinfo,
    chosen: Mapping[str, str],
    usable: tuple[SpecsMemo, GraphDelta] | None,
) -> Layout:
    """The vault's layout, from the last run's where it still holds."""
    if usable is None:
        return vault_layout(graph, index, zone=zone, chosen=chosen)
    memo, delta = usable
    return vault_layout(
        graph,
        index,
        zone=zone,
        chosen=chosen,
        previous=memo.placement,
        changed=delta.nodes | delta.records,
        # every note the layout placed has a memo (tags have neither)
        previous_paths={node_id: note.path for node_id, note in memo.notes.items()},
    )


def _same_reads(
    usable: tuple[SpecsMemo, GraphDelta] | None, layout: Layout, notes: Mapping[str, NoteMemo]
) -> bytes:
    """The last memo's marshalled places and reads, when this memo's are the same ones.

    So the save writes them back instead of marshalling them again (``keycache.memo_bytes``):
    the same notes in the same order, placed as before, each key reading what it read.
    """
    if usable is None or not usable[0].reads or not layout.kept:
        return b""
    before = usable[0].notes
    if list(before) != list(notes):
        return b""
    for node_id, memo in notes.items():
        was = before[node_id]
        if memo is not was and (memo.deps != was.deps or memo.names != was.names):
            return b""
    return usable[0].reads


def _keys(
    noted: list[Node],
    inputs: RenderInputs,
    fingerprints: Mapping[str, str],
    usable: tuple[SpecsMemo, GraphDelta] | None,
) -> tuple[dict[str, NoteMemo], int]:
    """Every note's memo (path, key, what it read), and how many were computed now."""
    todo = noted
    if usable is not None:
        stale = _stale_notes(usable[0].notes, usable[1], inputs)
        todo = [node for node in noted if node.id in stale]
    contexts: dict[int, bytes] = {}

    def memo_of(node: Node) -> NoteMemo:
        renderer = RENDERERS[node.kind]
        return _note_memo(node, renderer, inputs, fingerprints[renderer.template], contexts)

    progress.phase("notes", len(todo))
    fresh = dict(zip((node.id for node in todo), split_map(memo_of, todo), strict=True))
    if usable is None:
        return fresh, len(todo)
    kept = usable[0].notes
    return {node.id: fresh.get(node.id) or kept[node.id] for node in noted}, len(todo)


def _home_spec(env: jinja2.Environment, inputs: RenderInputs, key: str) -> NoteSpec:
    return NoteSpec(
        path=HOME_PATH,
        node_id="",
        key=key,
        render=functools.partial(
            _render,
            env,
            home.TEMPLATE,
            functools.partial(home.context, inputs, HOME_PATH),
            HOME_PATH,
            "",
        ),
    )


def _note_spec(env: jinja2.Environment, node: Node, inputs: RenderInputs, key: str) -> NoteSpec:
    renderer = RENDERERS[node.kind]
    path = inputs.paths[node.id]
    return NoteSpec(
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
    with paused_gc():  # ~100,000 specs and memos, no cycles among them
        delta = built.delta
        previous = None if delta is None else load_specs_memo(state, caps, base=delta.base)
        made = note_specs(
            records,
            built.graph,
            built.resolver,
            env,
            zone=caps.zone,
            chosen=chosen,
            deleted=deleted,
            delta=delta,
            previous=previous,
        )
        save_specs_memo(state, caps, made.memo, build=built.build_id)
        cachefile.hand_over(len(made.specs))  # written aside, if the command lets them
    return made.specs, records.skipped

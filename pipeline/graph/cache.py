"""Graph ⇄ ``graph.json`` in vaultsync's own cache folder, reused while the stores are unchanged.

vaultsync never writes into the state directory (ChatCLI keeps its own schema-1 cache at
``memory/graph.json``, which is never read, written or deleted here).  Its caches live in
:func:`cache_dir`: ``$VAULTSYNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/vaultsync``, else
``~/.cache/vaultsync``, then one folder per state directory, named by a digest of its real
path (so every command finds the same cache whatever vault it names, and two state
directories never share one).  Edge: reads and writes that folder only.

Beside the graph, ``graph-documents.json`` keeps what parsing each document's text gave (title,
summary, links), by a digest of the text: a rebuild after a change in some other store, or in a
few documents, parses only the texts it has not seen (seed 002: "derived once per context
revision").

The file has exactly this shape, so other tools can read it::

    {"schema": 2, "fingerprint": "…",
     "nodes": [{"id", "kind", "title", "aliases": […]}, …],
     "links": [{"from", "to", "rel", "origin", "weight"}, …]}

nodes sorted by id, links by (from, to, rel).  A schema-1 file (ChatCLI's), a foreign, corrupt
or stale file is discarded and rebuilt.  The cache is an optimisation: when it cannot be
written (a read-only home), the graph is simply not cached.

Two more files keep what one bad store file must not lose (``extract.skips``):
``last-good.pickle``, the last good record of every per-item source (a skipped source answers
it, so its note stays as it was), and ``warned.json``, the skipped sources already warned
about (by path and content digest), so each warning is shown once.

``masked-texts.json`` keeps what masking each store text gave (``core.scrub``), by a salted
digest of the text: the masked text, or ``null`` when it held no secret.  A read of unchanged
stores then masks nothing again and never loads the secret rules.  It holds no secret (masked
texts only); a file of another code or rules version is ignored.

``graph-patch.pickle`` keeps what the next build patches from (``graph.patch``): made from the
masked records only, headed by a digest of the code and rules versions and the caps; a file
that does not match or load is ignored and the graph is built in full.
"""

from __future__ import annotations

import contextlib
import copyreg
import functools
import hashlib
import importlib.metadata
import io
import json
import math
import os
import pickle
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from json.encoder import encode_basestring
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vaultsync.core.digest import code_fingerprint
from vaultsync.core.environment import read_environment
from vaultsync.core.fsio import atomic_write, is_racy
from vaultsync.core.model import Graph, Kind, Link, Node, Origin, Skipped
from vaultsync.core.settings import Caps, Sources
from vaultsync.extract.memo import Memo, changed, memo_version, part
from vaultsync.extract.sources import source_files, store_fingerprint
from vaultsync.graph.documents import DocumentNote, ParsedText
from vaultsync.graph.patch import STATE_VERSION, ContextEntry, PatchState

GRAPH_SCHEMA = 2
DOCUMENTS_SCHEMA = 1
MASKS_SCHEMA = 1


LAST_GOOD_MAGIC = b"vaultsync-last-good-2\n"
PATCH_MAGIC = b"vaultsync-graph-patch-1\n"


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """``$VAULTSYNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/vaultsync``, else ``~/.cache/vaultsync``."""
    env = read_environment(environ)
    if chosen := env.cache_dir:
        return Path(chosen).expanduser()
    xdg = env.xdg_cache_home
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "vaultsync"


def cache_dir(state: Path) -> Path:
    """The cache folder of one state directory: ``<root>/state-<digest of its real path>``."""
    real = os.path.realpath(state)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:24]
    return cache_root() / f"state-{digest}"


def graph_path(state: Path) -> Path:
    """Where the graph cache lives: ``graph.json`` in :func:`cache_dir`."""
    return cache_dir(state) / "graph.json"


def graph_fingerprint(state: Path, caps: Caps) -> str:
    """Digest of the stores' stat data, the caps, the graph's code and the secret rules' version."""
    stores = store_fingerprint(state, caps.sources)
    text = f"{code_fingerprint()}:{_rules_version()}\n{caps.as_key()}\n{stores}"
    return hashlib.sha256(text.encode()).hexdigest()


def graph_to_json(graph: Graph) -> bytes:
    """The compact, byte-stable JSON form of a graph.

    Exactly ``json.dumps(document, ensure_ascii=False, separators=(",", ":"))`` of the
    documented shape (``tests/test_cache.py`` holds the two equal), written one node and one
    link at a time with the json module's own string encoder: building 400,000 dicts for the
    encoder took about 60 % of the time at 100,000 notes (issue #18).
    """
    head = json.dumps(
        {"schema": GRAPH_SCHEMA, "fingerprint": graph.fingerprint},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    nodes = ",".join([_node_json(node) for node in graph.nodes])
    links = ",".join([_link_json(link) for link in graph.links])
    return f'{head[:-1]},"nodes":[{nodes}],"links":[{links}]}}\n'.encode()


def _node_json(node: Node) -> str:
    aliases = ",".join([_quoted(alias) for alias in node.aliases])
    return (
        f'{{"id":{_quoted(node.id)},"kind":{_quoted(node.kind.value)},'
        f'"title":{_quoted(node.title)},"aliases":[{aliases}]}}'
    )


def _link_json(link: Link) -> str:
    return (
        f'{{"from":{_quoted(link.source)},"to":{_quoted(link.target)},'
        f'"rel":{_quoted(link.rel)},"origin":{_ORIGIN_JSON[link.origin]},'
        f'"weight":{_number(link.weight)}}}'
    )


def _number(weight: float) -> str:
    # what json writes: a finite float's repr (an int weight, or any other, through json)
    if type(weight) is float and math.isfinite(weight):
        return float.__repr__(weight)
    return json.dumps(weight)


_quoted = encode_basestring  # the C encoder json.dumps uses without ensure_ascii
_ORIGIN_JSON = {origin: _quoted(origin.value) for origin in Origin}


def graph_from_json(data: bytes) -> Graph | None:
    """Parse a cache file; ``None`` for anything that is not a schema-2 graph."""
    try:
        document = json.loads(data)
        if not isinstance(document, dict) or document.get("schema") != GRAPH_SCHEMA:
            return None
        nodes = tuple(_node(raw) for raw in document["nodes"])
        links = tuple(_link(raw) for raw in document["links"])
        return Graph(nodes=nodes, links=links, fingerprint=str(document["fingerprint"]))
    except (ValueError, KeyError, TypeError):
        return None


def load_graph(state: Path, fingerprint: str) -> Graph | None:
    """The cached graph when its fingerprint matches, else ``None``."""
    try:
        data = graph_path(state).read_bytes()
    except OSError:
        return None
    graph = graph_from_json(data)
    if graph is None or graph.fingerprint != fingerprint:
        return None
    return graph


def save_graph(state: Path, graph: Graph, sources: Sources | None = None) -> bool:
    """Write the cache atomically (0600); ``False`` when the state directory is not writable.

    A file that already holds this fingerprint is left alone: the same stores, caps and code
    build the same graph, so rewriting it (60 MB at 100,000 notes) would change nothing.  Not
    when it was written within ``RACY_NS`` of a store's change, though: an edit in the same
    timestamp tick may keep a store's size and mtime, hence the fingerprint, and only a
    rewrite repairs that.
    """
    if graph.fingerprint and _holds(graph_path(state), graph.fingerprint, state, sources):
        return True
    return _replace(graph_path(state), graph_to_json(graph))


def _holds(path: Path, fingerprint: str, state: Path, sources: Sources | None) -> bool:
    """Whether ``path`` holds this fingerprint, written well after the stores last changed."""
    head = f'{{"schema":{GRAPH_SCHEMA},"fingerprint":"{fingerprint}",'.encode()
    try:
        with path.open("rb") as handle:
            if handle.read(len(head)) != head:
                return False
            written = os.fstat(handle.fileno()).st_mtime_ns
    except OSError:
        return False
    return not is_racy(_last_change(state, sources), written)


def _last_change(state: Path, sources: Sources | None) -> int:
    """The newest mtime (ns) among the stores that exist (``sources``' folders included)."""
    newest = 0
    for store in source_files(state, sources):
        with contextlib.suppress(OSError):
            newest = max(newest, store.stat().st_mtime_ns)
    return newest


def documents_path(state: Path) -> Path:
    """Where parsed document texts are kept: ``graph-documents.json`` in :func:`cache_dir`."""
    return cache_dir(state) / "graph-documents.json"


def load_last_good(state: Path) -> dict[str, Any]:
    """The last good record of each per-item source (relative path → record); ``{}`` if none.

    Written by this module only, in the user's own cache folder (0700, the file 0600); a file
    of another code version, or one that does not load, is ignored.
    """
    try:
        data = last_good_path(state).read_bytes()
    except OSError:
        return {}
    head = _last_good_head()
    if not data.startswith(head):
        return {}
    body = data[len(head) :].partition(b"\n")[2]  # after the digest line
    try:
        loaded = pickle.loads(body)  # noqa: S301 - our own file, 0600 in a 0700 folder
    except Exception:
        return {}
    return loaded if isinstance(loaded, dict) else {}


class LastGood(Mapping[str, Any]):
    """:func:`load_last_good`, read the first time a record is asked for.

    A read asks only when an item of a store is skipped: at 100,000 notes the file is 42 MB of
    records that a sync without a bad item never needs (issue #18).
    """

    def __init__(self, state: Path) -> None:
        """The last good records of ``state``'s cache folder, not read yet."""
        self._state = state
        self._records: dict[str, Any] | None = None

    def _loaded(self) -> dict[str, Any]:
        if self._records is None:
            self._records = load_last_good(self._state)
        return self._records

    def __getitem__(self, rel: str) -> Any:
        return self._loaded()[rel]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def save_last_good(state: Path, good: Mapping[str, Any]) -> bool:
    """Keep ``good`` as the last good records; nothing is written when the file holds them.

    The file's second line is a digest of the pickle that follows, so an unchanged set of
    records is told from its first bytes, without loading the records it holds.
    """
    body = pickle.dumps(dict(sorted(good.items())), protocol=pickle.HIGHEST_PROTOCOL)
    head = _last_good_head() + hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b"\n"
    path = last_good_path(state)
    try:
        with path.open("rb") as kept:
            if kept.read(len(head)) == head:
                return True
    except OSError:
        pass
    return _replace(path, head + body)


def last_good_path(state: Path) -> Path:
    """Where the last good records are kept: ``last-good.pickle`` in :func:`cache_dir`."""
    return cache_dir(state) / "last-good.pickle"


def _last_good_head() -> bytes:
    return LAST_GOOD_MAGIC + code_fingerprint().encode() + b"\n"


def patch_state_path(state: Path) -> Path:
    """Where the incremental build's state lives: ``graph-patch.pickle`` in :func:`cache_dir`."""
    return cache_dir(state) / "graph-patch.pickle"


def _patch_head(caps: Caps) -> bytes:
    key = f"{code_fingerprint()}:{_rules_version()}:{STATE_VERSION}\n{caps.as_key()}"
    return PATCH_MAGIC + hashlib.sha256(key.encode()).hexdigest().encode() + b"\n"


def load_patch_state(state: Path, caps: Caps) -> PatchState | None:
    """The state the last build left (``graph.patch``), or ``None`` when it cannot be trusted.

    Its header holds a digest of the code version, the secret rules' version, the state's
    version and the caps: any difference, an unreadable or corrupt file, means a full build.
    A context's entry lives in its own file (``graph-patch/<its key>``, written once, since
    the key is a digest of its inputs); one that is missing or does not load is left out, and
    the build derives that context's documents again.
    """
    head = _patch_head(caps)
    loaded = _load_pickle(patch_state_path(state), head)
    if not isinstance(loaded, PatchState) or loaded.version != STATE_VERSION:
        return None
    folder = _contexts_folder(state)
    for key in loaded.context_keys:
        entry = _load_pickle(folder / key.hex(), head)
        if isinstance(entry, ContextEntry):
            loaded.contexts[key] = entry
    return loaded


def _load_pickle(path: Path, head: bytes) -> object:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(head):
        return None
    try:
        return pickle.loads(data[len(head) :])  # noqa: S301 - our own file, 0600 in a 0700 folder
    except Exception:
        return None


def save_patch_state(state: Path, caps: Caps, patch: PatchState) -> bool:
    """Keep the incremental build's state (0600); ``False`` when it cannot be written.

    Only the contexts' entries not written before are written; those no build uses now are
    deleted.
    """
    head = _patch_head(caps)
    folder = _contexts_folder(state)
    names = {key.hex(): entry for key, entry in patch.contexts.items()}
    with contextlib.suppress(OSError):
        for stale in folder.iterdir():
            if stale.name not in names:
                stale.unlink()
    ok = True
    for name, entry in sorted(names.items()):
        path = folder / name
        if not _starts_with(path, head):
            ok = _replace(path, head + pickle_patch_state(entry)) and ok
    main = replace(patch, contexts={}, context_keys=tuple(sorted(patch.contexts)))
    return _replace(patch_state_path(state), head + pickle_patch_state(main)) and ok


def _starts_with(path: Path, head: bytes) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(head)) == head
    except OSError:
        return False


def _contexts_folder(state: Path) -> Path:
    return cache_dir(state) / "graph-patch"


def pickle_patch_state(patch: PatchState | ContextEntry) -> bytes:
    """The pickle of a state or of one context's entry (``pickle.loads`` reads it back)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    # The resolver's indexes are read-only views of dicts: pickled as the views of copies.
    # (Documents pickle by their field values: ``core.pickling.fast_pickle``.)
    pickler.dispatch_table = {**copyreg.dispatch_table, MappingProxyType: _reduce_view}
    pickler.dump(patch)
    return buffer.getvalue()


def _reduce_view(view: MappingProxyType[Any, Any]) -> tuple[Any, ...]:
    return (_view, (dict(view),))


def _view(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


@functools.cache
def _rules_version() -> str:
    try:
        return importlib.metadata.version("kingfisher-secret-scanner")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a declared dependency
        return "none"


def load_masks(state: Path) -> tuple[bytes, dict[str, str | None]]:
    """The salt and the masked texts by digest (``core.scrub.Scrubber``); a new salt if none."""
    try:
        raw = json.loads((cache_dir(state) / "masked-texts.json").read_bytes())
        version = f"{code_fingerprint()}:{_rules_version()}"
        if raw.get("schema") == MASKS_SCHEMA and raw.get("version") == version:
            texts = raw["texts"]
            if isinstance(texts, dict):
                return bytes.fromhex(raw["salt"]), texts
            return bytes.fromhex(raw["salt"]), {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return os.urandom(16), {}


def save_masks(
    state: Path, salt: bytes, learned: Mapping[str, str | None], known: Mapping[str, str | None]
) -> bool:
    """Keep what this run masked; nothing is written when it equals what was loaded."""
    if learned == known:
        return True
    data = {
        "schema": MASKS_SCHEMA,
        "version": f"{code_fingerprint()}:{_rules_version()}",
        "salt": salt.hex(),
        "texts": dict(sorted(learned.items())),
    }
    return _replace(cache_dir(state) / "masked-texts.json", json.dumps(data).encode())


HISTORY_CHECK = "history-check-due"
"""Left in the cache folder when a run masked a text it had not masked before: a secret that an
earlier sync may have committed in clear (a new rule, a new vaultsync), so the next ``sync``
looks for it in the vault's history once (``vault.history``)."""


def mark_history_check(state: Path) -> None:
    """Ask the next sync to look for the stores' secrets in the vault's history."""
    _replace(cache_dir(state) / HISTORY_CHECK, b"")


def take_history_check(state: Path) -> bool:
    """Whether a history check was asked for (the request is consumed)."""
    try:
        (cache_dir(state) / HISTORY_CHECK).unlink()
    except OSError:
        return False
    return True


def _warn_key(skipped: Skipped) -> str:
    return f"{skipped.source}|{skipped.digest}|{skipped.where}|{skipped.what}"


def remember_warnings(state: Path, skipped: Iterable[Skipped]) -> tuple[Skipped, ...]:
    """``skipped`` with ``new`` set for those not warned about before; remembers them all.

    Only the sources skipped now are kept, so a file that reads again and breaks again later
    is warned about again.
    """
    path = cache_dir(state) / "warned.json"
    try:
        seen = set(json.loads(path.read_bytes()).get("warned", []))
    except (OSError, ValueError, AttributeError, TypeError):
        seen = set()
    marked = tuple(
        Skipped(
            source=s.source,
            where=s.where,
            what=s.what,
            digest=s.digest,
            new=_warn_key(s) not in seen,
        )
        for s in skipped
    )
    keys = sorted({_warn_key(s) for s in marked})
    if set(keys) != seen:
        data = json.dumps({"warned": keys}, ensure_ascii=False, indent=1).encode() + b"\n"
        _replace(path, data)
    return marked


def load_parsed_texts(state: Path) -> dict[str, ParsedText]:
    """Texts parsed by the last build (``text_digest`` → result); empty when unusable.

    The file is ``{"schema": 1, "code": "…", "texts": {digest: [title, summary, [link
    destinations], [wikilink targets], heading title]}}``, discarded whole when the code changed.
    """
    try:
        document = json.loads(documents_path(state).read_bytes())
        if (
            not isinstance(document, dict)
            or document.get("schema") != DOCUMENTS_SCHEMA
            or document.get("code") != code_fingerprint()
        ):
            return {}
        return {
            str(digest): ParsedText(
                title=str(title),
                summary=str(summary),
                link_dests=tuple(str(d) for d in dests),
                link_targets=tuple(str(t) for t in targets),
                heading_title=heading is True,
            )
            for digest, (title, summary, dests, targets, heading) in document["texts"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_parsed_texts(
    state: Path, documents: Iterable[DocumentNote], known: Mapping[str, ParsedText]
) -> bool:
    """Keep the parsed texts of this build's documents, and only those.

    The file never outgrows the stores; nothing is written when the texts are the ``known`` ones.
    """
    texts = {doc.digest: doc.parsed for doc in documents if doc.digest}
    if texts.keys() == known.keys():
        return True
    document = {
        "schema": DOCUMENTS_SCHEMA,
        "code": code_fingerprint(),
        "texts": {
            digest: [p.title, p.summary, list(p.link_dests), list(p.link_targets), p.heading_title]
            for digest, p in sorted(texts.items())
        },
    }
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    return _replace(documents_path(state), data)


def _replace(target: Path, data: bytes) -> bool:
    """Write ``data`` to ``target`` atomically (0600); ``False`` when that is not possible."""
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(target, data, mode=0o600)
    except OSError:
        return False
    return True


# Enum lookups by value through a dict: ``Kind(value)`` costs several times more, ~100,000
# times per load.
_KINDS = {kind.value: kind for kind in Kind}
_ORIGINS = {origin.value: origin for origin in Origin}


def _node(raw: dict[str, Any]) -> Node:
    return Node(
        id=str(raw["id"]),
        kind=_KINDS[raw["kind"]],
        title=str(raw["title"]),
        aliases=tuple(str(a) for a in raw["aliases"]),
    )


def _link(raw: dict[str, Any]) -> Link:
    return Link(
        source=str(raw["from"]),
        target=str(raw["to"]),
        rel=str(raw["rel"]),
        origin=_ORIGINS[raw["origin"]],
        weight=float(raw["weight"]),
    )


# ---------------------------------------------------------------------------------------------
# The extract memo (``extract.memo``): the masked value each unchanged store file gave.

MEMO_MAGIC = b"vaultsync-extract-memo-1\n"
MEMO_FILE = "extract-memo-{}.pickle"
"""One file per part (``extract.memo.part``): each reader's per-item entries (the contexts' are
large and rarely rewritten), each fixed store's (facts…): a changed fact rewrites the facts'."""
_memo_loaded: dict[Path, tuple[tuple[int, int, int], str, dict[str, Any]]] = {}
"""Memo file → (its stat data, its version, its entries) as last loaded or saved in this
process: a second read in one process (``watch``) reuses the very same record objects.  Only
one state directory's files are held (``sync --each`` reads many)."""


def memo_version_of(state: Path, caps: Caps, private_name: str) -> str:
    """The memo version of a read of ``state`` with ``caps`` (``extract.memo.memo_version``)."""
    folders = [str(folder) for folder in caps.sources.skills]
    folders.append(str(caps.sources.home or ""))
    code = f"{code_fingerprint()}:{_readers_version()}"
    return memo_version(code, _rules_version(), caps.store_file_mib, folders, private_name)


@functools.cache
def _readers_version() -> str:
    """Python's and the YAML reader's versions: they decide what a store file reads as too."""
    try:
        yaml = importlib.metadata.version("ruamel.yaml")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a declared dependency
        yaml = "none"
    return f"{sys.version}:{yaml}"


def load_extract_memo(state: Path, version: str, salt: bytes) -> Memo:
    """The memo of the last read when it has this version; an empty one otherwise (never fails)."""
    entries: dict[str, Any] = {}
    written = {}
    try:
        paths = sorted(cache_dir(state).glob(MEMO_FILE.format("*")))
    except OSError:
        paths = []
    for path in paths:
        name = path.name[len("extract-memo-") : -len(".pickle")]
        entries_of, written[name] = _load_memo_part(path, version)
        entries.update(entries_of)
    return Memo(entries=entries, written=written, salt=salt)


def _memo_path(state: Path, name: str) -> Path:
    return cache_dir(state) / MEMO_FILE.format(name)


def _load_memo_part(path: Path, version: str) -> tuple[dict[str, Any], int]:  # noqa: PLR0911 - one per way a cache file is unusable
    """One memo file's entries and mtime; ``({}, 0)`` when missing, foreign or corrupt."""
    try:
        info = path.stat()
    except OSError:
        return {}, 0
    key = (info.st_size, info.st_mtime_ns, info.st_ino)
    held = _memo_loaded.get(path)
    if held is not None and held[0] == key:
        return (held[2], info.st_mtime_ns) if held[1] == version else ({}, 0)
    try:
        data = path.read_bytes()
    except OSError:
        return {}, 0
    head, _, body = data.partition(b"\n\n")
    if head != MEMO_MAGIC + version.encode():
        return {}, 0
    try:
        entries = pickle.loads(body)  # noqa: S301 - our own file, 0600 in a 0700 folder
    except Exception:
        return {}, 0
    if not isinstance(entries, dict):
        return {}, 0
    _hold(path, (key, version, entries))
    return entries, info.st_mtime_ns


def save_extract_memo(state: Path, version: str, memo: Memo, entries: dict[str, Any]) -> bool:
    """Keep ``entries`` for the next read (0600): each memo file only when its part changed.

    ``False`` when a file could not be written.
    """
    saved = True
    for name in sorted({part(key) for key in (*entries, *memo.entries)}):
        now = {key: value for key, value in entries.items() if part(key) == name}
        loaded = {key: value for key, value in memo.entries.items() if part(key) == name}
        if changed(now, loaded, memo.fresh):
            saved = _save_memo_part(_memo_path(state, name), version, now) and saved
    return saved


def _save_memo_part(path: Path, version: str, entries: dict[str, Any]) -> bool:
    body = pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)
    if not _replace(path, MEMO_MAGIC + version.encode() + b"\n\n" + body):
        return False
    with contextlib.suppress(OSError):
        info = path.stat()
        _hold(path, ((info.st_size, info.st_mtime_ns, info.st_ino), version, entries))
    return True


def _hold(path: Path, held: tuple[tuple[int, int, int], str, dict[str, Any]]) -> None:
    """Keep one memo file's entries in this process, forgetting other state directories'."""
    for other in [other for other in _memo_loaded if other.parent != path.parent]:
        del _memo_loaded[other]
    _memo_loaded[path] = held

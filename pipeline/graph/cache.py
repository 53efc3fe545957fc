"""The graph's caches in vaultsync's own cache folder, and the graph's JSON form.

vaultsync never writes into the state directory (ChatCLI keeps its own schema-1 cache at
``memory/graph.json``, which is never read, written or deleted here).  Its caches live in
:func:`cache_dir`: ``$VAULTSYNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/vaultsync``, else
``~/.cache/vaultsync``, then one folder per state directory, named by a digest of its real
path (so every command finds the same cache whatever vault it names, and two state
directories never share one).  Edge: reads and writes that folder only.  The graph itself is
kept there by ``graph.graphdb``, under :func:`graph_fingerprint`.

Beside the graph, ``graph.parsedtexts`` keeps what parsing each document's text gave (title,
summary, links), by a digest of the text: a full build parses only the texts it has not seen
("derived once per context revision").

``vaultsync graph export`` prints the graph as JSON (:func:`graph_to_json`) of exactly
this shape, so other tools can read it::

    {"schema": 2, "fingerprint": "…",
     "nodes": [{"id", "kind", "title", "aliases": […]}, …],
     "links": [{"from", "to", "rel", "origin", "weight"}, …]}

nodes sorted by id, links by (from, to, rel).

Two more things keep what one bad store file must not lose (``extract.skips``):
``last-good-NN.pickle``, the last good record of every per-item source (a skipped source
answers it, so its note stays as it was) in 16 files by a digest of the source's path (a
one-fact change rewrites one, and pickles only those holding a value the extract memo does
not prove), and ``warned.json``, the skipped sources already warned
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
import io
import json
import marshal
import math
import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from json.encoder import encode_basestring
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vaultsync.core import cachefile
from vaultsync.core.cachefile import cache_dir
from vaultsync.core.digest import code_fingerprint
from vaultsync.core.model import Graph, Link, Node, Origin, Skipped
from vaultsync.core.process import paused_gc
from vaultsync.core.redact import rules_version
from vaultsync.core.settings import Caps
from vaultsync.extract.sources import store_fingerprint
from vaultsync.graph.patch import (
    STATE_VERSION,
    ContextEntry,
    PatchState,
    entry_file,
    entry_key,
)

GRAPH_SCHEMA = 2
MASKS_SCHEMA = 1


LAST_GOOD_VERSION = 3
LAST_GOOD_PARTS = 16
"""The last good records are kept in this many files, each source's by a digest of its path."""
LAST_GOOD_FILE = "last-good-{:02d}.pickle"
LAST_GOOD_GLOB = "last-good-[0-9][0-9].pickle"
PATCH_VERSION = 2


def graph_fingerprint(state: Path, caps: Caps) -> str:
    """Digest of the stores' stat data, the caps, the graph's code and the secret rules' version."""
    stores = store_fingerprint(state, caps.sources)
    text = f"{code_fingerprint()}:{rules_version()}\n{caps.as_key()}\n{stores}"
    return hashlib.sha256(text.encode()).hexdigest()


def graph_to_json(graph: Graph) -> bytes:
    """The compact, byte-stable JSON form of a graph.

    Exactly ``json.dumps(document, ensure_ascii=False, separators=(",", ":"))`` of the
    documented shape (``tests/graph/test_cache.py`` holds the two equal), written one node and one
    link at a time with the json module's own string encoder: building 400,000 dicts for the
    encoder took about 60 % of the time at 100,000 notes.
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


def load_last_good(state: Path) -> dict[str, Any]:
    """The last good record of each per-item source (relative path → record); ``{}`` if none.

    Written by this module only, in the user's own cache folder (0700, the files 0600); a part
    of another code version, or one that does not load, is left out.
    """
    found: dict[str, Any] = {}
    head = _last_good_head()
    for path in _last_good_parts(state):
        found.update(_last_good_part(path, head))
    return found


def _last_good_part(path: Path, head: bytes) -> dict[str, Any]:
    """One part's records; ``{}`` when it is of another version or does not load."""
    payload = cachefile.read(path, head)
    if payload is None:
        return {}
    body = payload.partition(b"\n")[2]  # after the digest line
    try:
        loaded = pickle.loads(body)  # noqa: S301 - our own file, 0600 in a 0700 folder
    except Exception:  # a cache that does not load is no cache
        return {}
    return loaded if isinstance(loaded, dict) else {}


class LastGood(Mapping[str, Any]):
    """:func:`load_last_good`, read the first time a record is asked for.

    A read asks only when an item of a store is skipped: at 100,000 notes the file is 42 MB of
    records that a sync without a bad item never needs.
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


def save_last_good(
    state: Path,
    good: Mapping[str, Any],
    *,
    proven: Mapping[str, bytes] | None = None,
    masking: bytes = b"",
) -> bool:
    """Keep ``good`` as the last good records; a part that holds its records is not written.

    Each part's second line says what its records are, so unchanged ones are told from the
    file's first bytes, without loading it.  A part whose every source is ``proven`` (a value
    the extract memo proves, by its key and stamps: ``extract.memo.Memo.proven``) is said by
    those proofs and ``masking`` (a digest of what masked the values since), so it is not even
    pickled: at 100,000 notes, pickling every part to learn one changed took 0.6 s of a
    one-fact sync.  Any other part is said by a digest of its pickle.  A resident process
    (``watch``) does not pickle a part whose records are the very objects it saved last time.
    A one-shot sync writes them with its other saves (``cachefile.later``); the caller saves
    them before the extract memo, whose entries the proofs name.
    """
    said = functools.partial(_said, proven or {}, masking)
    return cachefile.later(
        cache_dir(state) / "last-good", functools.partial(_write_last_good, state, good, said)
    )


def _said(proven: Mapping[str, bytes], masking: bytes, records: Mapping[str, Any]) -> bytes:
    """The digest line of a part holding ``records``: by their proofs, else by their pickle."""
    if not all(rel in proven for rel in records):
        return b""
    digest = hashlib.blake2b(masking, digest_size=16, person=b"last-good-proof")
    for rel in sorted(records):
        digest.update(f"{len(rel)}:{rel}\0".encode("utf-8", "surrogatepass"))
        digest.update(proven[rel] + b"\0")
    return b"proven-" + digest.hexdigest().encode()


def _write_last_good(
    state: Path, good: Mapping[str, Any], said: Callable[[Mapping[str, Any]], bytes]
) -> bool:
    parts: dict[str, dict[str, Any]] = {}
    for rel, value in sorted(good.items()):
        parts.setdefault(_part_of(rel), {})[rel] = value
    for stale in _last_good_parts(state):
        if stale.name not in parts:
            with contextlib.suppress(OSError):
                stale.unlink()
    with contextlib.suppress(OSError):
        (cache_dir(state) / "last-good.pickle").unlink()  # one file, before the parts
    saved = True
    for name, records in sorted(parts.items()):
        saved = _save_last_good_part(cache_dir(state) / name, records, said(records)) and saved
    return saved


def _save_last_good_part(path: Path, records: dict[str, Any], said: bytes) -> bool:
    base = _last_good_head()
    kept = cachefile.held(path, base)
    if isinstance(kept, dict) and _same_objects(kept, records):
        return True
    body = None if said else pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
    if body is not None:
        said = hashlib.blake2b(body, digest_size=16).hexdigest().encode()
    head = base + said + b"\n"
    if cachefile.holds(path, head):
        cachefile.hold(path, base, records)
        return True
    if body is None:
        body = pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
    if not cachefile.write(path, head, body):
        # a part left as it was could later be said by proofs its records no longer match
        with contextlib.suppress(OSError):
            path.unlink()
        return False
    cachefile.hold(path, base, records)
    return True


def _same_objects(kept: Mapping[str, Any], records: Mapping[str, Any]) -> bool:
    return kept.keys() == records.keys() and all(kept[rel] is records[rel] for rel in records)


def _part_of(rel: str) -> str:
    digest = hashlib.blake2b(rel.encode("utf-8", "surrogatepass"), digest_size=2).digest()
    return LAST_GOOD_FILE.format(int.from_bytes(digest, "big") % LAST_GOOD_PARTS)


def _last_good_parts(state: Path) -> list[Path]:
    """The files the last good records are kept in (``last-good-NN.pickle`` in the cache)."""
    try:
        return sorted(cache_dir(state).glob(LAST_GOOD_GLOB))
    except OSError:
        return []


def _last_good_head() -> bytes:
    return cachefile.envelope("last-good", LAST_GOOD_VERSION, code_fingerprint())


def patch_state_path(state: Path) -> Path:
    """Where the incremental build's state lives: ``graph-patch.pickle`` in :func:`cache_dir`."""
    return cache_dir(state) / "graph-patch.pickle"


def _patch_head(caps: Caps) -> bytes:
    key = f"{code_fingerprint()}:{rules_version()}:{STATE_VERSION}\n{caps.as_key()}"
    return cachefile.envelope("graph-patch", PATCH_VERSION, key)


def load_patch_state(state: Path, caps: Caps) -> PatchState | None:
    """The state the last build left (``graph.patch``), or ``None`` when it cannot be trusted.

    Its header holds a digest of the code version, the secret rules' version, the state's
    version and the caps: any difference, an unreadable or corrupt file, means a full build.
    A context's entry lives in its own file (``graph-patch/<its key>-<tag>``, written once,
    since the key is a digest of its inputs and the tag one of the answers its links were made
    under: ``graph.patch.entry_file``); one that is missing or does not load is left out, and
    the build derives that context's documents again.
    """
    head = _patch_head(caps)
    # a resident process (watch): the state its last build saved, or it loaded, from memory
    kept = cachefile.load_held(patch_state_path(state), head, lambda: _load_patch(state, head))
    return kept if isinstance(kept, PatchState) else None


def _load_patch(state: Path, head: bytes) -> PatchState | None:
    payload = cachefile.read(patch_state_path(state), head)
    loaded = state_from_bytes(payload) if payload is not None else None
    if loaded is None or loaded.version != STATE_VERSION:
        return None
    folder = _contexts_folder(state)
    for name in loaded.context_files:
        key = entry_key(name)
        entry = cachefile.load_pickle(folder / name, head) if key is not None else None
        if key is not None and isinstance(entry, ContextEntry):
            loaded.contexts[key] = entry
    return loaded


def save_patch_state(state: Path, caps: Caps, patch: PatchState) -> bool:
    """Keep the incremental build's state (0600); ``False`` when it cannot be written.

    Only the contexts' entries not written before are written; those no build uses now are
    deleted.  A resident process writes it after its sync (``cachefile.save``).
    """
    head = _patch_head(caps)
    return cachefile.save(
        patch_state_path(state), head, patch, lambda: _write_patch_state(state, head, patch)
    )


def _write_patch_state(state: Path, head: bytes, patch: PatchState) -> bool:
    folder = _contexts_folder(state)
    names = {entry_file(key, entry): entry for key, entry in patch.contexts.items()}
    with contextlib.suppress(OSError):
        for stale in folder.iterdir():
            if stale.name not in names:
                stale.unlink()
    ok = True
    for name, entry in sorted(names.items()):
        path = folder / name
        if not cachefile.holds(path, head):
            ok = cachefile.write(path, head, pickle_patch_state(entry)) and ok
    main = replace(patch, context_files=tuple(sorted(names)))
    # all of it on disk, or the next build of a resident process does not start from it
    return cachefile.write(patch_state_path(state), head, state_bytes(main)) and ok


def _contexts_folder(state: Path) -> Path:
    return cache_dir(state) / "graph-patch"


_PLAIN: tuple[tuple[str, type], ...] = (
    ("version", int),
    ("context_files", tuple),
    ("wikilinks", dict),
    ("mention_names", bytes),
    ("mentions", dict),
    ("normalized", dict),
    ("project_names", bytes),
    ("session_projects", dict),
    ("nodes", dict),
    ("records", dict),
    ("sources", dict),
    ("names", dict),
    ("build_id", str),
)
"""The fields of a :class:`PatchState` made of plain values, and the type each one has."""


def state_bytes(patch: PatchState) -> tuple[bytes, ...]:
    """A state without its contexts' entries: its plain tables, then its mention finder.

    The tables are marshalled (version 2, no shared references): four times faster than a
    pickle, and, written by a forked helper, reading them writes to none of this process's
    objects, where a pickle counts a reference to each one (a page copied per object read).
    """
    plain = marshal.dumps(tuple(getattr(patch, name) for name, _ in _PLAIN), 2)
    return cachefile.two_parts(plain, pickle_patch_state(patch.finder))


def state_from_bytes(data: bytes) -> PatchState | None:
    """The state :func:`state_bytes` wrote (its chunks joined); ``None`` when it is not one."""
    try:
        marshalled, pickled = cachefile.split_parts(data)
        with paused_gc():  # a few million strings and tuples, no cycles
            # our own file, 0600 in a 0700 folder; marshal builds plain values, runs nothing
            plain = marshal.loads(marshalled)  # noqa: S302
            finder = pickle.loads(pickled)  # noqa: S301 - the same file
    except Exception:  # a cache that does not load is no cache
        return None
    if not isinstance(plain, tuple) or len(plain) != len(_PLAIN):
        return None
    if any(type(value) is not kind for value, (_, kind) in zip(plain, _PLAIN, strict=True)):
        return None
    tables = {name: value for (name, _), value in zip(_PLAIN, plain, strict=True)}
    return PatchState(**tables, finder=finder)


def pickle_patch_state(patch: object) -> bytes:
    """The pickle of one context's entry, or of a state's part (``pickle.loads`` reads it)."""
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


MASKS_FILE = "masked-texts.json"
_MASKS_HEAD = b""  # a JSON file, its version inside it


def load_masks(state: Path) -> tuple[bytes, dict[str, str | None]]:
    """The salt and the masked texts by digest (``core.scrub.Scrubber``); a new salt if none.

    A resident process takes back what its last sync saved (``cachefile.held``), never the
    masks it loaded before that sync.
    """
    path = cache_dir(state) / MASKS_FILE
    found = cachefile.load_held(path, _MASKS_HEAD, lambda: _read_masks(path))
    return found if isinstance(found, tuple) else (_first_salt(path), {})


def _read_masks(path: Path) -> tuple[bytes, dict[str, str | None]] | None:
    try:
        raw = json.loads(path.read_bytes())
        version = f"{code_fingerprint()}:{rules_version()}"
        if raw.get("schema") == MASKS_SCHEMA and raw.get("version") == version:
            texts = raw["texts"]
            return bytes.fromhex(raw["salt"]), texts if isinstance(texts, dict) else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


@functools.cache
def _first_salt(path: Path) -> bytes:
    """A new salt, the same for every read of this process until a sync saves one."""
    return os.urandom(16)


def save_masks(
    state: Path, salt: bytes, learned: Mapping[str, str | None], known: Mapping[str, str | None]
) -> bool:
    """Keep what this run masked; nothing is written when it equals what was loaded."""
    if learned == known:
        return True
    texts = dict(sorted(learned.items()))
    data = {
        "schema": MASKS_SCHEMA,
        "version": f"{code_fingerprint()}:{rules_version()}",
        "salt": salt.hex(),
        "texts": texts,
    }
    path = cache_dir(state) / MASKS_FILE
    # a resident process (watch) writes it after its sync: the earlier file is a smaller cache
    return cachefile.save(
        path, _MASKS_HEAD, (salt, texts), lambda: _replace(path, json.dumps(data).encode())
    )


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


def _warned_path(state: Path) -> Path:
    return cache_dir(state) / "warned.json"


def _warned(state: Path) -> set[str]:
    try:
        return set(json.loads(_warned_path(state).read_bytes()).get("warned", []))
    except (OSError, ValueError, AttributeError, TypeError):
        return set()


def marked_new(state: Path, skipped: Iterable[Skipped]) -> tuple[Skipped, ...]:
    """``skipped`` with ``new`` set for those not warned about before (nothing is written).

    Read-only, so a build that says nothing (``watch`` working a sync out ahead) leaves each
    warning to the command that says it (:func:`remember_warned`).
    """
    seen = _warned(state)
    return tuple(
        Skipped(
            source=s.source,
            where=s.where,
            what=s.what,
            digest=s.digest,
            new=_warn_key(s) not in seen,
        )
        for s in skipped
    )


def remember_warned(state: Path, skipped: Iterable[Skipped]) -> None:
    """Remember ``skipped`` as warned about, once a command said them.

    Only the sources skipped now are kept, so a file that reads again and breaks again later
    is warned about again.
    """
    keys = sorted({_warn_key(s) for s in skipped})
    if set(keys) != _warned(state):
        data = json.dumps({"warned": keys}, ensure_ascii=False, indent=1).encode() + b"\n"
        _replace(_warned_path(state), data)


def _replace(target: Path, data: bytes) -> bool:
    """Write a JSON cache (its version inside it) atomically, 0600; ``False`` when impossible."""
    return cachefile.write(target, b"", data)

"""The engine's records in ``.vaultsync/`` and the vault-path rule; pure (bytes in, bytes out).

Three records, each with its own job and failure mode:

* ``manifest.json``, committed with every sync: for each note the engine wrote, its graph node,
  the spec key and the git blob id of the bytes written, plus the paths the user deleted. It is
  deterministic (no times, no stat data): the same vault state gives the same bytes, so an
  interrupted sync and an uninterrupted one reach the same git tree. One entry per line, so a
  diff shows one line per changed note. Missing → an empty manifest; unreadable, foreign or of
  another schema → an empty manifest flagged ``corrupt`` (never an exception): that sync keeps
  every existing file unless git history proves it is ours.
* ``cache.json``, local and git-ignored: the stat data (size, mtime, inode) a file had when its
  blob was known. A match skips hashing. Only a hint: a lost or bad cache costs hashing, never
  correctness. Stat data lives here, not in the manifest, so the manifest stays deterministic.
* ``journal.json``, local and git-ignored: the intents of a sync, written durably before its
  first note is touched and removed once its commit and index sync are done. The next sync
  reads a leftover journal to adopt the files the killed sync wrote (a file whose blob is the
  intended one is ours), to finish its commit and index sync, and to find its temp files.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
from collections.abc import Collection, ItemsView, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vaultsync.core.errors import UnsafePathError
from vaultsync.core.process import paused_gc
from vaultsync.core.vaultpath import all_safe, is_drive, is_safe

if TYPE_CHECKING:
    from vaultsync.core.model import Skipped

CONTROL_DIR = ".vaultsync"
MANIFEST = f"{CONTROL_DIR}/manifest.json"
CACHE = f"{CONTROL_DIR}/cache.json"
JOURNAL = f"{CONTROL_DIR}/journal.json"
LOCK = f"{CONTROL_DIR}/lock"
GITIGNORE = f"{CONTROL_DIR}/.gitignore"
GITIGNORE_BYTES = (
    b"# vaultsync: only the manifest and the saved config are versioned\n"
    b"*\n!.gitignore\n!manifest.json\n!config.toml\n"
)
SCHEMA = 1
ENGINE = "vaultsync"

_BLOB = re.compile(r"[0-9a-f]{40}")
_BLOB_ENDED = re.compile(rb'[0-9a-f]{40}"')

StatKey = tuple[int, int, int]
"""``(size, mtime_ns, inode)`` of a regular file."""
UNPROVEN_NS = -1
"""An mtime no file has: stat data recorded with it match no file, which is read next time."""


def stat_key(found: os.stat_result) -> StatKey:
    """The stat data that tell whether a file changed since they were taken."""
    return (found.st_size, found.st_mtime_ns, found.st_ino)


def blob_id(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints; no filters applied)."""
    digest = hashlib.sha1(b"blob %d\x00" % len(data), usedforsecurity=False)
    digest.update(data)  # not joined to the header: a 25 MB manifest was copied to be hashed
    return digest.hexdigest()


def check_path(rel: str, *, control: bool = False) -> tuple[str, ...]:
    r"""Split a vault-relative POSIX path into its parts, or raise ``UnsafePathError``.

    Refused: empty, absolute, ``\\``, NUL, a drive letter (``C:``), ``.``/``..``/empty parts and
    any dot part (``.obsidian``, ``.git``, ``.trash``, dotfiles); ``control=True`` allows the
    engine's own files, ``.vaultsync/<name>``, and nothing else that starts with a dot.
    """
    if not control and is_safe(rel):  # the usual path, in one regex
        return tuple(rel.split("/"))
    parts = _relative_parts(rel)
    if control:
        if parts[0] != CONTROL_DIR or len(parts) != 2:
            raise UnsafePathError(f"{rel!r}: not an engine file")
    elif any(part.startswith(".") for part in parts):
        raise UnsafePathError(f"{rel!r}: dot folders and dotfiles are never written")
    return parts


def _relative_parts(rel: str) -> tuple[str, ...]:
    """The parts of a relative POSIX path with no empty, ``.`` or ``..`` part, else raise."""
    if not rel or rel.startswith("/") or "\\" in rel or "\x00" in rel or is_drive(rel):
        raise UnsafePathError(f"{rel!r}: not a relative vault path")
    parts = tuple(rel.split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise UnsafePathError(f"{rel!r}: empty, '.' or '..' path component")
    return parts


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """What the engine last wrote at one path."""

    node: str
    key: str
    blob: str
    """Git blob id (SHA-1 hex) of the bytes written; for a merged note, the merge base."""
    theirs: str = ""
    """A merge conflict is pending: the blob of the render that could not be merged."""
    chosen: bool = False
    """The user moved the note here (``vault.moves``): its renders stay at this path."""
    wrote: str = ""
    """Journal intents only: the blob a merge writes (``blob`` is then its base)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Manifest:
    """The loaded manifest; ``entries`` maps vault paths to what the engine wrote there."""

    entries: Mapping[str, Entry] = field(default_factory=lambda: MappingProxyType({}))
    deleted: frozenset[str] = frozenset()
    released: frozenset[str] = frozenset()
    """Notes the user took over (``vaultsync release``): never written or removed again."""
    corrupt: bool = False
    problem: str = ""
    """Why it is corrupt, for the report."""
    fingerprint: str = ""
    """Blob id of the bytes read (``""`` when missing): compared with a sync commit's trailer."""
    render_format: int = 1
    """The render format of the notes it records (``render.specs.RENDER_FORMAT``); 1 when
    the manifest names none (written before formats were recorded)."""
    newer: str = ""
    """What says a newer vaultsync wrote it (``schema 2``): it must not be read as older."""

    @property
    def lost(self) -> bool:
        """Missing or corrupt: ownership must come from git history."""
        return self.corrupt or not self.fingerprint


def _corrupt(problem: str, fingerprint: str) -> Manifest:
    return Manifest(corrupt=True, problem=problem, fingerprint=fingerprint)


def _entry(value: Any) -> Entry | None:
    if not isinstance(value, dict):
        return None
    node, key, blob = value.get("node"), value.get("key"), value.get("blob")
    theirs, chosen = value.get("theirs", ""), value.get("chosen", False)
    wrote = value.get("wrote", "")
    if not isinstance(chosen, bool) or not isinstance(wrote, str):
        return None
    if wrote and not _BLOB.fullmatch(wrote):
        return None
    if not (
        isinstance(node, str)
        and isinstance(key, str)
        and isinstance(blob, str)
        and isinstance(theirs, str)
    ):
        return None
    if not _BLOB.fullmatch(blob) or (theirs and not _BLOB.fullmatch(theirs)):
        return None
    return Entry(node=node, key=key, blob=blob, theirs=theirs, chosen=chosen, wrote=wrote)


def load_manifest(  # noqa: PLR0911 - one return per way a manifest can be unusable
    data: bytes | None, *, fingerprint: str = ""
) -> Manifest:
    """Parse ``manifest.json`` bytes (``None`` = missing); never raises."""
    if data is None:
        return Manifest()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # nested past the parser's depth
        return _corrupt("not valid UTF-8 JSON", fingerprint)
    if not isinstance(doc, dict) or doc.get("engine") != ENGINE:
        return _corrupt("not a vaultsync manifest", fingerprint)
    schema = doc.get("schema")
    if type(schema) is int and schema > SCHEMA:
        return replace(_corrupt(f"schema {schema}", fingerprint), newer=f"schema {schema}")
    if schema != SCHEMA:
        return _corrupt(f"schema {schema!r}, expected {SCHEMA}", fingerprint)
    raw_entries, raw_deleted = doc.get("entries"), doc.get("deleted", [])
    raw_released = doc.get("released", [])
    if not isinstance(raw_entries, dict) or not isinstance(raw_deleted, list):
        return _corrupt("entries or deleted has the wrong type", fingerprint)
    entries, bad = _entries(raw_entries)
    if bad is not None:
        return _corrupt(f"bad entry {bad!r}", fingerprint)
    for name, paths in (("deleted", raw_deleted), ("released", raw_released)):
        if not _safe_paths(paths):
            return _corrupt(f"bad path in {name}", fingerprint)
    render_format = doc.get("render_format", 1)
    return Manifest(
        entries=MappingProxyType(entries),
        deleted=frozenset(raw_deleted),
        released=frozenset(raw_released),
        fingerprint=fingerprint,
        render_format=render_format if type(render_format) is int else 1,
    )


_new = object.__new__
_SET = tuple(
    Entry.__dict__[name].__set__ for name in ("node", "key", "blob", "theirs", "chosen", "wrote")
)


def _plain_entry(node: str, key: str, blob: str) -> Entry:
    """``Entry(node=node, key=key, blob=blob)``, twice as fast.

    The slots are set through their member descriptors: a frozen dataclass's ``__init__`` goes
    through ``object.__setattr__`` per field, which is most of the cost of loading 100,000.
    """
    entry: Entry = _new(Entry)
    set_node, set_key, set_blob, set_theirs, set_chosen, set_wrote = _SET
    set_node(entry, node)
    set_key(entry, key)
    set_blob(entry, blob)
    set_theirs(entry, "")
    set_chosen(entry, False)
    set_wrote(entry, "")
    return entry


def _entries(raw: dict[str, Any]) -> tuple[dict[str, Entry], str | None]:
    """The entries by path, or the first bad path (``None``: none; ``""`` can be bad).

    The usual entry (``node``, ``key``, ``blob`` and nothing else) is checked in bulk: its
    blob with all the others, its path with all paths; anything else entry by entry.
    """
    entries: dict[str, Entry] = {}
    blobs: list[str] = []
    for path, value in raw.items():
        if type(value) is dict and len(value) == 3:
            node, key, blob = value.get("node"), value.get("key"), value.get("blob")
            if type(node) is str and type(key) is str and type(blob) is str and len(blob) == 40:
                entries[path] = _plain_entry(node, key, blob)
                blobs.append(blob)
                continue
        entry = _entry(value)
        if entry is None:
            return {}, _first_bad(raw)
        entries[path] = entry
    if not _lower_hex("".join(blobs)) or not all_safe(list(entries)):
        return {}, _first_bad(raw)
    return entries, None


def _lower_hex(text: str) -> bool:
    """Whether ``text`` holds lower-case hex digits only: in C, ten times a regex's speed.

    ``bytes.fromhex`` also skips whitespace, which the length of what it gives shows.
    """
    try:
        return 2 * len(bytes.fromhex(text)) == len(text) and not any(c in text for c in "ABCDEF")
    except ValueError:
        return False


def _first_bad(raw: dict[str, Any]) -> str | None:
    """The first path whose entry or path is bad (the slow, one-by-one check)."""
    for path, value in raw.items():
        if _entry(value) is None or not is_safe(path):
            return path
    return None


def _safe_paths(paths: object) -> bool:
    return isinstance(paths, list) and all(isinstance(p, str) for p in paths) and all_safe(paths)


_KNOWN_MANIFESTS: dict[bytes, Manifest] = {}
"""The last manifests parsed in this process, by their bytes (two at most)."""
_written: tuple[bytes, Manifest] | None = None
"""The last manifest a sync of this process wrote: its bytes and what they record."""


def parsed_manifest(data: bytes) -> Manifest:
    """The manifest parsed once per process for the same bytes.

    The moves search, the plan and the search index all read it; a 100,000-note manifest takes
    half a second.  The bytes a sync of this process wrote are not parsed: they are what it
    recorded.
    """
    found = _KNOWN_MANIFESTS.get(data)
    if found is None:
        with paused_gc():  # an entry per note, no cycles
            found = _as_written(data) or load_manifest(data, fingerprint=blob_id(data))
        while len(_KNOWN_MANIFESTS) >= 2:
            del _KNOWN_MANIFESTS[next(iter(_KNOWN_MANIFESTS))]
        _KNOWN_MANIFESTS[data] = found
    return found


def know_written_manifest(data: bytes, written: Manifest) -> None:
    """Take a manifest just written as ``data`` (its dump) as its parse, ``written``.

    The next sync of a process that runs sync after sync (``watch``), and the search index's
    update after a sync, do not parse it again; nothing is done until then.
    """
    global _written  # noqa: PLW0603 - one per process, like the parses it stands for
    _written = (data, written)


def _as_written(data: bytes) -> Manifest | None:
    """The manifest a sync of this process wrote as ``data``, as a parse gives it."""
    if _written is None or _written[0] != data:
        return None
    written = _written[1]
    # in the order a parse gives
    return replace(written, entries=MappingProxyType(dict(sorted(written.entries.items()))))


def _line(key: str, value: object) -> str:
    return json.dumps(key, ensure_ascii=False) + ": " + json.dumps(value, ensure_ascii=False)


_quote = (
    json.encoder.encode_basestring
)  # the C encoder: what json.dumps(s, ensure_ascii=False) gives


def _row_key(path: str) -> str:
    """How a dump's row of the entry at ``path`` begins (one row per line)."""
    return f"    {_quote(path)}: "


def _entry_json(entry: Entry) -> str:
    chosen = ', "chosen": true' if entry.chosen else ""
    theirs = f', "theirs": "{entry.theirs}"' if entry.theirs else ""
    return (
        f'{{"blob": "{entry.blob}"{chosen}, "key": {_quote(entry.key)}, '
        f'"node": {_quote(entry.node)}{theirs}}}'
    )


_HEAD = f"{{\n  {_line('schema', SCHEMA)},\n  {_line('engine', ENGINE)},\n"
"""How every dumped manifest begins."""
_DUMP_HEAD = _HEAD.encode()


def dump_manifest(
    entries: Mapping[str, Entry],
    deleted: frozenset[str],
    released: frozenset[str] = frozenset(),
    *,
    render_format: int = 1,
) -> bytes:
    """Serialize deterministically: sorted, one entry per line, UTF-8, trailing newline.

    ``released`` is written only when some note was released, and ``render_format`` only
    when it is not 1, so older manifests keep their bytes.  The entries are encoded line by
    line and joined once: at 100,000 notes they are 20 MB, and each whole copy (joined as
    text, concatenated, encoded) was one more at a first sync's peak memory.
    """
    rows = b",\n".join(
        f"{_row_key(p)}{_entry_json(e)}".encode() for p, e in sorted(entries.items())
    )
    gone = ",\n".join("    " + _quote(p) for p in sorted(deleted))
    freed = ",\n".join("    " + _quote(p) for p in sorted(released))
    head = _HEAD + (f"  {_line('render_format', render_format)},\n" if render_format != 1 else "")
    tail = (
        ('  "deleted": [\n' + gone + "\n  ]" if deleted else '  "deleted": []')
        + (',\n  "released": [\n' + freed + "\n  ]\n" if released else "\n")
        + "}\n"
    )
    if not entries:
        return (head + '  "entries": {},\n' + tail).encode()
    return b"".join((head.encode(), b'  "entries": {\n', rows, b"\n  },\n", tail.encode()))


ROWS_AT_MOST = 16
"""More paths than this: :func:`recorded_blobs` leaves the manifest to a whole parse."""


def recorded_blobs(data: bytes, paths: Collection[str]) -> dict[str, str] | None:
    """The blob a dumped manifest records for each of ``paths``, read from their rows.

    For a few paths of a big manifest (history: the manifest a sync committed, 25 MB at
    100,000 notes, parses in a second; a row is found in milliseconds).  ``None`` when the
    bytes are not laid out as :func:`dump_manifest` lays them, a path has no row, or there
    are more than :data:`ROWS_AT_MOST` paths: then parse it whole (:func:`load_manifest`).
    A row is the line a path's entry starts, a JSON string holding no line break.
    """
    if len(paths) > ROWS_AT_MOST or not data.startswith(_DUMP_HEAD):
        return None
    found: dict[str, str] = {}
    for path in paths:
        row = f'\n{_row_key(path)}{{"blob": "'.encode()  # _entry_json's first field
        at = data.find(row)
        blob = data[at + len(row) : at + len(row) + 41] if at >= 0 else b""
        if not _BLOB_ENDED.fullmatch(blob):
            return None
        found[path] = blob[:40].decode("ascii")
    return found


PATCH_AT_MOST = 2000
"""More changed entries than this: the manifest is dumped whole (patching saves nothing)."""


def _row(path: str, entry: Entry) -> bytes:
    return f"{_row_key(path)}{_entry_json(entry)},".encode()


def _changed_paths(before: Mapping[str, Entry], entries: Mapping[str, Entry]) -> list[str] | None:
    """The paths whose entry differs, is new or is gone; ``None`` past ``PATCH_AT_MOST``."""
    changed = [p for p, e in entries.items() if (old := before.get(p)) is not e and old != e]
    added = sum(p not in before for p in changed)
    removed = len(before) - (len(entries) - added)  # entries of ``before`` not in ``entries``
    if len(changed) + removed > PATCH_AT_MOST:
        return None
    if removed:
        changed += [p for p in before if p not in entries]
    return changed


def patch_manifest(
    previous: bytes, before: Mapping[str, Entry], entries: Mapping[str, Entry]
) -> bytes | None:
    """``dump_manifest(entries, …)`` made from ``previous`` by rewriting only the changed lines.

    ``previous`` must be ``dump_manifest(before, deleted, released, render_format=…)`` with the
    same ``deleted``, ``released`` and render format as the result (the caller proves it: the
    cache records the blob id of the manifest a sync dumped).  An entry is unchanged when it is
    the very object (or an equal one) ``before`` holds; each other one's line is replaced,
    inserted or dropped in place.  ``None`` when patching does not apply (an empty side, too
    many changes, or ``previous`` not laid out as a dump): the caller dumps in full.
    At 100,000 entries a dump takes 0.5 s, a patch of one line a few hundredths.
    """
    if not before or not entries:
        return None
    changed = _changed_paths(before, entries)
    if changed is None:
        return None
    lines = previous.split(b"\n")
    try:
        start = lines.index(b'  "entries": {') + 1
    except ValueError:
        return None
    end = start + len(before)
    if end >= len(lines) or lines[end] != b"  },":
        return None
    body = lines[start:end]
    body[-1] += b","
    paths = sorted(before)
    if body[0] != _row(paths[0], before[paths[0]]):  # laid out by another version's dump
        return None
    for path in sorted(changed, reverse=True):  # from the end: earlier indices stay put
        at = bisect.bisect_left(paths, path)
        there = at < len(paths) and paths[at] == path
        if path not in entries:
            del body[at]
        elif there:
            body[at] = _row(path, entries[path])
        else:
            body.insert(at, _row(path, entries[path]))
    body[-1] = body[-1][:-1]
    return b"\n".join([*lines[:start], *body, *lines[end:]])


@dataclass(frozen=True, slots=True, kw_only=True)
class LastSync:
    """What the last conflict-free sync left for ``status`` and ``check`` (``vault.known``).

    Recorded with the cache's ``inputs``: while those hold, a full plan would find exactly
    these edited notes (their files differ from what the engine last wrote), these deleted
    notes and these skipped store files, so ``status`` reads them instead of planning.
    """

    edited: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    """The store files that sync skipped (masked, as printed)."""
    unchanged: int | None = None
    """The notes that sync found unchanged, as its report counts them (``None``: not recorded,
    a cache from before it was)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexProof:
    """What git's index vouches for: the file as a sync left it, and the notes it cannot.

    While ``.git/index`` is this very file, every file of the stat cache but ``odd`` has an
    entry there holding the blob the cache records, at stage 0, in a regular file's mode,
    neither assumed unchanged nor skipped in the work tree.  So a file ``git diff-files`` does
    not list holds those bytes still (``vault.indexproof``).
    """

    index: tuple[int, int, int, int]
    """``.git/index``'s size, ``mtime_ns``, inode and ``ctime_ns``: a rewrite changes them."""
    tail: str
    """Its last 20 bytes in hex (its checksum), read with them."""
    odd: tuple[str, ...] = ()
    """The cache's files whose entry is not as above: their stat data are checked instead."""

    def with_odd(self, paths: Iterable[str]) -> IndexProof:
        """The same proof with ``paths`` (whose recorded blob changed) checked by stat too."""
        return replace(self, odd=tuple(sorted({*self.odd, *paths})))


@dataclass(frozen=True, slots=True, kw_only=True)
class StatCache:
    """Stat data → blob, as last seen; ``written_ns`` is the cache file's own mtime."""

    entries: Mapping[str, tuple[StatKey, str]] = field(default_factory=dict)
    written_ns: int = 0
    inputs: str = ""
    """Digest of the inputs of the last conflict-free sync (``vault.quick``); ``""``: none."""
    manifest: str = ""
    """Blob id of the (valid) manifest that sync left; ``""``: none recorded."""
    manifest_stat: StatKey | None = None
    """The stat data of that manifest's file as the sync left it (``None``: not recorded): out
    of the racy window, they vouch for its bytes as they do for a note's."""
    absent: tuple[str, ...] = ()
    """That manifest's entry paths with no file in ``entries`` (``vault.quick`` checks they are
    still absent without parsing the manifest)."""
    index: IndexProof | None = None
    """What git's index vouched for when the cache was written (``None``: nothing)."""
    dumped: str = ""
    """Blob id of the manifest bytes the last sync dumped (``""``: none): bytes with this id are
    ``dump_manifest``'s own layout, so the next sync may patch them (``patch_manifest``)."""
    last: LastSync = LastSync()
    """What that sync left, when it recorded ``inputs``."""


CACHE_SCHEMA = 2
"""``cache.json``'s layout: columns (``paths``, ``stats`` flat, ``blobs`` concatenated), which
load and save three to five times faster at 100,000 files than schema 1's object of arrays
(still read, so an upgrade hashes nothing again)."""


def cache_head(inputs: str) -> bytes:
    """The first bytes of a stat cache :func:`dump_cache` wrote for ``inputs``.

    So a cache recorded for other inputs (a store changed: every sync that has work to do) is
    told from a hundred bytes, not parsed whole (0.17 s at 100,000 notes).
    """
    recorded = json.dumps(inputs, ensure_ascii=False)
    return f'{{"schema":{CACHE_SCHEMA},"inputs":{recorded},'.encode()


def load_cache(data: bytes | None, *, written_ns: int = 0) -> StatCache:
    """Parse ``cache.json``; anything unexpected gives an empty cache."""
    try:
        doc = json.loads(data.decode("utf-8")) if data is not None else None
        entries: Mapping[str, tuple[StatKey, str]]
        if isinstance(doc, dict) and doc.get("schema") == CACHE_SCHEMA:
            entries = _columns(doc)
        else:
            raw = doc["entries"] if isinstance(doc, dict) and doc.get("schema") == SCHEMA else {}
            entries = {
                p: ((int(v[0]), int(v[1]), int(v[2])), str(v[3]))
                for p, v in raw.items()
                if isinstance(v, list) and len(v) == 4
            }
        inputs = str(doc.get("inputs", "")) if isinstance(doc, dict) else ""
        manifest, manifest_stat, absent = _manifest_summary(doc)
        dumped = doc.get("dumped", "") if isinstance(doc, dict) else ""
        last = _last_sync(doc.get("last") if isinstance(doc, dict) else None)
        index = _index_proof(doc)
    except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return StatCache()
    return StatCache(
        entries=entries,
        written_ns=written_ns,
        inputs=inputs,
        manifest=manifest,
        manifest_stat=manifest_stat,
        absent=absent,
        dumped=dumped if isinstance(dumped, str) and _BLOB.fullmatch(dumped) else "",
        last=last,
        index=index,
    )


def _index_proof(doc: object) -> IndexProof | None:
    """The cache's record of git's index; ``None`` when there is none or it is malformed."""
    record = doc.get("index") if isinstance(doc, dict) else None
    if not isinstance(record, dict):
        return None
    found, tail, odd = record.get("file"), record.get("tail"), record.get("odd")
    if not (isinstance(found, list) and len(found) == 4 and set(map(type, found)) == {int}):
        return None
    if not (isinstance(tail, str) and _BLOB.fullmatch(tail) and isinstance(odd, list)):
        return None
    if not _safe_paths(odd):
        return None
    return IndexProof(index=(found[0], found[1], found[2], found[3]), tail=tail, odd=tuple(odd))


def _last_sync(doc: object) -> LastSync:
    """The cache's ``last`` record; raises ``ValueError`` when it is malformed."""
    if doc is None:
        return LastSync()
    if not isinstance(doc, dict):
        raise ValueError("malformed last-sync record")
    edited, deleted, unchanged = doc["edited"], doc["deleted"], doc.get("unchanged")
    if not (_safe_paths(edited) and _safe_paths(deleted)):
        raise ValueError("malformed last-sync record")
    if unchanged is not None and (type(unchanged) is not int or unchanged < 0):
        raise ValueError("malformed last-sync record")
    rows = _skipped_rows(doc["skipped"])
    last = LastSync(edited=tuple(edited), deleted=tuple(deleted), unchanged=unchanged)
    if not rows:
        return last
    from vaultsync.core.model import Skipped  # noqa: PLC0415 - kept off the no-op path

    return replace(
        last,
        skipped=tuple(
            Skipped(source=s, where=w, what=what, digest=d, new=False) for s, w, what, d in rows
        ),
    )


def _skipped_rows(skipped: object) -> list[list[str]]:
    """The record's skipped store files, four strings each; ``ValueError`` when malformed."""
    if not isinstance(skipped, list):
        raise ValueError("malformed last-sync record")
    rows = [row for row in skipped if isinstance(row, list) and len(row) == 4]
    if len(rows) != len(skipped) or not all(isinstance(v, str) for row in rows for v in row):
        raise ValueError("malformed last-sync record")
    return rows


def _columns(doc: dict[str, Any]) -> ColumnEntries:
    """Schema 2's entries; raises ``ValueError`` when a column is malformed."""
    paths, stats, blobs = doc["paths"], doc["stats"], doc["blobs"]
    if not (
        isinstance(paths, list)
        and isinstance(stats, list)
        and isinstance(blobs, str)
        and len(stats) == 3 * len(paths)
        and len(blobs) == 40 * len(paths)
        and set(map(type, paths)) <= {str}  # map/set in C: no Python loop per value
        and set(map(type, stats)) <= {int}
        and len(set(paths)) == len(paths)
        and _lower_hex(blobs)
    ):
        raise ValueError("malformed cache columns")
    return ColumnEntries(paths, stats, blobs)


class ColumnEntries(Mapping[str, tuple[StatKey, str]]):
    """Schema 2's columns read as the stat cache's mapping, its values made when first needed.

    The no-op sync, ``check`` and ``status`` only compare every file's stat data
    (:meth:`stat_rows`) and never pay for a tuple and a blob id per file (0.1 s at 100,000
    files); the first lookup makes them all, as one dict every later lookup uses (a sync's
    scan looks every file up).
    """

    __slots__ = ("_blobs", "_dict", "_paths", "_stats")

    def __init__(self, paths: list[str], stats: list[int], blobs: str) -> None:
        """Columns already checked (``_columns``): unique paths, 3 numbers and 40 hex each."""
        self._paths, self._stats, self._blobs = paths, stats, blobs
        self._dict: dict[str, tuple[StatKey, str]] | None = None

    def _entries(self) -> dict[str, tuple[StatKey, str]]:
        if self._dict is None:
            blobs = self._blobs
            ids = map(
                blobs.__getitem__,
                map(slice, range(0, len(blobs), 40), range(40, len(blobs) + 40, 40)),
            )
            self._dict = dict(
                zip(self._paths, zip(self.stat_keys(), ids, strict=True), strict=True)
            )
        return self._dict

    def __getitem__(self, path: str) -> tuple[StatKey, str]:
        return self._entries()[path]

    def get(self, path: str, default: Any = None) -> Any:  # noqa: D102 - Mapping.get, in C
        return self._entries().get(path, default)

    def __contains__(self, path: object) -> bool:
        return path in self._entries()

    def items(self) -> ItemsView[str, tuple[StatKey, str]]:  # noqa: D102
        return self._entries().items()

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def stat_keys(self) -> Iterator[StatKey]:
        """Every file's stat data, in the files' order."""
        numbers = iter(self._stats)
        return zip(numbers, numbers, numbers, strict=True)

    def stat_rows(self) -> Iterator[tuple[str, StatKey]]:
        """``(path, stat data)`` of every file, in the files' order."""
        return zip(self._paths, self.stat_keys(), strict=True)

    def some(self, paths: Iterable[str]) -> dict[str, tuple[StatKey, str]]:
        """The entries of those ``paths`` that have one (see :func:`some_entries`)."""
        found: dict[str, tuple[StatKey, str]] = {}
        names = self._paths
        for path in paths:
            at = bisect.bisect_left(names, path)
            if at == len(names) or names[at] != path:
                if path in self:  # paths not in a dump's order: looked up the slow way
                    found[path] = self[path]
                continue
            found[path] = self._row(at)
        return found

    def _row(self, at: int) -> tuple[StatKey, str]:
        stats = self._stats
        return (stats[3 * at], stats[3 * at + 1], stats[3 * at + 2]), self.blob_at(at)

    def blob_at(self, index: int) -> str:
        """The blob id of the ``index``-th file, without making the others' values."""
        return self._blobs[40 * index : 40 * index + 40]


def some_entries(
    entries: Mapping[str, tuple[StatKey, str]], paths: Iterable[str]
) -> dict[str, tuple[StatKey, str]]:
    """The entries of those ``paths`` that have one.

    From the columns, a few are found by bisection (a dump's paths are sorted), where a lookup
    by path made every file's value (0.1 s at 100,000 files).
    """
    if not isinstance(entries, ColumnEntries):
        return {path: entries[path] for path in paths if path in entries}
    return entries.some(paths)


def stat_rows(entries: Mapping[str, tuple[StatKey, str]]) -> Iterator[tuple[str, StatKey]]:
    """``(path, stat data)`` of every entry of a stat cache."""
    if isinstance(entries, ColumnEntries):
        return entries.stat_rows()
    return ((path, recorded) for path, (recorded, _blob) in entries.items())


def recorded_blob(entries: Mapping[str, tuple[StatKey, str]], index: int, path: str) -> str:
    """The blob id of the ``index``-th row of :func:`stat_rows` (``path``'s).

    A racy file on the no-op path is checked by its blob id: from the columns, one costs a
    slice, where a lookup by path made every file's value (0.08 s at 100,000 files).
    """
    if isinstance(entries, ColumnEntries):
        return entries.blob_at(index)
    return entries[path][1]


def _manifest_summary(doc: object) -> tuple[str, StatKey | None, tuple[str, ...]]:
    """The cache's record of the manifest: blob id, stat data, absent paths (``""``: none)."""
    if not isinstance(doc, dict):
        return "", None, ()
    manifest, absent = doc.get("manifest", ""), doc.get("absent", [])
    if not isinstance(manifest, str) or not _BLOB.fullmatch(manifest):
        return "", None, ()
    if not _safe_paths(absent):
        return "", None, ()
    found = doc.get("manifest_stat")
    if isinstance(found, list) and len(found) == 3 and set(map(type, found)) == {int}:
        return manifest, (found[0], found[1], found[2]), tuple(absent)
    return manifest, None, tuple(absent)


def proven(key: StatKey, doubtful: range) -> StatKey:
    """``key`` as the stat cache may record it: matching nothing when its mtime is ``doubtful``.

    Stat data prove a file unchanged only if it was changed ``RACY_NS`` before they were taken,
    and the cache's own date (its write) vouches for that.  Stat data taken seconds before the
    write (a helper scans while the notes are built) saw files changed in their own racy window
    that the write's no longer covers: they are read again next time.
    """
    if key[1] in doubtful:
        return (key[0], UNPROVEN_NS, key[2])
    return key


def dump_stat_cache(cache: StatCache) -> bytes:
    """:func:`dump_cache` of a whole stat cache (its ``last`` kept only with a manifest)."""
    return dump_cache(
        cache.entries,
        cache.inputs,
        manifest=cache.manifest,
        manifest_stat=cache.manifest_stat,
        absent=cache.absent,
        dumped=cache.dumped,
        last=cache.last if cache.manifest else None,
        index=cache.index,
    )


def dump_cache(
    entries: Mapping[str, tuple[StatKey, str]],
    inputs: str = "",
    *,
    manifest: str = "",
    manifest_stat: StatKey | None = None,
    absent: tuple[str, ...] = (),
    dumped: str = "",
    last: LastSync | None = None,
    index: IndexProof | None = None,
) -> bytes:
    """Serialize the stat cache (compact columns: it is never read by people or diffed)."""
    rows = sorted(entries.items())
    doc: dict[str, Any] = {  # the inputs first: ``cache_head``
        "schema": CACHE_SCHEMA,
        "inputs": inputs,
        "paths": [p for p, _ in rows],
        "stats": [n for _, (stat, _blob) in rows for n in stat],
        "blobs": "".join(blob for _, (_stat, blob) in rows),
    }
    if manifest:
        doc |= {"manifest": manifest, "absent": sorted(absent)}
        if manifest_stat is not None:
            doc["manifest_stat"] = list(manifest_stat)
    if dumped:
        doc["dumped"] = dumped
    if last is not None:
        doc["last"] = {
            "edited": list(last.edited),
            "deleted": list(last.deleted),
            "skipped": [[k.source, k.where, k.what, k.digest] for k in last.skipped],
        }
        if last.unchanged is not None:
            doc["last"]["unchanged"] = last.unchanged
    if index is not None:
        doc["index"] = {"file": list(index.index), "tail": index.tail, "odd": list(index.odd)}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True, slots=True, kw_only=True)
class Journal:
    """A sync's intents: the entry each written path will hold, ``None`` for each removal."""

    intents: Mapping[str, Entry | None]
    readable: bool = True
    """``False``: a journal was there but could not be read (sweep the whole vault for temps)."""


def load_journal(data: bytes | None) -> Journal | None:
    """Parse ``journal.json``; ``None`` when there is none."""
    if data is None:
        return None
    try:
        doc = json.loads(data.decode("utf-8"))
        intents: dict[str, Entry | None] = {}
        for path, value in doc["intents"].items():
            entry = None if value is None else _entry(value)
            if (value is not None and entry is None) or not is_safe(path):
                raise ValueError(path)
            intents[path] = entry
        return Journal(intents=intents)
    except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return Journal(intents={}, readable=False)


def _intent(entry: Entry) -> dict[str, str]:
    found = {"blob": entry.blob, "key": entry.key, "node": entry.node}
    return found | ({"wrote": entry.wrote} if entry.wrote else {})


def dump_journal(journal: Journal) -> bytes:
    """Serialize a journal."""
    intents = {p: None if e is None else _intent(e) for p, e in sorted(journal.intents.items())}
    doc = {"schema": SCHEMA, "intents": intents}
    return json.dumps(doc, ensure_ascii=False, sort_keys=True).encode("utf-8")

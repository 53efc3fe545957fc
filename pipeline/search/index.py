"""Vault on disk → the search index ``<vault>/.vaultsync/search.db``; edge (files, SQLite).

Contract: ``update_index(vault)`` brings the index in line with the vault's notes and returns an
:class:`~vaultsync.search.model.IndexReport`.  It is incremental: a note whose stat data are
unchanged is not read; one whose SHA-256 is unchanged is not re-parsed; only added, changed and
removed notes touch the full-text table.  The manifest is parsed only when its blob id is not
the one the index last followed (``meta.manifest_blob``), or for a note new to the index; ids
are assigned again only when a note came, went or claims another id, or the manifest changed.

``update_index(vault, since=Since(...))`` is a sync's update: it looks only at the notes the
sync wrote or removed and those whose manifest node changed (the manifest it read against the
one it left), without walking the vault, when the index last followed the manifest the sync
read; else it walks.  The user's own edits are left to the next walk, which every search,
``watch`` and the HTTP API make before they read.

The whole update is **one transaction**, and the database runs in WAL mode, so a reader never
waits for it and always sees the last complete state (before or after, never between).  A
corrupt database, or one of an unknown schema, is deleted and rebuilt, never fatal; schema 6
is brought forward in place (``search.database``).

Tables (created in ``vaultsync.search.database``):

* ``notes``: one row per note (the registry: id, path, title, kind, aliases, tags, hash,
  size) with the stat data that let the next update skip it; ``nid`` is stable for as long as
  the path exists, and is the FTS rowid.
* ``fts``: FTS5 over title, aliases, tags, path and the body as it reads (``unicode61
  remove_diacritics 2``: ``cafe`` finds ``café``).  Its own
  content table (not external content), so there are no triggers to get wrong (measured: a
  trigger-free index).  The body is what a person reads (:func:`searchable_body`): a wikilink is
  its words, a heading has no ``#``; the engine's ``# Title`` line and ``## Links`` section and
  ``Home.md``'s listing of every note are left out, so snippets show text and Home is not a hit
  for every query.  Links are read from the note as written.
* ``stems``: the same text indexed by word stems (Porter: ``restarting`` finds ``restarts``),
  its content read from ``fts``; hybrid search's any-word ranking uses it.
* ``links``: each note's outgoing links in text order with type and context, and ``dst``, the
  note the target resolves to now (Obsidian's rules, ``vaultsync.links.pathresolve``).  A link is
  re-resolved when its source changes or a note of its target's name appears or goes, against
  only the notes of the names it can resolve to (``notes.pkey``, ``resolvable_names``).

Locks: the update holds the vault lock **shared** (``vault.write.VaultFS.lock``) so it never
indexes a sync's half-written state; a sync in progress makes it wait ``wait`` seconds, then
skip (the report says so).  A caller that already holds the vault lock passes
``vault_lock=False``.  Two updates run one after the other (``database.only_writer``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.core.errors import UsageError, VaultWriteError
from vaultsync.core.fsio import is_racy
from vaultsync.core.notes import NoteFile, NoteReader, listed_note
from vaultsync.links.names import normalize_name
from vaultsync.links.pathresolve import (
    ObsidianIndex,
    file_name_key,
    keys_reaching,
    link_name_keys,
    resolvable_names,
)
from vaultsync.links.wikilinks import WikiLink, rewrite_wikilinks
from vaultsync.search.database import (
    DB_NAME,
    SCHEMA_VERSION,
    ForeignIndex,
    count_notes,
    index_path,
    is_corruption,
    only_writer,
    open_writer,
    prepare,
    remove_database,
)
from vaultsync.search.links import extract_links
from vaultsync.search.model import IndexReport
from vaultsync.search.registry import IdClaim, NoteText, assign_ids, read_note, scan_vault
from vaultsync.vault.manifest import (
    CONTROL_DIR,
    GITIGNORE,
    GITIGNORE_BYTES,
    MANIFEST,
    Entry,
    Manifest,
    blob_id,
    load_manifest,
    parsed_manifest,
)
from vaultsync.vault.write import VaultFS

__all__ = [
    "DB_NAME",
    "LOCK_WAIT",
    "SCHEMA_VERSION",
    "Since",
    "index_path",
    "is_corruption",
    "update_index",
]

LOCK_WAIT = 10.0


_UNSTEM = (  # an external-content index forgets a row only when told its old text
    "INSERT INTO stems (stems, rowid, title, aliases, tags, path, body)"
    " SELECT 'delete', rowid, title, aliases, tags, path, body FROM fts WHERE rowid = ?"
)


def _insert_links(conn: sqlite3.Connection, nid: int, note: NoteText, *, engine: bool) -> int:
    rows = []
    for link in extract_links(note.body, engine=engine):
        key, alt = link_name_keys(link.target, note.path)
        rows.append((nid, link.seq, link.link_type, link.target, key, alt, link.context))
    conn.executemany("INSERT INTO links VALUES (?, ?, ?, ?, ?, ?, ?, NULL)", rows)
    return len(rows)


HOME_KIND = "home"
_LINKS_HEADING = re.compile(r"^##[ \t]+Links[ \t]*$", re.MULTILINE)
_NEXT_SECTION = re.compile(r"^#{1,2}[ \t]", re.MULTILINE)
_HEADING_MARKS = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+", re.MULTILINE)


def searchable_body(note: NoteText, *, engine: bool) -> str:
    """The body as a person reads it: what a note is found by, and its snippet is cut from."""
    if engine and note.kind == HOME_KIND:
        return ""  # a list of every note: it would match every query
    body = _without_links_section(_without_title(note.body, note.title)) if engine else note.body
    return _HEADING_MARKS.sub("", rewrite_wikilinks(body, _link_words))


def _without_title(body: str, title: str) -> str:
    """``body`` without the engine's ``# Title`` line: the title is indexed and shown apart."""
    lead = body.lstrip("\n")
    line, _, rest = lead.partition("\n")
    return rest if line.strip() == f"# {title}".strip() else body


def _without_links_section(body: str) -> str:
    """``body`` without the engine's ``## Links`` section (the last one: the engine's is last)."""
    heading = next(reversed(list(_LINKS_HEADING.finditer(body))), None)
    if heading is None:
        return body
    following = _NEXT_SECTION.search(body, heading.end())
    return body[: heading.start()] + (body[following.start() :] if following else "")


def _link_words(link: WikiLink) -> str:
    """What a reader sees of a wikilink: its label, else its note's name; an embed shows none."""
    if link.embed:
        return ""
    if link.label:
        return link.label
    name = link.target.rpartition("/")[2]
    name = name[:-3] if name.lower().endswith(".md") else name
    return name or (link.heading or "")


def _store(
    conn: sqlite3.Connection,
    note: NoteText,
    found: NoteFile,
    nid: int | None,
    *,
    engine: bool,
    now_ns: int,
) -> int:
    """Insert or replace one note's registry row, full-text row and raw links; its nid."""
    values = {
        "path": note.path,
        "claimed": note.claimed_id,
        "engine": int(engine),
        "title": note.title,
        "kind": note.kind,
        "aliases": json.dumps(note.aliases, ensure_ascii=False),
        "tags": json.dumps(note.tags, ensure_ascii=False),
        "sha256": note.sha256,
        "size": note.size,
        "mtime_ns": found.mtime_ns,
        "inode": found.inode,
        "checked_ns": now_ns,
        "nid": nid,
        "pkey": file_name_key(note.path),
    }
    if nid is None:
        cursor = conn.execute(
            "INSERT INTO notes (path, id, claimed, engine, title, kind, aliases, tags, sha256,"
            " size, mtime_ns, inode, checked_ns, outdegree, pkey) VALUES (:path, '', :claimed,"
            " :engine, :title, :kind, :aliases, :tags, :sha256, :size, :mtime_ns, :inode,"
            " :checked_ns, 0, :pkey)",
            values,
        )
        nid = int(cursor.lastrowid or 0)
    else:
        conn.execute(
            "UPDATE notes SET claimed=:claimed, engine=:engine, title=:title, kind=:kind,"
            " aliases=:aliases, tags=:tags, sha256=:sha256, size=:size, mtime_ns=:mtime_ns,"
            " inode=:inode, checked_ns=:checked_ns WHERE nid=:nid",
            values,
        )
        conn.execute(_UNSTEM, (nid,))
        conn.execute("DELETE FROM fts WHERE rowid = ?", (nid,))
        conn.execute("DELETE FROM links WHERE src = ?", (nid,))
        conn.execute("DELETE FROM names WHERE nid = ?", (nid,))
    title_key = normalize_name(note.title)
    # An alias repeating the title (the engine writes many) would count the title twice.
    aliases = [a for a in note.aliases if normalize_name(a) != title_key]
    body = searchable_body(note, engine=engine)
    for table in ("fts", "stems"):
        conn.execute(
            f"INSERT INTO {table} (rowid, title, aliases, tags, path, body)"  # noqa: S608 - ours
            " VALUES (?, ?, ?, ?, ?, ?)",
            (nid, note.title, " ".join(aliases), " ".join(note.tags), note.path, body),
        )
    keys = {normalize_name(name) for name in (note.title, *note.aliases)} - {""}
    conn.executemany("INSERT INTO names VALUES (?, ?)", [(key, nid) for key in sorted(keys)])
    count = _insert_links(conn, nid, note, engine=engine)
    conn.execute("UPDATE notes SET outdegree = ? WHERE nid = ?", (count, nid))
    return nid


def _resolve(conn: sqlite3.Connection, sources: set[int], names: set[str]) -> None:
    """Point ``dst`` of the links of ``sources`` and of the links named ``names`` anew."""
    if not sources and not names:
        return
    build = len(sources) == conn.execute("SELECT count(*) FROM notes").fetchone()[0]
    pending = _pending_links(conn, sources, names, build=build)
    by_nid = _source_paths(conn, {src for src, _ in pending}, build=build)
    index, paths = _resolution_index(conn, pending, by_nid, build=build)
    # Resolution depends only on the target and the source's folder: many links share both.
    resolved: dict[tuple[str, str], int | None] = {}
    updates = []
    for (src, seq), target in pending.items():
        source = by_nid[src]
        key = (target, source.rpartition("/")[0])
        if key not in resolved:
            found = index.resolve(target, source)
            resolved[key] = None if found is None else paths[found]
        updates.append((resolved[key], src, seq))
    conn.executemany("UPDATE links SET dst = ? WHERE src = ? AND seq = ?", updates)


def _pending_links(
    conn: sqlite3.Connection, sources: set[int], names: set[str], *, build: bool
) -> dict[tuple[int, int], str]:
    """``(src, seq)`` → target of the links of ``sources`` and of those named ``names``."""
    if build:
        return {(s, q): t for s, q, t in conn.execute("SELECT src, seq, target FROM links")}
    pending: dict[tuple[int, int], str] = {}
    for chunk in _chunks(sorted(sources)):
        marks = ",".join("?" * len(chunk))
        for src, seq, target in conn.execute(
            f"SELECT src, seq, target FROM links WHERE src IN ({marks})",  # noqa: S608 - ? marks
            chunk,
        ):
            pending[(src, seq)] = target
    for chunk in _chunks(sorted(names)):
        marks = ",".join("?" * len(chunk))
        for src, seq, target in conn.execute(
            f"SELECT src, seq, target FROM links WHERE name_key IN ({marks})"  # noqa: S608
            f" OR (alt_key != '' AND alt_key IN ({marks}))",
            (*chunk, *chunk),
        ):
            pending[(src, seq)] = target
    return pending


def _source_paths(conn: sqlite3.Connection, nids: set[int], *, build: bool) -> dict[int, str]:
    """The path of each note of ``nids`` by nid (of every note, for a build)."""
    if build:
        return dict(conn.execute("SELECT nid, path FROM notes"))
    found: dict[int, str] = {}
    for chunk in _chunks(sorted(nids)):
        marks = ",".join("?" * len(chunk))
        found.update(
            conn.execute(f"SELECT nid, path FROM notes WHERE nid IN ({marks})", chunk)  # noqa: S608
        )
    return found


def _resolution_index(
    conn: sqlite3.Connection,
    pending: dict[tuple[int, int], str],
    by_nid: dict[int, str],
    *,
    build: bool,
) -> tuple[ObsidianIndex, dict[str, int]]:
    """Obsidian's index of the notes the ``pending`` links can resolve to, and their nids.

    Only the notes of the names ``resolvable_names`` gives (and the sources themselves): an
    index of those resolves these links as one of the whole vault does, without reading every
    path.  A build reads them all.
    """
    if build:
        paths = {path: nid for nid, path in by_nid.items()}
        return ObsidianIndex.build(paths), paths
    wanted: set[str] = set()
    for target, folder in {(t, by_nid[s].rpartition("/")[0]) for (s, _), t in pending.items()}:
        wanted |= resolvable_names(target, f"{folder}/_" if folder else "_")
    paths = {path: nid for nid, path in by_nid.items()}
    for chunk in _chunks(sorted(wanted)):
        marks = ",".join("?" * len(chunk))
        paths.update(
            conn.execute(f"SELECT path, nid FROM notes WHERE pkey IN ({marks})", chunk)  # noqa: S608
        )
    return ObsidianIndex.build(paths), paths


def _chunks(values: list[int] | list[str], size: int = 500) -> Iterable[tuple[object, ...]]:
    for start in range(0, len(values), size):
        yield tuple(values[start : start + size])


def _assign(conn: sqlite3.Connection, nodes: dict[str, str]) -> None:
    """Recompute every note's id from its claim and the manifest; write the ones that moved."""
    rows = conn.execute("SELECT path, claimed, id FROM notes").fetchall()
    ids = assign_ids(IdClaim(path=p, claimed_id=c, manifest_node=nodes.get(p)) for p, c, _ in rows)
    moved = [(ids[p], p) for p, _, old in rows if ids[p] != old]
    conn.executemany("UPDATE notes SET id = ? WHERE path = ?", moved)


def _remove(conn: sqlite3.Connection, gone: Iterable[tuple[str, int]], names: set[str]) -> None:
    """Drop notes whose file is gone; their names join ``names`` (links to re-resolve)."""
    for path, nid in gone:
        names |= keys_reaching(path)
        conn.execute(_UNSTEM, (nid,))
        conn.execute("DELETE FROM fts WHERE rowid = ?", (nid,))
        conn.execute("DELETE FROM links WHERE src = ?", (nid,))
        conn.execute("DELETE FROM names WHERE nid = ?", (nid,))
        conn.execute("UPDATE links SET dst = NULL WHERE dst = ?", (nid,))
        conn.execute("DELETE FROM notes WHERE nid = ?", (nid,))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _unchanged(row: tuple[Any, ...] | None, found: NoteFile, *, engine: bool) -> bool:
    """Whether stat data alone prove a note unchanged (git's racy rule: not a recent mtime)."""
    return (
        row is not None
        and tuple(row[1:4]) == (found.size, found.mtime_ns, found.inode)
        and not is_racy(found.mtime_ns, row[4])
        and bool(row[6]) == engine
    )


@dataclass(frozen=True, slots=True)
class Since:
    """What a sync changed since the manifest it read: the index updates only that.

    Given to :func:`update_index` by the sync that just ran, so its update costs what the sync
    changed, not a walk of the vault.  It holds only when the index last matched ``manifest``;
    otherwise the update walks, as without it.  The user's own edits are not in it: the next
    update without it (every search's) finds them by their stat data.
    """

    manifest: Manifest
    """The manifest the sync read, before it wrote its own."""
    paths: frozenset[str]
    """The notes the sync wrote or removed, and the old paths of the moves it followed."""


class _Listing:
    """The manifest now: its blob id at once, its path → node table when first asked."""

    def __init__(self, raw: bytes | None) -> None:
        self._raw = raw
        self.blob = "" if raw is None else blob_id(raw)

    @functools.cached_property
    def manifest(self) -> Manifest:
        return load_manifest(None) if self._raw is None else parsed_manifest(self._raw)

    @functools.cached_property
    def nodes(self) -> dict[str, str]:
        return {path: entry.node for path, entry in self.manifest.entries.items()}


_ROWS = "SELECT path, nid, size, mtime_ns, inode, checked_ns, sha256, engine, claimed FROM notes"
"""A note's row as an update compares it: ``row[0]`` is the nid, ``row[6]`` engine, ``row[7]``
the id it claims."""


@dataclass(slots=True)
class _Pass:
    """What one update has done so far."""

    now_ns: int
    known: dict[str, tuple[Any, ...]]
    """Path → ``(nid, size, mtime_ns, inode, checked_ns, sha256, engine, claimed)`` before the
    update, of the notes it looks at."""
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    sources: set[int] = field(default_factory=set)
    """Notes whose links must be resolved."""
    names: set[str] = field(default_factory=set)
    """Name keys of notes that appeared or went: links naming them are resolved again."""
    present: set[str] = field(default_factory=set)
    claims: bool = False
    """A note came, went, or changed the id it claims or whether it is vaultsync's: the ids
    are assigned again."""


def _visit(
    conn: sqlite3.Connection, work: _Pass, found: NoteFile, data: bytes, *, engine: bool
) -> None:
    """Bring one read note's rows up to date."""
    row = work.known.get(found.path)
    work.present.add(found.path)
    if row is not None and bool(row[6]) == engine and _sha256(data) == row[5]:
        conn.execute(  # same bytes: only the stat data moved
            "UPDATE notes SET size=?, mtime_ns=?, inode=?, checked_ns=? WHERE nid=?",
            (found.size, found.mtime_ns, found.inode, work.now_ns, row[0]),
        )
        work.unchanged += 1
        return
    note = read_note(found.path, data)
    nid = _store(
        conn, note, found, None if row is None else row[0], engine=engine, now_ns=work.now_ns
    )
    work.sources.add(nid)
    work.claims |= row is None or (bool(row[6]), row[7]) != (engine, note.claimed_id)
    if row is None:
        work.added += 1
        work.names |= keys_reaching(found.path)
    else:
        work.updated += 1


def _walk(conn: sqlite3.Connection, vault: Path, listing: _Listing, *, same: bool) -> _Pass:
    """Every note of the vault looked at; ``same``: the manifest is the one last matched.

    Then a note the index holds keeps its row's engine flag, and the manifest is parsed only
    for a note the index does not hold yet.
    """
    known = {row[0]: tuple(row[1:]) for row in conn.execute(_ROWS)}
    work = _Pass(now_ns=time.time_ns(), known=known)
    with NoteReader(vault) as reader:
        for found in scan_vault(vault):
            row = known.get(found.path)
            engine = bool(row[6]) if same and row is not None else found.path in listing.nodes
            if _unchanged(row, found, engine=engine):
                work.present.add(found.path)
                work.unchanged += 1
                continue
            data = reader.read(found.path)
            if data is not None:  # else gone, or replaced by a symlink, since the walk
                _visit(conn, work, found, data, engine=engine)
    return work


def _since(conn: sqlite3.Connection, vault: Path, listing: _Listing, since: Since) -> _Pass:
    """Only the notes ``since`` names looked at, and those whose manifest node changed."""
    relisted = _relisted(since.manifest.entries, listing.manifest.entries)
    paths = sorted(since.paths | relisted)
    work = _Pass(now_ns=time.time_ns(), known=_rows(conn, paths))
    listed = listing.manifest.entries
    with NoteReader(vault) as reader:
        for path in paths:
            read = reader.read_note(path) if listed_note(path) else None
            if read is not None:
                _visit(conn, work, read[0], read[1], engine=path in listed)
    work.claims |= bool(relisted)
    return work


def _relisted(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> set[str]:
    """The paths whose manifest entry came, went, or names another node."""
    if before is after:
        return set()
    was = before.get
    changed = {
        path for path, now in after.items() if (old := was(path)) is None or old.node != now.node
    }
    changed.update(path for path in before if path not in after)
    return changed


def _rows(conn: sqlite3.Connection, paths: list[str]) -> dict[str, tuple[Any, ...]]:
    """The rows of ``paths`` that the index holds (see :data:`_ROWS`)."""
    found: dict[str, tuple[Any, ...]] = {}
    for chunk in _chunks(paths):
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(f"{_ROWS} WHERE path IN ({marks})", chunk)
        found.update((row[0], tuple(row[1:])) for row in rows)
    return found


_MATCHED = "manifest_blob"
"""The meta key of the blob id of the manifest whose nodes the index's ids and flags follow."""


def _sync(conn: sqlite3.Connection, fs: VaultFS, vault: Path, since: Since | None) -> IndexReport:
    """The update proper, inside one write transaction."""
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    rebuilt = prepare(conn)
    raw = fs.read_control(MANIFEST)
    listing = _Listing(raw[0] if raw else None)
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_MATCHED,)).fetchone()
    matched = None if row is None else row[0]
    if since is not None and matched == since.manifest.fingerprint:
        work = _since(conn, vault, listing, since)
    else:
        work = _walk(conn, vault, listing, same=matched == listing.blob)
        work.claims |= matched != listing.blob
    removed = [(path, row[0]) for path, row in work.known.items() if path not in work.present]
    _remove(conn, removed, work.names)
    _resolve(conn, work.sources, work.names)
    if work.claims or removed:
        _assign(conn, listing.nodes)
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_MATCHED, listing.blob))
    total = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
    conn.execute("COMMIT")
    return IndexReport(
        notes=total,
        added=work.added,
        updated=work.updated,
        removed=len(removed),
        unchanged=total - work.added - work.updated,
        rebuilt=rebuilt,
        seconds=time.perf_counter() - start,
    )


def _ensure_control(fs: VaultFS, vault: Path) -> Path:
    """The engine folder (created with the sync's ``.gitignore`` if missing; never a symlink)."""
    if fs.read_control(GITIGNORE) is None:
        fs.write_control(GITIGNORE, GITIGNORE_BYTES, durable=False)
    control = vault / CONTROL_DIR
    if control.is_symlink() or not control.is_dir():
        raise VaultWriteError(f"{control}: not a folder (a symlink?); the index is not written")
    return control / DB_NAME


def _update(fs: VaultFS, vault: Path, *, rebuild: bool, since: Since | None) -> IndexReport:
    db = _ensure_control(fs, vault)
    try:
        with only_writer(db):
            if db.is_symlink():
                raise VaultWriteError(f"{db}: a symlink; the index is not written through it")
            return _update_locked(fs, vault, db, rebuild=rebuild, since=since)
    except OSError as err:  # the lock or database file is a symlink, or unwritable
        raise VaultWriteError(f"{db}: cannot write the search index: {err}") from err


def _update_locked(
    fs: VaultFS, vault: Path, db: Path, *, rebuild: bool, since: Since | None
) -> IndexReport:
    for attempt in range(2):
        if rebuild or attempt:
            remove_database(db)
        try:
            with open_writer(db) as conn:
                return _sync(conn, fs, vault, since)
        except ForeignIndex:
            continue
        except sqlite3.DatabaseError as err:
            if not is_corruption(err) or attempt:
                raise VaultWriteError(f"{db}: the search index cannot be updated: {err}") from err
    raise VaultWriteError(f"{db}: the search index cannot be rebuilt")


def update_index(
    vault: Path,
    *,
    rebuild: bool = False,
    wait: float = LOCK_WAIT,
    vault_lock: bool = True,
    since: Since | None = None,
) -> IndexReport:
    """Bring ``vault``'s search index up to date (see the module docstring).

    Args:
        vault: the vault folder.
        rebuild: drop the index and build it from scratch.
        wait: seconds to wait for a running sync before skipping.
        vault_lock: take the vault lock (shared); False when the caller holds it already.
        since: what the sync that just ran changed (:class:`Since`): only that is looked at.

    Raises:
        UsageError: ``vault`` is not a folder.
        VaultWriteError: ``.vaultsync`` is not a folder, or SQLite fails other than by
            corruption (which rebuilds).
    """
    if not vault.is_dir():
        raise UsageError(f"{vault}: no vault here", hint="run `vaultsync sync` first")
    with VaultFS(vault) as fs, contextlib.ExitStack() as held:
        if vault_lock:
            try:
                held.enter_context(fs.lock(timeout=wait, shared=True))
            except VaultWriteError as err:
                return IndexReport(notes=count_notes(vault), skipped=err.message)
        return _update(fs, vault, rebuild=rebuild, since=since)

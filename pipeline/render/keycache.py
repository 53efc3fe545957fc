"""What one run of the note specs leaves for the next: layout and note keys; edge (one file).

:class:`SpecsMemo` is plain data: the settings it was made under (a digest of the code, the
templates, the zone and the user's moves), the layout's places, every note's path, key and
what its key read (:class:`NoteMemo`), and Home's index card.  It holds node ids, titles,
paths, digests and the wikilink targets of masked texts: masked values only, never a secret in
clear (the records were masked before the graph was built).

:func:`save_specs_memo` writes it to ``note-keys.marshal`` in the state's cache folder
(:func:`vaultsync.core.cachefile.cache_dir`, 0600) behind a header holding the format, the code
fingerprint and the caps; :func:`load_specs_memo` reads it back and removes the file, so a run
that dies before saving its own leaves none (the next run then takes the full path).  A missing,
foreign, corrupt or stale file is ``None``: the cache is an optimisation, never an error.
``marshal`` (plain tuples, strings and sets) loads ~100,000 notes several times faster than JSON
or pickle, and executes nothing.
"""

from __future__ import annotations

import contextlib
import marshal
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vaultsync.core import cachefile
from vaultsync.core.cachefile import cache_dir
from vaultsync.core.digest import code_fingerprint, inputs_digest
from vaultsync.core.process import paused_gc
from vaultsync.core.settings import Caps
from vaultsync.render.layout import Place, Placement

__all__ = [
    "NoteMemo",
    "SpecsMemo",
    "load_specs_memo",
    "memo_bytes",
    "memo_from_bytes",
    "memo_path",
    "reads_bytes",
    "save_specs_memo",
]

MEMO_VERSION = 2
FILE_NAME = "note-keys.marshal"


@dataclass(frozen=True, slots=True)
class NoteMemo:
    """One note's path and key, and what its key read besides its own node and record."""

    path: str
    key: str
    deps: frozenset[str]
    """Node ids whose kind, title or path the key holds: link targets, the notes its
    wikilinks name, the notes it lists (a context lists the documents linking to it)."""
    names: frozenset[str]
    """How its wikilinks look a note up: each target case-folded and name-normalised."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecsMemo:
    """The layout and keys of one run, and the settings they hold under."""

    setting: str
    """Digest of the code, the templates' fingerprints, the zone and the user's moves."""
    placement: Placement
    notes: Mapping[str, NoteMemo]
    card: str
    """Home's index card (it reads the whole graph: kept while no node or link changed)."""
    reads: bytes = field(default=b"", compare=False, repr=False)
    """The places and what each key read, as :func:`memo_bytes` marshalled them, when they
    are exactly this memo's (``b""``: not known): written again as they are."""


def memo_path(state: Path) -> Path:
    """The memo file of one state directory."""
    return cache_dir(state) / FILE_NAME


def _header(caps: Caps, build: str) -> bytes:
    key = inputs_digest((code_fingerprint(), repr(caps), build))
    return cachefile.envelope("note-keys", MEMO_VERSION, key)


def memo_bytes(memo: SpecsMemo) -> tuple[bytes, ...]:
    """``memo`` as plain values, marshalled (read back by :func:`memo_from_bytes`).

    Two parts: what changes with every note keyed (each note's path and key), then what
    changes only when notes are placed or read otherwise (the places, each key's reads).  A
    memo whose second part is the one it was loaded with (``SpecsMemo.reads``) writes those
    bytes again: at 100,000 notes, marshalling them is 0.3 of the 0.4 s a save takes.
    """
    notes = memo.notes.items()
    first = marshal.dumps(
        (
            memo.setting,
            memo.card,
            dict(memo.placement.context_folders),
            [n for n, _ in notes],
            [m.path for _, m in notes],
            [m.key for _, m in notes],
        )
    )
    return cachefile.two_parts(first, memo.reads or reads_bytes(memo))


def reads_bytes(memo: SpecsMemo) -> bytes:
    """The second part of :func:`memo_bytes`: the places, and what each note's key read."""
    # Column by column, folder paths once each and the rank without the id: about a third
    # smaller and faster to read than a tuple per place.
    places = memo.placement.places.values()
    folders: dict[tuple[str, ...], int] = {}
    columns = (
        [p.node_id for p in places],
        [p.rank[:2] for p in places],
        [folders.setdefault(p.folders, len(folders)) for p in places],
        [p.stem for p in places],
        [p.tail for p in places],
        [p.fallback for p in places],
        [p.name for p in places],
    )
    reads = memo.notes.values()
    return marshal.dumps(
        (list(folders), columns, [m.deps for m in reads], [m.names for m in reads])
    )


def memo_from_bytes(data: bytes) -> SpecsMemo | None:
    """The memo :func:`memo_bytes` wrote (its chunks joined); ``None`` when ``data`` is not one."""
    try:
        first, second = cachefile.split_parts(data)
        with paused_gc():
            # our own file, 0600 in a 0700 folder; marshal builds plain values, runs nothing
            return _memo(marshal.loads(first), marshal.loads(second), second)  # noqa: S302
    except (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError):
        return None


def save_specs_memo(state: Path, caps: Caps, memo: SpecsMemo, *, build: str = "") -> bool:
    """Write ``memo`` for the next run (0600); ``False`` when the cache cannot be written.

    ``build``: the ``Build.build_id`` the memo was made from.
    """
    path, head = memo_path(state), _header(caps, build)
    # a resident process (watch) takes it back from memory, and writes it after its sync
    return cachefile.save(
        path, head, memo, lambda: cachefile.write(path, head, memo_bytes(memo), durable=False)
    )


def load_specs_memo(state: Path, caps: Caps, *, base: str = "") -> SpecsMemo | None:
    """The memo the last run saved under the same code and caps, and remove it; else ``None``.

    ``base``: the build the delta at hand was patched from (``GraphDelta.base``); a memo made
    from any other build (a command that built the graph without a sync in between) is ``None``.
    """
    target, head = memo_path(state), _header(caps, base)
    kept = cachefile.held(target, head)  # a resident process (watch): from memory
    if not isinstance(kept, SpecsMemo):
        payload = cachefile.read(target, head)
        kept = memo_from_bytes(payload) if payload is not None else None
    with contextlib.suppress(OSError):
        target.unlink()
    return kept


def _memo(first: Any, second: Any, reads: bytes) -> SpecsMemo:
    setting, card, context_folders, ids, paths, keys = first
    table, columns, deps, names = second
    if not isinstance(setting, str) or not isinstance(card, str):
        raise TypeError(setting)
    placed, ranks, folders, stems, tails, fallbacks, file_names = columns
    places = {
        n: Place(n, (*rank, n), table[f], stem, tail, fallback, name)
        for n, rank, f, stem, tail, fallback, name in zip(
            placed, ranks, folders, stems, tails, fallbacks, file_names, strict=True
        )
    }
    notes = {n: NoteMemo(*fields) for n, *fields in zip(ids, paths, keys, deps, names, strict=True)}
    return SpecsMemo(
        setting=setting,
        card=card,
        placement=Placement(
            places=MappingProxyType(places), context_folders=MappingProxyType(dict(context_folders))
        ),
        notes=MappingProxyType(notes),
        reads=reads,
    )

r"""Obsidian's wikilink-to-file resolution over a set of vault-relative paths; pure, no I/O.

Contract: ``ObsidianIndex.build(paths)`` indexes the files of a vault (or the documents of one
context) once; ``index.resolve(target, source_path)`` returns the path, exactly as given, of the
file that Obsidian opens for ``[[target]]`` written in ``source_path``, or None.  Lookups are a
few dict probes plus a scan of the files that share the target's base name.

The rules, as observed on Obsidian 1.13.7:

1. **An exact vault path wins**: ``[[b/Note]]`` is ``b/Note.md`` even when ``a/b/Note.md`` sits
   beside the source.
2. **Else the same path under the source note's own folder** (``[[Note]]`` from ``a/x.md`` is
   ``a/Note.md``).  Ancestor folders count for nothing.
3. **Else the shortest path string** among the files whose path is the target or ends with
   ``/<target>`` (``a/b/Note.md`` beats ``zzzz/Note.md``); equal lengths go to the
   lexicographically smaller path, so the answer never depends on input order.

Details:

* Matching is case-insensitive (``[[LOG]]`` → ``Log.md``, ``[[Ext.MD]]`` → ``Ext.md``) and
  both sides are NFC-normalised (a macOS NFD file name matches an NFC link).  When two files
  differ only by case, the exact case wins, then the smaller path.
* ``.md`` is optional for Markdown notes; every other file needs its extension
  (``[[Figure 1.png]]``).  A note ``Note.md`` is preferred over an extensionless file ``Note``.
* ``./x`` and ``../x`` are looked up at that exact path relative to the source folder and
  nowhere else; a path that climbs above the vault is unresolved.  ``/x`` is an exact vault path.
* An empty target (``[[#Heading]]``) is the source note itself: ``source_path`` is returned.
* A target that names nothing as written is tried once more percent-decoded
  (``My%20Note`` → ``My Note``); the literal name wins when both exist.
* Aliases never resolve here (Obsidian leaves ``[[Alias]]`` unresolved); name resolution by
  title and alias is :mod:`vaultsync.graph.resolve`'s job.
* Paths may be given with ``\`` (contexts scanned on Windows); they match as ``/``.

``resolvable_names(target, source_path)`` says which files a resolution can return at all:
those whose :func:`file_name_key` is one of its names (and ``source_path``).  An index built
from those files alone resolves the link as one built from the whole vault does, so a caller
that keeps paths by name key (the search index) resolves a few links without every path.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from urllib.parse import unquote

from vaultsync.core.pickling import fast_pickle

__all__ = [
    "ObsidianIndex",
    "file_name_key",
    "keys_reaching",
    "link_name_keys",
    "resolvable_names",
]

_NOTE_SUFFIX = ".md"


def _key(path: str) -> str:
    """The matching form of a path or target: ``/`` separators, NFC, lower case."""
    path = path.replace("\\", "/")
    return (path if path.isascii() else unicodedata.normalize("NFC", path)).lower()


def _folder(key: str) -> str:
    return key.rpartition("/")[0]


def _freeze(table: dict[str, list[str]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(
        {key: tuple(sorted(set(paths), key=lambda p: (len(p), p))) for key, paths in table.items()}
    )


@fast_pickle
@dataclass(frozen=True, slots=True)
class ObsidianIndex:
    """The files of a vault, indexed for Obsidian's link resolution.  Build with ``build``."""

    notes: Mapping[str, tuple[str, ...]]
    """Key of a Markdown note's path without ``.md`` → the note paths with that key."""
    files: Mapping[str, tuple[str, ...]]
    """Key of any file's full path → the paths with that key."""
    names: Mapping[str, tuple[str, ...]]
    """Key of a file name (and of a note's name without ``.md``) → paths, shortest first."""

    @classmethod
    def build(cls, paths: Iterable[str]) -> ObsidianIndex:
        r"""Index ``paths``: vault-relative file paths, ``/`` (or ``\``) separated."""
        notes: dict[str, list[str]] = {}
        files: dict[str, list[str]] = {}
        names: dict[str, list[str]] = {}
        for path in paths:
            key = _key(path)
            files.setdefault(key, []).append(path)
            name = key.rpartition("/")[2]
            names.setdefault(name, []).append(path)
            if key.endswith(_NOTE_SUFFIX):
                notes.setdefault(key[: -len(_NOTE_SUFFIX)], []).append(path)
                names.setdefault(name[: -len(_NOTE_SUFFIX)], []).append(path)
        return cls(_freeze(notes), _freeze(files), _freeze(names))

    def resolve(self, target: str, source_path: str) -> str | None:
        """The file ``[[target]]`` written in ``source_path`` opens, or None.

        Args:
            target: the link target without heading, block or label (``WikiLink.target``).
            source_path: the vault path of the note that holds the link.

        Returns:
            One of the indexed paths exactly as given, ``source_path`` for an empty target, or
            None when nothing matches.
        """
        target = target.strip()
        if not target:
            return source_path
        found = self._resolve(target, source_path)
        if found is None and "%" in target:
            decoded = unquote(target).strip()
            if decoded != target:
                found = self._resolve(decoded, source_path)
        return found

    def _resolve(self, target: str, source_path: str) -> str | None:
        key = _key(target)
        folder = _folder(_key(source_path))
        if key.startswith(("./", "../")):
            place = posixpath.normpath(posixpath.join(folder, key))
            if place == ".." or place.startswith("../"):
                return None
            return self._exact(place, target)
        if key.startswith("/"):
            return self._exact(key.lstrip("/"), target)
        found = self._exact(key, target)
        if found is None and folder:
            found = self._exact(f"{folder}/{key}", target)
        return found if found is not None else self._shortest(key)

    def _exact(self, key: str, target: str) -> str | None:
        """The file at exactly ``key`` (a note first, ``.md`` optional), exact case preferred."""
        if key.endswith(_NOTE_SUFFIX):
            hits = self.files.get(key) or self.notes.get(key)
        else:
            hits = self.notes.get(key) or self.files.get(key)
        if not hits:
            return None
        if len(hits) > 1:
            name = unicodedata.normalize("NFC", target).rpartition("/")[2]
            for path in hits:
                if unicodedata.normalize("NFC", path).rpartition("/")[2] in (name, name + ".md"):
                    return path
        return hits[0]

    def _shortest(self, key: str) -> str | None:
        """The shortest path that is ``key`` or ends with ``/key`` (``.md`` optional)."""
        tail = f"/{key}"
        for path in self.names.get(key.rpartition("/")[2], ()):
            path_key = _key(path)
            forms = [path_key]
            if path_key.endswith(_NOTE_SUFFIX):
                forms.append(path_key[: -len(_NOTE_SUFFIX)])
            if any(form == key or form.endswith(tail) for form in forms):
                return path
        return None


def file_name_key(path: str) -> str:
    """A file's name as resolution matches it: lower case, NFC, without one ``.md``."""
    name = _key(path).rpartition("/")[2]
    return _without_md(name)


def _without_md(name: str) -> str:
    return name[: -len(_NOTE_SUFFIX)] if name.endswith(_NOTE_SUFFIX) else name


def resolvable_names(target: str, source_path: str) -> frozenset[str]:
    """The :func:`file_name_key` of every file ``resolve(target, source_path)`` may return.

    Each lookup of :meth:`ObsidianIndex._resolve` asks for one last path part ``L``: a file
    named ``L`` or ``L.md``, so of key ``L`` or ``L`` without ``.md``.  The percent-decoded
    target is asked too.  An empty target is the source note, whatever its name.
    """
    found: set[str] = set()
    for last in _looked_up_names(target, source_path):
        found |= {last, _without_md(last)}
    return frozenset(found)


def link_name_keys(target: str, source_path: str) -> tuple[str, str]:
    """A link's keys: its looked-up name without ``.md``, as written and percent-decoded.

    The second is ``""`` when decoding changes nothing.  A note of :func:`file_name_key`
    ``K`` can be what the link resolves to only when one of these is ``K`` or ``K`` without
    ``.md`` (:func:`resolvable_names`): the links to resolve again when such a note comes or
    goes.
    """
    keys = [_without_md(last) for last in _looked_up_names(target, source_path)]
    literal = keys[0] if keys else ""
    decoded = keys[1] if len(keys) > 1 else ""
    return literal, ("" if decoded == literal else decoded)


def keys_reaching(path: str) -> frozenset[str]:
    """The :func:`link_name_keys` of the links that may resolve to the file at ``path``."""
    key = file_name_key(path)
    return frozenset({key, _without_md(key)})


def _looked_up_names(target: str, source_path: str) -> list[str]:
    """The last part of the path each lookup asks for: as written, then percent-decoded."""
    folder = _folder(_key(source_path))
    written = [target.strip()]
    if "%" in target:
        written.append(unquote(target).strip())
    return [_looked_up(_key(w), folder).rpartition("/")[2] for w in written if w]


def _looked_up(key: str, folder: str) -> str:
    """The path ``_resolve`` looks ``key`` up at (its last part is all that counts here)."""
    if key.startswith(("./", "../")):
        return posixpath.normpath(posixpath.join(folder, key))
    return key

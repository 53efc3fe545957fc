"""Digests: of parts, of files, and of vaultsync's own code; reads only the files it is given.

``code_fingerprint()`` is the one answer to "which vaultsync is this?" that every cache and
every note key includes (the graph cache, the no-op fast path, the render keys): a digest of
every source file and template of the installed package, so an upgrade never reuses an old
cache and no module can escape a hand-kept list.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

# The packages whose files are vaultsync's code; found through the import system, so the
# editable install (three folders) and a wheel (one tree) give the same set of names.
_CODE_PACKAGES = ("vaultsync", "vaultsync.renderers", "vaultsync.templates")
_CODE_SUFFIXES = (".py", ".j2")


def inputs_digest(parts: Iterable[str | bytes]) -> str:
    """One digest of several parts; each is length-prefixed, so no two lists of parts collide."""
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def files_digest(files: Iterable[tuple[str, str | Path]]) -> str:
    """Digest of ``(name, path)`` pairs in order: each name, then its bytes (``-`` if absent)."""
    digest = hashlib.sha256()
    for name, path in files:
        digest.update(name.encode("utf-8", "surrogatepass") + b"\0")
        try:
            with open(path, "rb") as handle:  # noqa: PTH123 - paths as text: no Path per file
                digest.update(handle.read())
        except (FileNotFoundError, IsADirectoryError):
            digest.update(b"-")
    return digest.hexdigest()


def _code_files() -> dict[str, str]:
    """Every code file of the package, by its dotted package and relative path.

    Paths as text: a ``Path`` per file and ``relative_to`` cost more than reading the files,
    on every command (the no-op sync's inputs hold this digest).
    """
    roots = {
        package: [os.path.realpath(root) for root in spec.submodule_search_locations or []]
        for package in _CODE_PACKAGES
        if (spec := importlib.util.find_spec(package)) is not None
    }
    # In a wheel `vaultsync/renderers` lies inside `vaultsync`: each package's folder is walked
    # once, under its own name, so both layouts give the same names (no per-file `resolve`).
    owned = {root for folders in roots.values() for root in folders}
    files: dict[str, str] = {}
    for package, folders in roots.items():
        for root in folders:
            files.update(_package_files(package, root, owned))
    return files


def _package_files(package: str, root: str, owned: set[str]) -> Iterator[tuple[str, str]]:
    """``(name, path)`` of each code file under ``root``, but in the packages ``owned`` lists."""
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__" and f"{folder}/{d}" not in owned]
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = f"{package}:" if rel == "." else f"{package}:{rel}/"
        for name in names:
            if name.endswith(_CODE_SUFFIXES):
                yield prefix + name, f"{folder}/{name}"


@functools.cache
def code_fingerprint() -> str:
    """Digest of vaultsync's own source and templates (~100 small files, about a millisecond)."""
    files = _code_files()
    return files_digest((name, files[name]) for name in sorted(files))

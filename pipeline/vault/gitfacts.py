"""What ``status`` asks the vault's git repository, kept while the files git reads are the same.

``status`` needs three answers from git besides the notes: the commit at ``HEAD`` (the key of
the history check), the folder ``git commit`` takes its hooks from, and the current branch's
upstream.  Asking costs libgit2's import (~40 ms) and two git processes (~10 ms), a fifth of a
``status`` at 100,000 notes.  Yet each answer is a function of a few small files and of the
environment git reads, so it is kept (``<cache>/git-facts``) with a digest of their bytes and
given again while that digest is the same:

- the hooks folder and the upstream: ``HEAD`` (it names the branch) and every config file
  git or libgit2 reads (the repository's, the user's, the system's);
- the commit at ``HEAD``: those, the loose ref ``HEAD`` names and ``packed-refs``;
- what ``status`` reads from the history behind ``HEAD`` (where each kept edit came from):
  those, the files that graft or cut that history (``shallow``, ``info/grafts``), and the
  question asked (for the edits: the edited notes, their blobs and vaultsync's code, whose
  reading of the history it is).  Commits never change, so the answer for one commit and one
  question is the same until one of them does; only the last one asked is kept.

The digest is of bytes, not stat data, so no racy window applies, and it is taken again after
the answer is computed: an answer whose files changed meanwhile is not kept.  The user asking
and the owner of ``.git`` are in the key (git refuses a repository another user owns).  Only a
vault at the top of its own repository (a ``.git`` folder with ``objects`` and ``refs``, refs
as files, no linked worktree, neither bare nor with its work tree moved, no config file
including another, no variable pointing git at other files) is answered this way; any other
layout asks git every time.  The
first ``status`` after a commit asks again (and walks the new history anyway).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from vaultsync.core import cachefile

FACTS = "git-facts"
"""The cache file's name, in the state's cache folder."""
VERSION = 2

Answer = str | list[str] | None
"""An answer as JSON keeps it."""

_CONFIG_FILES = (
    "/etc/gitconfig",
    "/usr/local/etc/gitconfig",
    "/opt/homebrew/etc/gitconfig",
    "{XDG_CONFIG_HOME}/git/config",
    "{HOME}/.config/git/config",
    "{HOME}/.gitconfig",
    "{GIT_CONFIG_GLOBAL}",
    "{GIT_CONFIG_SYSTEM}",
)
"""The config files outside the repository that git and libgit2 may read (system, XDG,
global; a variable not set drops its line)."""


_REDIRECTING = frozenset(
    {
        "GIT_DIR",
        "GIT_COMMON_DIR",
        "GIT_WORK_TREE",
        "GIT_CONFIG",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_PARAMETERS",
        "GIT_NAMESPACE",
    }
)
"""Variables that point git at other files than the ones digested: nothing is kept then."""

_MOVED = re.compile(
    rb"^[ \t]*(?:worktree[ \t]*=|bare[ \t]*(?:=[ \t]*(?:true|yes|on|1)[ \t]*)?\r?$)",
    re.IGNORECASE | re.MULTILINE,
)
"""A config line moving the work tree away from the vault, or making the repository bare."""


class _Unkeyable(Exception):
    """The layout is not one whose answers can be kept."""


class GitFacts:
    """The kept answers for one vault, read once; :meth:`save` keeps the new ones."""

    def __init__(self, vault: Path, cache: Path, environ: Mapping[str, str]) -> None:
        """Answers for ``vault``, kept in the folder ``cache``, under git's ``environ``."""
        self._vault = Path(os.path.realpath(vault))
        self._path = cache / FACTS
        self._environ = dict(sorted(environ.items()))
        self._answers = _load(self._path, self._head_line())
        self._new = False
        self._keys: tuple[str | None, str | None] | None = None
        """The digests without and with the refs, read once for every answer kept."""

    def hooks_folder(self, compute: Callable[[], str | None]) -> str | None:
        """Where ``git commit`` takes hooks from (``None``: no repository)."""
        return _text_or_none(self._answer("hooks", refs=False, compute=compute))

    def upstream(self, remote: str, compute: Callable[[], list[str] | None]) -> list[str] | None:
        """The current branch's upstream under the ``git.remote`` setting ``remote``."""
        found = self._answer(f"upstream\0{remote}", refs=False, compute=compute)
        if isinstance(found, list) and len(found) == 2 and all(isinstance(x, str) for x in found):
            return found
        return None

    def head(self, compute: Callable[[], str]) -> str:
        """The commit at ``HEAD`` (empty: none yet, or no repository)."""
        return _text_or_none(self._answer("head", refs=True, compute=compute)) or ""

    def history(self, name: str, question: str, compute: Callable[[], str]) -> str | None:
        """An answer read from the history behind ``HEAD`` for ``question`` (``None``: none)."""
        return _text_or_none(self._answer(name, refs=True, compute=compute, question=question))

    def kept(self, name: str) -> str | None:
        """The text last kept as ``name``, whatever files and question it was kept for.

        For an answer that can be carried over to new ones (the edits' origins, across a
        commit that changed none of the edited notes); ``None``: none kept.
        """
        found = self._answers.get(name)
        return _text_or_none(found[1]) if found is not None else None

    def forget(self, name: str) -> None:
        """Drop the answer kept as ``name`` (one that proved unusable): asked anew next time."""
        if self._answers.pop(name, None) is not None:
            self._new = True

    def save(self) -> None:
        """Keep what was answered anew; a cache that cannot be written only costs time."""
        if self._new:
            payload = json.dumps(self._answers, sort_keys=True).encode("utf-8")
            cachefile.write(self._path, self._head_line(), payload, durable=False)
            self._new = False

    def _answer(
        self, name: str, *, refs: bool, compute: Callable[[], Answer], question: str = ""
    ) -> Answer:
        if self._keys is None:
            self._keys = _digests(self._vault, self._environ)
        key = self._key(refs, question)
        kept = self._answers.get(name)
        if key is not None and kept is not None and kept[0] == key:
            return kept[1]
        value = compute()
        self._keys = _digests(self._vault, self._environ)  # read again: git was just asked
        if key is not None and self._key(refs, question) == key:  # unchanged while it was asked
            self._answers[name] = [key, value]
            self._new = True
        return value

    def _key(self, refs: bool, question: str) -> str | None:
        """The digest an answer is kept under: of the files it reads, and of its question."""
        assert self._keys is not None  # noqa: S101 - read by _answer first
        key = self._keys[1 if refs else 0]
        return key if key is None or not question else _digest([key, question])

    def _head_line(self) -> bytes:
        return cachefile.envelope(FACTS, VERSION, str(self._vault))


def _digests(vault: Path, environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The digests of what the answers read, without and with the refs (``None``: not kept)."""
    try:
        parts, refs = _read_parts(vault, environ)
    except _Unkeyable:
        return None, None
    return _digest(parts), None if refs is None else _digest([*parts, *refs])


def _digest(parts: list[object]) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _read_parts(
    vault: Path, environ: Mapping[str, str]
) -> tuple[list[object], list[object] | None]:
    """What every answer reads, then what only the commit at ``HEAD`` (and its history) reads.

    The second is ``None`` when the refs are not kept (a symbolic ref past ``HEAD``).
    """
    if _REDIRECTING & environ.keys() or "HOME" not in environ:
        raise _Unkeyable  # files other than these would answer (or libgit2's own HOME)
    git_dir = vault / ".git"
    owner = _owner(git_dir)
    head = _bytes(git_dir / "HEAD")
    if head is None:
        raise _Unkeyable
    # who asks counts too: git and libgit2 refuse a repository another user owns
    parts: list[object] = [str(vault), os.geteuid(), owner, sorted(environ.items()), head]
    for path in _config_files(git_dir, environ):
        data = _bytes(path)
        # an included file could change the answers unseen (a URL with the word costs time)
        if data is not None and (b"include" in data.lower() or _MOVED.search(data)):
            raise _Unkeyable
        parts += [str(path), data]
    try:
        refs = [_ref_bytes(git_dir, head), _bytes(git_dir / "packed-refs")]
        # what grafts or cuts the history behind HEAD (a deepened shallow clone walks further)
        return parts, [*refs, _bytes(git_dir / "shallow"), _bytes(git_dir / "info" / "grafts")]
    except _Unkeyable:
        return parts, None


def _owner(git_dir: Path) -> int:
    """The owner of the vault's ``.git`` folder, when its answers can be kept."""
    found = plain_git_dir(git_dir)
    if found is None:
        raise _Unkeyable
    return found.st_uid


def plain_git_dir(git_dir: Path) -> os.stat_result | None:
    """The stat data of a vault's ``.git`` folder when it is a plain repository's own.

    ``None`` for a symlink or a file naming a git folder elsewhere, a folder that is no
    repository (discovery would go on to a parent folder), a linked worktree, or refs not
    kept as files.
    """
    try:
        found = git_dir.lstat()
        if not stat.S_ISDIR(found.st_mode):
            return None
        if not (git_dir / "objects").is_dir() or not (git_dir / "refs").is_dir():
            return None
        if (git_dir / "commondir").exists() or (git_dir / "reftable").exists():
            return None
    except OSError:
        return None
    return found


def _config_files(git_dir: Path, environ: Mapping[str, str]) -> list[Path]:
    found = [git_dir / "config", git_dir / "config.worktree"]
    for pattern in _CONFIG_FILES:
        try:
            path = pattern.format_map(environ)
        except KeyError:
            continue
        if path and Path(path) not in found:
            found.append(Path(path))
    return found


def _ref_bytes(git_dir: Path, head: bytes) -> bytes | None:
    """The bytes of the loose ref ``head`` names (``head`` itself when it is detached)."""
    if not head.startswith(b"ref:"):
        return head
    ref = head[4:].strip().decode("utf-8", "surrogateescape")
    if not ref.startswith("refs/") or ".." in ref or "\\" in ref:
        raise _Unkeyable
    loose = _bytes(git_dir.joinpath(*ref.split("/")))
    if loose is not None and loose.startswith(b"ref:"):
        raise _Unkeyable  # a symbolic ref past HEAD
    return loose


def _bytes(path: Path) -> bytes | None:
    """A file's bytes; ``None`` when there is none."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        raise _Unkeyable from None


def _load(path: Path, head: bytes) -> dict[str, list[Answer]]:
    payload = cachefile.read(path, head)
    try:
        found = json.loads(payload) if payload is not None else {}
    except (ValueError, RecursionError):  # a cache is a hint: unreadable, it is none
        return {}
    if not isinstance(found, dict):
        return {}
    return {
        name: kept
        for name, kept in found.items()
        if isinstance(kept, list) and len(kept) == 2 and isinstance(kept[0], str)
    }


def _text_or_none(value: Answer) -> str | None:
    return value if isinstance(value, str) else None

"""Secrets and private values in the vault's git history: found, and purged; touches git.

vaultsync masks every secret and hides every private value before anything is written, but a
value that became private after an earlier sync (a field marked ``sensitive``, a secret a new
rule recognises, a vaultsync older than the rule) stays in the commits that sync made.

* :func:`scan`: the commits whose notes hold one of the stores' secrets or private values
  (``graph.load.exposed``), newest first; read only.  ``sync`` and ``status`` say so.
* :func:`purge` (``vaultsync history --purge``): rewrites every commit of ``HEAD``'s branch so
  that each such value becomes its mask (``‹secret-…›``, the text vaultsync writes now) in every
  file and file name, with the manifests' blob ids (and so the merge bases) following the new
  blobs; the old history stays reachable from ``refs/vaultsync/backup/<UTC time>`` until the
  user drops it.  Only in a repository vaultsync owns (the vault is its whole work tree): the
  history of a larger repository is not vaultsync's to rewrite.  The files vaultsync owns in
  the work tree, the working manifest and ``.git/index`` follow the rewrite; every other clone
  keeps the old commits and must be cloned again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pygit2
from pygit2 import IndexEntry
from pygit2.enums import DeltaStatus, FileMode, SortMode
from vaultsync.core.errors import UsageError, VaultWriteError
from vaultsync.core.redact import mask
from vaultsync.vault.manifest import CACHE, CONTROL_DIR, MANIFEST, StatCache, blob_id
from vaultsync.vault.vcs import MAX_COMMITS, VaultRepo
from vaultsync.vault.write import VaultFS

BACKUP_PREFIX = "refs/vaultsync/backup/"


@dataclass(frozen=True, slots=True, kw_only=True)
class Exposure:
    """A commit whose files hold an exposed value."""

    commit: str
    when: datetime
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Purged:
    """What :func:`purge` did."""

    commits: int
    """Commits rewritten (the whole branch, from its first commit)."""
    blobs: int
    """Files whose bytes changed somewhere in the history."""
    backup: str
    """The ref holding the old history."""


def _pattern(values: Iterable[str]) -> re.Pattern[bytes] | None:
    ordered = sorted({v.encode("utf-8") for v in values if v}, key=len, reverse=True)
    return re.compile(b"|".join(re.escape(v) for v in ordered)) if ordered else None


def _commit_time(commit: pygit2.Commit) -> datetime:
    zone = timezone(timedelta(minutes=commit.commit_time_offset))
    return datetime.fromtimestamp(commit.commit_time, zone).astimezone(UTC)


def scan(
    repo: VaultRepo, values: Iterable[str], *, max_commits: int = MAX_COMMITS
) -> tuple[Exposure, ...]:
    """The commits from ``HEAD`` that wrote a vault file whose name or bytes hold a value.

    Each commit is compared with its first parent, so a file is read once, when it appears.
    """
    pattern = _pattern(values)
    git = repo.repo
    if pattern is None or git.head_is_unborn:
        return ()
    seen: dict[str, bool] = {}
    found: list[Exposure] = []
    walker = git.walk(git.head.target, SortMode.TOPOLOGICAL | SortMode.TIME)
    for count, commit in enumerate(walker):
        if count >= max_commits:
            break
        hits = [p for p, oid in _written(repo, commit) if _holds(git, pattern, p, oid, seen)]
        if hits:
            when = _commit_time(commit)
            found.append(Exposure(commit=str(commit.id), when=when, paths=tuple(hits)))
    return tuple(found)


def _written(repo: VaultRepo, commit: pygit2.Commit) -> list[tuple[str, pygit2.Oid]]:
    """The vault files ``commit`` added or changed, with their blob ids."""
    diff = repo.vault_diff(commit)
    if diff is None:
        return []
    return [
        (d.new_file.path, d.new_file.id)
        for d in diff.deltas
        if d.status in (DeltaStatus.ADDED, DeltaStatus.MODIFIED, DeltaStatus.RENAMED)
    ]


def _holds(
    git: pygit2.Repository,
    pattern: re.Pattern[bytes],
    path: str,
    oid: pygit2.Oid,
    seen: dict[str, bool],
) -> bool:
    key = str(oid)
    if key not in seen:
        blob = git.get(oid)
        seen[key] = isinstance(blob, pygit2.Blob) and pattern.search(blob.data) is not None
    return seen[key] or pattern.search(path.encode("utf-8")) is not None


class _Rewriter:
    """Every tree and blob of the history with the values masked, each object once."""

    def __init__(self, git: pygit2.Repository, values: Iterable[str]) -> None:
        self.git = git
        self.values = sorted({v for v in values if v}, key=len, reverse=True)
        self.pattern = _pattern(self.values)
        self.blobs: dict[str, str] = {}
        self.trees: dict[str, pygit2.Oid] = {}

    def text(self, data: bytes) -> bytes:
        if self.pattern is None or self.pattern.search(data) is None:
            return data
        out = data
        for value in self.values:
            out = out.replace(value.encode("utf-8"), mask(value).encode("utf-8"))
        return out

    def blob(self, oid: pygit2.Oid, *, manifest: bool) -> pygit2.Oid:
        key = str(oid)
        if key not in self.blobs:
            data = _blob_data(self.git, oid)
            new = self.text(data)
            if manifest:  # its blob ids follow the rewritten notes
                new = _remap_ids(new, self.blobs)
            self.blobs[key] = str(self.git.create_blob(new)) if new != data else key
        return pygit2.Oid(hex=self.blobs[key])

    def tree(self, tree: pygit2.Tree, path: str = "") -> pygit2.Oid:
        key = str(tree.id)
        if key in self.trees:
            return self.trees[key]
        builder = self.git.TreeBuilder()
        # The manifest last (its blob ids follow the notes): its folder last at the root too.
        entries = sorted(tree, key=lambda e: f"{path}{e.name}" in {CONTROL_DIR, MANIFEST})
        for entry in entries:
            name = self.text((entry.name or "").encode("utf-8")).decode("utf-8")
            if isinstance(entry, pygit2.Tree):
                builder.insert(name, self.tree(entry, f"{path}{entry.name}/"), FileMode.TREE)
            else:
                manifest = f"{path}{entry.name}" == MANIFEST
                builder.insert(name, self.blob(entry.id, manifest=manifest), entry.filemode)
        self.trees[key] = builder.write()
        return self.trees[key]


def _remap_ids(data: bytes, blobs: Mapping[str, str]) -> bytes:
    changed = {old: new for old, new in blobs.items() if old != new}
    if not changed:
        return data

    def swap(found: re.Match[bytes]) -> bytes:
        old = found[0].decode()
        return changed.get(old, old).encode()

    return re.sub(rb"[0-9a-f]{40}", swap, data)


def purge(vault: Path, repo: VaultRepo, values: Iterable[str], *, now: datetime) -> Purged:
    """Rewrite the branch of ``HEAD`` without ``values`` (see the module docstring).

    Raises:
        UsageError: the repository is larger than the vault, ``HEAD`` is not on a branch, or
            there is nothing to purge.
        VaultWriteError: git refuses a write.
    """
    git = repo.repo
    if repo.prefix:
        raise UsageError(
            f"{git.workdir}: the vault is inside a larger repository, whose history is not "
            "vaultsync's to rewrite",
            hint="rewrite it yourself (git filter-repo --replace-text), then sync again",
        )
    if git.head_is_unborn or git.head_is_detached:
        raise UsageError(f"{git.path}: HEAD is not on a branch with commits; nothing to purge")
    rewriter = _Rewriter(git, values)
    if rewriter.pattern is None:
        raise UsageError("the stores hold no secret or private value; nothing to purge")
    old_tip = git.head.target
    mapped: dict[str, pygit2.Oid] = {}
    commits = list(git.walk(old_tip, SortMode.TOPOLOGICAL | SortMode.REVERSE))
    try:
        for commit in commits:
            parents = [mapped[str(p)] for p in commit.parent_ids]
            tree = rewriter.tree(commit.tree)
            message = rewriter.text(commit.message.encode("utf-8")).decode("utf-8")
            mapped[str(commit.id)] = git.create_commit(
                None, commit.author, commit.committer, message, tree, parents
            )
    except (pygit2.GitError, OSError) as err:
        raise VaultWriteError(f"{git.path}: cannot rewrite the history: {err}") from err
    changed = {old: new for old, new in rewriter.blobs.items() if old != new}
    # The branch moves last: a work tree or index that cannot follow leaves the history as it was.
    _follow_work_tree(vault, git, changed, rewriter)
    backup = f"{BACKUP_PREFIX}{now.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    try:
        git.references.create(backup, old_tip, force=True)
        git.head.set_target(mapped[str(old_tip)], "vaultsync: history purged of secrets")
    except (pygit2.GitError, OSError) as err:
        raise VaultWriteError(f"{git.path}: cannot move the branch: {err}") from err
    return Purged(commits=len(commits), blobs=len(changed), backup=backup)


def _follow_work_tree(
    vault: Path, git: pygit2.Repository, changed: Mapping[str, str], rewriter: _Rewriter
) -> None:
    """The work tree files and ``.git/index`` follow the rewrite: new blobs, masked names."""
    index = git.index
    index.read(force=True)
    followed = [_followed(entry, changed, rewriter) for entry in index]
    with VaultFS(vault) as fs:
        _rewrite_notes(fs, git, rewriter, followed)
        found = fs.read_control_file(MANIFEST)
        if found is not None:
            fs.write_control(MANIFEST, _remap_ids(rewriter.text(found.data), changed))
        fs.remove_control(CACHE)  # the stat cache names the old paths; the next sync rebuilds it
    for old, new in followed:
        if (_path(old), old.id) == (_path(new), new.id):
            continue
        if _path(new) != _path(old):
            index.remove(_path(old))
        index.add(new)
    index.write()


def _followed(
    entry: IndexEntry, changed: Mapping[str, str], rewriter: _Rewriter
) -> tuple[IndexEntry, IndexEntry]:
    """An index entry and what it becomes: its name masked, its blob the rewritten one."""
    path = rewriter.text(_path(entry).encode("utf-8")).decode("utf-8")
    oid = pygit2.Oid(hex=changed.get(str(entry.id), str(entry.id)))
    return entry, IndexEntry(path, oid, entry.mode)


def _path(entry: IndexEntry) -> str:
    return os.fsdecode(entry.path)


def _is_dotted(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _rewrite_notes(
    fs: VaultFS,
    git: pygit2.Repository,
    rewriter: _Rewriter,
    followed: Iterable[tuple[IndexEntry, IndexEntry]],
) -> None:
    """Each note whose blob or name changed is written anew; a renamed one leaves its old name.

    A note the user edited keeps the edit, with the values masked in it too.  Dot files (the
    manifest, Obsidian's settings) are not notes: the caller writes the manifest itself.
    """
    moving = [
        (old, new)
        for old, new in followed
        if (_path(old), old.id) != (_path(new), new.id) and not _is_dotted(_path(old))
    ]
    disk, _racy = fs.scan([_path(old) for old, _ in moving], StatCache())
    writes: dict[str, bytes] = {}
    removes: list[str] = []
    for old, new in moving:
        data = fs.read(_path(old))
        if data is None:
            continue
        unedited = blob_id(data) == str(old.id)
        writes[_path(new)] = _blob_data(git, new.id) if unedited else rewriter.text(data)
        if _path(new) != _path(old):
            removes.append(_path(old))
    fs.apply(writes, removes, disk)


def _blob_data(git: pygit2.Repository, oid: pygit2.Oid) -> bytes:
    found = git[oid]
    if not isinstance(found, pygit2.Blob):
        raise VaultWriteError(f"{git.path}: {oid} is not a blob")
    return found.data

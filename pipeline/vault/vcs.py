"""Stage 6b: the only module that talks to git (pygit2).

**Which repository.** The repository whose work tree holds the vault, if the vault folder is
not git-ignored there (only the vault's paths are ever touched); otherwise (no repository, a
bare one, or the vault ignored, like ``./vault`` in the vaultsync checkout) a repository is
created in the vault itself, branch ``main``.

**Commit.** Exactly the paths a sync wrote or removed, plus its own files, from an in-memory
index built from ``HEAD`` (never ``read_tree`` into ``.git/index``: that would un-stage the
user's work); no commit when the tree is unchanged. The message ends with the trailer
``Vaultsync-Sync: <blob id of the manifest committed>``. If ``HEAD`` moves under us the commit
is rebuilt on the new tip. Then the on-disk index is synced for those paths only, with their
stat data (``vault.gitindex``: a file this sync wrote is recorded without being read again), so
``git status`` is clean for the engine's paths while the user's staged and unstaged changes
elsewhere stay as they were.

**Privacy.** A repository in the vault itself (``<vault>/.git``, ours or a user's) is private:
``.git`` is ``0700`` and everything in it loses its group and other bits, whatever the umask and
even when the vault folder existed before (a user's ``mkdir`` under umask 022), so no other
local user reads a note through git.  A ``.git`` found too open is repaired when a command opens
the repository to write (``create=True``); objects and folders git creates later are made under
umask 077 (``_private_umask``).  The repository of a larger work tree keeps its own modes.

**History.** Ownership survives a lost manifest: ``last_sync_blobs`` gives, for each asked path,
the blob the last sync commit that changed it wrote there: one walk from ``HEAD``, diffing only
the vault subtree of the sync commits against their parent (cost follows the changes, not the
vault size), stopping once every path is answered or after ``max_commits``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from typing import BinaryIO

import pygit2
from pygit2 import IndexEntry
from pygit2.enums import DeltaStatus, DiffFind, DiffOption, FileMode, SortMode
from vaultsync.core.environment import read_environment
from vaultsync.core.errors import VaultWriteError
from vaultsync.core.fsio import atomic_file_named, fsync_dir
from vaultsync.vault.gitcli import PRIVATE_UMASK
from vaultsync.vault.gitindex import add_written
from vaultsync.vault.manifest import (
    CONTROL_DIR,
    MANIFEST,
    StatKey,
    blob_id,
    load_manifest,
    recorded_blobs,
    stat_key,
)
from vaultsync.vault.packfile import plan_packs, write_pack
from vaultsync.vault.report import EditHistory, EditOrigin

TRAILER = "Vaultsync-Sync"
FALLBACK_NAME = "vaultsync"
FALLBACK_EMAIL = "vaultsync@localhost"
MAX_COMMITS = 10_000
_FILE_MODES = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)
PACK_AT = 100
"""From this many blobs on, a sync stores them as a pack (git too keeps fewer loose: see
``transfer.unpackLimit``)."""


def _lstat(path: Path) -> os.stat_result | None:
    """The path's own stat data (a symlink is not followed), or ``None``: nothing there."""
    try:
        return path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _blob_ids(
    changes: Mapping[str, bytes | None], known: Mapping[str, str] | None
) -> dict[str, str]:
    """The blob id of every path with bytes: the caller's where it has one, else hashed."""
    known = known or {}
    return {
        rel: known.get(rel) or blob_id(data) for rel, data in changes.items() if data is not None
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class _Edits:
    """What a commit changes in its parent's tree."""

    edits: dict[str, tuple[pygit2.Oid, int] | None]
    """Repository path → (blob, mode), or ``None`` to remove it."""
    tally: dict[tuple[str, str], int]
    """``(kind, "created" | "updated" | "removed")`` → how many notes (control files left out)."""
    blobs: dict[str, bytes]
    """The blobs the edits add (id → bytes)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Tree:
    """A tree built for a commit, and what it changed (for the message)."""

    id: pygit2.Oid
    created: int = 0
    updated: int = 0
    removed: int = 0
    by_kind: tuple[tuple[str, str], ...] = ()
    """``(kind, "2 updated, 1 created")`` per top folder of the vault, for the commit's body."""

    def summary(self) -> str:
        return f"{self.created} created, {self.updated} updated, {self.removed} removed"

    def body(self) -> str:
        """One line per kind of note changed, so ``git log`` reads as a changelog."""
        return "".join(f"{kind}: {counts}\n" for kind, counts in self.by_kind)


def _kind_of(rel: str) -> str:
    """The kind a commit's body counts a note under: its top folder (``Facts/x.md`` → facts)."""
    head, _, rest = rel.partition("/")
    return (head if rest else PurePosixPath(head).stem).lower()


def _by_kind(tally: Mapping[tuple[str, str], int]) -> tuple[tuple[str, str], ...]:
    """``{(kind, change): n}`` → ``(kind, "n change, …")`` in kind order, changes as counted."""
    kinds: dict[str, list[str]] = {}
    for (kind, change), n in sorted(
        tally.items(), key=lambda i: (i[0][0], _CHANGES.index(i[0][1]))
    ):
        kinds.setdefault(kind, []).append(f"{n} {change}")
    return tuple((kind, ", ".join(parts)) for kind, parts in kinds.items())


_CHANGES = ("created", "updated", "removed")


@contextlib.contextmanager
def _private_umask(private: bool) -> Iterator[None]:
    """Run git's writes under umask 077 when the repository is the vault's own.

    libgit2 makes objects ``0444 & ~umask`` and folders ``0777 & ~umask``; the umask is the only
    knob.  vaultsync commits from one thread, so the process-wide umask is safe to swap here.
    """
    if not private:
        yield
        return
    old = os.umask(PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(old)


def make_private(git_dir: Path) -> None:
    """``git_dir`` ``0700`` and nothing under it readable by group or others (symlinks kept)."""
    if stat.S_IMODE(git_dir.lstat().st_mode) & PRIVATE_UMASK == 0:
        return  # already private: repaired once, not walked on every sync
    for folder, dirs, files in os.walk(git_dir):
        for name in (*dirs, *files):
            _strip_open_bits(Path(folder) / name)
    _strip_open_bits(git_dir)


def _strip_open_bits(path: Path) -> None:
    found = path.lstat()
    if stat.S_ISLNK(found.st_mode):
        return
    mode = stat.S_IMODE(found.st_mode)
    if mode & PRIVATE_UMASK:
        path.chmod(mode & ~PRIVATE_UMASK)


def _owns_git_dir(repo: pygit2.Repository, vault: Path) -> bool:
    """Whether ``repo``'s git folder is ``<vault>/.git`` (not a larger repository's)."""
    return Path(repo.path).resolve() == (vault / ".git").resolve()


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One commit that changed the vault (``recent_changes``): vault paths it touched."""

    commit: str
    when: str
    """Commit time, ISO 8601 in UTC."""
    summary: str
    sync: bool
    """A sync's commit (it has the ``Vaultsync-Sync`` trailer), not one of the user's."""
    paths: tuple[str, ...]
    more: int = 0
    """Paths changed beyond those listed."""


@contextlib.contextmanager
def scratch_merger() -> Iterator[VaultRepo]:
    """A throwaway bare repository in a private temporary folder (a dry run's merges).

    Its merges leave no object in the vault's own repository.
    """
    import tempfile  # noqa: PLC0415 - only a dry run with merges needs it

    with tempfile.TemporaryDirectory(prefix="vaultsync-merge-") as folder:
        yield VaultRepo(pygit2.init_repository(folder, bare=True), "", private=True)


class VaultRepo:
    """A repository and the vault's place in it (``prefix``: ``""`` or ``"sub/vault/"``)."""

    def __init__(self, repo: pygit2.Repository, prefix: str, *, private: bool = False) -> None:
        self.repo = repo
        self.prefix = prefix
        self.private = private
        """The repository is the vault's own ``.git``: kept ``0700`` (see module doc)."""

    @classmethod
    def open(cls, vault: Path, *, create: bool) -> VaultRepo | None:
        """The vault's repository (see module doc); ``None`` if there is none and not ``create``."""
        vault = vault.resolve()
        try:
            found = pygit2.discover_repository(str(vault))
            repo = pygit2.Repository(found) if found else None
            if repo is not None and not repo.is_bare and repo.workdir:
                rel = os.path.relpath(vault, Path(repo.workdir).resolve())
                if rel == ".":
                    return cls._own(repo, vault, repair=create)
                prefix = Path(rel).as_posix() + "/"
                if not rel.startswith("..") and not repo.path_is_ignored(prefix):
                    return cls(repo, prefix)
            if not create:
                return None
            with _private_umask(True):
                made = pygit2.init_repository(str(vault), initial_head="main")
            return cls._own(made, vault, repair=True)
        except pygit2.GitError as err:
            raise VaultWriteError(f"{vault}: cannot open its git repository: {err}") from err

    @classmethod
    def _own(cls, repo: pygit2.Repository, vault: Path, *, repair: bool) -> VaultRepo:
        """The repository at the vault's root; its ``.git`` made private when ``repair``."""
        private = _owns_git_dir(repo, vault)
        if private and repair:
            try:
                make_private(Path(repo.path))
            except OSError as err:
                raise VaultWriteError(
                    f"{repo.path}: cannot make the vault's git folder private: {err}"
                ) from err
        return cls(repo, "", private=private)

    def head_id(self) -> str:
        """The commit HEAD names (``""``: no commit yet)."""
        return "" if self.repo.head_is_unborn else str(self.repo.head.target)

    # -- history ----------------------------------------------------------------------------

    def vault_tree(self, commit: pygit2.Commit) -> pygit2.Tree | None:
        """The vault folder's tree in ``commit`` (``None``: the vault is not in it)."""
        if not self.prefix:
            return commit.tree
        try:
            obj = commit.tree[self.prefix[:-1]]
        except KeyError:
            return None
        return obj if isinstance(obj, pygit2.Tree) else None

    def vault_diff(self, commit: pygit2.Commit) -> pygit2.Diff | None:
        """What ``commit`` changed in the vault; ``None`` when it left the vault as it was."""
        new = self.vault_tree(commit)
        old = self.vault_tree(commit.parents[0]) if commit.parents else None
        if (old is None and new is None) or (
            old is not None and new is not None and old.id == new.id
        ):
            return None
        if old is None:
            assert new is not None  # noqa: S101 - both None returned above
            return new.diff_to_tree(swap=True)
        return old.diff_to_tree(new) if new is not None else old.diff_to_tree()

    def _changes(self, commit: pygit2.Commit, wanted: set[str]) -> Iterator[tuple[str, str | None]]:
        """(vault path, blob written or ``None``) for each wanted path ``commit`` changed.

        Path by path, not a diff of the vault's trees: a diff compares every file of each folder
        a commit touched (40 ms a commit at 100,000 notes, and ``status`` walked 165 of them for
        one edited note); a wanted path whose folder is the same tree is settled by its id.
        """
        new = self.vault_tree(commit)
        old = self.vault_tree(commit.parents[0]) if commit.parents else None
        if (old is None and new is None) or (
            old is not None and new is not None and old.id == new.id
        ):
            return
        for path, file in _file_changes(old, new, wanted):
            wrote = file is not None and file.filemode in _FILE_MODES
            yield path, str(file.id) if wrote and file is not None else None

    def _walk(self, max_commits: int) -> Iterator[tuple[pygit2.Commit, bool]]:
        """Commits from ``HEAD``, newest first, each with "is a sync commit"."""
        if self.repo.head_is_unborn:
            return
        walker = self.repo.walk(self.repo.head.target, SortMode.TOPOLOGICAL | SortMode.TIME)
        for count, commit in enumerate(walker):
            if count >= max_commits:
                return
            yield commit, f"{TRAILER}:" in commit.message and TRAILER in commit.message_trailers

    def recent_changes(self, limit: int, *, max_paths: int = 50) -> tuple[Change, ...]:
        """The newest ``limit`` commits that changed the vault, newest first, with their paths."""
        found: list[Change] = []
        for commit, is_sync in self._walk(MAX_COMMITS):
            if len(found) >= limit:
                break
            diff = self.vault_diff(commit)
            if diff is None:
                continue
            paths = [d.new_file.path or d.old_file.path for d in diff.deltas]
            when = datetime.fromtimestamp(commit.commit_time, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            found.append(
                Change(
                    commit=str(commit.id),
                    when=when,
                    summary=(commit.message.splitlines() or [""])[0],
                    sync=is_sync,
                    paths=tuple(paths[:max_paths]),
                    more=max(0, len(paths) - max_paths),
                )
            )
        return tuple(found)

    def last_sync_fingerprint(self, *, max_commits: int = MAX_COMMITS) -> str:
        """The trailer of the newest sync commit (the blob id of its manifest), or ``""``."""
        for commit, is_sync in self._walk(max_commits):
            if is_sync:
                return str(commit.message_trailers[TRAILER]).strip()
        return ""

    def last_sync_manifest(self, *, max_commits: int = MAX_COMMITS) -> bytes | None:
        """The manifest the newest sync commit holds (to rebuild a lost one's path list)."""
        for commit, is_sync in self._walk(max_commits):
            tree = self.vault_tree(commit) if is_sync else None
            if tree is not None and MANIFEST in tree:
                blob = tree[MANIFEST]
                return blob.data if isinstance(blob, pygit2.Blob) else None
        return None

    def last_sync_blobs(
        self, paths: Iterable[str], *, max_commits: int = MAX_COMMITS
    ) -> dict[str, str]:
        """Path → the blob the last sync commit that changed it wrote (removed paths left out).

        A merged note's bytes hold the user's text: the manifest of that commit names a merge
        base instead, so such a path proves nothing and is left out too.
        """
        wanted, found = set(paths), {}
        for commit, is_sync in self._walk(max_commits):
            if not wanted:
                break
            if is_sync:
                found.update(self._rendered_changes(commit, wanted))
        return found

    def _rendered_changes(self, commit: pygit2.Commit, wanted: set[str]) -> dict[str, str]:
        """The wanted paths ``commit`` wrote as rendered (each settled: dropped from ``wanted``)."""
        changed = dict(self._changes(commit, wanted))
        wanted.difference_update(changed)
        written = {path: blob for path, blob in changed.items() if blob is not None}
        recorded = self._manifest_blobs(commit, written) if written else {}
        return {path: blob for path, blob in written.items() if recorded.get(path, blob) == blob}

    def _manifest_blobs(self, commit: pygit2.Commit, paths: Collection[str]) -> Mapping[str, str]:
        """Path → blob id as the manifest of ``commit`` records them, for ``paths`` at least.

        Empty: no manifest readable.  A few paths are read from their rows of the manifest a
        sync dumped (``manifest.recorded_blobs``); otherwise it is parsed whole.
        """
        tree = self.vault_tree(commit)
        blob = tree[MANIFEST] if tree is not None and MANIFEST in tree else None
        if not isinstance(blob, pygit2.Blob):
            return {}
        data = blob.data
        found = recorded_blobs(data, paths)
        if found is not None:
            return found
        return {path: entry.blob for path, entry in load_manifest(data).entries.items()}

    def verify(self) -> None:
        """Raise ``VaultWriteError`` unless ``HEAD``, its commit and its tree can be read.

        A sync checks this before it writes a note, so a broken repository (garbage in
        ``.git/HEAD``, a missing pack, ``HEAD`` at an invalid ref) stops it with nothing written.
        """
        try:
            if not self.repo.head_is_unborn:
                tree = self.repo.head.peel(pygit2.Commit).tree
                len(tree)  # the tree object itself must be there
        except (pygit2.GitError, KeyError, ValueError, OSError) as err:
            raise VaultWriteError(
                f"{self.repo.path}: the vault's git repository is broken: {err}",
                hint="repair it with git (`git fsck`), or move its .git folder aside",
            ) from err

    def worktree_renames(self, paths: Iterable[str]) -> dict[str, str]:
        """Which of ``paths`` (gone from the work tree) git's rename detection finds moved.

        ``HEAD`` against the work tree, untracked files included, similar content (git's 50 %)
        counting as a rename: a note whose ``vaultsync_id`` line was deleted along the move.
        """
        wanted = {self.prefix + p for p in paths}
        if not wanted or self.repo.head_is_unborn:
            return {}
        tree = self.repo.head.peel(pygit2.Tree)
        diff = tree.diff_to_workdir(
            flags=DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
        )
        diff.find_similar(flags=DiffFind.FIND_RENAMES | DiffFind.FIND_FOR_UNTRACKED)
        found: dict[str, str] = {}
        for delta in diff.deltas:
            old, new = delta.old_file.path, delta.new_file.path
            if (
                delta.status == DeltaStatus.RENAMED
                and old in wanted
                and new.startswith(self.prefix)
            ):
                found[old.removeprefix(self.prefix)] = new.removeprefix(self.prefix)
        return found

    def head_holds(self, files: Mapping[str, str]) -> set[str]:
        """The vault paths of ``files`` (path → blob id) whose file at ``HEAD`` is that blob."""
        if self.repo.head_is_unborn or not files:
            return set()
        found = _Files(self.repo.head.peel(pygit2.Commit).tree)
        return {
            rel
            for rel, blob in files.items()
            if (file := found.at(self.prefix + rel)) is not None and str(file.id) == blob
        }

    def read_blob(self, blob: str) -> bytes | None:
        """The bytes of a blob of the object store (``None``: not there)."""
        try:
            found = self.repo.get(blob)
        except (ValueError, pygit2.GitError):
            return None
        return found.data if isinstance(found, pygit2.Blob) else None

    def store_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Put the blobs (id → bytes) into the object store, committed or not.

        Raises ``VaultWriteError`` when git refuses.
        """
        try:
            with _private_umask(self.private):
                self._store_blobs(blobs)
        except (pygit2.GitError, OSError) as err:
            raise VaultWriteError(f"{self.repo.path}: cannot store the notes: {err}") from err

    def merge_lines(self, base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, bool]:
        """libgit2's three-way merge by lines (``vault.merge.LineMerge``); stores the three.

        Not UTF-8 on some side: no merge, the user's bytes back and not clean.
        """
        try:
            with _private_umask(self.private):
                ancestor, mine, render = (
                    IndexEntry(label, self.repo.create_blob(data), FileMode.BLOB)
                    for label, data in (("base", base), ("yours", ours), ("vaultsync", theirs))
                )
            result = self.repo.merge_file_from_index(ancestor, mine, render)
        except UnicodeDecodeError:
            return ours, False
        except (pygit2.GitError, OSError) as err:
            raise VaultWriteError(f"{self.repo.path}: cannot merge: {err}") from err
        return result.contents.encode("utf-8"), bool(result.automergeable)

    def edit_origins(
        self, edited: Mapping[str, str], *, max_commits: int = MAX_COMMITS
    ) -> EditHistory:
        """For each edited note (path → blob on disk): the commit that first carried the edit."""
        first, merged, walked = self._edit_history(set(edited), max_commits)
        tip = None if self.repo.head_is_unborn else self.repo.head.peel(pygit2.Commit)
        head = _Files(None if tip is None else self.vault_tree(tip))
        out = {}
        for path, disk_blob in edited.items():
            in_head = head.at(path)
            origin = EditOrigin(
                path=path,
                uncommitted=in_head is None or str(in_head.id) != disk_blob,
                merged=merged.get(path, ""),
            )
            carrier = first.get(path)
            if carrier is not None:
                zone = timezone(timedelta(minutes=carrier.commit_time_offset))
                when = datetime.fromtimestamp(carrier.commit_time, zone)
                origin = replace(origin, commit=str(carrier.id), when=when)
            out[path] = origin
        return EditHistory(origins=out, head="" if tip is None else str(tip.id), walked=walked)

    def still_tells(self, history: EditHistory, paths: Collection[str]) -> EditHistory | None:
        """``history`` as read from ``HEAD`` now, if it can tell; else ``None`` (read again).

        It can when ``HEAD`` is one commit on the one ``history`` was read from, and that
        commit changed none of ``paths``: a walk from it meets that commit first, then the
        same commits as before.  The same origins, the same files at ``HEAD`` (so the same
        ``uncommitted``), settled one commit later, as long as that is within the walk's limit.
        """
        if history.walked is None or history.walked >= MAX_COMMITS or not history.head:
            return None
        git = self.repo
        if git.head_is_unborn:
            return None
        head = git.head.peel(pygit2.Commit)
        if [str(parent) for parent in head.parent_ids] != [history.head]:
            return None
        before, after = self.vault_tree(head.parents[0]), self.vault_tree(head)
        if any(True for _ in _file_changes(before, after, paths)):
            return None
        return replace(history, head=str(head.id), walked=history.walked + 1)

    def _edit_history(
        self, pending: set[str], max_commits: int
    ) -> tuple[dict[str, pygit2.Commit], dict[str, str], int | None]:
        """Per path, the oldest commit of the user's since the sync that last rendered it.

        And the newest sync commit that merged into it; ``pending`` empties as paths settle.
        Last, how many commits the walk took to settle them all (``None``: it did not).
        """
        first: dict[str, pygit2.Commit] = {}
        merged: dict[str, str] = {}
        walked = 0
        for commit, is_sync in self._walk(max_commits):
            if not pending:
                break
            walked += 1
            changed = list(self._changes(commit, pending))
            wrote = [path for path, blob in changed if blob is not None]
            rendered = self._manifest_blobs(commit, wrote) if is_sync and wrote else {}
            for path, blob in changed:
                if not is_sync:
                    first[path] = commit
                elif blob is not None and rendered.get(path, blob) != blob:
                    merged.setdefault(path, str(commit.id))  # a merge: the edit is older
                else:
                    pending.discard(path)
        return first, merged, None if pending else walked

    # -- commit and index ---------------------------------------------------------------------

    def _signature(self, when: datetime | None) -> pygit2.Signature:
        config = self.repo.config
        name = str(config["user.name"]) if "user.name" in config else FALLBACK_NAME
        email = str(config["user.email"]) if "user.email" in config else FALLBACK_EMAIL
        moment = when if when is not None else datetime.now(UTC).astimezone()
        offset = moment.utcoffset()
        minutes = int(offset.total_seconds() // 60) if offset is not None else 0
        return pygit2.Signature(name, email, int(moment.timestamp()), minutes)

    def commit(
        self,
        changes: Mapping[str, bytes | None],
        *,
        fingerprint: str | None,
        when: datetime | None = None,
        known: Mapping[str, str] | None = None,
        subject: str = "",
    ) -> str | None:
        """Commit ``changes`` (vault path → bytes, ``None`` = removed) on ``HEAD``.

        ``fingerprint``: the new manifest's blob id, in the ``Vaultsync-Sync`` trailer that
        marks a sync's commit; ``None`` for a commit that is not a sync (a saved setting),
        which ownership proofs then skip.  ``subject`` replaces the default subject.
        ``known``: blob ids the caller already has for some of those paths (not hashed again).

        Returns the new commit's id, or ``None`` when the tree would not change. Raises
        ``VaultWriteError`` when git refuses (a stale ``*.lock`` is never deleted).
        """
        with _private_umask(self.private):
            return self._commit(
                changes, fingerprint=fingerprint, when=when, known=known, subject=subject
            )

    def _commit(
        self,
        changes: Mapping[str, bytes | None],
        *,
        fingerprint: str | None,
        when: datetime | None,
        known: Mapping[str, str] | None,
        subject: str,
    ) -> str | None:
        signature = self._signature(when)
        ids = _blob_ids(changes, known)
        for _attempt in range(5):
            head = None if self.repo.head_is_unborn else self.repo.head.peel(pygit2.Commit)
            edits = self._edits(head, changes, ids)
            try:
                self._store_blobs(edits.blobs)
            except (pygit2.GitError, OSError) as err:
                raise VaultWriteError(f"{self.repo.path}: cannot store the notes: {err}") from err
            try:
                tree = self._tree(head, edits)
            except (pygit2.GitError, OSError) as err:  # a full disk, at some levels of it
                raise VaultWriteError(
                    f"{self.repo.path}: cannot write the commit's tree: {err}",
                    hint="free some disk space; the next sync finishes this one",
                ) from err
            if head is not None and tree.id == head.tree_id:
                return None
            message = f"vaultsync: {subject or f'sync ({tree.summary()})'}\n"
            if body := tree.body():
                message += f"\n{body}"
            if fingerprint is not None:
                message += f"\n{TRAILER}: {fingerprint}\n"
            made = self._create_commit(head, tree.id, message, signature)
            if made is not None:
                return made
        raise VaultWriteError(f"{self.repo.workdir}: HEAD kept moving; nothing committed")

    def _edits(
        self,
        head: pygit2.Commit | None,
        changes: Mapping[str, bytes | None],
        ids: Mapping[str, str],
    ) -> _Edits:
        """What ``changes`` change in ``head``'s tree.

        A file that already holds its bytes is no edit, and its blob is not stored again: a
        sync after an upgrade renders every note again, nearly all of them as they were.
        """
        files = _Files(head.tree if head is not None else None)
        edits: dict[str, tuple[pygit2.Oid, int] | None] = {}
        tally: dict[tuple[str, str], int] = {}
        blobs: dict[str, bytes] = {}
        for rel, data in sorted(changes.items()):
            path = self.prefix + rel
            old = files.at(path)
            if data is None:
                if old is None:
                    continue
                edits[path], change = None, "removed"
            else:
                blob = pygit2.Oid(hex=ids[rel])
                if old is not None and old.id == blob:
                    continue
                mode = old.filemode if old is not None else FileMode.BLOB
                edits[path] = (blob, mode if mode in _FILE_MODES else FileMode.BLOB)
                blobs[ids[rel]] = data
                change = "updated" if old is not None else "created"
            if not rel.startswith(f"{CONTROL_DIR}/"):
                tally[_kind_of(rel), change] = tally.get((_kind_of(rel), change), 0) + 1
        return _Edits(edits=edits, tally=tally, blobs=blobs)

    def _tree(self, head: pygit2.Commit | None, edits: _Edits) -> _Tree:
        """``head``'s tree with ``edits`` applied (their blobs stored), and what they changed."""
        base = head.tree if head is not None else None
        tally = edits.tally
        counts = {c: sum(n for (_, ch), n in tally.items() if ch == c) for c in _CHANGES}
        tree = patched_tree(self.repo, base, edits.edits) or self.repo.TreeBuilder().write()
        return _Tree(id=tree, **counts, by_kind=_by_kind(tally))

    def _create_commit(
        self, head: pygit2.Commit | None, tree: pygit2.Oid, message: str, who: pygit2.Signature
    ) -> str | None:
        """Commit ``tree`` on ``head``; ``None`` when ``HEAD`` moved meanwhile (build again)."""
        parents = [head.id] if head is not None else []
        try:
            return str(self.repo.create_commit("HEAD", who, who, message, tree, parents))
        except (pygit2.GitError, OSError) as err:
            moved = self.repo.head_is_unborn != (head is None) or (
                head is not None and self.repo.head.target != head.id
            )
            if not moved:
                raise VaultWriteError(
                    f"{self.repo.workdir}: cannot commit: {err}",
                    hint="if no git command is running, remove the stale .git/*.lock file",
                ) from err
        return None

    def _store_blobs(self, blobs: Mapping[str, bytes]) -> None:
        """Store the blobs (id → bytes): loose when few, else as packs (not one file per note)."""
        objects = self.objects_dir()
        if len(blobs) < PACK_AT or objects is None:
            for data in blobs.values():
                self.repo.create_blob(data)
            return
        folder = objects / "pack"
        folder.mkdir(exist_ok=True)
        for group in plan_packs(blobs):
            # The .pack first: readers find a pack through its .idx, so never see half of it.
            # Read-only, like git's own packs; the folder is fsynced once, after every pack.
            with _pack_file(folder, private=self.private) as (handle, name_of):
                pack = write_pack(group, handle)
                name_of(f"pack-{pack.name}.pack")
            with _pack_file(folder, private=self.private) as (handle, name_of):
                handle.write(pack.index)
                name_of(f"pack-{pack.name}.idx")
        fsync_dir(folder)

    def objects_dir(self) -> Path | None:
        """``.git/objects``, when that is where new objects go; else ``None`` (loose objects).

        Not for a linked worktree, nor an object directory set through the environment.
        """
        git_dir = Path(self.repo.path)
        objects = git_dir / "objects"
        if (
            (git_dir / "commondir").exists()
            or read_environment().git_object_directory
            or not objects.is_dir()
        ):
            return None
        return objects

    def sync_index(
        self,
        changes: Mapping[str, bytes | None],
        *,
        written: Mapping[str, StatKey] | None = None,
        known: Mapping[str, str] | None = None,
        timeout: float = 2.0,
    ) -> bool:
        """Make ``.git/index`` agree with ``HEAD`` for ``changes`` only.

        Stat data are recorded when the file on disk is ours; a file the user changed gets our
        blob in the index (their change shows as unstaged). ``written`` holds the stat data of
        the files this sync wrote: a file that still has them is ours without being read again.
        ``False`` if the index stayed locked for ``timeout`` seconds (the caller keeps its
        journal and retries next time).
        """
        workdir = Path(self.repo.workdir)
        written = written or {}
        ids = _blob_ids(changes, known)
        deadline = time.monotonic() + timeout
        while True:
            index = self.repo.index
            index.read(force=True)
            for rel, data in changes.items():
                blob = None if data is None else ids[rel]
                self._index_one(index, workdir, rel, blob, written.get(rel))
            try:
                with _private_umask(self.private):
                    index.write()
                return True
            except (pygit2.GitError, OSError) as err:
                if not (Path(self.repo.path) / "index.lock").exists():
                    raise VaultWriteError(f"{workdir}: cannot write the git index: {err}") from err
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.05)

    def _index_one(
        self,
        index: pygit2.Index,
        workdir: Path,
        rel: str,
        blob_hex: str | None,
        written: StatKey | None,
    ) -> None:
        """One path of ``sync_index``: removed (``blob_hex`` None), ours as written, or edited."""
        path = self.prefix + rel
        on_disk = workdir / path
        found = _lstat(on_disk)
        if blob_hex is None:
            if path in index and found is None:
                index.remove(path)
            return
        blob = pygit2.Oid(hex=blob_hex)
        mode = index[path].mode if path in index else FileMode.BLOB
        is_file = found is not None and stat.S_ISREG(found.st_mode)
        if found is not None and is_file and written == stat_key(found):
            add_written(index, path, blob, mode, found)
        elif found is not None and is_file and pygit2.hashfile(str(on_disk)) == blob:
            # Hashed after the lstat: the stat data recorded are those of the bytes hashed or
            # older (then git re-hashes it), as `git add` records them.  Not ``index.add(path)``:
            # libgit2 would read, hash and compress the file again (0.7 s for a 25 MB manifest).
            add_written(index, path, blob, mode, found)
        else:
            index.add(IndexEntry(path, blob, mode))


class _Files:
    """The files of a tree by path, as an index read from it would hold them.

    Each folder's tree is looked up once: libgit2 caches no tree over 4 KB, so a lookup by
    whole path read and parsed a big folder's tree again each time (190 µs per note at
    100,000 notes, against under 1 µs in a folder held here).
    """

    def __init__(self, tree: pygit2.Tree | None) -> None:
        self._root = tree
        self._folders: dict[str, pygit2.Tree | None] = {}

    def at(self, path: str) -> pygit2.Object | None:
        """The file (not a folder) at ``path`` (``None``: none there)."""
        folder, _, name = path.rpartition("/")
        tree = self._folders[folder] if folder in self._folders else self._folder(folder)
        if tree is None:
            return None
        try:
            found = tree[name]
        except KeyError:
            return None
        return None if found.filemode == FileMode.TREE else found

    def _folder(self, folder: str) -> pygit2.Tree | None:
        tree = self._root
        if folder and tree is not None:
            try:
                found = tree[folder]
            except KeyError:
                found = None
            tree = found if isinstance(found, pygit2.Tree) else None
        self._folders[folder] = tree
        return tree


def _file_changes(
    old: pygit2.Tree | None, new: pygit2.Tree | None, wanted: Iterable[str]
) -> Iterator[tuple[str, pygit2.Object | None]]:
    """Each wanted path whose file differs between two trees, with its file in ``new``.

    In path order, as a diff of the trees lists them; ``None``: no file there in ``new``.
    """
    before, after = _Files(old), _Files(new)
    for path in sorted(wanted):
        folder = path.rpartition("/")[0]
        same = _entry_id(old, folder) if folder else None
        if same is not None and same == _entry_id(new, folder):
            continue  # the same folder tree: every file in it is too
        was, now = before.at(path), after.at(path)
        if _file_key(was) != _file_key(now):
            yield path, now


def _entry_id(tree: pygit2.Tree | None, path: str) -> pygit2.Oid | None:
    """The id of what ``tree`` holds at ``path``, its object not read (``None``: nothing)."""
    if tree is None:
        return None
    try:
        return tree[path].id
    except KeyError:
        return None


def _file_key(file: pygit2.Object | None) -> tuple[pygit2.Oid, int] | None:
    return None if file is None else (file.id, file.filemode)


def patched_tree(
    repo: pygit2.Repository,
    base: pygit2.Tree | None,
    edits: Mapping[str, tuple[pygit2.Oid, int] | None],
) -> pygit2.Oid | None:
    """``base`` with each path set to ``(blob, mode)`` or removed (``None``); ``None``: empty.

    Only the folders an edit reaches are built again (git's own trees are reused for the
    rest), so a commit costs what it changes: reading the whole tree into an index and
    writing it back took 0.14 s at 100,000 notes.  The tree is the one an index holding
    ``base``'s files with the edits applied writes, and a folder left empty disappears.  A file
    set where a folder is replaces the folder, and a file set below a file replaces that file,
    as on disk (libgit2's index keeps both, then writes one or the other).
    """
    files: dict[str, tuple[pygit2.Oid, int] | None] = {}
    folders: dict[str, dict[str, tuple[pygit2.Oid, int] | None]] = {}
    for path, edit in edits.items():
        name, sep, rest = path.partition("/")
        if sep:
            folders.setdefault(name, {})[rest] = edit
        else:
            files[name] = edit
    builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    for name, edit in files.items():  # before the folders: a later path wins, as in an index
        if edit is not None:
            builder.insert(name, *edit)
        elif builder.get(name) is not None:
            builder.remove(name)
    for name, inner in folders.items():
        old = builder.get(name)
        subtree = old if isinstance(old, pygit2.Tree) else None
        new = patched_tree(repo, subtree, inner)
        if new is not None:
            builder.insert(name, new, FileMode.TREE)
        elif subtree is not None:  # every file of the folder removed
            builder.remove(name)
    return builder.write() if len(builder) else None


def _pack_file(
    folder: Path, *, private: bool
) -> contextlib.AbstractContextManager[tuple[BinaryIO, Callable[[str], None]]]:
    """A read-only temp file in ``.git/objects/pack`` (``tmp_pack_*``, as git names them)."""
    mode = 0o400 if private else 0o444
    return atomic_file_named(folder, prefix="tmp_pack_", mode=mode, sync_folder=False)

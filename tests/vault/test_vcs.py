"""Stage 6b: the repository choice, commits of our paths only, index sync, ownership history."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import ConfigLevel
from vaultsync.core.errors import VaultWriteError
from vaultsync.vault.manifest import blob_id, stat_key
from vaultsync.vault.vcs import FALLBACK_EMAIL, FALLBACK_NAME, PACK_AT, TRAILER, VaultRepo

WHEN = datetime(2026, 10, 24, 12, 0, tzinfo=timezone(timedelta(hours=2)))


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def opened(vault: Path) -> VaultRepo:
    repo = VaultRepo.open(vault, create=True)
    assert repo is not None
    return repo


class TestOpen:
    def test_no_repository(self, tmp_path: Path) -> None:
        """Without a repository: none unless asked, then one in the vault on ``main``."""
        assert VaultRepo.open(tmp_path, create=False) is None
        repo = opened(tmp_path)
        assert repo.prefix == ""
        assert Path(repo.repo.workdir).resolve() == tmp_path.resolve()
        assert (tmp_path / ".git" / "HEAD").read_text().strip() == "ref: refs/heads/main"

    def test_inside_a_larger_repository(self, tmp_path: Path) -> None:
        """A vault inside a repository that tracks it uses that repository, with a prefix."""
        git(tmp_path, "init", "-q")
        vault = tmp_path / "notes" / "vault"
        vault.mkdir(parents=True)
        repo = opened(vault)
        assert repo.prefix == "notes/vault/"
        assert not (vault / ".git").exists()

    def test_ignored_by_the_enclosing_repository(self, tmp_path: Path) -> None:
        """A vault the enclosing repository ignores (like ./vault in the checkout) gets its own."""
        git(tmp_path, "init", "-q")
        (tmp_path / ".gitignore").write_text("/vault/\n")
        vault = tmp_path / "vault"
        vault.mkdir()
        repo = opened(vault)
        assert repo.prefix == ""
        assert (vault / ".git").is_dir()
        assert VaultRepo.open(vault, create=False) is not None


class TestCommit:
    def test_commits_only_our_paths_and_leaves_user_changes(self, tmp_path: Path) -> None:
        """Staged, unstaged and untracked user changes elsewhere survive commit and index sync."""
        git(tmp_path, "init", "-q")
        write(tmp_path, {"README.md": b"v1\n", "src/app.py": b"v1\n"})
        git(tmp_path, "add", ".")
        git(tmp_path, "commit", "-qm", "start")
        write(
            tmp_path,
            {
                "README.md": b"v2 staged\n",
                "src/app.py": b"v2 unstaged\n",
                "new.txt": b"untracked\n",
            },
        )
        git(tmp_path, "add", "README.md")
        before = git(tmp_path, "status", "--porcelain")
        vault = tmp_path / "vault"
        notes = {"a.md": b"a\n", "F/b.md": b"b\n"}
        write(vault, notes)
        repo = opened(vault)
        sha = repo.commit(dict(notes), fingerprint="f" * 40, when=WHEN)
        assert sha is not None
        assert repo.sync_index(dict(notes))
        assert git(tmp_path, "status", "--porcelain") == before
        assert git(tmp_path, "diff-files", "--name-only", "--", "vault") == ""
        shown = git(tmp_path, "show", "--name-only", "--format=%s%n%n%b", sha)
        assert "vaultsync: sync (2 created, 0 updated, 0 removed)" in shown
        assert f"{TRAILER}: {'f' * 40}" in shown
        assert sorted(shown.split()[-2:]) == ["vault/F/b.md", "vault/a.md"]
        assert git(tmp_path, "show", "HEAD:README.md") == "v1\n"

    def test_body_counts_changes_per_kind(self, tmp_path: Path) -> None:
        """The body has a line per top folder, its changes in created/updated/removed order."""
        repo = opened(tmp_path)
        repo.commit(
            {"Facts/a.md": b"1", "Facts/b.md": b"1", "Home.md": b"1"}, fingerprint="x", when=WHEN
        )
        sha = repo.commit(
            {"Facts/a.md": b"2", "Facts/b.md": None, "Facts/c.md": b"1", "Episodes/e.md": b"1"},
            fingerprint="y",
            when=WHEN,
        )
        assert sha is not None
        message = repo.repo[sha].peel(pygit2.Commit).message
        assert message.split("\n\n")[1] == (
            "episodes: 1 created\nfacts: 1 created, 1 updated, 1 removed"
        )

    def test_message_signature_time_and_counts(self, tmp_path: Path) -> None:
        """Repo config gives the signature; the clock gives the time; counts skip engine files."""
        repo = opened(tmp_path)
        repo.repo.config["user.name"] = "Ada"
        repo.repo.config["user.email"] = "ada@example.invalid"
        repo.commit(
            {"a.md": b"1", "b.md": b"1", ".vaultsync/manifest.json": b"{}"},
            fingerprint="x",
            when=WHEN,
        )
        sha = repo.commit({"a.md": b"2", "b.md": None, "c.md": b"1"}, fingerprint="y", when=WHEN)
        assert sha is not None
        commit = repo.repo[sha].peel(pygit2.Commit)
        assert (
            commit.message == "vaultsync: sync (1 created, 1 updated, 1 removed)\n\n"
            f"a: 1 updated\nb: 1 removed\nc: 1 created\n\n{TRAILER}: y\n"
        )
        assert (commit.author.name, commit.author.email) == ("Ada", "ada@example.invalid")
        assert commit.commit_time == int(WHEN.timestamp())
        assert commit.commit_time_offset == 120
        assert commit.message_trailers == {TRAILER: "y"}

    def test_nothing_to_commit(self, tmp_path: Path) -> None:
        """An unchanged tree makes no commit."""
        repo = opened(tmp_path)
        repo.commit({"a.md": b"1"}, fingerprint="x")
        head = repo.repo.head.target
        assert repo.commit({"a.md": b"1"}, fingerprint="x") is None
        assert repo.repo.head.target == head

    def test_edited_file_keeps_its_edit_unstaged(self, tmp_path: Path) -> None:
        """When the file on disk is not ours, the index gets our blob: the edit shows as `` M``."""
        write(tmp_path, {"a.md": b"user edit\n"})
        repo = opened(tmp_path)
        repo.commit({"a.md": b"ours\n"}, fingerprint="x")
        assert repo.sync_index({"a.md": b"ours\n"})
        assert git(tmp_path, "status", "--porcelain") == " M a.md\n"

    def test_written_files_enter_the_index_with_their_stat_data(self, tmp_path: Path) -> None:
        """Files still as we wrote them are indexed unread, and git trusts their stat data."""
        notes = {f"n/{i:03}.md": f"note {i}\n".encode() for i in range(300)}
        write(tmp_path, notes)
        repo = opened(tmp_path)
        assert repo.commit(dict(notes), fingerprint="x") is not None
        written = {rel: stat_key((tmp_path / rel).lstat()) for rel in notes}
        assert repo.sync_index(dict(notes), written=written)
        # diff-files trusts the index's stat data without refreshing them: any wrong field shows.
        assert git(tmp_path, "diff-files", "--name-only") == ""
        assert git(tmp_path, "status", "--porcelain") == ""
        assert git(tmp_path, "ls-files", "--stage", "n/007.md").split()[1] == blob_id(b"note 7\n")

    def test_stat_data_that_changed_are_not_trusted(self, tmp_path: Path) -> None:
        """A same-size edit after our write (only its mtime moved on) shows as modified."""
        write(tmp_path, {"a.md": b"ours\n"})
        repo = opened(tmp_path)
        repo.commit({"a.md": b"ours\n"}, fingerprint="x")
        ours = (tmp_path / "a.md").lstat()
        written = {"a.md": stat_key(ours)}
        write(tmp_path, {"a.md": b"edit\n"})
        os.utime(tmp_path / "a.md", ns=(ours.st_atime_ns, ours.st_mtime_ns + 1_000_000))
        assert repo.sync_index({"a.md": b"ours\n"}, written=written)
        assert git(tmp_path, "status", "--porcelain") == " M a.md\n"

    def test_many_notes_are_stored_as_one_pack(self, tmp_path: Path) -> None:
        """From ``PACK_AT`` notes on, the blobs go to a pack, not one loose file each."""
        notes = {f"{i:04}.md": f"body {i}\n".encode() for i in range(500)}
        repo = opened(tmp_path)
        sha = repo.commit(dict(notes), fingerprint="x")
        assert sha is not None
        tree = repo.repo[sha].peel(pygit2.Commit).tree
        assert {entry.name: str(entry.id) for entry in tree} == {
            rel: blob_id(data) for rel, data in notes.items()
        }
        objects = tmp_path / ".git" / "objects"
        assert len(list((objects / "pack").glob("pack-*.idx"))) == 1
        assert git(tmp_path, "count-objects", "-v").splitlines()[0] == "count: 2"  # tree, commit
        assert git(tmp_path, "fsck", "--strict", "--full", "--no-dangling") == ""

    def test_few_notes_stay_loose(self, tmp_path: Path) -> None:
        """Below ``PACK_AT`` notes, blobs are loose objects as libgit2 writes them."""
        repo = opened(tmp_path)
        repo.commit({f"{i}.md": f"{i}".encode() for i in range(PACK_AT - 1)}, fingerprint="x")
        assert not list((tmp_path / ".git" / "objects" / "pack").glob("pack-*"))

    def test_files_that_hold_their_bytes_store_nothing_again(self, tmp_path: Path) -> None:
        """Committing every note again with one changed stores that one blob, loose, no pack."""
        notes = {
            f"{folder}/{i:04}.md": f"{folder} {i}\n".encode() for folder in "ab" for i in range(300)
        }
        repo = opened(tmp_path)
        repo.commit(dict(notes), fingerprint="x")
        packs = sorted((tmp_path / ".git" / "objects" / "pack").glob("pack-*.pack"))
        loose = git(tmp_path, "count-objects", "-v").splitlines()[0]
        notes["b/0007.md"] = b"changed\n"
        sha = repo.commit(dict(notes), fingerprint="y")
        assert sha is not None
        assert sorted((tmp_path / ".git" / "objects" / "pack").glob("pack-*.pack")) == packs
        # one blob, the b folder's tree, the root tree and the commit
        assert int(loose.split()[1]) + 4 == int(git(tmp_path, "count-objects", "-v").split()[1])
        assert git(tmp_path, "show", "--stat", "--format=", "HEAD").split()[:1] == ["b/0007.md"]
        assert git(tmp_path, "fsck", "--strict", "--no-dangling") == ""

    def test_linked_worktree_gets_loose_objects(self, tmp_path: Path) -> None:
        """In a linked worktree the objects live elsewhere: the blobs are written through git."""
        main = tmp_path / "main"
        main.mkdir()
        git(main, "init", "-q", "-b", "main")
        git(main, "commit", "-q", "--allow-empty", "-m", "start")
        git(main, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
        repo = opened(tmp_path / "wt")
        notes = {f"v/{i}.md": f"{i}".encode() for i in range(PACK_AT + 50)}
        assert repo.commit(notes, fingerprint="x") is not None
        assert git(tmp_path / "wt", "fsck", "--strict", "--no-dangling") == ""
        assert git(tmp_path / "wt", "show", "HEAD:v/7.md") == "7"

    def test_removed_paths_leave_the_index(self, tmp_path: Path) -> None:
        """A path we removed from disk and HEAD leaves the index; status is clean."""
        write(tmp_path, {"a.md": b"a", "b.md": b"b"})
        repo = opened(tmp_path)
        repo.commit({"a.md": b"a", "b.md": b"b"}, fingerprint="x")
        repo.sync_index({"a.md": b"a", "b.md": b"b"})
        (tmp_path / "b.md").unlink()
        repo.commit({"b.md": None}, fingerprint="y")
        repo.sync_index({"b.md": None})
        assert git(tmp_path, "status", "--porcelain") == ""

    def test_stale_locks(self, tmp_path: Path) -> None:
        """A left-over ``index.lock`` is never deleted: index sync reports failure, a ref lock
        fails the commit with a hint."""
        repo = opened(tmp_path)
        repo.commit({"a.md": b"1"}, fingerprint="x")
        lock = Path(repo.repo.path) / "index.lock"
        lock.write_bytes(b"")
        assert repo.sync_index({"a.md": b"1"}, timeout=0.2) is False
        assert lock.exists()
        ref_lock = Path(repo.repo.path) / "refs" / "heads" / "main.lock"
        ref_lock.write_bytes(b"")
        with pytest.raises(VaultWriteError) as caught:
            repo.commit({"a.md": b"2"}, fingerprint="y")
        assert caught.value.hint is not None
        assert ref_lock.exists()


@pytest.fixture
def no_global_identity(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """libgit2 reads its global config from a search path: point it at an empty folder."""
    empty = tmp_path_factory.mktemp("noconfig")
    saved = pygit2.settings.search_path[ConfigLevel.GLOBAL]
    pygit2.settings.search_path[ConfigLevel.GLOBAL] = str(empty)
    try:
        yield
    finally:
        pygit2.settings.search_path[ConfigLevel.GLOBAL] = saved


def test_fallback_identity(tmp_path: Path, no_global_identity: None) -> None:
    """No ``user.name`` anywhere: the commit is signed ``vaultsync <vaultsync@localhost>``."""
    repo = opened(tmp_path)
    sha = repo.commit({"a.md": b"1"}, fingerprint="x")
    assert sha is not None
    author = repo.repo[sha].peel(pygit2.Commit).author
    assert (author.name, author.email) == (FALLBACK_NAME, FALLBACK_EMAIL)


class TestHistory:
    @pytest.fixture
    def story(self, tmp_path: Path) -> tuple[Path, VaultRepo]:
        """sync 1 writes a, b; the user commits an edit of a; sync 2 writes c; sync 3 removes b."""
        git(tmp_path, "init", "-q")
        vault = tmp_path / "v"
        vault.mkdir()
        repo = opened(vault)

        def sync(changes: dict[str, bytes | None], manifest: bytes) -> None:
            changes = {**changes, ".vaultsync/manifest.json": manifest}
            for rel, data in changes.items():
                if data is None:
                    (vault / rel).unlink()
                else:
                    write(vault, {rel: data})
            repo.commit(changes, fingerprint=blob_id(manifest))
            assert repo.sync_index(changes)

        sync({"a.md": b"a1", "b.md": b"b1"}, b"m1")
        write(vault, {"a.md": b"a by the user"})
        git(tmp_path, "add", "v/a.md")
        git(tmp_path, "commit", "-qm", "my edit")
        sync({"c.md": b"c1"}, b"m2")
        sync({"b.md": None}, b"m3")
        git(tmp_path, "commit", "-q", "--allow-empty", "-m", "unrelated")
        return vault, repo

    def test_last_sync_blobs(self, story: tuple[Path, VaultRepo]) -> None:
        """Our last write per path: not the user's commit; removed paths and unknown ones absent."""
        _vault, repo = story
        found = repo.last_sync_blobs(["a.md", "b.md", "c.md", "d.md"])
        assert found == {"a.md": blob_id(b"a1"), "c.md": blob_id(b"c1")}

    def test_walk_is_bounded(self, story: tuple[Path, VaultRepo]) -> None:
        """``max_commits`` stops the walk."""
        _vault, repo = story
        assert repo.last_sync_blobs(["a.md"], max_commits=3) == {}
        assert repo.last_sync_blobs(["a.md"], max_commits=5) == {"a.md": blob_id(b"a1")}

    def test_last_sync_manifest_and_fingerprint(self, story: tuple[Path, VaultRepo]) -> None:
        """The newest sync commit's manifest and trailer."""
        _vault, repo = story
        assert repo.last_sync_manifest() == b"m3"
        assert repo.last_sync_fingerprint() == blob_id(b"m3")

    def test_edit_origins(self, story: tuple[Path, VaultRepo]) -> None:
        """A committed edit names its commit and date; an unsaved one says "uncommitted"."""
        vault, repo = story
        origin = repo.edit_origins({"a.md": blob_id(b"a by the user")}).origins["a.md"]
        assert repo.repo[origin.commit].peel(pygit2.Commit).message == "my edit\n"
        assert origin.when is not None
        assert abs(origin.when - datetime.now(UTC)) < timedelta(minutes=5)
        assert not origin.uncommitted
        write(vault, {"c.md": b"c edited, not committed"})
        origin = repo.edit_origins({"c.md": blob_id(b"c edited, not committed")}).origins["c.md"]
        assert origin.commit == ""
        assert origin.uncommitted

    def test_origins_carried_over_other_commits_equal_a_new_reading(
        self, story: tuple[Path, VaultRepo]
    ) -> None:
        """Carried over commits that changed none of the edited notes, the origins, the commit
        they were read at and the commits the walk took equal a new reading; a commit of an
        edited note carries nothing."""
        vault, repo = story
        edited = {"a.md": blob_id(b"a by the user")}
        history = repo.edit_origins(edited)
        for number in range(2):
            write(vault, {f"x{number}.md": b"another note"})
            git(vault.parent, "add", f"v/x{number}.md")
            git(vault.parent, "commit", "-qm", f"another note {number}")
            carried = repo.still_tells(history, edited.keys())
            assert carried == repo.edit_origins(edited)
            assert carried is not None
            history = carried
        write(vault, {"a.md": b"a edited again"})
        git(vault.parent, "commit", "-qam", "edited again")
        assert repo.still_tells(history, edited.keys()) is None

    def test_one_walk_for_many_paths(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """200 sync commits, 1,000 paths asked: one walk that diffs each commit once.

        (How long it takes is measured by ``make bench``, never asserted here.)
        """
        repo = opened(tmp_path)
        for n in range(200):
            repo.commit(
                {f"F{n % 10}/n{n}-{i}.md": f"{n}-{i}".encode() for i in range(5)},
                fingerprint=str(n),
            )
        asked = [f"F{n % 10}/n{n}-{i}.md" for n in range(200) for i in range(5)]
        diffed: list[str] = []
        walks: list[int] = []
        changes, walk = VaultRepo._changes, VaultRepo._walk

        def counted_changes(
            self: VaultRepo, commit: pygit2.Commit, wanted: set[str]
        ) -> Iterator[tuple[str, str | None]]:
            diffed.append(str(commit.id))
            return changes(self, commit, wanted)

        def counted_walk(self: VaultRepo, max_commits: int) -> Iterator[tuple[pygit2.Commit, bool]]:
            walks.append(max_commits)
            return walk(self, max_commits)

        monkeypatch.setattr(VaultRepo, "_changes", counted_changes)
        monkeypatch.setattr(VaultRepo, "_walk", counted_walk)
        found = repo.last_sync_blobs(asked)
        assert found == {
            f"F{n % 10}/n{n}-{i}.md": blob_id(f"{n}-{i}".encode())
            for n in range(200)
            for i in range(5)
        }
        assert len(walks) == 1
        assert len(diffed) == len(set(diffed)) == 200


_HISTORY_PATHS = ["a.md", "b", "b/c.md", "b/d.md", "b/e/f.md", "g/h.md", "never.md"]
_STEP = st.dictionaries(
    st.sampled_from(_HISTORY_PATHS[:-1]), st.one_of(st.none(), st.sampled_from([b"1", b"2"]))
)


def _diff_changes(commit: pygit2.Commit) -> list[tuple[str, str | None]]:
    """What a commit changed among the history paths, read from a diff of its trees."""
    old = commit.parents[0].tree if commit.parents else None
    diff = commit.tree.diff_to_tree(swap=True) if old is None else old.diff_to_tree(commit.tree)
    found = []
    for delta in diff.deltas:
        path, file = delta.new_file.path, delta.new_file
        if path in _HISTORY_PATHS:
            wrote = delta.status != pygit2.enums.DeltaStatus.DELETED and file.mode == 0o100644
            found.append((path, str(file.id) if wrote else None))
    return sorted(found)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_STEP, min_size=1, max_size=6))
def test_changes_path_by_path_are_a_diffs(
    tmp_path: Path, steps: list[dict[str, bytes | None]]
) -> None:
    """The files a commit changed, looked up path by path, are those a diff of its trees lists."""
    vault = tmp_path / f"v{len(list(tmp_path.iterdir()))}"
    repo = opened(vault)
    for step in steps:
        repo.commit(dict(step), fingerprint="x")
    for commit, _ in repo._walk(100):
        assert sorted(repo._changes(commit, set(_HISTORY_PATHS))) == _diff_changes(commit)

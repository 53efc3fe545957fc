"""``vault.gitfacts``: status's answers from git, kept while git's files are byte for byte the same.

Real repositories and real git: every kept answer must equal the one git gives now.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaultsync.core.environment import read_environment
from vaultsync.vault import remote
from vaultsync.vault.gitfacts import GitFacts
from vaultsync.vault.hooks import hooks_folder

T = TypeVar("T")
_CHECKS = ("--no-verify", "-q")


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; its stdout."""
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def commit(vault: Path, text: str) -> None:
    """A commit of one file with ``text``."""
    (vault / "mine.md").write_text(text)
    git(vault, "add", "mine.md")
    git(vault, "commit", *_CHECKS, "-m", text)


def facts(vault: Path, cache: Path) -> GitFacts:
    """The answers as a new ``status`` process reads them."""
    return GitFacts(vault, cache, read_environment().git)


def real_head(vault: Path) -> str:
    """The commit at HEAD as git says it (empty: none)."""
    done = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", "HEAD"],
        cwd=vault,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def real_hooks(vault: Path) -> str | None:
    """The hooks folder as libgit2 finds it (``None``: no repository)."""
    found = hooks_folder(vault)
    return None if found is None else str(found)


def real_upstream(vault: Path) -> list[str] | None:
    """The upstream as git's config says it."""
    found = remote.upstream(vault)
    return None if found is None else [found.remote, found.branch]


def counted(compute: Callable[[], T], calls: list[int]) -> Callable[[], T]:
    """``compute``, each call counted in ``calls``."""

    def ask() -> T:
        calls.append(1)
        return compute()

    return ask


def asked_in_two_runs(
    vault: Path,
    cache: Path,
    answer: Callable[[GitFacts, Callable[[], T]], object],
    ask: Callable[[], T],
) -> int:
    """How often git is asked for one answer over two ``status`` runs (1: kept by the first)."""
    calls: list[int] = []
    for _ in range(2):
        kept = facts(vault, cache)
        answer(kept, counted(ask, calls))
        kept.save()
    return len(calls)


def _any_upstream(kept: GitFacts, ask: Callable[[], list[str] | None]) -> object:
    return kept.upstream("", ask)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A vault at the top of its own repository, with one commit."""
    found = tmp_path / "vault"
    found.mkdir()
    git(found, "init", "-q", "-b", "main")
    commit(found, "first")
    return found


def test_answers_are_kept_while_the_files_are_the_same(vault: Path, tmp_path: Path) -> None:
    """A second status reads the kept answers: git is not asked again."""
    calls: list[int] = []
    first = facts(vault, tmp_path)
    head = first.head(counted(lambda: real_head(vault), calls))
    first.save()
    again = facts(vault, tmp_path).head(counted(lambda: real_head(vault), calls))
    assert (head, again, len(calls)) == (real_head(vault), head, 1)


def test_a_new_commit_asks_git_again(vault: Path, tmp_path: Path) -> None:
    """A commit rewrites the branch's ref file: the kept HEAD is not given again."""
    kept = facts(vault, tmp_path)
    old = kept.head(lambda: real_head(vault))
    kept.save()
    commit(vault, "second")
    assert facts(vault, tmp_path).head(lambda: real_head(vault)) == real_head(vault) != old


def _history_answer(question: str) -> Callable[[GitFacts, Callable[[], str]], object]:
    def answer(kept: GitFacts, ask: Callable[[], str]) -> object:
        return kept.history("origins", question, ask)

    return answer


def test_a_history_answer_is_kept_for_its_question(vault: Path, tmp_path: Path) -> None:
    """The same question at the same commit is answered from the cache the second time."""
    assert asked_in_two_runs(vault, tmp_path, _history_answer("q"), lambda: "a") == 1


def test_another_question_asks_the_history_again(vault: Path, tmp_path: Path) -> None:
    """An answer kept for one question is not given for another."""
    first = facts(vault, tmp_path)
    first.history("origins", "one", lambda: "for one")
    first.save()
    assert facts(vault, tmp_path).history("origins", "two", lambda: "for two") == "for two"


@pytest.mark.parametrize("change", ["commit", "graft", "shallow"])
def test_a_changed_history_asks_again(vault: Path, tmp_path: Path, change: str) -> None:
    """A new commit, a graft or a deeper shallow clone changes the history: asked again."""
    first = facts(vault, tmp_path)
    first.history("origins", "q", lambda: "before")
    first.save()
    if change == "commit":
        commit(vault, "second")
    else:
        place = vault / ".git" / ("info/grafts" if change == "graft" else "shallow")
        place.parent.mkdir(exist_ok=True)
        place.write_text(real_head(vault) + "\n")
    assert facts(vault, tmp_path).history("origins", "q", lambda: "after") == "after"


def test_a_changed_hooks_path_asks_git_again(vault: Path, tmp_path: Path) -> None:
    """``core.hooksPath`` set in the repository's config is seen by the next status."""
    kept = facts(vault, tmp_path)
    assert kept.hooks_folder(lambda: real_hooks(vault)) == str(vault.resolve() / ".git" / "hooks")
    kept.save()
    git(vault, "config", "core.hooksPath", ".githooks")
    found = facts(vault, tmp_path).hooks_folder(lambda: real_hooks(vault))
    assert found == str(vault.resolve() / ".githooks")


def test_a_user_config_change_asks_git_again(vault: Path, tmp_path: Path) -> None:
    """The user's own config is read too: a change to ``~/.gitconfig`` asks git again."""
    calls: list[int] = []
    kept = facts(vault, tmp_path)
    kept.hooks_folder(counted(lambda: real_hooks(vault), calls))
    kept.save()
    user = Path.home() / ".gitconfig"
    git(vault, "config", "--file", str(user), "core.hooksPath", str(tmp_path / "hooks"))
    # libgit2 took this process's HOME when it was loaded, so only the asking is checked here
    facts(vault, tmp_path).hooks_folder(counted(lambda: real_hooks(vault), calls))
    assert len(calls) == 2


def test_a_config_that_includes_another_is_never_kept(vault: Path, tmp_path: Path) -> None:
    """An included file could change an answer unseen: git is asked every time."""
    git(vault, "config", "include.path", str(tmp_path / "more.conf"))
    assert asked_in_two_runs(vault, tmp_path, GitFacts.hooks_folder, lambda: real_hooks(vault)) == 2


def test_a_vault_inside_a_larger_repository_is_asked_every_time(tmp_path: Path) -> None:
    """Only a vault at the top of its own repository has its answers kept."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    inner = work / "notes"
    inner.mkdir()
    assert real_hooks(inner) == str(work.resolve() / ".git" / "hooks")
    assert asked_in_two_runs(inner, tmp_path, GitFacts.hooks_folder, lambda: real_hooks(inner)) == 2


def test_an_answer_whose_files_changed_while_asked_is_not_kept(vault: Path, tmp_path: Path) -> None:
    """A commit made while git was being asked leaves nothing kept for either state."""
    kept = facts(vault, tmp_path)

    def racing() -> str:
        seen = real_head(vault)
        commit(vault, "meanwhile")
        return seen

    stale = kept.head(racing)
    kept.save()
    assert facts(vault, tmp_path).head(lambda: real_head(vault)) == real_head(vault) != stale


def test_a_damaged_cache_is_asked_again(vault: Path, tmp_path: Path) -> None:
    """A cache file that is not what was written is no answer."""
    kept = facts(vault, tmp_path)
    kept.head(lambda: real_head(vault))
    kept.save()
    path = tmp_path / "git-facts"
    path.write_bytes(path.read_bytes()[:-5])
    calls: list[int] = []
    assert facts(vault, tmp_path).head(counted(lambda: real_head(vault), calls)) == real_head(vault)
    assert calls == [1]


def test_variables_pointing_git_elsewhere_keep_nothing(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``GIT_CONFIG`` (or ``GIT_DIR``…) set, other files answer: git is asked every time."""
    monkeypatch.setenv("GIT_CONFIG", str(tmp_path / "other.conf"))
    assert asked_in_two_runs(vault, tmp_path, GitFacts.hooks_folder, lambda: real_hooks(vault)) == 2


@pytest.mark.parametrize("line", ["bare = true", "bare", "worktree = ../elsewhere"])
def test_a_bare_or_moved_repository_keeps_nothing(vault: Path, tmp_path: Path, line: str) -> None:
    """A config making the repository bare or moving its work tree: git is asked every time."""
    config = vault / ".git" / "config"
    config.write_text(config.read_text() + f"[core]\n\t{line}\n")
    assert asked_in_two_runs(vault, tmp_path, GitFacts.head, lambda: real_head(vault)) == 2


def test_a_git_folder_that_is_no_repository_keeps_nothing(vault: Path, tmp_path: Path) -> None:
    """A ``.git`` without ``objects``: libgit2 looks further up, so nothing is kept."""
    import shutil

    shutil.rmtree(vault / ".git" / "objects")
    assert asked_in_two_runs(vault, tmp_path, _any_upstream, lambda: None) == 2


_OPERATIONS = st.lists(
    st.sampled_from(
        [
            *("commit", "branch", "detach", "back", "pack", "hooks", "unhooks"),
            *("upstream", "tag", "clear"),
        ]
    ),
    min_size=1,
    max_size=6,
)


def _operate(vault: Path, operation: str, step: int) -> None:
    if operation == "commit":
        commit(vault, f"step {step}")
    elif operation == "branch":
        git(vault, "checkout", "-q", "-B", f"b{step % 2}")
    elif operation == "detach":
        git(vault, "checkout", "-q", "--detach")
    elif operation == "back":
        git(vault, "checkout", "-q", "main")
    elif operation == "pack":
        git(vault, "pack-refs", "--all")
    elif operation == "hooks":
        git(vault, "config", "core.hooksPath", f"hooks{step}")
    elif operation == "unhooks":
        subprocess.run(["git", "config", "--unset-all", "core.hooksPath"], cwd=vault, check=False)
    elif operation == "tag":  # `main` made ambiguous: a short branch name would be `heads/main`
        git(vault, "tag", "-f", "main")
    elif operation == "upstream":
        git(vault, "config", "branch.main.remote", "origin")
        git(vault, "config", "branch.main.merge", f"refs/heads/m{step}")
    else:
        (vault / ".git" / "config").write_text(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        )


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(operations=_OPERATIONS)
def test_kept_answers_equal_gits_after_any_operations(
    tmp_path_factory: pytest.TempPathFactory, operations: list[str]
) -> None:
    """After any sequence of commits, checkouts, packed refs and config edits, every answer
    a status gives (kept or asked) is the one git gives now."""
    root = tmp_path_factory.mktemp("facts")
    vault = root / "vault"
    vault.mkdir()
    git(vault, "init", "-q", "-b", "main")
    commit(vault, "first")
    for step, operation in enumerate(operations):
        _operate(vault, operation, step)
        kept = facts(vault, root)
        answers = (
            kept.head(lambda: real_head(vault)),
            kept.hooks_folder(lambda: real_hooks(vault)),
            kept.upstream("", lambda: real_upstream(vault)),
        )
        kept.save()
        assert answers == (real_head(vault), real_hooks(vault), real_upstream(vault)), operation
    assert (root / "git-facts").exists()

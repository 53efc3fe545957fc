"""The vault's git remote: fetch, integrate, push — through the ``git`` program.

The ``git`` program, not libgit2, talks to the remote: the user's credentials (ssh agent,
credential helper, ``insteadOf`` rules) then work exactly as they do for ``git pull``, and the
merge driver registered here is honoured by git's own merge.  Nothing here ever forces a push,
rewrites a commit or drops one of another device; a merge that only a person can settle is
aborted, leaving the vault as it was.

* :func:`upstream` — the current branch's upstream, or the branch of the same name on the
  remote the settings name.
* :func:`fetch`, :func:`counts` — what the remote has that we lack (ahead, behind).
* :func:`integrate` — merge the remote's new commits (fast-forward when we have none of our
  own).  A conflict on a note whose side here is exactly what vaultsync wrote (our render) is
  settled by taking the other side, the edit of a person or another device: the next sync
  merges the stores' changes into it three-way.  Any other conflict aborts the merge.
* :func:`push` — ``git push REMOTE HEAD:BRANCH``; a rejected push says so.
* :func:`install_merge_driver` — ``.vaultsync/manifest.json`` merges per note
  (:mod:`vaultsync.vault.manifestmerge`) and ``.vaultsync/config.toml`` per setting
  (:mod:`vaultsync.vault.configmerge`), registered in this clone's ``.git/config`` and
  ``.git/info/attributes`` (nothing versioned changes, so a hand-run ``git pull`` in this clone
  uses them too).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from vaultsync.core.config import CONFIG
from vaultsync.core.fsio import atomic_write
from vaultsync.vault.gitcli import GitFailed, run_git, run_git_bytes
from vaultsync.vault.manifest import MANIFEST, blob_id, load_manifest

_DRIVERS = {
    "vaultsync-manifest": ("merge-manifest", "vaultsync manifest, merged per note"),
    "vaultsync-config": ("merge-config", "vaultsync saved settings, merged per setting"),
}
"""The merge drivers' names in ``.git/config``: the command each runs, and what it says."""
ATTRIBUTES = (f"/{MANIFEST} merge=vaultsync-manifest\n", f"/{CONFIG} merge=vaultsync-config\n")
MARKER_LINE = "^(<<<<<<<|>>>>>>>)( |$)"
"""A line git's conflict markers begin (``git grep -E``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Upstream:
    """Where this branch pulls from and pushes to."""

    remote: str
    branch: str

    @property
    def ref(self) -> str:
        """The remote-tracking ref a fetch updates."""
        return f"refs/remotes/{self.remote}/{self.branch}"

    @property
    def name(self) -> str:
        """``remote/branch``, as git says it."""
        return f"{self.remote}/{self.branch}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Integrated:
    """What integrating the remote's commits did."""

    commits: int = 0
    """The remote's commits brought in (0: nothing to pull)."""
    fast_forward: bool = False
    taken: tuple[str, ...] = ()
    """Notes where our side was only vaultsync's render: the other device's version taken."""
    refused: tuple[str, ...] = ()
    """Files both sides changed that only a person can settle: the merge was aborted."""
    blocked: str = ""
    """Why git would not merge at all (uncommitted changes in the way), if it would not."""


def upstream(vault: Path, remote: str = "") -> Upstream | None:
    """The current branch's upstream; with ``remote``, that remote's branch of the same name.

    ``None``: a detached HEAD, or no upstream set and no remote named.
    """
    try:
        # the full ref: `--short` says `heads/main` once a tag or remote is named `main`
        ref = run_git(vault, "symbolic-ref", "--quiet", "HEAD").strip()
    except GitFailed:
        return None
    branch = ref.removeprefix("refs/heads/")
    if remote:
        return Upstream(remote=remote, branch=branch)
    try:
        name = run_git(vault, "config", f"branch.{branch}.remote").strip()
        merge = run_git(vault, "config", f"branch.{branch}.merge").strip()
    except GitFailed:
        return None
    return Upstream(remote=name, branch=merge.removeprefix("refs/heads/"))


def fetch(vault: Path, up: Upstream) -> None:
    """Fetch the upstream branch. Raises :class:`GitFailed` (unreachable, no such branch)."""
    run_git(vault, "fetch", "--quiet", "--no-tags", up.remote, f"+refs/heads/{up.branch}:{up.ref}")


def counts(vault: Path, up: Upstream) -> tuple[int, int] | None:
    """(ahead, behind) of HEAD against the remote-tracking ref; ``None`` before a fetch."""
    try:
        said = run_git(vault, "rev-list", "--left-right", "--count", f"HEAD...{up.ref}")
    except GitFailed:
        return None
    ahead, behind = said.split()
    return int(ahead), int(behind)


def integrate(vault: Path, up: Upstream) -> Integrated:
    """Merge the fetched commits into HEAD (see the module docstring). Raises GitFailed."""
    found = counts(vault, up)
    if found is None or found[1] == 0:
        return Integrated()
    ahead, behind = found
    if ahead == 0:
        try:
            run_git(vault, "merge", "--ff-only", "--quiet", up.ref)
        except GitFailed as failed:
            return Integrated(blocked=failed.line)
        return Integrated(commits=behind, fast_forward=True)
    return _merge(vault, up, behind)


def _merge(vault: Path, up: Upstream, behind: int) -> Integrated:
    message = f"vaultsync: merge {up.name}"
    try:
        run_git(vault, "merge", "--no-edit", "--no-ff", "-m", message, up.ref)
        return Integrated(commits=behind)
    except GitFailed as failed:
        conflicted = _unmerged(vault)
        if not conflicted:  # git refused to start: uncommitted changes in the way
            return Integrated(blocked=failed.line)
    ours_only = _ours_is_our_render(vault, conflicted)
    refused = tuple(path for path in conflicted if path not in ours_only)
    if refused:
        run_git(vault, "merge", "--abort")
        return Integrated(refused=refused)
    for path in conflicted:
        run_git(vault, "checkout", "--theirs", "--", path)
        run_git(vault, "add", "--", path)
    run_git(vault, "commit", "--no-edit", "--quiet", "-m", message)
    return Integrated(commits=behind, taken=conflicted)


def _unmerged(vault: Path) -> tuple[str, ...]:
    said = run_git(vault, "diff", "--name-only", "--diff-filter=U", "-z")
    return tuple(sorted(path for path in said.split("\0") if path))


def _ours_is_our_render(vault: Path, paths: tuple[str, ...]) -> frozenset[str]:
    """The conflicted notes whose side here holds exactly the bytes our manifest says we wrote."""
    try:
        ours = run_git_bytes(vault, "show", f"HEAD:{MANIFEST}")
    except GitFailed:
        return frozenset()
    entries = load_manifest(ours).entries
    found = set()
    for path in paths:
        entry = entries.get(path)
        if entry is None or entry.theirs:
            continue
        try:
            mine = run_git_bytes(vault, "show", f":2:{path}")
        except GitFailed:
            continue
        if blob_id(mine) == entry.blob:
            found.add(path)
    return frozenset(found)


def marked_notes(vault: Path) -> tuple[str, ...]:
    """Notes of HEAD holding git conflict markers: never pushed (a person must settle them)."""
    try:
        said = run_git(
            vault, "grep", "-l", "-z", "-E", "^(<<<<<<<|>>>>>>>)( |$)", "HEAD", "--", "*.md"
        )
    except GitFailed:  # git grep exits 1 when nothing matches
        return ()
    return tuple(sorted(p.removeprefix("HEAD:") for p in said.split("\0") if p))


def push(vault: Path, up: Upstream) -> None:
    """Push HEAD to the upstream branch (never forced). Raises GitFailed (rejected: fetch first)."""
    run_git(vault, "push", "--quiet", "--porcelain", up.remote, f"HEAD:refs/heads/{up.branch}")


def install_merge_driver(vault: Path) -> None:
    """Register the control files' merge drivers in this clone (idempotent; nothing versioned)."""
    run = f"{shlex.quote(sys.executable)} -P -m vaultsync"
    for name, (command, about) in _DRIVERS.items():
        run_git(vault, "config", f"merge.{name}.name", about)
        run_git(vault, "config", f"merge.{name}.driver", f"{run} {command} %O %A %B")
    git_dir = Path(run_git(vault, "rev-parse", "--absolute-git-dir").strip())
    attributes = git_dir / "info" / "attributes"
    present = attributes.read_text("utf-8") if attributes.exists() else ""
    missing = [line for line in ATTRIBUTES if line not in present]
    if missing:
        attributes.parent.mkdir(parents=True, exist_ok=True)
        joined = present + ("\n" if present and not present.endswith("\n") else "")
        atomic_write(attributes, (joined + "".join(missing)).encode("utf-8"), mode=0o644)

"""One vault on several devices through a git remote: pull, sync, push, nothing lost.

Real git everywhere: a bare remote on disk, a "phone" clone that edits with plain git (as
obsidian-git does), and engines that sync through ``app.sync`` with ``pull`` and ``push``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaultsync.app.remote import remote_state
from vaultsync.app.sync import SyncOutcome, SyncRequest, check, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.cli.main import cli

MARKERS = ("<<<<<<<", ">>>>>>>")


def git(cwd: Path, *args: str) -> str:
    """Plain git, as a person or obsidian-git runs it."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def engine_sync(state: Path, vault: Path, **asked: bool) -> SyncOutcome:
    """One engine's ``sync --pull --push``."""
    request = SyncRequest(pull=asked.get("pull", True), push=asked.get("push", True))
    return sync(open_workspace(str(state), str(vault)), request)


def first_device(demo_state: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote and a first engine's vault, synced and pushed upstream (``push -u``)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    vault = tmp_path / "laptop"
    engine_sync(demo_state, vault, pull=False, push=False)
    git(vault, "remote", "add", "origin", str(remote))
    git(vault, "push", "--quiet", "-u", "origin", "main")
    return remote, vault


def phone(remote: Path, tmp_path: Path, name: str = "phone") -> Path:
    """A clone of the remote, edited with plain git."""
    clone = tmp_path / name
    git(tmp_path, "clone", "--quiet", str(remote), str(clone))
    return clone


def phone_commit(clone: Path, message: str) -> None:
    git(clone, "add", "-A")
    git(clone, "commit", "--quiet", "-m", message)
    git(clone, "pull", "--quiet", "--no-rebase")
    git(clone, "push", "--quiet")


def remote_head_files(remote: Path, tmp_path: Path) -> dict[str, str]:
    """Every Markdown file of the remote's head, by path."""
    fresh = tmp_path / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    git(tmp_path, "clone", "--quiet", str(remote), str(fresh))
    return {p.relative_to(fresh).as_posix(): p.read_text() for p in fresh.rglob("*.md")}


def change_a_topic(state: Path, summary: str, name: str = "telemetry") -> None:
    """The stores change one topic's summary, as ChatCLI rewrites topics.json."""
    topics = state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    next(t for t in data if t["name"] == name)["summary"] = summary
    topics.write_text(json.dumps(data))


def test_a_phone_edit_is_pulled_kept_and_pushed_back(demo_state: Path, tmp_path: Path) -> None:
    """The phone's edit arrives before the sync, stays in the note, and the remote has both."""
    remote, laptop = first_device(demo_state, tmp_path)
    clone = phone(remote, tmp_path)
    note = clone / "Topics" / "Go.md"
    note.write_text(note.read_text() + "\nWritten on the phone.\n")
    phone_commit(clone, "phone: a line about Go")
    change_a_topic(demo_state, "A new summary from the stores.")
    outcome = engine_sync(demo_state, laptop)
    assert outcome.remote is not None and outcome.remote.pulled == 1 and outcome.remote.pushed
    files = remote_head_files(remote, tmp_path)
    assert "Written on the phone." in files["Topics/Go.md"]
    assert "A new summary from the stores." in "".join(files.values())
    assert not any(m in text for text in files.values() for m in MARKERS)


def test_two_engines_with_the_same_stores_converge(demo_state: Path, tmp_path: Path) -> None:
    """A second engine syncing the same stores pulls, finds nothing to write, commits nothing."""
    remote, _laptop = first_device(demo_state, tmp_path)
    desktop = phone(remote, tmp_path, "desktop")
    head = git(desktop, "rev-parse", "HEAD")
    outcome = engine_sync(demo_state, desktop)
    assert not outcome.changed
    assert git(desktop, "rev-parse", "HEAD") == head  # no ping-pong commit
    assert check(open_workspace(str(demo_state), str(desktop))).in_sync


def test_a_rejected_push_pulls_syncs_and_pushes_again(demo_state: Path, tmp_path: Path) -> None:
    """The other engine pushed first: no commit of it is dropped, both end in the remote."""
    remote, laptop = first_device(demo_state, tmp_path)
    other_state = tmp_path / "other-state"
    shutil.copytree(demo_state, other_state)
    desktop = phone(remote, tmp_path, "desktop")
    change_a_topic(other_state, "The desktop's stores moved on.")
    engine_sync(other_state, desktop)
    theirs = git(desktop, "rev-parse", "HEAD").strip()
    change_a_topic(demo_state, "The laptop's stores moved on.")
    outcome = engine_sync(demo_state, laptop, pull=False)
    assert outcome.remote is not None and outcome.remote.pushed, outcome.remote
    git(laptop, "fetch", "--quiet")
    git(laptop, "merge-base", "--is-ancestor", theirs, "origin/main")  # raises if dropped
    files = remote_head_files(remote, tmp_path)
    assert not any(m in text for text in files.values() for m in MARKERS)


def test_an_unreachable_remote_leaves_the_sync_local(demo_state: Path, tmp_path: Path) -> None:
    """Offline: the sync commits here, says so in one line and exits 10; the next run pushes."""
    remote, laptop = first_device(demo_state, tmp_path)
    moved = tmp_path / "away.git"
    remote.rename(moved)
    change_a_topic(demo_state, "Written while offline.")
    args = ["sync", "--pull", "--push", "--state", str(demo_state), "--vault", str(laptop)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 10
    assert result.stderr.count("error:") == 1 and "synced here" in result.stderr
    assert "Written while offline." in git(laptop, "show", "HEAD", "--stat", "-p")
    moved.rename(remote)
    assert engine_sync(demo_state, laptop).remote.pushed  # type: ignore[union-attr]


def test_status_says_how_far_behind_the_remote_is(demo_state: Path, tmp_path: Path) -> None:
    """After a fetch, status knows the remote has a commit this vault lacks."""
    remote, laptop = first_device(demo_state, tmp_path)
    clone = phone(remote, tmp_path)
    (clone / "Inbox.md").write_text("A note written on the phone.\n")
    phone_commit(clone, "phone: inbox")
    git(laptop, "fetch", "--quiet")
    state = remote_state(open_workspace(str(demo_state), str(laptop)))
    assert state is not None and (state.ahead, state.behind) == (0, 1) and state.pull_needed


def test_a_hand_run_git_pull_merges_the_manifest_per_note(demo_state: Path, tmp_path: Path) -> None:
    """Two engines with different stores both pushed; ``git pull`` by hand does not conflict."""
    remote, laptop = first_device(demo_state, tmp_path)
    engine_sync(demo_state, laptop)  # registers the merge driver in this clone
    other_state = tmp_path / "other-state"
    shutil.copytree(demo_state, other_state)
    desktop = phone(remote, tmp_path, "desktop")
    change_a_topic(other_state, "Desktop summary.")
    engine_sync(other_state, desktop)
    topics = json.loads((demo_state / "memory" / "topics.json").read_text())
    topics[-1]["summary"] = "Laptop summary of another topic."
    (demo_state / "memory" / "topics.json").write_text(json.dumps(topics))
    engine_sync(demo_state, laptop, pull=False, push=False)
    git(laptop, "pull", "--quiet", "--no-rebase", "--no-edit")
    manifest = (laptop / ".vaultsync" / "manifest.json").read_text()
    assert not any(m in manifest for m in MARKERS)


_STEPS = st.lists(
    st.sampled_from(
        [
            "phone-edit",
            "phone-new",
            "phone-rename",
            "phone-delete",
            "stores",
            "laptop",
            "desktop",
            "killed",
        ]
    ),
    min_size=3,
    max_size=7,
)


def killed_sync(state: Path, vault: Path, after_s: float) -> None:
    """A real ``sync --pull --push`` of the laptop, SIGKILLed ``after_s`` seconds in."""
    import sys
    import time

    where = ["--state", str(state), "--vault", str(vault)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultsync", "sync", "-q", "--pull", "--push", *where],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(after_s)
    proc.kill()
    proc.wait()


class Devices:
    """A remote, two engines on the same stores and a phone, and the lines the phone wrote."""

    def __init__(self, demo_state: Path, tmp: Path) -> None:
        self.tmp, self.state = tmp, tmp / "state"
        shutil.copytree(demo_state, self.state)
        self.remote, self.laptop = first_device(self.state, tmp)
        self.desktop = phone(self.remote, tmp, "desktop")
        self.clone = phone(self.remote, tmp)
        self.written: dict[str, str] = {}

    def step(self, step: str, number: int) -> None:
        """One step of an interleaving (the phone pulls first, as obsidian-git does)."""
        git(self.clone, "pull", "--quiet", "--no-rebase", "--no-edit")
        if step.startswith("phone-"):
            getattr(self, step.replace("-", "_"))(number)
        elif step == "killed":
            killed_sync(self.state, self.laptop, after_s=(number % 4) * 0.15)
        elif step == "stores":
            change_a_topic(self.state, f"Stores changed at step {number}.")
        else:
            engine_sync(self.state, self.laptop if step == "laptop" else self.desktop)

    def phone_edit(self, number: int) -> None:
        note = sorted((self.clone / "Topics").glob("*.md"))[number % 3]
        line = f"phone line {number}"
        note.write_text(note.read_text() + f"\n{line}\n")
        self.written[note.relative_to(self.clone).as_posix()] = line
        phone_commit(self.clone, line)

    def phone_new(self, number: int) -> None:
        (self.clone / f"Phone {number}.md").write_text(f"phone note {number}\n")
        self.written[f"Phone {number}.md"] = f"phone note {number}"
        phone_commit(self.clone, f"new {number}")

    def phone_rename(self, _number: int) -> None:
        old = sorted(self.written)[-1] if self.written else ""
        if old and (self.clone / old).exists():
            new = old.replace(".md", " renamed.md")
            git(self.clone, "mv", old, new)
            phone_commit(self.clone, f"rename {old}")
            self.written[new] = self.written.pop(old)

    def phone_delete(self, _number: int) -> None:
        gone = sorted(self.written)[0] if self.written else ""
        if gone and (self.clone / gone).exists():
            (self.clone / gone).unlink()
            phone_commit(self.clone, f"delete {gone}")
        self.written.pop(gone, None)


@settings(max_examples=4, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_STEPS)
def test_random_interleavings_lose_no_phone_edit(demo_state: Path, steps: list[str]) -> None:
    """Phone edits, new notes, renames, deletions, store changes, syncs on two engines and
    killed syncs, in any order: every phone line is in the remote's head, no markers, and
    check is green on a fresh clone."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="interleave-") as folder:  # one per example
        tmp = Path(folder)
        devices = Devices(demo_state, tmp)
        for number, step in enumerate(steps):
            devices.step(step, number)
        for vault in (devices.laptop, devices.desktop, devices.laptop):
            engine_sync(devices.state, vault)
        files = remote_head_files(devices.remote, tmp)
        for path, line in devices.written.items():
            assert line in files.get(path, ""), (steps, path)
        assert not any(m in text for text in files.values() for m in MARKERS)
        assert check(open_workspace(str(devices.state), str(tmp / "fresh"))).in_sync


def test_conflict_markers_are_never_pushed(demo_state: Path, tmp_path: Path) -> None:
    """A note committed with git's markers in it stops the push, naming the note."""
    remote, laptop = first_device(demo_state, tmp_path)
    note = laptop / "Topics" / "Go.md"
    note.write_text(note.read_text() + "\n<<<<<<< mine\na\n=======\nb\n>>>>>>> theirs\n")
    git(laptop, "commit", "--quiet", "-am", "a hand merge left unfinished")
    before = git(laptop, "ls-remote", str(remote), "main")
    outcome = engine_sync(demo_state, laptop, pull=False)
    assert outcome.remote is not None and not outcome.remote.pushed
    assert "Topics/Go.md" in outcome.remote.problem
    assert git(laptop, "ls-remote", str(remote), "main") == before


def test_the_saved_settings_pull_and_push_every_sync(demo_state: Path, tmp_path: Path) -> None:
    """``git.pull`` and ``git.push`` saved: a plain sync (cron, watch) pulls and pushes."""
    from vaultsync.vault.config import save_setting

    remote, laptop = first_device(demo_state, tmp_path)
    save_setting(laptop, "git.pull", "true")
    save_setting(laptop, "git.push", "true")
    git(laptop, "push", "--quiet")
    change_a_topic(demo_state, "Pushed by a plain sync.")
    outcome = sync(open_workspace(str(demo_state), str(laptop)), SyncRequest())
    assert outcome.remote is not None and outcome.remote.pushed
    assert "Pushed by a plain sync." in "".join(remote_head_files(remote, tmp_path).values())


def test_a_note_the_phone_renamed_is_followed(demo_state: Path, tmp_path: Path) -> None:
    """Renamed on the phone: the sync writes to the new path and brings no copy back."""
    remote, laptop = first_device(demo_state, tmp_path)
    clone = phone(remote, tmp_path)
    git(clone, "mv", "Topics/Go.md", "Topics/Golang.md")
    phone_commit(clone, "phone: rename")
    change_a_topic(demo_state, "Renamed and still fed by the stores.", name="Go")
    engine_sync(demo_state, laptop)
    files = remote_head_files(remote, tmp_path)
    assert "Topics/Go.md" not in files
    assert "Renamed and still fed by the stores." in files["Topics/Golang.md"]


def test_a_note_the_phone_deleted_stays_deleted(demo_state: Path, tmp_path: Path) -> None:
    """Deleted on the phone: the sync keeps it deleted, as a deletion typed here."""
    remote, laptop = first_device(demo_state, tmp_path)
    clone = phone(remote, tmp_path)
    git(clone, "rm", "--quiet", "Topics/Go.md")
    phone_commit(clone, "phone: delete")
    change_a_topic(demo_state, "The stores changed after the delete.", name="Go")
    engine_sync(demo_state, laptop)
    assert "Topics/Go.md" not in remote_head_files(remote, tmp_path)
    assert not (laptop / "Topics" / "Go.md").exists()

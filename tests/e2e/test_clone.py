"""A user story: a clone of a repository holding an export and its vault is in sync.

One repository holds a ChatCLI export and the vault synced from it, committed; ``git clone``
(the real CLI: every file's mtime becomes the clone's time) copies it to a new folder, where
``vaultsync check`` runs in a real process under another ``TZ`` and locale, with a cache folder
of its own.  See ``fixtures/vaults/clone-check-green/README.md``.  A subprocess timeout is only
a guard against a hang, never a measurement.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest
from helpers import ROOT, clean_env
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.load import read_records
from vaultsync.render.specs import build_note_specs, make_environment

GUARD = 120  # seconds: only a failure guard against a hang, never a timing assertion
STORES = {
    "demo": ROOT / "fixtures" / "stores" / "demo",
    "chatcli-v1188": ROOT / "fixtures" / "stores" / "chatcli-v1188",
}
SAVED_ZONE = "Europe/Lisbon"
AUTOSAVES = {  # the wall clock of the name, in the saved zone (properties carry no offset)
    "demo": ("autosave-20261019-154210", "2026-10-19T15:42:10"),
    "chatcli-v1188": ("autosave-20261026-101512", "2026-10-26T10:15:12"),
}
FIRST_MACHINE = {"TZ": "America/Los_Angeles", "LANG": "en_US.UTF-8", "LC_ALL": "en_US.UTF-8"}
OTHER_MACHINES = {
    "kiritimati-de": {"TZ": "Pacific/Kiritimati", "LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8"},
    "st-johns-c": {"TZ": "America/St_Johns", "LANG": "C", "LC_ALL": "C"},
}
_DROPPED = ("VAULTSYNC_", "CHATCLI_", "XDG_", "LC_", "GIT_")


def machine(root: Path, name: str, settings: Mapping[str, str]) -> dict[str, str]:
    """The environment of one machine: its own home, git identity, cache, zone and locale."""
    home = root / f"home-{name}"
    home.mkdir(exist_ok=True)
    config = home / ".gitconfig"
    config.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n"
    )
    env = clean_env(_DROPPED)
    env.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(config),
        GIT_CONFIG_NOSYSTEM="1",
        VAULTSYNC_CACHE_DIR=str(home / "cache"),
        LANGUAGE="",
        **settings,
    )
    return env


def vaultsync(repo: Path, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``vaultsync ARGS --state export --vault vault`` run in ``repo``, as CI runs it."""
    command = [sys.executable, "-m", "vaultsync", *args, "--state", "export", "--vault", "vault"]
    return subprocess.run(
        command, cwd=repo, env=dict(env), capture_output=True, text=True, check=False, timeout=GUARD
    )


def git(repo: Path, env: Mapping[str, str], *args: str) -> str:
    """The output of ``git ARGS`` in ``repo``."""
    done = subprocess.run(
        ["git", *args], cwd=repo, env=dict(env), capture_output=True, text=True, check=True
    )
    return done.stdout


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but git's own, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.fixture(scope="module", params=sorted(STORES))
def origin(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """(store name, a repository holding its export and vault, zone saved), synced once."""
    root = tmp_path_factory.mktemp(f"origin-{request.param}")
    env = machine(root, "first", FIRST_MACHINE)
    repo = root / "repo"
    repo.mkdir()
    git(repo, env, "init", "-q")
    shutil.copytree(STORES[request.param], repo / "export")
    set_zone = vaultsync(repo, env, "config", "set", "render.timezone", SAVED_ZONE)
    assert set_zone.returncode == 0, set_zone.stderr
    synced = vaultsync(repo, env, "sync")
    assert synced.returncode == 0, synced.stderr
    git(repo, env, "add", "export")
    git(repo, env, "commit", "-q", "-m", "export")
    assert git(repo, env, "status", "--porcelain") == ""
    return request.param, repo


def clone(origin: tuple[str, Path], root: Path, env: Mapping[str, str]) -> Path:
    """``git clone`` of the origin into a new folder."""
    git(root, env, "clone", "-q", str(origin[1]), "clone")
    return root / "clone"


@pytest.mark.parametrize("where", sorted(OTHER_MACHINES))
def test_check_green_and_sync_changes_nothing(
    origin: tuple[str, Path], tmp_path: Path, where: str
) -> None:
    """On a clone under another TZ and locale, check exits 0 and sync changes no byte."""
    env = machine(tmp_path, where, OTHER_MACHINES[where])
    repo = clone(origin, tmp_path, env)
    head = git(repo, env, "rev-parse", "HEAD")
    before = tree(repo)
    checked = vaultsync(repo, env, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    synced = vaultsync(repo, env, "sync")
    assert synced.returncode == 0, synced.stderr
    assert git(repo, env, "status", "--porcelain", "--ignored=no") == ""
    assert git(repo, env, "rev-parse", "HEAD") == head
    after = tree(repo)
    assert {p for p in after if not p.startswith("vault/.vaultsync/")} == {
        p for p in before if not p.startswith("vault/.vaultsync/")
    }
    assert {p: after[p] for p in before} == before


def test_saved_zone_is_the_clone_zone(origin: tuple[str, Path], tmp_path: Path) -> None:
    """An autosave's time is the wall clock of its name in the saved zone, not the machine's."""
    repo = clone(origin, tmp_path, machine(tmp_path, "any", OTHER_MACHINES["kiritimati-de"]))
    name, shown = AUTOSAVES[origin[0]]
    note = (repo / f"vault/Sessions/{name}.md").read_text(encoding="utf-8")
    assert f'saved: "{shown}"\n' in note


def test_a_variable_over_the_saved_zone_is_stale(origin: tuple[str, Path], tmp_path: Path) -> None:
    """VAULTSYNC_TIMEZONE over the saved zone renders another vault: check exits 1, says why."""
    settings = {**OTHER_MACHINES["kiritimati-de"], "VAULTSYNC_TIMEZONE": "Asia/Tokyo"}
    env = machine(tmp_path, "tokyo", settings)
    repo = clone(origin, tmp_path, env)
    checked = vaultsync(repo, env, "check")
    assert checked.returncode == 1
    assert "env VAULTSYNC_TIMEZONE overrides the saved value 'Europe/Lisbon'" in checked.stderr


def test_no_rendered_byte_reads_an_mtime_or_the_process_zone(
    demo_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every store file re-timed and the process moved to UTC+14: every note renders the same."""
    caps = Caps(timezone=SAVED_ZONE)

    def render() -> dict[str, bytes]:
        records = read_records(demo_state, caps)
        built = build_graph(records, caps)
        specs = build_note_specs(
            records, built.graph, built.resolver, make_environment(), zone=caps.zone
        )
        return {spec.path: spec.render() for spec in specs}

    before = render()
    for number, path in enumerate(sorted(demo_state.rglob("*"))):
        os.utime(path, ns=(0, (1_000_000_000 + 7_919 * number) * 1_000_000_000))
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    try:
        assert render() == before
    finally:
        monkeypatch.undo()
        time.tzset()

"""Each ``fixtures/vaults/<scenario>/`` holding a ``scenario.json`` is one test (other folders
there belong to other tests): its README says what it exercises, its ``scenario.json`` lists
the steps (user actions, syncs, expectations) run in a fresh sandbox.

Steps (paths relative to the sandbox; the vault is ``vault`` unless the scenario says otherwise;
``outside/precious.md`` always exists next to it):

* ``sync``: ``notes`` {path: text} (the whole set the stores produce), optional ``node``
  {path: node id} (the same id at another path is the stores moving a note), ``follow_moves``
  (find the user's moves first and keep their paths, as the CLI does), ``force``,
  ``commit``; ``expect`` compares the report (path lists, ``unchanged``, ``commit`` made or not,
  ``manifest_problem`` present or not) or ``raises`` names the error class;
* ``write`` {path: text}, ``delete`` [paths], ``symlink`` {link: target}, ``git`` (CLI ``args``
  in ``cwd``), ``resolve`` (``path``, ``choice``), ``release`` (``path``): what a user does;
  ``age`` [paths]: their mtime set a minute back (an edit made a while ago: a sync merges
  into a file only once an editor is done saving it);
* ``expect_files`` {path: text, or null for "absent"} and ``modes``; ``expect_git_status``
  (``git status --porcelain``); ``expect_head`` (files in ``HEAD``), ``expect_head_content``;
  ``expect_manifest`` (entry paths, deleted paths); ``status`` (``vault_status``).

Every sync must also leave everything outside the vault exactly as it was (git metadata aside).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from syncdriver import FIXED_TIME, make_spec
from vaultsync.core import errors
from vaultsync.core.model import NoteSpec
from vaultsync.vault import manifest as manifests
from vaultsync.vault.manifest import MANIFEST, blob_id, load_manifest
from vaultsync.vault.report import EditOrigin
from vaultsync.vault.resolve import Choice, release, resolve
from vaultsync.vault.sync import SyncReport, sync_vault, vault_moves, vault_status

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "vaults"
REPORT_LISTS = ("created", "updated", "removed", "kept_edited", "kept_deleted", "merged")


def _specs(notes: dict[str, str], nodes: dict[str, str] | None = None) -> list[NoteSpec]:
    """The notes, each with its node id (``note:<path>`` unless ``nodes`` names one)."""
    return [make_spec(path, text, node=(nodes or {}).get(path, "")) for path, text in notes.items()]


def _outside(sandbox: Path, vault: Path) -> dict[str, bytes | str]:
    """Everything outside the vault (symlinks by target), git metadata aside."""
    seen: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(sandbox):
        here = Path(folder)
        dirs[:] = [d for d in dirs if d != ".git" and here / d != vault]
        for name in files + [d for d in dirs if (here / d).is_symlink()]:
            path = here / name
            rel = path.relative_to(sandbox).as_posix()
            seen[rel] = str(path.readlink()) if path.is_symlink() else path.read_bytes()
    return seen


def _check_report(report: SyncReport, expect: dict[str, Any]) -> None:
    for key in REPORT_LISTS:
        if key in expect:
            assert sorted(getattr(report, key)) == sorted(expect[key]), key
    if "conflicts" in expect:
        assert sorted(c.path for c in report.conflicts) == sorted(expect["conflicts"])
    if "unchanged" in expect:
        assert report.unchanged == expect["unchanged"]
    if "commit" in expect:
        assert bool(report.commit) == expect["commit"]
    if "manifest_problem" in expect:
        assert bool(report.manifest_problem) == expect["manifest_problem"]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


Step = dict[str, Any]


def _sync(step: Step, sandbox: Path, vault: Path) -> None:
    before = _outside(sandbox, vault)
    specs = _specs(step["notes"], step.get("node"))
    call: dict[str, Any] = {
        "force": step.get("force", False),
        "commit": step.get("commit", True),
        "clock": lambda: FIXED_TIME,
    }
    if step.get("follow_moves"):  # as the CLI does: the user's moves found, their paths kept
        moves = vault_moves(vault)
        call["moves"] = moves
        specs = [replace(s, path=moves.chosen.get(s.node_id, s.path)) for s in specs]
    if "raises" in step:
        with pytest.raises(getattr(errors, step["raises"])):
            sync_vault(vault, specs, **call)
    else:
        _check_report(
            sync_vault(vault, specs, **call),
            step.get("expect", {}),
        )
    assert _outside(sandbox, vault) == before, "a sync changed something outside the vault"


def _write(step: Step, sandbox: Path, _vault: Path) -> None:
    for rel, text in step["files"].items():
        (sandbox / rel).parent.mkdir(parents=True, exist_ok=True)
        (sandbox / rel).write_text(text)


def _delete(step: Step, sandbox: Path, _vault: Path) -> None:
    for rel in step["paths"]:
        path = sandbox / rel
        path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()


def _symlink(step: Step, sandbox: Path, _vault: Path) -> None:
    for link, target in step["links"].items():
        (sandbox / link).symlink_to(target)


def _user_git(step: Step, sandbox: Path, _vault: Path) -> None:
    (sandbox / step["cwd"]).mkdir(parents=True, exist_ok=True)
    _git(sandbox / step["cwd"], *step["args"])


def _expect_files(step: Step, sandbox: Path, _vault: Path) -> None:
    for rel, text in step["files"].items():
        path = sandbox / rel
        if text is None:
            assert not path.exists() and not path.is_symlink(), rel
        else:
            assert path.read_text() == text, rel
    for rel, mode in step.get("modes", {}).items():
        assert oct(stat.S_IMODE((sandbox / rel).stat().st_mode)) == oct(int(mode, 8)), rel


def _expect_git_status(step: Step, sandbox: Path, _vault: Path) -> None:
    assert _git(sandbox / step["cwd"], "status", "--porcelain") == step["status"]


def _expect_head(step: Step, sandbox: Path, _vault: Path) -> None:
    listed = _git(sandbox / step["cwd"], "ls-tree", "-r", "--name-only", "-z", "HEAD").split("\0")
    assert sorted(p for p in listed if p) == sorted(step["files"])


def _expect_head_content(step: Step, sandbox: Path, _vault: Path) -> None:
    for rel, text in step["files"].items():
        assert _git(sandbox / step["cwd"], "show", f"HEAD:{rel}") == text


def _expect_manifest(step: Step, _sandbox: Path, vault: Path) -> None:
    data = (vault / MANIFEST).read_bytes()
    loaded = load_manifest(data, fingerprint=blob_id(data))
    assert not loaded.corrupt
    known = manifests._as_written(data)  # what a sync wrote, taken as its own parse
    assert known is None or known == loaded
    if "entries" in step:
        assert sorted(loaded.entries) == sorted(step["entries"])
    if "deleted" in step:
        assert sorted(loaded.deleted) == sorted(step["deleted"])
    if "released" in step:
        assert sorted(loaded.released) == sorted(step["released"])


def _origin(edit: EditOrigin) -> str:
    """``uncommitted``, ``committed`` (by the user), or ``merged`` (committed by a merge)."""
    if edit.uncommitted:
        return "uncommitted"
    return "committed" if edit.commit else "merged"


def _status(step: Step, _sandbox: Path, vault: Path) -> None:
    report = vault_status(vault, _specs(step["notes"]))
    edited = {o.path: _origin(o) for o in report.edited}
    assert edited == step["expect"]["edited"]
    if "conflicts" in step["expect"]:
        assert [c.path for c in report.conflicts] == step["expect"]["conflicts"]
    assert all(o.when is not None for o in report.edited if o.commit)


def _age(step: Step, sandbox: Path, _vault: Path) -> None:
    for rel in step["paths"]:
        moment = time.time() - 60
        os.utime(sandbox / rel, (moment, moment))


def _resolve(step: Step, _sandbox: Path, vault: Path) -> None:
    resolve(vault, step["path"], Choice(step["choice"]))


def _release(step: Step, _sandbox: Path, vault: Path) -> None:
    release(vault, step["path"])


STEPS: dict[str, Callable[[Step, Path, Path], None]] = {
    "sync": _sync,
    "write": _write,
    "delete": _delete,
    "symlink": _symlink,
    "git": _user_git,
    "expect_files": _expect_files,
    "expect_git_status": _expect_git_status,
    "expect_head": _expect_head,
    "expect_head_content": _expect_head_content,
    "expect_manifest": _expect_manifest,
    "status": _status,
    "age": _age,
    "resolve": _resolve,
    "release": _release,
}


def _run(step: Step, sandbox: Path, vault: Path) -> None:
    run = STEPS.get(step["op"])
    if run is None:
        raise AssertionError(f"unknown step {step['op']!r}")
    run(step, sandbox, vault)


@pytest.mark.parametrize(
    "scenario",
    sorted(p for p in SCENARIOS.iterdir() if (p / "scenario.json").is_file()),
    ids=lambda p: p.name,
)
def test_scenario(scenario: Path, tmp_path: Path) -> None:
    """Run the scenario's steps; the README must say what it exercises."""
    assert len((scenario / "README.md").read_text().split()) > 30
    plan = json.loads((scenario / "scenario.json").read_text())
    sandbox = tmp_path / "sandbox"
    (sandbox / "outside").mkdir(parents=True)
    (sandbox / "outside" / "precious.md").write_text("precious\n")
    vault = sandbox / plan.get("vault", "vault")
    for number, step in enumerate(plan["steps"]):
        try:
            _run(step, sandbox, vault)
        except AssertionError as err:
            raise AssertionError(f"step {number} ({step['op']}): {err}") from err

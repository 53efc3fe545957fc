"""User stories on the demo store, run as a user runs them (CLI, real git)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pygit2
import pytest
from click.testing import CliRunner
from vaultsync.cli.main import cli
from vaultsync.vault.manifest import MANIFEST, load_manifest


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def sync(state: Path, vault: Path, *extra: str) -> str:
    code, out, err = run("sync", "--state", str(state), "--vault", str(vault), *extra)
    assert code == 0, err
    return out


def aged(path: Path) -> None:
    """The edit was saved a minute ago (an editor is done with the file)."""
    moment = time.time() - 60
    os.utime(path, (moment, moment))


def set_project(state: Path, name: str, **fields: object) -> None:
    store = state / "memory" / "projects.json"
    data = json.loads(store.read_text())
    for project in data:
        if project["name"] == name:
            project.update(fields)
    store.write_text(json.dumps(data, indent=2))


@pytest.fixture
def synced(demo_state: Path, tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "vault"
    sync(demo_state, vault)
    return demo_state, vault


def test_appended_paragraph_and_new_status_both_survive(synced: tuple[Path, Path]) -> None:
    """Story 1: the user's paragraph and the store's new status are both in the note."""
    state, vault = synced
    note = vault / "Projects" / "orbital.md"
    note.write_text(note.read_text() + "\nMy own notes on the gateway.\n")
    aged(note)
    set_project(state, "orbital", status="paused")
    out = sync(state, vault)
    text = note.read_text()
    assert 'status: "paused"' in text and "- **Status:** paused" in text
    assert text.endswith("\nMy own notes on the gateway.\n")
    assert "merged the stores' changes into your edit: Projects/orbital.md" in out
    assert pygit2.Repository(str(vault)).status() == {}
    _code, status, _ = run("status", "--state", str(state), "--vault", str(vault), "--json")
    edited = json.loads(status)["edited"]
    assert [e["path"] for e in edited] == ["Projects/orbital.md"] and edited[0]["merged"]
    assert run("check", "--state", str(state), "--vault", str(vault))[0] == 0


def test_conflict_is_shown_kept_and_resolved(synced: tuple[Path, Path]) -> None:
    """A rewrite of the line the store changes: file kept, check red, resolve ends it."""
    state, vault = synced
    note = vault / "Projects" / "orbital.md"
    mine = note.read_text().replace("- **Status:** active", "- **Status:** active, I say")
    note.write_text(mine)
    aged(note)
    set_project(state, "orbital", status="paused")
    out = sync(state, vault)
    assert note.read_text() == mine
    assert "conflict: Projects/orbital.md" in out and "--show" in out
    code, checked, _ = run("check", "--state", str(state), "--vault", str(vault), "--json")
    listed = json.loads(checked)["differences"]
    assert code == 1 and any(d.startswith("conflict Projects/orbital.md: ") for d in listed)
    code, shown, _ = run("resolve", "--vault", str(vault), "Projects/orbital.md", "--show")
    assert code == 0 and shown.count("=== ") == 3 and "active, I say" in shown
    assert run("resolve", "--vault", str(vault), "Projects/orbital.md", "--theirs")[0] == 0
    assert "- **Status:** paused" in note.read_text()
    assert run("check", "--state", str(state), "--vault", str(vault))[0] == 0


def obsidian_rename(vault: Path, old: str, new: str) -> int:
    """Move a note and rewrite every link to it in the shortest form, as Obsidian does."""
    (vault / new).parent.mkdir(parents=True, exist_ok=True)
    (vault / old).rename(vault / new)
    stem, short = old.removesuffix(".md"), Path(new).stem
    link = re.compile(r"\[\[" + re.escape(stem) + r"(?=[|\]#])")
    rewritten = 0
    for path in vault.rglob("*.md"):
        text = path.read_text()
        if link.search(text):
            path.write_text(link.sub("[[" + short, text))
            rewritten += 1
    return rewritten


def test_renamed_note_is_followed(synced: tuple[Path, Path]) -> None:
    """Story 2: a rename with Obsidian's link rewrites freezes nothing and is followed."""
    state, vault = synced
    assert obsidian_rename(vault, "Projects/skiff.md", "Projects/Skiff (boat).md") >= 10
    synced_json = json.loads(sync(state, vault, "--json"))
    assert synced_json["renamed"] == [
        {"from": "Projects/skiff.md", "to": "Projects/Skiff (boat).md"}
    ]
    assert synced_json["kept_edited"] == [] and synced_json["skipped"] == []
    _code, status, _ = run("status", "--state", str(state), "--vault", str(vault), "--json")
    report = json.loads(status)
    assert (report["edited"], report["deleted"], report["conflicts"]) == ([], [], [])
    assert not (vault / "Projects" / "skiff.md").exists()
    text = "\n".join(p.read_text() for p in vault.rglob("*.md"))
    assert "[[Projects/skiff|" not in text and "[[Skiff (boat)" not in text
    assert "[[Projects/Skiff (boat)|skiff]]" in text
    assert pygit2.Repository(str(vault)).status() == {}
    log = subprocess.run(
        ["git", "log", "--follow", "--format=%h", "--", "Projects/Skiff (boat).md"],
        cwd=vault,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert len(log) == 2  # the first sync and the one that followed the rename
    set_project(state, "skiff", status="paused")
    sync(state, vault)
    assert "- **Status:** paused" in (vault / "Projects" / "Skiff (boat).md").read_text()
    assert not (vault / "Projects" / "skiff.md").exists()
    manifest = load_manifest((vault / MANIFEST).read_bytes())
    assert manifest.entries["Projects/Skiff (boat).md"].chosen
    assert run("check", "--state", str(state), "--vault", str(vault))[0] == 0


def test_saved_templates_keep_custom_renders(synced: tuple[Path, Path], tmp_path: Path) -> None:
    """Story 4: `--templates` once, then a plain sync (cron) keeps the custom renders."""
    state, vault = synced
    mine = tmp_path / "my-templates"
    mine.mkdir()
    (mine / "project.md.j2").write_text(
        '{% extends "!builtin/project.md.j2" %}{% block body %}CUSTOM\n{{ super() }}{% endblock %}'
    )
    code, _, err = run(
        "sync", "--state", str(state), "--vault", str(vault), "--templates", str(mine)
    )
    assert code == 0, err
    assert "CUSTOM" in (vault / "Projects" / "orbital.md").read_text()
    set_project(state, "orbital", status="paused")
    sync(state, vault)
    text = (vault / "Projects" / "orbital.md").read_text()
    assert "CUSTOM" in text and "paused" in text
    assert run("check", "--state", str(state), "--vault", str(vault))[0] == 0


def test_bare_force_needs_yes_without_a_terminal(synced: tuple[Path, Path]) -> None:
    """A bare --force says how many edited notes it overwrites; --force PATH only that one."""
    state, vault = synced
    for name in ("orbital", "ledger"):
        note = vault / "Projects" / f"{name}.md"
        note.write_text(note.read_text() + "\nmine\n")
    code, _, err = run("sync", "--state", str(state), "--vault", str(vault), "--force")
    assert code == 2 and "overwrites 2 notes you edited" in err
    sync(state, vault, "--force", "Projects/ledger.md")
    assert not (vault / "Projects" / "ledger.md").read_text().endswith("mine\n")
    assert (vault / "Projects" / "orbital.md").read_text().endswith("mine\n")
    sync(state, vault, "--force", "--yes")
    assert not (vault / "Projects" / "orbital.md").read_text().endswith("mine\n")


def test_skipped_store_file_keeps_its_note_on_a_fresh_machine(
    synced: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session file gone bad and no cache of its last good value (a clone): its note stays."""
    state, vault = synced
    session = sorted((state / "sessions").glob("*.json"))[0]
    notes_before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    session.write_text("{ not json")
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "fresh-cache"))
    _code, out, _ = run("check", "--state", str(state), "--vault", str(vault))
    assert session.name in out and "remove " not in out
    sync(state, vault)
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md")) == notes_before


def test_check_fails_while_a_note_cannot_be_written(synced: tuple[Path, Path]) -> None:
    """A user's file where a new note goes: check exits 1 and names it, after a sync too."""
    state, vault = synced
    topics = state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data.append(dict(data[0], name="brand new topic", summary="new"))
    topics.write_text(json.dumps(data))
    (vault / "Topics" / "brand new topic.md").write_text("mine\n")
    sync(state, vault)
    code, out, _ = run("check", "--state", str(state), "--vault", str(vault))
    assert code == 1
    assert "conflict Topics/brand new topic.md: a file vaultsync did not write is there" in out
    assert (vault / "Topics" / "brand new topic.md").read_text() == "mine\n"


def test_sync_warns_when_a_newly_masked_secret_is_in_history(synced: tuple[Path, Path]) -> None:
    """A secret first masked now but committed in clear before: sync names the commit."""
    state, vault = synced
    token = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8I9j0"
    git = ["git", "-C", str(vault)]
    (vault / "old-note.md").write_text(f"an older vaultsync wrote {token} here\n")
    subprocess.run([*git, "add", "old-note.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "an old sync"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    leaked = head.stdout
    subprocess.run([*git, "rm", "-q", "old-note.md"], check=True)
    subprocess.run([*git, "commit", "-qm", "gone"], check=True)
    topics = state / "memory" / "topics.json"
    data = json.loads(topics.read_text())
    data[0]["summary"] = f"rotate {token} soon"
    topics.write_text(json.dumps(data))
    code, _out, err = run("sync", "--state", str(state), "--vault", str(vault))
    assert code == 0 and leaked[:10] in err and "vaultsync history" in err
    assert token not in (vault / "Home.md").read_text()

"""The render format in the manifest: a change of format is one labelled commit."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from click.testing import CliRunner
from vaultsync.cli.main import cli
from vaultsync.render import RENDER_FORMAT
from vaultsync.vault.manifest import MANIFEST, blob_id, dump_manifest, load_manifest
from vaultsync.vault.vcs import TRAILER


def run(*args: str) -> tuple[int, str]:
    """Run the command line in-process; its exit code and output."""
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout + result.stderr


def git(vault: Path, *args: str) -> str:
    """Run real git in the vault."""
    who = ["-c", "user.name=Ana", "-c", "user.email=ana@example.org"]
    command = ["git", "-C", str(vault), *who, *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def as_format_1(vault: Path, *notes: str) -> None:
    """Make the vault what an earlier vaultsync committed: ``notes`` in the old form, format 1."""
    manifest = load_manifest((vault / MANIFEST).read_bytes())
    entries = dict(manifest.entries)
    for note in notes:
        path = vault / note
        old = path.read_bytes().replace(b"confidence: 0.7\n", b'confidence: "0.70"\n')
        old = old.replace(b"confidence: 0.9\n", b'confidence: "0.90"\n')
        path.write_bytes(old)
        entries[note] = dataclasses.replace(entries[note], blob=blob_id(old), key="format-1")
    data = dump_manifest(entries, manifest.deleted, manifest.released)
    assert b"render_format" not in data
    (vault / MANIFEST).write_bytes(data)
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", f"vaultsync: sync\n\n{TRAILER}: {blob_id(data)}")


def test_new_vault_records_the_format(demo_state: Path, tmp_path: Path) -> None:
    """A fresh sync writes the current format into the manifest; its commit is a plain sync."""
    vault = tmp_path / "vault"
    assert run("sync", "--state", str(demo_state), "--vault", str(vault))[0] == 0
    assert load_manifest((vault / MANIFEST).read_bytes()).render_format == RENDER_FORMAT
    assert f'"render_format": {RENDER_FORMAT},' in (vault / MANIFEST).read_text()
    assert git(vault, "log", "-1", "--format=%s").startswith("vaultsync: sync (")


def test_format_change_is_one_labelled_commit(demo_state: Path, tmp_path: Path) -> None:
    """Format-1 notes: previewed by --dry-run, rewritten in 'render format 2', edits merged."""
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    assert run("sync", *where)[0] == 0
    fact, edited = sorted(
        p for p in (vault / "Facts").rglob("*.md") if b"confidence: 0." in p.read_bytes()
    )[:2]
    note = fact.relative_to(vault).as_posix()
    as_format_1(vault, note, edited.relative_to(vault).as_posix())
    mine = edited.read_bytes().replace(b"\n## Links\n", b"\nMy own line.\n\n## Links\n")
    edited.write_bytes(mine)
    code, shown = run("sync", *where, "--dry-run")
    assert code == 0 and f"~ {note}" in shown
    assert f"would rewrite the notes in render format {RENDER_FORMAT}" in shown
    code, shown = run("sync", *where)
    assert code == 0 and f"rewrote the notes in render format {RENDER_FORMAT}" in shown
    assert git(vault, "log", "-1", "--format=%s") == f"vaultsync: render format {RENDER_FORMAT}"
    assert b'confidence: "0.' not in fact.read_bytes()
    merged = edited.read_bytes()
    assert b"My own line." in merged and b'confidence: "0.' not in merged
    assert load_manifest((vault / MANIFEST).read_bytes()).render_format == RENDER_FORMAT
    assert run("check", *where)[0] == 0


def test_plain_sync_announces_no_format_change(demo_state: Path, tmp_path: Path) -> None:
    """A sync of notes already in the current format says nothing about formats."""
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    assert run("sync", *where)[0] == 0
    (vault / "Home.md").unlink()
    code, shown = run("sync", *where, "--force", "Home.md")
    assert code == 0 and "synced" in shown and "render format" not in shown

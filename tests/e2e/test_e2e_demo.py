"""The demo store end to end: sync, check, determinism, privacy, links, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest
from click.testing import CliRunner
from vaultsync.cli.main import cli


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def vault_files(vault: Path) -> dict[str, bytes]:
    """Every file of the vault except git's and the engine's local state."""
    local = {".vaultsync/cache.json", ".vaultsync/lock"}
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in sorted(vault.rglob("*"))
        if p.is_file()
        and ".git" not in p.relative_to(vault).parts
        and p.relative_to(vault).as_posix() not in local
    }


@pytest.fixture
def synced(demo_state: Path, tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "vault"
    code, _, err = run("sync", "--state", str(demo_state), "--vault", str(vault))
    assert code == 0, err
    return demo_state, vault


def text_of(vault: Path) -> str:
    return "\n".join(data.decode() for data in vault_files(vault).values())


class TestFreshSync:
    def test_every_note_and_one_commit(self, synced: tuple[Path, Path]) -> None:
        """A fresh sync writes Home, every kind's folder and one commit with the trailer."""
        _, vault = synced
        files = vault_files(vault)
        assert "Home.md" in files and ".vaultsync/manifest.json" in files
        for folder in (
            "Profile",
            "Projects",
            "Topics",
            "Facts",
            "Episodes",
            "Journal/Daily",
            "Journal/Weekly",
            "Journal/Monthly",
            "Sessions",
            "Skills",
            "Board",
            "Contexts",
        ):
            assert any(path.startswith(folder + "/") for path in files), folder
        repo = pygit2.Repository(str(vault))
        head = repo.head.peel(pygit2.Commit)
        assert not head.parents and "Vaultsync-Sync" in head.message_trailers
        assert repo.status() == {}

    def test_every_note_has_front_matter_with_its_id(self, synced: tuple[Path, Path]) -> None:
        """Each engine note starts with YAML front matter naming its graph node."""
        _, vault = synced
        for path, data in vault_files(vault).items():
            if path.endswith(".md"):
                assert data.startswith(b"---\nvaultsync_id: "), path

    def test_check_is_green_right_after(self, synced: tuple[Path, Path]) -> None:
        """check exits 0 on a vault that was just synced."""
        state, vault = synced
        assert run("check", "--state", str(state), "--vault", str(vault))[0] == 0

    def test_second_sync_changes_nothing(self, synced: tuple[Path, Path]) -> None:
        """A sync with nothing to do prints nothing and makes no commit."""
        state, vault = synced
        head = pygit2.Repository(str(vault)).head.target
        code, out, _ = run("sync", "--state", str(state), "--vault", str(vault))
        assert (code, out) == (0, "")
        assert pygit2.Repository(str(vault)).head.target == head


class TestCheck:
    def test_red_after_a_store_changes(self, synced: tuple[Path, Path]) -> None:
        """check exits 1 and lists the notes once a store changes."""
        state, vault = synced
        topics = state / "memory" / "topics.json"
        data = json.loads(topics.read_text())
        data[0]["summary"] = "a new summary"
        topics.write_text(json.dumps(data))
        code, out, err = run("check", "--state", str(state), "--vault", str(vault))
        assert code == 1 and "update Topics/" in out and "stale" in err


def test_same_stores_give_byte_identical_vaults(demo_state: Path, tmp_path: Path) -> None:
    """Two syncs of the same stores into two vaults give the same bytes."""
    first, second = tmp_path / "a", tmp_path / "b"
    run("sync", "--state", str(demo_state), "--vault", str(first))
    run("sync", "--state", str(demo_state), "--vault", str(second))
    assert vault_files(first) == vault_files(second)


class TestContent:
    def test_private_fields_and_secrets_never_reach_the_vault(
        self, synced: tuple[Path, Path]
    ) -> None:
        """Sensitive profile fields show ‹private›; secrets in notes and documents are masked."""
        _, vault = synced
        text = text_of(vault)
        assert "‹private›" in text
        for secret in ("AKIAZ7QDEMO4FAKE9K2X", "Tr0ub4dor-demo", "s3cr3t"):
            assert secret not in text, secret

    def test_no_transcript_enters_the_vault(self, synced: tuple[Path, Path]) -> None:
        """Session notes carry the title and links, never the conversation."""
        _, vault = synced
        assert "Rehearse on a prod snapshot. 2. Check extensions" not in text_of(vault)

    def test_wikilinks_are_rewritten_to_exact_paths(self, synced: tuple[Path, Path]) -> None:
        """A wikilink resolved by name points at the note's exact path; an unresolved one stays."""
        _, vault = synced
        text = text_of(vault)
        assert "[[Topics/configuracao-do_servidor|Configuração do servidor]]" in text
        assert "[[Grafana dashboards]]" in text

    def test_link_drawn_by_hand_shows_in_the_vault(self, synced: tuple[Path, Path]) -> None:
        """A link drawn with vaultsync link appears in the Links section marked as yours."""
        state, vault = synced
        code, _, err = run(
            "link",
            "telemetry security",
            "→",
            "orbital",
            "--rel",
            "about",
            "--note",
            "gateway notes",
            "--state",
            str(state),
        )
        assert code == 0, err
        run("sync", "--state", str(state), "--vault", str(vault))
        note = (vault / "Topics" / "telemetry security.md").read_text()
        assert "[[Projects/orbital|orbital]] · linked by you — gateway notes" in note


def test_graph_export_prints_the_documented_shape(demo_state: Path) -> None:
    """`graph export` prints schema 2 with nodes and links in the documented order."""
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "graph", "export", "--state", str(demo_state)],
        capture_output=True,
        check=True,
    )
    graph = json.loads(proc.stdout)
    assert graph["schema"] == 2 and len(graph["fingerprint"]) == 64
    ids = [n["id"] for n in graph["nodes"]]
    assert ids == sorted(ids) and len(ids) > 150
    keys = [(l["from"], l["to"], l["rel"]) for l in graph["links"]]
    assert keys == sorted(keys)
    assert set(graph["links"][0]) == {"from", "to", "rel", "origin", "weight"}


def test_entry_point_keeps_exit_codes_and_output(tmp_path: Path) -> None:
    """The console entry point keeps exit codes and flushed output."""
    state = tmp_path / "state"
    (state / "memory").mkdir(parents=True)
    (state / "memory" / "memory_index.json").write_text("[{]")
    command = [sys.executable, "-m", "pipeline", "sync", "--state", str(state)]
    proc = subprocess.run(
        [*command, "--vault", str(tmp_path / "v")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 4
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and "memory_index.json:1:" in proc.stderr
    assert not (tmp_path / "v").exists()
    usage = subprocess.run(
        [*command, "--no-such-option"], capture_output=True, text=True, check=False
    )
    assert usage.returncode == 2 and "No such option" in usage.stderr

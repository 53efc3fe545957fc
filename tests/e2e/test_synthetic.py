"""The benchmark store generator: deterministic, a real store's proportions, and it syncs."""

from __future__ import annotations

import hashlib
from pathlib import Path

from click.testing import CliRunner
from vaultsync.cli.main import cli
from vaultsync.core.model import Kind
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.load import read_records
from vaultsync.synthetic import generate_store


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    """The same seed and size write the same store, byte for byte."""
    generate_store(tmp_path / "a", notes=300, seed=3)
    generate_store(tmp_path / "b", notes=300, seed=3)
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")


def test_proportions_follow_the_seed(tmp_path: Path) -> None:
    """About 71 % documents and 2.8 links a note, as in the reference 2,800-note store."""
    generate_store(tmp_path, notes=300, seed=1)
    graph = build_graph(read_records(tmp_path), Caps()).graph
    notes = [n for n in graph.nodes if n.kind is not Kind.TAG]
    documents = sum(1 for n in notes if n.kind is Kind.DOC)
    assert 270 <= len(notes) <= 330
    assert 0.65 <= documents / len(notes) <= 0.77
    assert 2.2 <= len(graph.links) / len(notes) <= 3.4
    kinds = {n.kind for n in notes}
    assert kinds >= {
        Kind.FACT,
        Kind.TOPIC,
        Kind.PROJECT,
        Kind.EPISODE,
        Kind.NOTE,
        Kind.SESSION,
        Kind.SKILL,
        Kind.CARD,
        Kind.KBCONTEXT,
        Kind.DOC,
        Kind.PROFILE,
    }
    assert {l.origin.value for l in graph.links} >= {
        "structural",
        "wikilink",
        "markdown",
        "mention",
    }


def test_generate_then_sync_from_the_cli(tmp_path: Path) -> None:
    """`vaultsync bench generate` writes a store that syncs and checks clean."""
    state, vault = tmp_path / "state", tmp_path / "vault"
    runner = CliRunner()
    generated = runner.invoke(cli, ["bench", "generate", "--notes", "300", str(state)])
    assert generated.exit_code == 0, generated.output
    synced = runner.invoke(cli, ["sync", "--state", str(state), "--vault", str(vault)])
    assert synced.exit_code == 0, synced.output
    checked = runner.invoke(cli, ["check", "--state", str(state), "--vault", str(vault)])
    assert checked.exit_code == 0, checked.output


def test_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    """The generator never writes over an existing directory's files."""
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["bench", "generate", "--notes", "300", str(tmp_path)])
    assert result.exit_code == 2 and (tmp_path / "keep.txt").read_text() == "mine"

"""``vaultsync search``, ``registry`` and ``serve`` on the command line, on the demo vault."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import DEMO_STORE
from vaults import demo_vault, write_vault
from vaultsync.cli.search import registry, search, serve


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo store's vault, rendered once for the module: (state, vault)."""
    root = tmp_path_factory.mktemp("demo")
    state = root / "state"
    shutil.copytree(DEMO_STORE, state)
    return state, demo_vault(state, state / "vault")


@pytest.fixture
def vaultsync() -> click.Group:
    """The ``vaultsync`` group with the search commands, as the lead registers them."""
    from vaultsync.cli.main import cli

    for command in (search, registry, serve):
        if command.name not in cli.commands:
            cli.add_command(command)
    return cli


def run(group: click.Group, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(group, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


class TestSearch:
    def test_demo_best_hit_and_linked_notes(
        self, vaultsync: click.Group, demo: tuple[Path, Path]
    ) -> None:
        """On the demo vault the runbook comes first, then notes linked with the best hits."""
        code, out, _ = run(vaultsync, "search", "cert", "rotation", "--vault", str(demo[1]))
        assert code == 0
        first = out.splitlines()[0]
        assert "Contexts/handbook/ops/runbooks/cert-rotation.md" in first
        assert "Linked notes (not in the results above):" in out
        assert "(linked from " in out or "(links to " in out

    def test_state_option_finds_the_vault(
        self, vaultsync: click.Group, demo: tuple[Path, Path]
    ) -> None:
        """``--state DIR`` alone means the vault ``DIR/vault``."""
        code, out, _ = run(vaultsync, "search", "orbital", "--state", str(demo[0]), "--limit", "1")
        assert (code, out.splitlines()[0].endswith("Projects/orbital.md")) == (0, True)

    def test_json(self, vaultsync: click.Group, demo: tuple[Path, Path]) -> None:
        """``--json`` gives hits with id, score and snippet, and linked notes with why."""
        code, out, _ = run(vaultsync, "search", "postgres", "16", "--json", "--vault", str(demo[1]))
        data = json.loads(out)
        assert code == 0
        assert data["hits"][0]["score"] >= data["hits"][-1]["score"]
        assert {"id", "path", "title", "kind", "content_hash", "size", "snippet"} <= set(
            data["hits"][0]
        )
        assert all(item["why"].startswith(("linked from ", "links to ")) for item in data["linked"])
        assert len(data["linked"]) <= 6

    def test_kind_and_folder(self, vaultsync: click.Group, demo: tuple[Path, Path]) -> None:
        """``--kind`` (comma-separated or repeated) and ``--folder`` filter the hits."""
        vault = str(demo[1])
        _, out, _ = run(
            vaultsync, "search", "postgres", "--kind", "fact,episode", "--json", "--vault", vault
        )
        assert {h["kind"] for h in json.loads(out)["hits"]} <= {"fact", "episode"}
        _, out, _ = run(
            vaultsync,
            "search",
            "gateway",
            "--folder",
            "Contexts/handbook/ops",
            "--json",
            "--vault",
            vault,
        )
        assert all(h["path"].startswith("Contexts/handbook/ops/") for h in json.loads(out)["hits"])

    def test_no_match(self, vaultsync: click.Group, demo: tuple[Path, Path]) -> None:
        """No hit is not an error."""
        code, out, _ = run(vaultsync, "search", "xylophonequartz", "--vault", str(demo[1]))
        assert (code, out.strip()) == (0, "no note matches 'xylophonequartz'")

    def test_nothing_to_search(self, vaultsync: click.Group, demo: tuple[Path, Path]) -> None:
        """Only an exclusion is a usage error (exit 2), with a hint."""
        code, _, err = run(vaultsync, "search", "-orbital", "--vault", str(demo[1]))
        assert code == 2
        assert err.startswith("error: nothing to search for")
        assert "hint:" in err

    def test_folder_out_of_the_vault(self, vaultsync: click.Group, demo: tuple[Path, Path]) -> None:
        """A folder with ``..`` is refused."""
        code, _, err = run(vaultsync, "search", "x", "--folder", "../etc", "--vault", str(demo[1]))
        assert (code, "leaves the vault" in err) == (2, True)

    def test_new_user_note_found_at_once(self, vaultsync: click.Group, tmp_path: Path) -> None:
        """A note written since the last search is indexed on demand."""
        write_vault(tmp_path, {"a.md": "alpha"})
        run(vaultsync, "search", "alpha", "--vault", str(tmp_path))
        write_vault(tmp_path, {"Inbox/new.md": "# New\n\nquokka"})
        code, out, _ = run(vaultsync, "search", "quokka", "--vault", str(tmp_path))
        assert (code, "Inbox/new.md" in out) == (0, True)

    def test_relative_vault_path(
        self, vaultsync: click.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``--vault`` may be relative to the working folder."""
        write_vault(tmp_path / "v", {"a.md": "narwhal"})
        monkeypatch.chdir(tmp_path)
        code, out, _ = run(vaultsync, "search", "narwhal", "--vault", "v")
        assert (code, out.splitlines()[0].endswith("a.md")) == (0, True)

    def test_missing_vault(self, vaultsync: click.Group, tmp_path: Path) -> None:
        """A vault that does not exist is a usage error."""
        code, _, err = run(vaultsync, "search", "x", "--vault", str(tmp_path / "none"))
        assert (code, "no vault here" in err) == (2, True)


class TestRegistry:
    def test_every_note_with_hash(self, vaultsync: click.Group, demo: tuple[Path, Path]) -> None:
        """Every note of the demo vault is listed with its id, kind and the SHA-256 of its bytes."""
        code, out, _ = run(vaultsync, "registry", "--json", "--vault", str(demo[1]))
        docs = json.loads(out)
        on_disk = sorted(
            p.relative_to(demo[1]).as_posix()
            for p in demo[1].rglob("*.md")
            if ".vaultsync" not in p.parts
        )
        assert code == 0
        assert [d["path"] for d in docs] == on_disk
        home = next(d for d in docs if d["path"] == "Home.md")
        assert (
            home["content_hash"] == hashlib.sha256((demo[1] / "Home.md").read_bytes()).hexdigest()
        )
        assert home["id"] == "home"
        assert len({d["id"] for d in docs}) == len(docs)

    def test_text_lines(self, vaultsync: click.Group, demo: tuple[Path, Path]) -> None:
        """Text output is one tab-separated line per note: id, kind, size, hash, path, title."""
        _, out, _ = run(vaultsync, "registry", "--kind", "project", "--vault", str(demo[1]))
        first = out.splitlines()[0].split("\t")
        assert (first[0], first[1], first[4]) == ("project:ledger", "project", "Projects/ledger.md")


class TestServe:
    def test_refuses_open_address_without_token(
        self, vaultsync: click.Group, tmp_path: Path
    ) -> None:
        """Binding a non-loopback address without ``VAULTSYNC_API_TOKEN`` is refused (exit 3)."""
        code, _, err = run(vaultsync, "serve", "--host", "0.0.0.0", "--vault", str(tmp_path))  # noqa: S104
        assert code == 3
        assert "VAULTSYNC_API_TOKEN" in err

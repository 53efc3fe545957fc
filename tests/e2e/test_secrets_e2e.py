"""No planted secret in any byte vaultsync writes or serves.

A state directory laid out as ChatCLI writes it holds every secret form of the corpus in every
text field of every store (``secretcorpus``).  A real sync, ``graph export``, the graph
queries, the registry, a search (which builds the index) and the HTTP API run on it; then
every byte under the vault (its ``.git`` included: the index, refs and logs raw, each loose
object decompressed, every object of the object database read through pygit2, packs
included) and under vaultsync's cache folder, and every command's output, is searched for
each secret, case-insensitively.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pygit2
import pytest
from click.testing import CliRunner
from helpers import serving
from secretcorpus import ALL_SECRETS, FORMS, plant_state
from vaultsync.cli.main import cli
from vaultsync.http.auth import vault_token


def run(*args: str) -> bytes:
    """A command's stdout and stderr; it must succeed."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return (result.stdout + result.stderr).encode()


def files_under(root: Path) -> Iterator[tuple[str, bytes]]:
    """Every file's bytes, and each loose git object decompressed."""
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        yield str(path), data
        if path.parent.parent.name == "objects" and len(path.parent.name) == 2:
            yield f"{path} (inflated)", zlib.decompress(data)


def git_objects(vault: Path) -> Iterator[tuple[str, bytes]]:
    """Every object of the vault's repository, loose or packed, as git stores its content."""
    repo = pygit2.Repository(str(vault))
    for oid in repo.odb:
        yield f"git object {oid}", repo.odb.read(oid)[1]


def leaks(places: dict[str, bytes]) -> dict[str, list[str]]:
    """Each secret found, with where (case-insensitive: names may be lowercased)."""
    folded = {name: data.lower() for name, data in places.items()}
    found: dict[str, list[str]] = {}
    for secret in ALL_SECRETS:
        needle = secret.lower().encode()
        where = [name for name, data in folded.items() if needle in data]
        if where:
            found[secret] = where
    return found


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """The planted state, its synced vault and the cache folder (state, vault, cache)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(cache))
    state = plant_state(tmp_path / "state")
    vault = tmp_path / "vault"
    run("sync", "--state", str(state), "--vault", str(vault))
    return state, vault, cache


def api_answers(state: Path, vault: Path) -> Iterator[tuple[str, bytes]]:
    """Every note through the API (list, detail, links) and a search for each form."""
    from vaultsync.http.server import make_app

    app = make_app(vault, state, host="127.0.0.1", refresh=0, environ={})
    bearer = {"authorization": f"Bearer {vault_token(vault)}"}
    with serving(app) as url, httpx.Client(base_url=url, timeout=30, headers=bearer) as client:
        listed = client.get("/v1/vault/documents", params={"limit": 500})
        assert listed.status_code == 200, listed.text
        yield "GET /v1/vault/documents", listed.content
        for doc in listed.json():
            for suffix in ("", "/links"):
                answer = client.get(f"/v1/vault/documents/{doc['id']}{suffix}")
                yield f"GET {doc['id']}{suffix}", answer.content
        for form in FORMS:
            answer = client.post("/v1/vault/search", json={"query": form.text.split()[0]})
            yield f"POST search {form.name}", answer.content


class TestNoSecretAnywhere:
    def test_vault_git_caches_and_outputs(self, planted: tuple[Path, Path, Path]) -> None:
        """No planted secret in the vault, its git objects, the caches or any command's output."""
        state, vault, cache = planted
        where = ["--state", str(state), "--vault", str(vault)]
        places = {
            "graph export": run("graph", "export", *where),
            "graph map": run("graph", "map", "--json", *where),
            "registry": run("registry", "--json", *where),
            "search": run("search", "password", "--json", *where),
            "status": run("status", *where),
            "sync again": run("sync", *where),
        }
        for form in FORMS:
            places[f"neighbors {form.name}"] = run("graph", "neighbors", *where, "--", form.text)
        places.update(files_under(vault))
        places.update(git_objects(vault))
        places.update(files_under(cache))
        assert (vault / ".vaultsync" / "search.db").is_file()
        assert any(name.endswith("graph.db") for name in places)
        assert leaks(places) == {}

    def test_api_answers(self, planted: tuple[Path, Path, Path]) -> None:
        """No planted secret in any answer of the HTTP API."""
        state, vault, _ = planted
        assert leaks(dict(api_answers(state, vault))) == {}


class TestMaskedNames:
    def test_distinct_and_stable(self, planted: tuple[Path, Path, Path], tmp_path: Path) -> None:
        """Notes differing only in their secret stay apart; a fresh sync names them the same."""
        state, vault, _ = planted
        topics = sorted(p.name for p in (vault / "Topics").iterdir())
        assert len(topics) == len(FORMS)
        again = tmp_path / "again"
        run("sync", "--state", str(state), "--vault", str(again))
        names = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
        assert names == {p.relative_to(again).as_posix() for p in again.rglob("*.md")}
        for folder in ("Facts", "Projects", "Sessions", "Skills", "Board", "Episodes"):
            assert len(list((vault / folder).rglob("*.md"))) == len(FORMS), folder

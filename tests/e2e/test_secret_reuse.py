"""A secret the profile marks once is masked wherever the stores repeat it (issue 34, item 2).

The demo store gets ``PGPASSWORD: Xq7vR2mPz9Lk`` in the profile's environment, and the same
value in a card title, a session's file name, a context's file path, a fact and a topic name,
where no rule would recognise it alone.  After a real sync, ``graph export`` and a search,
every byte under the vault (each git object through ``git cat-file --batch-all-objects``
included) and under the cache folder is searched for it.
"""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from vaultsync.cli.main import cli

SECRET = "Xq7vR2mPz9Lk"  # noqa: S105 - planted, not a credential


def run(*args: str) -> bytes:
    """A command's output; it must succeed."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return (result.stdout + result.stderr).encode()


def edit(path: Path, change: object) -> None:
    """Load a JSON store file, let ``change`` edit it, write it back."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data), encoding="utf-8")


def plant(state: Path, profile_map: str = "environment", key: str = "PGPASSWORD") -> None:
    """The secret in one of the profile's maps (by key), then reused in five other places."""
    edit(state / "memory/user_profile.json", lambda d: d[profile_map].update({key: SECRET}))
    edit(state / "board.json", lambda d: d["cards"][0].update(title=f"Rotate {SECRET} for ledger"))
    session = state / "sessions/pg16-upgrade.json"
    session.rename(state / f"sessions/pg16 {SECRET}.json")
    context = next(iter(sorted((state / "contexts").glob("*.json"))))
    edit(context, lambda d: d["files"][0].update(Path=f"docs/{SECRET}/notes.md"))
    edit(state / "memory/memory_index.json", lambda d: d[0].update(content=f"db uses {SECRET}"))
    edit(state / "memory/topics.json", lambda d: d[0].update(name=f"topic {SECRET}"))


def every_byte(root: Path) -> dict[str, bytes]:
    """Every file's bytes under ``root``, each loose git object also inflated."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            found[str(path)] = path.read_bytes()
            if path.parent.parent.name == "objects" and len(path.parent.name) == 2:
                found[f"{path} (inflated)"] = zlib.decompress(found[str(path)])
    return found


def git_objects(vault: Path) -> bytes:
    """Every object of the vault's repository as git gives it back."""
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=vault,
        capture_output=True,
        check=True,
    ).stdout


@pytest.mark.parametrize(
    ("profile_map", "key"),
    [("environment", "PGPASSWORD"), ("preferences", "db_password")],
    ids=["shown entry", "private entry"],  # db_password is also private: its entry is hidden
)
def test_a_profile_secret_is_masked_everywhere_it_is_reused(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile_map: str, key: str
) -> None:
    """No byte of the vault, its git objects, the caches, the export or the index holds it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(cache))
    plant(demo_state, profile_map, key)
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    run("sync", *where)
    places = {
        "graph export": run("graph", "export", *where),
        "search": run("search", "ledger", *where),
    }
    places.update(every_byte(vault))
    places.update(every_byte(cache))
    places["git cat-file"] = git_objects(vault)
    assert (vault / ".vaultsync" / "search.db").is_file()
    needle = SECRET.lower().encode()
    assert [name for name, data in places.items() if needle in data.lower()] == []


def test_a_secret_from_an_unchanged_store_is_masked_in_a_new_title(
    demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The profile read from the memo still tells the next sync its secret."""
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    edit(
        demo_state / "memory/user_profile.json",
        lambda d: d["environment"].update(PGPASSWORD=SECRET),
    )
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    run("sync", *where)
    edit(demo_state / "board.json", lambda d: d["cards"][0].update(title=f"Rotate {SECRET} now"))
    run("sync", *where)
    places = every_byte(vault)
    places["git cat-file"] = git_objects(vault)
    needle = SECRET.lower().encode()
    assert [name for name, data in places.items() if needle in data.lower()] == []

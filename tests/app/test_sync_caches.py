"""``app.sync`` and the caches it leaves: those written aside are this sync's, whole."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import Workspace, open_workspace
from vaultsync.core import parallel
from vaultsync.core.cachefile import cache_dir
from vaultsync.graph.build import patch_graph
from vaultsync.graph.cache import load_last_good, load_patch_state
from vaultsync.graph.load import read_records
from vaultsync.synthetic import generate_store


def _synced_vault(tmp_path: Path, notes: int = parallel.MIN_ITEMS + 50) -> Workspace:
    """A synced vault, by default of more notes than a helper process is forked for."""
    state = tmp_path / "state"
    generate_store(state, notes=notes)
    ws = open_workspace(str(state), str(tmp_path / "vault"))
    sync(ws, SyncRequest())
    return ws


def _change_a_fact(state: Path, words: str = " and the kettle", number: int = 0) -> None:
    path = state / "memory" / "memory_index.json"
    facts = json.loads(path.read_text())
    facts[number]["content"] += words
    path.write_text(json.dumps(facts))


def test_the_graph_state_a_sync_leaves_is_its_own_build(tmp_path: Path) -> None:
    """After a sync whose caches a helper wrote, the patch state describes the stores now."""
    ws = _synced_vault(tmp_path)
    _change_a_fact(ws.state)
    outcome = sync(ws, SyncRequest())
    assert outcome.report is not None and outcome.report.updated
    kept = load_patch_state(ws.state, ws.caps)
    assert kept is not None
    fresh = patch_graph(read_records(ws.state, ws.caps), ws.caps, None)[1]
    tables = ("nodes", "records", "sources", "names")
    assert [getattr(kept, t) for t in tables] == [getattr(fresh, t) for t in tables]


def test_the_last_good_records_a_sync_leaves_are_the_stores_now(tmp_path: Path) -> None:
    """The last good records written aside hold the fact changed by that very sync."""
    ws = _synced_vault(tmp_path)
    _change_a_fact(ws.state)
    sync(ws, SyncRequest())
    facts = load_last_good(ws.state)["memory/memory_index.json"]
    assert any("and the kettle" in str(fact) for fact in facts)


@dataclass(frozen=True)
class _Generations:
    """A vault synced twice, each sync's cache folder kept, and the stores changed once more."""

    state: Path
    vault: Path
    """The vault after the second sync (copied for each try)."""
    caches: tuple[Path, Path]
    """The cache folder after the first sync, and after the second."""
    expected: dict[str, bytes]
    """The notes a vault synced from nothing, without any cache, has for the stores now."""


def _notes(vault: Path) -> dict[str, bytes]:
    """Every file of the vault but git's and the stat cache, by path."""
    return {
        path.relative_to(vault).as_posix(): path.read_bytes()
        for path in sorted(vault.rglob("*"))
        if path.is_file() and ".git" not in path.parts and path.name != "cache.json"
    }


def _two_generations(root: Path) -> _Generations:
    ws = _synced_vault(root, notes=60)  # what a mix does needs no helper: a small store is quick
    folder = cache_dir(ws.state)
    shutil.copytree(folder, root / "cache-1")
    _change_a_fact(ws.state, " then the teapot", number=1)
    sync(ws, SyncRequest())
    shutil.copytree(folder, root / "cache-2")
    _change_a_fact(ws.state, " and at last the cups")
    shutil.rmtree(folder)
    expected = open_workspace(str(ws.state), str(root / "expected"))
    sync(expected, SyncRequest())
    return _Generations(
        state=ws.state,
        vault=ws.vault,
        caches=(root / "cache-1", root / "cache-2"),
        expected=_notes(expected.vault),
    )


def _cache_files(found: _Generations) -> list[str]:
    """Every file of either cache folder, relative to it."""
    return sorted(
        {p.relative_to(c).as_posix() for c in found.caches for p in c.rglob("*") if p.is_file()}
    )


def _cache_of(name: str) -> str:
    """Which cache a file belongs to: a part or an entry belongs to its whole."""
    return re.sub(r"(-\d+)?\.\w+$", "", name.split("/", maxsplit=1)[0])


def _synced_with(found: _Generations, picks: Mapping[str, str], root: Path) -> dict[str, bytes]:
    """The second sync's vault synced again, each cache file taken as ``picks`` says."""
    folder, (old, new) = cache_dir(found.state), found.caches
    shutil.rmtree(folder, ignore_errors=True)
    for name, pick in picks.items():
        source = (old if pick == "old" else new) / name
        if pick != "gone" and source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    vault = Path(tempfile.mkdtemp(dir=root)) / "vault"
    shutil.copytree(found.vault, vault, symlinks=True)
    sync(open_workspace(str(found.state), str(vault)), SyncRequest())
    return _notes(vault)


def test_each_cache_from_the_sync_before_gives_the_vault_of_none(tmp_path: Path) -> None:
    """One cache a sync older than the rest, or newer: the notes a sync from none has."""
    found = _two_generations(tmp_path)
    names = _cache_files(found)
    for cache in sorted({_cache_of(name) for name in names}):
        for odd, rest in (("old", "new"), ("new", "old")):
            picks = {name: odd if _cache_of(name) == cache else rest for name in names}
            assert _synced_with(found, picks, tmp_path) == found.expected, (cache, odd)


_GENERATIONS: dict[Path, _Generations] = {}
"""Made once per test: hypothesis runs its examples in one ``tmp_path``."""


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_mix_of_two_syncs_caches_gives_the_vault_of_none(
    tmp_path: Path, data: st.DataObject
) -> None:
    """Caches half written (a helper killed midway): each file old, new or gone, same notes."""
    found = _GENERATIONS.get(tmp_path) or _GENERATIONS.setdefault(
        tmp_path, _two_generations(tmp_path)
    )
    names = _cache_files(found)
    picks = data.draw(st.lists(st.sampled_from(("old", "new", "gone")), min_size=len(names),
                               max_size=len(names)))  # fmt: skip
    assert _synced_with(found, dict(zip(names, picks, strict=True)), tmp_path) == found.expected

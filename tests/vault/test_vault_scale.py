"""The fast paths of a sync at scale give what the full ones give (real vaults, real git)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from syncdriver import FIXED_TIME, make_spec
from vaultsync.core.model import NoteSpec
from vaultsync.render import RENDER_FORMAT
from vaultsync.vault.manifest import CACHE, MANIFEST, dump_manifest, load_manifest
from vaultsync.vault.sync import sync_vault


def specs(count: int, changed: dict[int, str]) -> list[NoteSpec]:
    return [
        make_spec(f"F/f{i % 7}/n{i:03d}.md", f"# {i}\n\n{changed.get(i, 'v1')}\n")
        for i in range(count)
    ]


def canonical(vault: Path) -> bytes:
    found = load_manifest((vault / MANIFEST).read_bytes(), fingerprint="x")
    return dump_manifest(found.entries, found.deleted, found.released, render_format=RENDER_FORMAT)


def test_patched_manifest_is_the_full_dump(tmp_path: Path) -> None:
    """Syncs that change, add and drop a few notes leave the manifest a full dump would write."""
    vault = tmp_path / "v"
    sync_vault(vault, specs(60, {}), clock=lambda: FIXED_TIME, inputs="i")
    assert json.loads((vault / CACHE).read_bytes())["dumped"]  # the next sync may patch
    for changed, count in (({3: "v2"}, 60), ({3: "v2", 40: "v3"}, 61), ({}, 58)):
        sync_vault(vault, specs(count, changed), clock=lambda: FIXED_TIME, inputs="i")
        assert (vault / MANIFEST).read_bytes() == canonical(vault)


def test_hand_edited_manifest_is_dumped_whole(tmp_path: Path) -> None:
    """A manifest the user re-formatted is not patched: the next sync writes the full dump."""
    vault = tmp_path / "v"
    sync_vault(vault, specs(20, {}), clock=lambda: FIXED_TIME, inputs="i")
    data = json.loads((vault / MANIFEST).read_bytes())
    (vault / MANIFEST).write_text(json.dumps(data))  # same entries, other layout
    subprocess.run(["git", "commit", "-qam", "reformat"], cwd=vault, check=True)
    sync_vault(vault, specs(20, {5: "v2"}), clock=lambda: FIXED_TIME, inputs="i")
    assert (vault / MANIFEST).read_bytes() == canonical(vault)

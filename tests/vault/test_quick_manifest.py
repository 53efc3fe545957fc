"""The quick answer never outlives the manifest it was taken against (issue 34, item 5).

A sync records, with its stat cache, the blob id of the manifest it left.  A manifest that is
not those bytes any more — restored from history, copied in, rewritten by hand — is not the
one the cache vouches for, even when it names the same paths: the sync runs in full.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from syncdriver import make_spec
from vaultsync.core.fsio import RACY_NS
from vaultsync.vault.manifest import MANIFEST
from vaultsync.vault.quick import unchanged_since_last_sync
from vaultsync.vault.sync import sync_vault

INPUTS = "inputs-1"


def aged_sync(vault: Path, body: str) -> None:
    """Sync five notes with ``body`` in the first, then age the notes out of the racy window."""
    specs = [make_spec(f"F/n{i}.md", f"{body if i == 0 else 'note'} {i}\n") for i in range(5)]
    sync_vault(vault, specs, inputs=INPUTS)
    past = time.time_ns() - 10 * RACY_NS
    for path in vault.rglob("*.md"):
        os.utime(path, ns=(past, past))
    sync_vault(vault, specs, inputs=INPUTS)


def test_a_manifest_restored_from_history_is_not_vouched_for(tmp_path: Path) -> None:
    """The manifest of the commit before, same paths, other blobs: no quick answer."""
    vault = tmp_path / "vault"
    aged_sync(vault, "first")
    aged_sync(vault, "second")
    assert unchanged_since_last_sync(vault, INPUTS)
    older = subprocess.run(
        ["git", "log", "--format=%H", "--", MANIFEST], cwd=vault, capture_output=True,
        text=True, check=True,
    ).stdout.split()[1]  # fmt: skip
    restored = subprocess.run(
        ["git", "show", f"{older}:{MANIFEST}"], cwd=vault, capture_output=True, check=True
    ).stdout
    assert restored != (vault / MANIFEST).read_bytes()
    (vault / MANIFEST).write_bytes(restored)
    assert not unchanged_since_last_sync(vault, INPUTS)

"""A manifest a newer vaultsync wrote is refused in one line, never rewritten as an older one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import invoke
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import open_workspace


@pytest.mark.parametrize(("key", "value"), [("schema", 2), ("render_format", 99)])
def test_a_manifest_from_a_newer_vaultsync_is_refused(
    demo_state: Path, tmp_path: Path, key: str, value: int
) -> None:
    """sync and check exit 7 naming the manifest and what to do; its bytes stay as they were."""
    vault = tmp_path / "vault"
    sync(open_workspace(str(demo_state), str(vault)), SyncRequest())
    manifest = vault / ".vaultsync" / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc[key] = value
    manifest.write_text(json.dumps(doc))
    before = manifest.read_bytes()
    (demo_state / "memory" / "topics.json").write_text("[]")  # the stores have news
    where = ["--state", str(demo_state), "--vault", str(vault)]
    for command in ("sync", "check"):
        done = invoke(command, *where)
        assert done.returncode == 7, done.stderr
        assert "newer vaultsync" in done.stderr and "upgrade" in done.stderr
    assert manifest.read_bytes() == before

"""``deploy/kubernetes/hub-cronjob.yaml``: a valid CronJob whose indexes sync every tenant once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubemanifest
import pytest
from helpers import build_tree
from kubemanifest import container

kubernetes_validate = pytest.importorskip("kubernetes_validate")  # the dev extra bundles it

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "deploy" / "kubernetes" / "hub-cronjob.yaml"
SEALED = ROOT / "fixtures" / "stores" / "sealed"
BIN = Path(sys.executable).parent
LONG = "0123456789abcdef0123456789abcdef-long-key"


def cronjob() -> dict[str, Any]:
    return kubemanifest.cronjob(MANIFEST)


def test_shards_match_the_indexes() -> None:
    """Indexed, not run twice at once, and --shard's N is completions and parallelism."""
    job = cronjob()
    spec = job["spec"]["jobTemplate"]["spec"]
    assert job["spec"]["concurrencyPolicy"] == "Forbid"
    shard = re.search(r'--shard "\$JOB_COMPLETION_INDEX/(\d+)"', container(job)["args"][0])
    assert shard is not None
    assert int(shard.group(1)) == spec["completions"] == spec["parallelism"]


def test_the_key_comes_from_a_secret_never_the_manifest() -> None:
    """The at-rest keys are Secret references (optional), no value written in the file."""
    env = {e["name"]: e for e in container(cronjob())["env"]}
    for name in ("CHATCLI_ENCRYPTION_KEY", "CHATCLI_ENCRYPTION_KEY_PREVIOUS"):
        assert "value" not in env[name]
        assert env[name]["valueFrom"]["secretKeyRef"]["optional"] is True


def test_the_indexes_sync_every_tenant_once(tmp_path: Path) -> None:
    """The pod's command, run by sh once per index, syncs the hub and each tenant exactly once."""
    job = cronjob()
    spec = job["spec"]["jobTemplate"]["spec"]
    hub = tmp_path / "hub"
    command = container(job)["args"][0].replace("/srv/chatcli-hub", str(hub))
    tenants = [f"tenants/user{i}-0a1b2c3d" for i in range(4)]
    build_tree(hub, {"memory/memory_index.json": (SEALED / "v2-long-placed.bin").read_bytes()})
    for tenant in tenants:
        build_tree(hub, {f"{tenant}/memory/memory_index.json": "[]"})
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["CHATCLI_ENCRYPTION_KEY"] = LONG
    taken: list[str] = []
    for index in range(spec["completions"]):
        done = subprocess.run(
            [*container(job)["command"], f"{command} --json"],
            env={**env, "JOB_COMPLETION_INDEX": str(index)},
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        taken += [vault["name"] for vault in json.loads(done.stdout)["vaults"]]
    assert sorted(taken) == [".", *tenants]
    assert all((hub / name / "vault" / "Home.md").is_file() for name in tenants)
    assert "sealed fact" in "".join(p.read_text() for p in (hub / "vault").rglob("*.md"))

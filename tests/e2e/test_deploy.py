"""``deploy/kubernetes/cronjob.yaml``: a valid CronJob whose indexes sync every vault once."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubemanifest
import pytest
from kubemanifest import OLDEST, container

kubernetes_validate = pytest.importorskip("kubernetes_validate")  # the dev extra bundles it

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes" / "cronjob.yaml"
HUB_MANIFEST = MANIFEST.parent / "hub-cronjob.yaml"
BIN = Path(sys.executable).parent


def documents() -> list[dict[str, Any]]:
    return kubemanifest.documents(MANIFEST)


def cronjob() -> dict[str, Any]:
    return kubemanifest.cronjob(MANIFEST)


@pytest.mark.parametrize("manifest", [MANIFEST, HUB_MANIFEST], ids=lambda path: path.name)
@pytest.mark.parametrize("version", [OLDEST, kubernetes_validate.latest_version()])
def test_every_resource_is_valid(manifest: Path, version: str) -> None:
    """Each resource of both manifests passes the schemas of that Kubernetes version, strictly."""
    for document in kubemanifest.documents(manifest):
        kubernetes_validate.validate(document, version, strict=True)


def test_validation_is_strict() -> None:
    """A misspelt field fails the validation the test above relies on."""
    job = copy.deepcopy(cronjob())
    job["spec"]["jobTemplate"]["spec"]["paralelism"] = 4
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, OLDEST, strict=True)


def test_shards_match_the_indexes() -> None:
    """Indexed, not run twice at once, and --shard's N is completions and parallelism."""
    job = cronjob()
    spec = job["spec"]["jobTemplate"]["spec"]
    assert job["spec"]["concurrencyPolicy"] == "Forbid"
    assert spec["completionMode"] == "Indexed"
    shard = re.search(r'--shard "\$JOB_COMPLETION_INDEX/(\d+)"', container(job)["args"][0])
    assert shard is not None
    assert int(shard.group(1)) == spec["completions"] == spec["parallelism"]


def test_the_root_is_the_claimed_volume() -> None:
    """--each's ROOT is where the PersistentVolumeClaim of the same file is mounted."""
    job = cronjob()
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    claim = next(d for d in documents() if d["kind"] == "PersistentVolumeClaim")
    volume = next(v for v in pod["volumes"] if "persistentVolumeClaim" in v)
    assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    mount = next(m for m in container(job)["volumeMounts"] if m["name"] == volume["name"])
    assert f"--each {mount['mountPath']} " in container(job)["args"][0]


def test_the_indexes_sync_every_vault_once(tmp_path: Path) -> None:
    """The pod's command, run by sh once per index, syncs each state directory exactly once."""
    job = cronjob()
    spec = job["spec"]["jobTemplate"]["spec"]
    command = container(job)["args"][0].replace("/srv/chatcli", str(tmp_path / "root"))
    names = [f"telegram/{i}" for i in range(5)]
    for name in names:
        memory = tmp_path / "root" / name / "memory"
        memory.mkdir(parents=True)
        when = "2026-11-01T10:00:00Z"
        fact = {"id": f"{name[-1]}".ljust(24, "a"), "content": f"fact of {name}",
                "category": "general", "created_at": when, "last_accessed": when,
                "access_count": 0, "score": 1.0}  # fmt: skip
        (memory / "memory_index.json").write_text(json.dumps([fact]), encoding="utf-8")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    taken: list[str] = []
    for index in range(spec["completions"]):
        done = subprocess.run(
            [*container(job)["command"], f"{command} --json"],
            env={**env, "JOB_COMPLETION_INDEX": str(index)},
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        taken += [vault["name"] for vault in json.loads(done.stdout)["vaults"]]
    assert sorted(taken) == names
    assert all((tmp_path / "root" / name / "vault" / "Home.md").is_file() for name in names)

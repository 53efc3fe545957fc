"""The Kubernetes manifests under ``deploy/kubernetes``, read as the deploy tests read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

OLDEST = "1.33"
"""The oldest Kubernetes the manifests are for: ``backoffLimitPerIndex`` is GA from 1.33."""


def documents(manifest: Path) -> list[dict[str, Any]]:
    """Every resource of a manifest file."""
    return list(YAML(typ="safe").load_all(manifest.read_text(encoding="utf-8")))


def cronjob(manifest: Path) -> dict[str, Any]:
    """The manifest's CronJob."""
    return next(d for d in documents(manifest) if d["kind"] == "CronJob")


def container(job: dict[str, Any]) -> dict[str, Any]:
    """The CronJob's one container."""
    containers: list[dict[str, Any]] = job["spec"]["jobTemplate"]["spec"]["template"]["spec"][
        "containers"
    ]
    return containers[0]

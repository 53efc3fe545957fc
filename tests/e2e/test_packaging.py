"""The installed package: one import root over the card's folders, nothing left out."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

from helpers import ROOT


def _setuptools() -> dict[str, object]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(data["tool"]["setuptools"])


def test_every_package_folder_is_listed() -> None:
    """Each folder of pipeline/ with an ``__init__.py`` is installed as a ``vaultsync`` package."""
    folders = {
        ".".join(("vaultsync", *init.parent.relative_to(ROOT / "pipeline").parts))
        for init in (ROOT / "pipeline").rglob("__init__.py")
    }
    assert folders | {"vaultsync.renderers", "vaultsync.templates"} == set(
        _setuptools()["packages"]  # type: ignore[call-overload]
    )


def test_card_folders_map_under_one_root() -> None:
    """``pipeline/``, ``renderers/``, ``templates/`` import as ``vaultsync`` and two subpackages."""
    for name, folder in (
        ("vaultsync", "pipeline"),
        ("vaultsync.renderers", "renderers"),
        ("vaultsync.templates", "templates"),
    ):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        assert spec.origin == str(ROOT / folder / "__init__.py")


def test_no_generic_top_level_names(tmp_path: Path) -> None:
    """Nothing installs as a bare ``pipeline``, ``renderers`` or ``templates`` package."""
    names = "('pipeline', 'renderers', 'templates')"
    code = f"import importlib.util as u; print([u.find_spec(n) for n in {names}])"
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "[None, None, None]"

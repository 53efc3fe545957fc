"""vaultsync.core.digest: the code fingerprint sees every code file once, under one name."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from vaultsync.core import digest


def _package(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n", encoding="utf-8")


@pytest.fixture
def nested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A wheel-like layout: the sub-package lies inside the top package's folder."""
    _package(
        tmp_path / "fakepkg",
        ["__init__.py", "core.py", "sub/__init__.py", "sub/page.j2", "__pycache__/core.py"],
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(digest, "_CODE_PACKAGES", ("fakepkg", "fakepkg.sub"))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("fakepkg")]:
        del sys.modules[name]


def test_nested_package_files_are_named_by_their_own_package(nested: Path) -> None:
    """A file of the inner package is listed once, under the inner package's name."""
    assert sorted(digest._code_files()) == [
        "fakepkg.sub:__init__.py",
        "fakepkg.sub:page.j2",
        "fakepkg:__init__.py",
        "fakepkg:core.py",
    ]


def test_fingerprint_follows_a_code_file(nested: Path) -> None:
    """Editing one code file changes the digest; a stray ``__pycache__`` file does not."""
    files = digest._code_files()
    before = digest.files_digest((n, files[n]) for n in sorted(files))
    (nested / "fakepkg" / "__pycache__" / "core.py").write_text("y = 2\n", encoding="utf-8")
    files = digest._code_files()
    assert digest.files_digest((n, files[n]) for n in sorted(files)) == before
    (nested / "fakepkg" / "sub" / "page.j2").write_text("{{ x }}\n", encoding="utf-8")
    files = digest._code_files()
    assert digest.files_digest((n, files[n]) for n in sorted(files)) != before


def test_installed_package_lists_renderers_and_templates() -> None:
    """The installed vaultsync names its renderers and templates by their own packages."""
    names = digest._code_files()
    assert "vaultsync.renderers:fact.py" in names
    assert any(n.startswith("vaultsync.templates:") and n.endswith(".j2") for n in names)
    assert not any("__pycache__" in n for n in names)

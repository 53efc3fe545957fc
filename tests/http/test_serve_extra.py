"""FastAPI and uvicorn are the ``serve`` extra: only the API modules import them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Run first in each child process: any import of these modules fails as if not installed.
BLOCK = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = {blocked!r}


class Refuse(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, Refuse())
"""

IMPORT_ALL = """
import importlib, pkgutil, sys
import vaultsync

SKIP = {"vaultsync.__main__", "vaultsync.http.api", "vaultsync.http.guard",
        "vaultsync.http.limits", "vaultsync.http.schemas"}
names = sorted(
    info.name for info in pkgutil.walk_packages(vaultsync.__path__, "vaultsync.")
    if info.name not in SKIP
)
for name in names:
    importlib.import_module(name)
print(len(names))
"""

SERVE = """
sys.argv = ["vaultsync", "serve", "--state", {state!r}]
from vaultsync.cli.main import main
main()
"""

EXTRA = ("fastapi", "uvicorn", "starlette", "pydantic")


def child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_every_other_module_imports_without_the_extra() -> None:
    """With FastAPI, uvicorn, Starlette and pydantic refused, every non-API module imports."""
    done = child(BLOCK.format(blocked=EXTRA) + IMPORT_ALL)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 80  # the walk found the package's modules, not nothing


def test_the_blocker_does_block() -> None:
    """The API module itself cannot be imported under the blocker (the test above can fail)."""
    done = child(BLOCK.format(blocked=EXTRA) + "import vaultsync.http.api\n")
    assert done.returncode == 1
    assert "No module named 'fastapi'" in done.stderr


def test_serve_without_the_extra_says_how_to_install_it(tmp_path: Path) -> None:
    """``vaultsync serve`` without uvicorn: exit 3 and the install command as the hint."""
    done = child(BLOCK.format(blocked=EXTRA) + SERVE.format(state=str(tmp_path)))
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        "error: vaultsync serve needs uvicorn, which is not installed",
        "hint: install the serve extra: pip install 'vaultsync[serve]'",
    ]


def test_serve_without_fastapi_names_it(tmp_path: Path) -> None:
    """With uvicorn there but FastAPI missing, the error names FastAPI."""
    done = child(BLOCK.format(blocked=("fastapi",)) + SERVE.format(state=str(tmp_path)))
    assert done.returncode == 3
    assert done.stderr.startswith("error: vaultsync serve needs fastapi, which is not installed")
    assert "pip install 'vaultsync[serve]'" in done.stderr

"""Shared test helpers (no tests, no fixtures): paths to bundled and shared data, small trees."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import sys
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def docs_text() -> str:
    """The README and every page of the documentation site, one after the other."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


DEMO_STORE = ROOT / "fixtures" / "stores" / "demo"
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"


@functools.cache
def demo_builder() -> ModuleType:
    path = ROOT / "fixtures" / "stores" / "build_demo.py"
    spec = importlib.util.spec_from_file_location("build_demo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def corpus(name: str) -> Path:
    """A third-party corpus from ../shared/corpora, or skip the test when it is absent."""
    path = CORPORA / name
    if not path.is_dir():
        pytest.skip(f"corpus {name} not available (../shared is absent)")
    return path


def build_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write ``{relpath: text or bytes}`` under ``root`` and return ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def dumps(value: object) -> str:
    """Indented JSON, as ChatCLI writes its stores."""
    return json.dumps(value, indent=2)


@contextmanager
def serving(app: Any, config: Any = None) -> Iterator[str]:
    """Run ``app`` with uvicorn on 127.0.0.1 and a free port; yield its base URL.

    ``config``: a ``uvicorn.Config`` of the test's own (``serve``'s, say); else a plain one.
    """
    import uvicorn

    config = config or uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# Kept in a child's environment by ``clean_env``: the tiny model and no background embedder,
# so that no test leaves the packaged model loading behind it.
KEPT = ("VAULTSYNC_EMBED_MODEL", "VAULTSYNC_EMBED_BACKGROUND")


def clean_env(dropped: tuple[str, ...] = ("VAULTSYNC_", "CHATCLI_")) -> dict[str, str]:
    """This environment without the variables starting with ``dropped``, but the ``KEPT`` ones."""
    return {k: v for k, v in os.environ.items() if k in KEPT or not k.startswith(dropped)}


@dataclass(frozen=True, slots=True)
class Done:
    """A run of the command line: exit code, stdout, stderr."""

    returncode: int
    stdout: str
    stderr: str


def invoke(*args: str, env: Mapping[str, str | None] | None = None) -> Done:
    """``vaultsync ARGS`` in-process through the CLI group (a traceback fails the test)."""
    from click.testing import CliRunner
    from vaultsync.cli.main import cli

    result = CliRunner().invoke(cli, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)


def wait_for_pid(marker: Path) -> int:
    """The pid a helper wrote to ``marker``, once it started.

    A helper that never starts fails the test after a minute instead of hanging it (a guard,
    not a measure of speed).
    """
    give_up = time.monotonic() + 60
    while not marker.exists() or not marker.read_text():
        if time.monotonic() > give_up:
            pytest.fail("the helper never started")
        time.sleep(0.01)
    return int(marker.read_text())


def assert_reaped(pid: int) -> None:
    """``pid`` is no child of this process any more: it ended and was waited for."""
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def wait_for_packer(vault: Path) -> None:
    """Wait for the git packer this process started in ``vault`` to end (no duration asserted)."""
    from vaultsync.vault.housekeeping import pack_job

    try:
        status = json.loads(pack_job(vault).status.read_bytes())
    except FileNotFoundError:
        return  # ended already, and well
    if status.get("state") != "started":
        return  # ended already, and recorded how it failed (that record holds no pid)
    with contextlib.suppress(ChildProcessError):  # already reaped
        os.waitpid(status["pid"], 0)


class Made:
    """A value a run made: weakly referable, to see when it is freed."""


def outlived(monkeypatch: pytest.MonkeyPatch, *, big_run: bool = True) -> weakref.ref[Made]:
    """A value given to ``process.outlive`` and dropped (after a big run, or not): its weak ref."""
    from vaultsync.core import process

    monkeypatch.setattr(process, "leave_fast", big_run)
    monkeypatch.setattr(process, "_outliving", [])
    made = Made()
    process.outlive(made)
    return weakref.ref(made)

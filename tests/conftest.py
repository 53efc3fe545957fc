"""Shared fixtures: an isolated git environment and a fresh copy of the demo store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import demo_builder
from hypothesis import HealthCheck, settings

# No timed assertion in the suite, hypothesis's included: on 2 shared, loaded cores a draw or an
# example may take seconds, which says nothing about the code (a run failed on too_slow).
settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("untimed")

_TINY: list[Path] = []
_RULES: list[Path] = []


def _rule_cache(factory: pytest.TempPathFactory) -> Path:
    """One folder for the secret scanner's compiled rules, shared by the whole run.

    Every test has a HOME of its own, so each ``vaultsync`` process would compile the
    scanner's rules anew (about 3 s); with the compiled rules kept, a process loads them in
    about 0.3 s, as on a user's machine after the first run.
    """
    if not _RULES:
        folder = factory.getbasetemp().parent / "kingfisher-rules"
        folder.mkdir(mode=0o700, exist_ok=True)
        _RULES.append(folder)
    return _RULES[0]


def _tiny_model(factory: pytest.TempPathFactory) -> Path:
    """The tiny static model of ``tiny_model`` (built once per session), or a missing folder.

    Every search in the tests embeds with it (the semantic extra is in ``dev``, so hybrid is
    the default mode): a load takes milliseconds, where the packaged model takes seconds.
    """
    if not _TINY:
        folder = factory.mktemp("tiny-model")
        try:
            from tiny_model import build_model

            build_model(folder)
        except ImportError:  # no semantic extra: searches default to text
            pass
        _TINY.append(folder)
    return _TINY[0]


def _isolate(monkeypatch: pytest.MonkeyPatch, factory: pytest.TempPathFactory) -> None:
    """The same git identity, no user or system git configuration, no vaultsync settings from
    the environment, the tiny embedding model and no background job, in a HOME of its own."""
    home = factory.mktemp("home")
    config = home / ".gitconfig"
    config.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n"
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("VAULTSYNC_EMBED_MODEL", str(_tiny_model(factory)))
    monkeypatch.setenv("KF_RULE_CACHE_DIR", str(_rule_cache(factory)))
    # No test starts the background embedder unless it asks for it.
    monkeypatch.setenv("VAULTSYNC_EMBED_BACKGROUND", "0")
    for var in (
        "VAULTSYNC_STATE_DIR",
        "CHATCLI_STATE_DIR",
        "VAULTSYNC_VAULT_DIR",
        "CHATCLI_MEMORY_VAULT_DIR",
        "VAULTSYNC_JOBS",
        "VAULTSYNC_CACHE_DIR",
        "XDG_CACHE_HOME",
        "CHATCLI_BOARD_PATH",
        "VAULTSYNC_SKILLS_EXTRA_FOLDERS",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session", autouse=True)
def isolated_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Module- and session-scoped fixtures (a served app, a synced vault) are set up before any
    test's own isolation: they get the same, or they would start the embedder in the background
    and read the machine's HOME."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch, tmp_path_factory)
        yield


@pytest.fixture(autouse=True)
def isolated_git(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every test is isolated as :func:`_isolate` says, in a HOME of its own."""
    _isolate(monkeypatch, tmp_path_factory)
    yield


@pytest.fixture
def demo_state(tmp_path: Path) -> Path:
    """A fresh copy of the demo store, rebuilt by its script (a test may change it)."""
    target = tmp_path / "demo-state"
    demo_builder().main(["--out", str(target), "--quiet"])
    return target

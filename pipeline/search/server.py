"""``vaultsync serve``: run the vault API with uvicorn, loopback unless a token guards it; shell.

Rules (the issue left the token's scope open; decided here):

* The default address is ``127.0.0.1``.  Any address that is not loopback (``0.0.0.0``, a LAN
  address, a host name other than ``localhost``) is **refused unless ``VAULTSYNC_API_TOKEN`` is
  set** (a ``ConfigError``, exit 3).
* When the token is set, **every route** needs ``Authorization: Bearer <token>``, on loopback
  too, except ``/openapi.json`` and ``/docs``, which describe the API and hold no vault data.
* Without a token the server only answers requests whose ``Host`` is a loopback name
  (``127.0.0.1``, ``localhost``, ``::1``): a web page cannot reach it through DNS rebinding.

FastAPI and uvicorn are the ``serve`` extra (``pip install 'vaultsync[serve]'``), imported only
here, when serving: without them ``vaultsync serve`` is a ``ConfigError`` (exit 3) whose hint
is the install command, and every other command works.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.core.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["LOOPBACK_NAMES", "SERVE_INSTALL", "TOKEN_ENV", "check_binding", "make_app", "run"]

TOKEN_ENV = "VAULTSYNC_API_TOKEN"  # noqa: S105 - the variable's name, not a secret
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SERVE_INSTALL = "pip install 'vaultsync[serve]'"
_SERVE_MODULES = frozenset({"fastapi", "starlette", "pydantic", "uvicorn"})
"""What the serve extra brings that vaultsync imports (FastAPI with Starlette and pydantic)."""


@contextlib.contextmanager
def _serve_extra() -> Iterator[None]:
    """A module of the serve extra missing becomes a ``ConfigError`` with the install hint."""
    try:
        yield
    except ModuleNotFoundError as err:
        if (err.name or "").partition(".")[0] not in _SERVE_MODULES:
            raise
        raise ConfigError(
            f"vaultsync serve needs {err.name}, which is not installed",
            hint=f"install the serve extra: {SERVE_INSTALL}",
        ) from err


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) can only be reached from this machine."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_binding(host: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The token to require, or None; raises ``ConfigError`` for a guarded address without one."""
    env = os.environ if environ is None else environ
    token = env.get(TOKEN_ENV, "").strip() or None
    if not is_loopback(host) and token is None:
        raise ConfigError(
            f"refusing to serve on {host!r} without a token: only loopback is open",
            hint=f"set {TOKEN_ENV} (clients then send Authorization: Bearer <token>)",
        )
    return token


def allowed_hosts(host: str, token: str | None) -> frozenset[str] | None:
    """The ``Host`` names to answer: loopback names when unguarded on loopback, else any."""
    if token is not None:
        return None
    return LOOPBACK_NAMES | {host.strip().strip("[]").lower()}


def make_app(
    vault: Path,
    state: Path,
    *,
    host: str,
    refresh: float,
    environ: Mapping[str, str] | None = None,
) -> FastAPI:
    """The app ``run`` serves on ``host``, with the token and host rules applied.

    Raises ``ConfigError`` when the serve extra (FastAPI) is not installed.
    """
    with _serve_extra():
        from vaultsync.search.api import create_app  # noqa: PLC0415 - FastAPI loads only to serve

    token = check_binding(host, environ)
    if not vault.is_dir():
        raise UsageError(f"{vault}: no vault here", hint="run `vaultsync sync` first")
    return create_app(
        vault, state, token=token, allowed_hosts=allowed_hosts(host, token), refresh=refresh
    )


def run(vault: Path, state: Path, *, host: str, port: int, refresh: float) -> None:
    """Serve until interrupted (see the module docstring for the rules).

    Raises ``ConfigError`` when the serve extra (uvicorn, FastAPI) is not installed.
    """
    with _serve_extra():
        import uvicorn  # noqa: PLC0415 - loaded only when serving

    app = make_app(vault, state, host=host, refresh=refresh)
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=False)

"""``vaultsync serve``: run the vault API with uvicorn, behind a token by default; shell.

Rules:

* **A token is required by default**, on loopback too: another local user must not read the
  notes or draw links.  It is ``$VAULTSYNC_API_TOKEN`` when set, else the vault's own
  ``.vaultsync/api-token`` (created ``0600`` on first use, never committed:
  :mod:`vaultsync.http.auth`).  Every path needs ``Authorization: Bearer <token>`` or the
  browser's session cookie; ``serve`` prints a one-time URL (``/auth?once=<nonce>``) that sets
  that cookie and opens ``/docs``.
* ``--no-auth`` (``auth=False``) turns it off, **only on loopback** (anywhere else a
  ``ConfigError``, exit 3).
* The default address is ``127.0.0.1``.  Any address that is not loopback (``0.0.0.0``, a LAN
  address, a host name other than ``localhost``) is **refused unless ``VAULTSYNC_API_TOKEN`` is
  set** (a ``ConfigError``, exit 3): the stored token is for this machine; exposing the vault
  to a network is a choice made by naming its token.
* On loopback the server only answers requests whose ``Host`` is a loopback name
  (``127.0.0.1``, ``localhost``, ``::1``): a web page cannot reach it through DNS rebinding.

FastAPI and uvicorn are the ``serve`` extra (``pip install 'vaultsync[serve]'``), imported only
here, when serving: without them ``vaultsync serve`` is a ``ConfigError`` (exit 3) whose hint
is the install command, and every other command works.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.core.environment import read_environment
from vaultsync.core.errors import ConfigError, UsageError
from vaultsync.http.auth import LOGIN_PATH, TOKEN_FILE, BrowserLogin, vault_token

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

__all__ = [
    "LOOPBACK_NAMES",
    "SERVE_INSTALL",
    "TOKEN_ENV",
    "check_binding",
    "greeting",
    "make_app",
    "run",
]

TOKEN_ENV = "VAULTSYNC_API_TOKEN"  # noqa: S105 - the variable's name, not a secret
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SERVE_INSTALL = "pip install 'vaultsync[serve]'"
_SERVE_MODULES = frozenset({"fastapi", "fastapi_offline", "starlette", "pydantic", "uvicorn"})
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


def check_binding(
    host: str, environ: Mapping[str, str] | None = None, *, auth: bool = True
) -> str | None:
    """The token ``$VAULTSYNC_API_TOKEN`` gives, or None; raises ``ConfigError`` when refused.

    Refused: an address that is not loopback without that token, or with ``auth`` off.
    """
    token = read_environment(environ).api_token.strip() or None
    if not auth and not is_loopback(host):
        raise ConfigError(
            f"refusing --no-auth on {host!r}: only loopback may be served without a token",
            hint="drop --no-auth, or serve on 127.0.0.1",
        )
    if not is_loopback(host) and token is None:
        raise ConfigError(
            f"refusing to serve on {host!r} without a token: only loopback is open",
            hint=f"set {TOKEN_ENV} (clients then send Authorization: Bearer <token>)",
        )
    return token if auth else None


def allowed_hosts(host: str) -> frozenset[str] | None:
    """The ``Host`` names to answer: loopback names when serving on loopback, else any."""
    if not is_loopback(host):
        return None
    return LOOPBACK_NAMES | {host.strip().strip("[]").lower()}


def make_app(
    vault: Path,
    state: Path,
    *,
    host: str,
    refresh: float,
    auth: bool = True,
    environ: Mapping[str, str] | None = None,
) -> FastAPI:
    """The app ``run`` serves on ``host``, with the token, cookie and host rules applied.

    With ``auth``, ``app.state.login`` is the run's :class:`BrowserLogin` (else ``None``).
    Raises ``ConfigError`` when the serve extra (FastAPI) is not installed or the address is
    refused, ``VaultWriteError`` when the token file cannot be read or created.
    """
    with _serve_extra():
        from vaultsync.http.api import create_app

    token = check_binding(host, environ, auth=auth)
    if not vault.is_dir():
        raise UsageError(f"{vault}: no vault here", hint="run `vaultsync sync` first")
    if auth and token is None:
        token = vault_token(vault)
    login = BrowserLogin() if token is not None else None
    app = create_app(
        vault,
        state,
        token=token,
        allowed_hosts=allowed_hosts(host),
        login=login,
        refresh=refresh,
    )
    app.state.login = login
    return app


def _base_url(host: str, port: int) -> str:
    name = host.strip().strip("[]")
    return f"http://[{name}]:{port}" if ":" in name else f"http://{name}:{port}"


def greeting(base: str, vault: Path, login: BrowserLogin | None, *, env_token: bool) -> str:
    """What ``serve`` prints once it listens: where, and how a browser and a client get in."""
    if login is None:
        pages = "docs at /docs, graph view at /graph"
        return f"serving {vault} on {base} ({pages}), no auth: any local user can read it"
    where = f"${TOKEN_ENV}" if env_token else f"the token in {vault / TOKEN_FILE}"
    return "\n".join(
        (
            f"serving {vault} on {base} (docs at /docs, graph view at /graph)",
            f"  browser, open once: {base}{LOGIN_PATH}?once={login.nonce}",
            f"  API clients send:   Authorization: Bearer <{where}>",
        )
    )


def uvicorn_config(
    app: FastAPI, *, host: str, port: int, log_level: str = "info", header_timeout_s: float = 0
) -> uvicorn.Config:
    """How ``serve`` runs uvicorn: no proxy headers, a deadline for each request's headers."""
    import uvicorn
    from vaultsync.http.limits import HEADER_TIMEOUT_S, header_deadline

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        proxy_headers=False,
        http=header_deadline(header_timeout_s or HEADER_TIMEOUT_S),
    )


def _server(config: uvicorn.Config, announce: Callable[[int], None]) -> uvicorn.Server:
    """A uvicorn server that calls ``announce(port)`` once it listens (``port`` 0 included)."""
    import uvicorn

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and self.servers and self.servers[0].sockets:
                announce(int(self.servers[0].sockets[0].getsockname()[1]))

    return Announcing(config)


def run(
    vault: Path,
    state: Path,
    *,
    host: str,
    port: int,
    refresh: float,
    auth: bool = True,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve until interrupted (see the module docstring for the rules); ``echo`` the greeting.

    Raises ``ConfigError`` when the serve extra (uvicorn, FastAPI) is not installed.
    """
    with _serve_extra():
        import uvicorn  # noqa: F401 - asked for first, so its absence is the one named

    app = make_app(vault, state, host=host, refresh=refresh, auth=auth)
    login: BrowserLogin | None = app.state.login
    env_token = bool(read_environment().api_token.strip())
    config = uvicorn_config(app, host=host, port=port)
    server = _server(
        config,
        lambda bound: echo(greeting(_base_url(host, bound), vault, login, env_token=env_token)),
    )
    server.run()

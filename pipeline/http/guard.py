"""Every error of the vault API as JSON, and the guard in front of it; shell (ASGI).

Contract: ``guard(app, token=…, allowed_hosts=…)`` installs

* exception handlers so that **every** error, each 4xx and 5xx, has one JSON shape:
  ``{"detail", "code", "hint", "candidates", "errors"}`` (``ErrorOut``).  ``detail`` is one
  line; an invalid input (422, code ``invalid_request``) lists each field in ``errors`` (``loc``,
  ``msg``, ``type``, never the input itself); a body that is not JSON is a 400 (``bad_json``).
  ``VaultsyncError`` classes map to statuses in ``STATUS`` (400 an unknown doc type, 404 no
  such note, 409 ambiguous or refused, 422 bad input, 503 index or store unavailable); SQLite
  errors are 503; anything unexpected is a logged 500 that says no more;
* a middleware that refuses a request whose ``Host`` is not an allowed name (421: a web page
  reaching a loopback server through DNS rebinding) and, when a token is set, one that has
  neither ``Authorization: Bearer <token>`` nor the browser session cookie (401, one line of
  JSON), on every path, the API's documents (``/docs``, ``/openapi.json``) included, except
  ``/auth``: with a ``login`` (``vaultsync.http.auth.BrowserLogin``), ``GET
  /auth?once=<nonce>`` sets the cookie (``HttpOnly; SameSite=Strict``) and redirects to
  ``/docs``, once.  The cookie counts only for a request from the server's own origin (an
  ``Origin`` header, if any, naming it; required for anything but ``GET``/``HEAD``): another
  port of the same host is the same *site* to a browser, so ``SameSite`` alone would let a page
  served there post links here;
* a middleware that answers ``HEAD`` on every path as ``GET`` would, with the same status and
  headers (``Content-Length`` included) and no body;
* the OpenAPI document's error answers: every operation, whoever adds it, lists each status of
  ``ERRORS`` with the ``ErrorOut`` schema (FastAPI's own 422 shape, ``HTTPValidationError``, is
  replaced and never appears).
"""

from __future__ import annotations

import hmac
import json
import logging
import sqlite3
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from vaultsync.core.errors import (
    ConfigError,
    LinkStoreError,
    NoteReferenceError,
    StoreError,
    UnknownKindError,
    UsageError,
    VaultsyncError,
    VaultWriteError,
)
from vaultsync.http.auth import LOGIN_PATH, BrowserLogin, cookie_name
from vaultsync.http.limits import BodyLimit
from vaultsync.http.schemas import ErrorOut, FieldErrorOut
from vaultsync.search.reader import IndexNotReady

__all__ = ["ERRORS", "STATUS", "AmbiguousReference", "guard"]

LOG = logging.getLogger("vaultsync.api")
_UNAUTHORIZED = (
    "a bearer token is required",
    "send Authorization: Bearer <token> (the vault's .vaultsync/api-token, or $VAULTSYNC_API_TOKEN)"
    " or open the one-time URL `vaultsync serve` printed",
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]


class AmbiguousReference(NoteReferenceError):
    """A link end could mean several notes (``find_note`` strict refused it)."""


class _AsciiJSON(JSONResponse):
    """JSON with non-ASCII escaped: an error may quote input holding a lone surrogate."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _error(
    status: int,
    code: str,
    detail: str,
    hint: str | None = None,
    *,
    candidates: Iterable[str] = (),
    errors: Iterable[FieldErrorOut] = (),
) -> JSONResponse:
    body = ErrorOut(
        detail=detail, code=code, hint=hint, candidates=list(candidates), errors=list(errors)
    ).model_dump()
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return _AsciiJSON(body, status_code=status, headers=headers)


def _field_error(error: Any) -> FieldErrorOut:
    loc = [part if isinstance(part, int) else str(part) for part in error.get("loc", ())]
    return FieldErrorOut(loc=loc, msg=str(error.get("msg", "")), type=str(error.get("type", "")))


def _invalid(_: Request, exc: Exception) -> JSONResponse:
    """A 422 naming each invalid field (without echoing the input back); 400 for broken JSON."""
    assert isinstance(exc, RequestValidationError)  # noqa: S101 - registered for this class
    errors = [_field_error(e) for e in exc.errors()]
    if any(e.type == "json_invalid" for e in errors):
        return _error(400, "bad_json", "the request body is not valid JSON")
    first = errors[0] if errors else FieldErrorOut(loc=[], msg="invalid request", type="")
    where = ".".join(str(part) for part in first.loc)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    detail = f"{where}: {first.msg}{more}" if where else f"{first.msg}{more}"
    return _error(422, "invalid_request", detail, errors=errors)


HTTP_CODES = {400: "bad_json", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}
"""The ``code`` of the errors starlette raises itself (a body it cannot parse is a 400)."""


def error_response(status: int, code: str, detail: str) -> JSONResponse:
    """An error in the one shape of every other (for the ASGI middlewares)."""
    return _error(status, code, detail)


def _http_error(_: Request, exc: Exception) -> JSONResponse:
    """Starlette's own errors (no such route, wrong method) in the shape of every other one."""
    assert isinstance(exc, StarletteHTTPException)  # noqa: S101 - registered for this class
    code = HTTP_CODES.get(exc.status_code, "http_error")
    response = _error(exc.status_code, code, str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    LOG.error("unexpected error", exc_info=exc)
    return _error(500, "internal", "internal error; the server log has the details")


STATUS: tuple[tuple[type[VaultsyncError], int, str], ...] = (
    (AmbiguousReference, 409, "ambiguous_reference"),
    (NoteReferenceError, 404, "not_found"),
    (IndexNotReady, 503, "index_not_ready"),
    (UnknownKindError, 400, "unknown_doc_type"),
    (UsageError, 422, "invalid_request"),
    (LinkStoreError, 409, "link_refused"),
    (StoreError, 503, "store_unreadable"),
    (ConfigError, 503, "misconfigured"),
    (VaultWriteError, 503, "index_unwritable"),
)


def _vaultsync_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, VaultsyncError)  # noqa: S101 - registered for this class only
    status, code = next(
        ((s, c) for kind, s, c in STATUS if isinstance(exc, kind)), (400, "refused")
    )
    candidates = [str(c) for c in getattr(exc, "candidates", ())]
    return _error(status, code, exc.message, exc.hint, candidates=candidates)


def _sqlite_error(_: Request, exc: Exception) -> JSONResponse:
    LOG.warning("search index error: %s", exc)
    return _error(503, "index_unavailable", "the search index is unavailable; retry shortly")


def _hostname(header: str) -> str:
    if header.startswith("["):
        return header[1 : header.find("]")].lower()
    return header.rpartition(":")[0].lower() if header.count(":") == 1 else header.lower()


def _cookies(header: str) -> dict[str, str]:
    pairs = (part.strip().partition("=") for part in header.split(";"))
    return {name: value for name, _, value in pairs if name}


def _same_origin(method: str, headers: dict[str, str]) -> bool:
    """Whether a browser request comes from this server's own pages (see the module doc)."""
    origin = headers.get("origin")
    if origin is None:
        return method in ("GET", "HEAD")
    return origin == f"http://{headers.get('host', '')}"


class _Guard:
    """ASGI middleware: refuse a foreign ``Host`` (DNS rebinding) and a request not authorized."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        hosts: frozenset[str] | None,
        login: BrowserLogin | None,
    ) -> None:
        self.app, self.token, self.hosts, self.login = app, token, hosts, login

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        answer: Response | None = None
        if self.hosts is not None and _hostname(headers.get("host", "")) not in self.hosts:
            answer = _error(421, "wrong_host", "this server answers only on its own address")
        elif self.token is None:
            answer = None
        elif scope["path"] == LOGIN_PATH:
            answer = self._log_in(scope)
        elif not self._authorized(scope, headers):
            answer = _error(401, "unauthorized", *_UNAUTHORIZED)
        if answer is not None:
            head = scope["method"] == "HEAD"
            await answer(scope, receive, _headers_only(send) if head else send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope, headers: dict[str, str]) -> bool:
        """The bearer token, or this run's session cookie on a request from its own origin."""
        scheme, _, given = headers.get("authorization", "").strip().partition(" ")
        # The scheme is case-insensitive (RFC 7235); the token is compared in constant time.
        if scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), f"{self.token}".encode()
        ):
            return True
        session = _cookies(headers.get("cookie", "")).get(cookie_name(_port(scope)))
        return (
            session is not None
            and self.login is not None
            and self.login.admits(session)
            and _same_origin(scope["method"], headers)
        )

    def _log_in(self, scope: Scope) -> JSONResponse | RedirectResponse:
        """``GET /auth?once=<nonce>``: the session cookie and a redirect to ``/docs``, once."""
        query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
        once = (query.get("once") or [""])[0]
        if scope["method"] != "GET" or self.login is None or not self.login.redeem(once):
            return _error(
                401,
                "unauthorized",
                "this login link is not valid or was used already",
                "restart `vaultsync serve` for a new one, or send Authorization: Bearer <token>",
            )
        response = RedirectResponse("/docs", status_code=303)
        response.set_cookie(
            cookie_name(_port(scope)),
            self.login.session,
            path="/",
            httponly=True,
            samesite="strict",
        )
        return response


def _port(scope: Scope) -> int:
    server = scope.get("server") or ("", 0)
    return int(server[1] or 0)


def _headers_only(
    send: Callable[[Message], Awaitable[None]],
) -> Callable[[Message], Awaitable[None]]:
    """``send`` for an answer to ``HEAD``: the status and headers go out, the body does not."""

    async def headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return headers_only


class _HeadAsGet:
    """ASGI middleware: ``HEAD`` runs as ``GET``, answered with ``_headers_only``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        await self.app({**scope, "method": "GET"}, receive, _headers_only(send))


ERRORS: dict[int, str] = {
    400: "An unknown doc type, or a body that is not JSON",
    401: "No token, or a wrong one",
    404: "No such note, or no such route",
    405: "The route does not answer this method",
    409: "An ambiguous note reference, or a refused link",
    413: "The request body is over 1 MiB",
    421: "The Host header names another server",
    422: "Invalid input: each field in errors",
    503: "The search index or a store is unavailable; retry",
}
"""The error statuses the OpenAPI document lists for every operation, all with ``ErrorOut``."""


def _error_schemas() -> dict[str, Any]:
    """``ErrorOut`` and the models it uses, as OpenAPI component schemas."""
    schema = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas: dict[str, Any] = schema.pop("$defs", {})
    schemas["ErrorOut"] = schema
    return schemas


def _document_errors(app: FastAPI) -> None:
    """Make ``app.openapi()`` list ``ERRORS`` as ``ErrorOut`` on every operation."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = generate()
        components = spec.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.pop(name, None)
        components.update(_error_schemas())
        content = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
        for route in spec.get("paths", {}).values():
            for operation in route.values():
                answers = operation.setdefault("responses", {})
                for status, description in ERRORS.items():
                    answers[str(status)] = {"description": description, "content": content}
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


def guard(
    app: FastAPI,
    *,
    token: str | None,
    allowed_hosts: Iterable[str] | None,
    login: BrowserLogin | None = None,
) -> None:
    """Install the JSON errors (handlers and OpenAPI), the host, token and cookie guard, HEAD."""
    hosts = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
    # The guard is outermost (added last): it sees the real method, so a HEAD (a link
    # preview's) never spends the one-time login, which only a GET redeems.
    app.add_middleware(BodyLimit)
    app.add_middleware(_HeadAsGet)
    app.add_middleware(_Guard, token=token or None, hosts=hosts, login=login)
    _document_errors(app)
    app.add_exception_handler(VaultsyncError, _vaultsync_error)
    app.add_exception_handler(sqlite3.Error, _sqlite_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)

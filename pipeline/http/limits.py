"""What one client may cost the server: a bounded body, and headers sent within a deadline.

* :class:`BodyLimit` (ASGI): a body over :data:`MAX_BODY_BYTES` is refused with 413
  (``too_large``) before it is read — at once when ``Content-Length`` says so, else as soon as
  the chunks received pass the bound; nothing larger is ever held in memory.
* :func:`header_deadline` (uvicorn's h11 protocol): a connection whose request headers are not
  complete :data:`HEADER_TIMEOUT_S` seconds after it opened (or after its last answer) is
  closed, so clients that dribble their headers cannot hold the server's connections.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body served (a link's note is at most 280 bytes, a query far less)."""
HEADER_TIMEOUT_S = 10.0
"""Seconds a client has to send a request's headers."""


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, without reading them whole."""

    def __init__(self, app: ASGIApp, *, limit: int = MAX_BODY_BYTES) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with its body read (at most ``limit`` bytes), or answer 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        body, more = [], True
        size = 0
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
            body.append(message.get("body", b""))
            more = message.get("more_body", False)
        await self.app(scope, _replay(b"".join(body)), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        from vaultsync.http.guard import error_response

        answer = error_response(413, "too_large", f"the request body is over {self.limit} bytes")
        await answer(scope, receive, send)


def _replay(body: bytes) -> Receive:
    """A ``receive`` that hands the body read once, then waits for the disconnect."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # as a real client: nothing more until it goes
        return {"type": "http.disconnect"}  # pragma: no cover - never reached

    return receive


def header_deadline(timeout_s: float = HEADER_TIMEOUT_S) -> type[asyncio.Protocol]:
    """Uvicorn's h11 protocol, closing a connection whose headers take over ``timeout_s``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadline(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _waiting_since: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not self._waiting_since:  # a new request's headers are complete
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._waiting_since = self.cycle
            self._deadline = self.loop.call_later(timeout_s, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.cycle is self._waiting_since and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline

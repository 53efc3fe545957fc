"""What one HTTP client may cost the server, through a real server on loopback."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import serving
from vaultsync.app.sync import SyncRequest, sync
from vaultsync.app.workspace import open_workspace
from vaultsync.http.auth import vault_token
from vaultsync.http.limits import MAX_BODY_BYTES
from vaultsync.http.server import make_app, uvicorn_config

WAIT_S = 30.0
"""A bound against a hang, never a speed check."""
SLOW_CLIENTS = 20


@contextmanager
def served(demo_state: Path, tmp_path: Path) -> Iterator[tuple[int, str]]:
    """``vaultsync serve``'s app and uvicorn settings (headers due within 0.5 s): port, token."""
    vault = tmp_path / "vault"
    sync(open_workspace(str(demo_state), str(vault)), SyncRequest())
    app = make_app(vault, demo_state, host="127.0.0.1", refresh=0)
    config = uvicorn_config(
        app, host="127.0.0.1", port=0, log_level="warning", header_timeout_s=0.5
    )
    with serving(app, config) as base:
        yield int(base.rsplit(":", 1)[1]), vault_token(vault)


def _post(
    port: int, token: str, body: bytes, scheme: str = "Bearer"
) -> tuple[int, dict[str, object]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    conn.request(
        "POST",
        "/v1/vault/search",
        body=body,
        headers={"Authorization": f"{scheme} {token}", "Content-Type": "application/json"},
    )
    answer = conn.getresponse()
    return answer.status, json.loads(answer.read() or b"{}")


def test_the_bearer_scheme_is_case_insensitive(demo_state: Path, tmp_path: Path) -> None:
    """``Authorization: bearer <token>`` is the same as ``Bearer`` (RFC 7235)."""
    with served(demo_state, tmp_path) as (port, token):
        status, _ = _post(port, token, b'{"query": "orbital"}', scheme="bearer")
    assert status == 200


def test_a_deeply_nested_body_is_bad_json(demo_state: Path, tmp_path: Path) -> None:
    """A body nested past the parser's depth is a documented 400 ``bad_json``."""
    with served(demo_state, tmp_path) as (port, token):
        status, answer = _post(port, token, b"[" * 100_000 + b"]" * 100_000)
    assert status == 400 and answer["code"] == "bad_json"


def test_a_body_declared_too_large_is_refused_before_it_is_sent(
    demo_state: Path, tmp_path: Path
) -> None:
    """A 50 MB Content-Length is answered 413 while the client has sent only its headers."""
    with (
        served(demo_state, tmp_path) as (port, token),
        socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw,
    ):
        raw.sendall(
            b"POST /v1/vault/search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {token}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 52428800\r\n\r\n"
        )
        answer = b""
        while b"too_large" not in answer and (part := raw.recv(65536)):
            answer += part
    assert answer.startswith(b"HTTP/1.1 413") and b"too_large" in answer


def test_a_chunked_body_is_refused_once_past_the_bound(demo_state: Path, tmp_path: Path) -> None:
    """Without a length, the chunks are counted: past 1 MiB the answer is 413."""
    with served(demo_state, tmp_path) as (port, token):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        chunks = (b"x" * 65536 for _ in range(MAX_BODY_BYTES // 65536 + 2))
        conn.request(
            "POST",
            "/v1/vault/search",
            body=chunks,
            headers={"Authorization": f"Bearer {token}"},
            encode_chunked=True,
        )
        assert conn.getresponse().status == 413


def test_clients_that_dribble_their_headers_are_cut_off(demo_state: Path, tmp_path: Path) -> None:
    """Connections whose headers never complete are closed by the server; others are served."""
    with served(demo_state, tmp_path) as (port, token):
        address = ("127.0.0.1", port)
        slow = [socket.create_connection(address, timeout=WAIT_S) for _ in range(SLOW_CLIENTS)]
        for conn in slow:
            conn.sendall(b"GET /v1/vault/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        closed = [conn.recv(1) == b"" for conn in slow]  # blocks until the server closes it
        for conn in slow:
            conn.close()
        status, _ = _post(port, token, b'{"query": "orbital"}')
    assert all(closed) and status == 200

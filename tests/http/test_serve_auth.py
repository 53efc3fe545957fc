"""``vaultsync serve`` as a real process: the token, the one-time browser login, the token file."""

from __future__ import annotations

import http.client
import json
import queue
import re
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import DEMO_STORE, clean_env
from vaultsync.http.auth import vault_token
from vaultsync.vault.manifest import GITIGNORE_BYTES

START_WAIT = 60.0
"""Seconds to wait for the server's greeting: a bound against a hang, not a speed check."""
LOGIN = re.compile(r"(http://127\.0\.0\.1:(\d+))(/auth\?once=[A-Za-z0-9_-]+)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Served:
    """A running ``vaultsync serve``: its port, one-time login path, vault, state and env."""

    port: int
    login: str
    vault: Path
    state: Path
    env: Mapping[str, str]

    @property
    def token(self) -> str:
        return (self.vault / ".vaultsync" / "api-token").read_text().strip()


def _env(home: Path) -> dict[str, str]:
    """The environment of every child: its own git identity, no vaultsync variable set."""
    config = home / ".gitconfig"
    config.write_text("[user]\n\tname = Test User\n\temail = test@example.invalid\n")
    env = clean_env()
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(config), GIT_CONFIG_NOSYSTEM="1")
    env["VAULTSYNC_CACHE_DIR"] = str(home / "cache")
    return env


def vaultsync(*args: str, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "vaultsync", *args],
        capture_output=True,
        text=True,
        env=dict(env),
        check=False,
    )


def _greeting(proc: subprocess.Popen[str]) -> re.Match[str]:
    """Read the server's stdout until the one-time URL shows; fail if it exits or never does."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=START_WAIT)
        except queue.Empty:
            pytest.fail("vaultsync serve printed no login URL")
        if line is None:
            pytest.fail(f"vaultsync serve exited {proc.wait()}")
        if found := LOGIN.search(line):
            return found


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The demo vault, synced and committed, served by ``vaultsync serve --port 0``."""
    root = tmp_path_factory.mktemp("serve-auth")
    state, vault, home = root / "state", root / "vault", root / "home"
    shutil.copytree(DEMO_STORE, state)
    home.mkdir()
    env = _env(home)
    where = ("--state", str(state), "--vault", str(vault))
    synced = vaultsync("sync", *where, env=env)
    assert synced.returncode == 0, synced.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultsync", "serve", *where, "--port", "0", "--refresh", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        found = _greeting(proc)
        yield Served(port=int(found[2]), login=found[3], vault=vault, state=state, env=env)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def request(
    served: Served, path: str, headers: Mapping[str, str] | None = None, method: str = "GET"
) -> tuple[http.client.HTTPResponse, bytes]:
    """One real HTTP request to the server; the response (not followed) and its body."""
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        body = b"{}" if method == "POST" else None
        conn.request(method, path, body=body, headers=dict(headers or {}))
        response = conn.getresponse()
        return response, response.read()
    finally:
        conn.close()


def unauthorized(response: http.client.HTTPResponse, body: bytes) -> None:
    """A 401 whose body is one line of JSON in the shape of every error."""
    assert response.status == 401
    assert response.getheader("content-type", "").startswith("application/json")
    assert b"\n" not in body.strip()
    error = json.loads(body)
    assert set(error) == {"detail", "code", "hint", "candidates", "errors"}
    assert error["code"] == "unauthorized"


class TestToken:
    def test_no_token_is_401(self, served: Served) -> None:
        """Without a token every path is a one-line JSON 401, the docs included."""
        for path in ("/v1/vault/documents", "/docs", "/openapi.json"):
            unauthorized(*request(served, path))

    def test_head_without_token_is_401_without_body(self, served: Served) -> None:
        """HEAD is refused like GET: a 401 with GET's headers and no body."""
        response, body = request(served, "/docs", method="HEAD")
        assert (response.status, body) == (401, b"")
        assert response.getheader("www-authenticate") == "Bearer"
        assert int(response.getheader("content-length", "0")) > 0

    def test_wrong_token_is_401(self, served: Served) -> None:
        """A bearer that is not the vault's token is refused."""
        unauthorized(*request(served, "/v1/vault/documents", {"Authorization": "Bearer nope"}))

    def test_bearer_is_200(self, served: Served) -> None:
        """The vault's token as ``Authorization: Bearer`` lists the notes."""
        response, body = request(
            served, "/v1/vault/documents", {"Authorization": f"Bearer {served.token}"}
        )
        assert response.status == 200
        assert json.loads(body)

    def test_token_file_is_private(self, served: Served) -> None:
        """The token file is a regular file, mode 0600, holding a long random token."""
        mode = (served.vault / ".vaultsync" / "api-token").lstat().st_mode
        assert stat.S_ISREG(mode)
        assert stat.S_IMODE(mode) == 0o600
        assert len(served.token) >= 40


class TestBrowserLogin:
    def test_one_time_url_sets_cookie_once(self, served: Served) -> None:
        """The printed URL sets an HttpOnly, SameSite=Strict cookie once; reusing it is a 401."""
        response, _ = request(served, served.login)
        assert response.status == 303
        assert response.getheader("location") == "/docs"
        cookie = response.getheader("set-cookie", "")
        flags = {part.strip().lower() for part in cookie.split(";")}
        assert {"httponly", "samesite=strict", "path=/"} <= flags
        assert served.token not in cookie
        pair = cookie.split(";", 1)[0]
        docs, page = request(served, "/docs", {"Cookie": pair})
        assert docs.status == 200
        assert b"swagger" in page.lower()
        spec, _ = request(served, "/openapi.json", {"Cookie": pair})
        assert spec.status == 200
        unauthorized(*request(served, served.login))
        cross = {"Cookie": pair, "Origin": "http://127.0.0.1:1", "Content-Type": "application/json"}
        unauthorized(*request(served, "/v1/vault/search", cross, method="POST"))
        own = {**cross, "Origin": f"http://127.0.0.1:{served.port}"}
        assert request(served, "/v1/vault/search", own, method="POST")[0].status == 422

    def test_made_up_nonce_is_401(self, served: Served) -> None:
        """A nonce that was never printed sets no cookie."""
        response, body = request(served, "/auth?once=guessed")
        unauthorized(response, body)
        assert response.getheader("set-cookie") is None


class TestTokenNeverInGit:
    @staticmethod
    def git(served: Served, *args: str) -> bytes:
        """Run git in the served vault; its stdout."""
        return subprocess.run(
            ["git", "-C", str(served.vault), *args],
            capture_output=True,
            env=dict(served.env),
            check=True,
        ).stdout

    def test_not_tracked_not_in_any_object(self, served: Served) -> None:
        """After a sync that commits and a user's ``git add -A``, no git object holds the token."""
        token = served.token
        before = self.git(served, "rev-list", "--count", "HEAD")
        day = served.state / "memory" / "202610" / "20261023.md"
        day.write_text(day.read_text() + "\nA line written after the server started.\n")
        synced = vaultsync(
            "sync", "--state", str(served.state), "--vault", str(served.vault), env=served.env
        )
        assert synced.returncode == 0, synced.stderr

        assert int(self.git(served, "rev-list", "--count", "HEAD")) == int(before) + 1
        self.git(served, "add", "-A")
        assert b"api-token" not in self.git(served, "ls-files", "--cached")
        ignored = self.git(served, "status", "--porcelain", "--ignored")
        assert b"!! .vaultsync/api-token" in ignored
        objects = self.git(served, "cat-file", "--batch-all-objects", "--batch")
        assert objects
        assert token.encode() not in objects


def test_no_auth_only_on_loopback(tmp_path: Path) -> None:
    """``--no-auth`` off loopback is refused with one line and exit 3, before serving."""
    vault = tmp_path / "vault"
    vault.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {**_env(home), "VAULTSYNC_API_TOKEN": "t0ken-for-the-lan"}
    done = vaultsync(
        "serve",
        "--vault",
        str(vault),
        "--state",
        str(tmp_path),
        "--host",
        "0.0.0.0",  # noqa: S104 - the address refused
        "--no-auth",
        env=env,
    )
    assert done.returncode == 3
    assert done.stderr.strip().startswith("error: refusing --no-auth on '0.0.0.0'")
    assert "Traceback" not in done.stderr
    assert not (vault / ".vaultsync").exists()


class TestTokenFile:
    def test_made_private_and_ignored_in_a_bare_folder(self, tmp_path: Path) -> None:
        """A vault without ``.vaultsync/`` gets the token 0600 and vaultsync's ``.gitignore``."""
        token = vault_token(tmp_path)
        assert vault_token(tmp_path) == token
        assert (tmp_path / ".vaultsync" / ".gitignore").read_bytes() == GITIGNORE_BYTES
        assert stat.S_IMODE((tmp_path / ".vaultsync" / "api-token").stat().st_mode) == 0o600

    def test_too_open_file_is_repaired_keeping_the_token(self, tmp_path: Path) -> None:
        """A token file others can read is rewritten 0600 with the same token."""
        token = vault_token(tmp_path)
        (tmp_path / ".vaultsync" / "api-token").chmod(0o644)
        assert vault_token(tmp_path) == token
        assert stat.S_IMODE((tmp_path / ".vaultsync" / "api-token").stat().st_mode) == 0o600

    def test_symlinked_token_file_is_one_line(self, tmp_path: Path) -> None:
        """A token file that is a symlink is never followed: serve exits 7 with one line."""
        vault, home = tmp_path / "vault", tmp_path / "home"
        (vault / ".vaultsync").mkdir(parents=True)
        home.mkdir()
        (tmp_path / "elsewhere").write_text("not-a-token\n")
        (vault / ".vaultsync" / "api-token").symlink_to(tmp_path / "elsewhere")
        done = vaultsync("serve", "--vault", str(vault), "--state", str(tmp_path), env=_env(home))
        assert done.returncode == 7
        assert done.stderr.startswith("error: ")
        assert "Traceback" not in done.stderr
        assert (tmp_path / "elsewhere").read_text() == "not-a-token\n"

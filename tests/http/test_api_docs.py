"""``/docs`` works offline: Swagger UI's page and every asset it loads come from our server."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from helpers import DEMO_STORE, serving
from vaults import demo_vault
from vaultsync.http.auth import vault_token
from vaultsync.http.server import make_app

BROWSER_WAIT = 120.0
"""Seconds before a hung browser is killed: a bound against a hang, not a speed check."""
ROUTES = {
    "/v1/vault/documents",
    "/v1/vault/documents/{doc_id}",
    "/v1/vault/documents/{doc_id}/links",
    "/v1/vault/search",
    "/v1/vault/links",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Docs:
    """The API served on loopback with the vault's token, and the run's one-time login path."""

    url: str
    bearer: dict[str, str]
    login: str


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Docs]:
    """The demo vault served as ``vaultsync serve`` does (a token, a browser login)."""
    root = tmp_path_factory.mktemp("docs")
    state = root / "state"
    shutil.copytree(DEMO_STORE, state)
    vault = demo_vault(state, root / "vault")
    app = make_app(vault, state, host="127.0.0.1", refresh=0, environ={})
    bearer = {"authorization": f"Bearer {vault_token(vault)}"}
    with serving(app) as url:
        yield Docs(url=url, bearer=bearer, login=f"/auth?once={app.state.login.nonce}")


class _Assets(HTMLParser):
    """Every URL a page's tags load (``src``) or link (``href``)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        del tag
        self.urls += [value for name, value in attrs if name in ("src", "href") and value]


def assets(page: str) -> list[str]:
    """The URLs the tags of ``page`` load, in order."""
    parser = _Assets()
    parser.feed(page)
    return parser.urls


class TestOfflineDocs:
    def test_every_asset_is_served_here(self, docs: Docs) -> None:
        """Each script, style sheet and icon of ``/docs`` is a URL of this server that answers."""
        with httpx.Client(base_url=docs.url, headers=docs.bearer) as client:
            page = client.get("/docs")
            assert page.status_code == 200
            urls = [urljoin(f"{docs.url}/docs", url) for url in assets(page.text)]
            kinds = {urlsplit(url).path.rpartition(".")[2] for url in urls}
            assert {"js", "css"} <= kinds
            for url in urls:
                assert urlsplit(url).netloc == urlsplit(docs.url).netloc, url
                answer = client.get(url)
                assert answer.status_code == 200, url
                assert answer.content, url

    def test_page_names_no_other_host(self, docs: Docs) -> None:
        """Nothing in the page, its script included, points at another host."""
        page = httpx.get(f"{docs.url}/docs", headers=docs.bearer).text
        assert re.findall(r"(?:https?:)?//[\w.-]+", page) == []
        assert "url: '/openapi.json'" in page

    def test_assets_need_the_token(self, docs: Docs) -> None:
        """Swagger UI's assets are behind the same token as the API."""
        with httpx.Client(base_url=docs.url, headers=docs.bearer) as client:
            script = next(u for u in assets(client.get("/docs").text) if u.endswith(".js"))
        refused = httpx.get(urljoin(f"{docs.url}/docs", script))
        assert refused.status_code == 401
        assert refused.json()["code"] == "unauthorized"


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    pytest.skip("no Chromium here (apt-get install chromium)")


@pytest.mark.external
def test_swagger_ui_renders_in_chromium_without_the_internet(docs: Docs, tmp_path: Path) -> None:
    """Headless Chromium, with no host but loopback reachable, shows every route after login."""
    done = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",  # tests run as root in CI
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--virtual-time-budget=15000",
            "--dump-dom",
            f"{docs.url}{docs.login}",
        ],
        capture_output=True,
        text=True,
        timeout=BROWSER_WAIT,
        check=True,
    )
    shown = set(re.findall(r'class="opblock-summary-path" data-path="([^"]+)"', done.stdout))
    assert shown == ROUTES, done.stdout[-2000:]

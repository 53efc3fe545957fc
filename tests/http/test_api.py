"""The vault REST API on a real uvicorn server on loopback, talked to with httpx."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from helpers import DEMO_STORE, serving
from vaults import demo_vault
from vaultsync.core.errors import ConfigError
from vaultsync.core.model import Kind
from vaultsync.drawn.store import read_links
from vaultsync.http.auth import vault_token
from vaultsync.http.server import check_binding, is_loopback, make_app

GATEWAY = "Contexts/handbook/guide/gateway.md"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo store (a private copy) and its synced vault."""
    root = tmp_path_factory.mktemp("api")
    state = root / "state"
    shutil.copytree(DEMO_STORE, state)
    return state, demo_vault(state, root / "vault")


@pytest.fixture(scope="module")
def api(demo: tuple[Path, Path]) -> Iterator[httpx.Client]:
    """A client of the API served on loopback as ``vaultsync serve`` does, with its token."""
    state, vault = demo
    app = make_app(vault, state, host="127.0.0.1", refresh=0, environ={})
    bearer = {"authorization": f"Bearer {vault_token(vault)}"}
    with serving(app) as url, httpx.Client(base_url=url, timeout=30, headers=bearer) as client:
        yield client


def error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


class TestDocuments:
    def test_list_defaults(self, api: httpx.Client) -> None:
        """20 documents by path, the total in ``X-Total-Count``."""
        response = api.get("/v1/vault/documents")
        docs = response.json()
        assert response.status_code == 200
        assert len(docs) == 20
        assert [d["path"] for d in docs] == sorted(d["path"] for d in docs)
        assert int(response.headers["x-total-count"]) > 100
        assert set(docs[0]) >= {"id", "path", "title", "doc_type", "content_hash", "size"}

    def test_filters_and_paging(self, api: httpx.Client) -> None:
        """``doc_type`` (comma-separated), ``folder``, ``limit`` and ``offset`` narrow the list."""
        docs = api.get(
            "/v1/vault/documents", params={"doc_type": "project,topic", "limit": 500}
        ).json()
        assert {d["doc_type"] for d in docs} == {"project", "topic"}
        page = api.get(
            "/v1/vault/documents", params={"folder": "Projects", "offset": 1, "limit": 1}
        )
        assert [d["path"] for d in page.json()] == ["Projects/orbital.md"]
        assert page.headers["x-total-count"] == "3"

    def test_limit_bounds(self, api: httpx.Client) -> None:
        """A limit over 500 (or under 1) is a 422 JSON answer."""
        for limit in (0, 501):
            body = error(api.get("/v1/vault/documents", params={"limit": limit}), 422)
            assert body["code"] == "invalid_request"
            assert [e["loc"] for e in body["errors"]] == [["query", "limit"]]
            assert body["detail"].startswith("query.limit: ")

    def test_get_by_id_with_slashes(self, api: httpx.Client) -> None:
        """A document id holding ``/`` and ``:`` works, encoded or not, and carries its text."""
        docs = api.get("/v1/vault/documents", params={"doc_type": "doc", "limit": 500}).json()
        gateway = next(d for d in docs if d["path"] == GATEWAY)
        for ref in (gateway["id"], quote(gateway["id"], safe="")):
            body = api.get(f"/v1/vault/documents/{ref}").json()
            assert body["path"] == GATEWAY
            assert "The gateway accepts OTLP" in body["content"]

    def test_get_by_path(self, api: httpx.Client) -> None:
        """A vault path names a document too."""
        assert api.get("/v1/vault/documents/Projects/orbital.md").json()["id"] == "project:orbital"

    def test_unknown_document(self, api: httpx.Client) -> None:
        """An unknown id is a 404 JSON error."""
        body = error(api.get("/v1/vault/documents/nothing:here"), 404)
        assert body["code"] == "not_found"

    def test_unknown_document_never_echoes_the_id(self, api: httpx.Client) -> None:
        """A 404 does not quote the id typed: it may hold a secret."""
        typed = "db_password: Zr8kQ4mW9xPt"
        answer = api.get(f"/v1/vault/documents/{typed}")
        assert error(answer, 404)["detail"] == "no such document"
        assert b"Zr8kQ4mW9xPt" not in answer.content


class TestLinks:
    def test_outlinks_and_backlinks(self, api: httpx.Client) -> None:
        """A document's links carry ``link_type`` and a context of about 50 characters."""
        body = api.get(f"/v1/vault/documents/{GATEWAY}/links").json()
        out = {(link["document"]["path"], link["link_type"]) for link in body["outlinks"]}
        assert ("Projects/orbital.md", "wikilink") in out
        assert ("Projects/orbital.md", "links_to") in out
        assert ("Contexts/handbook/ops/runbooks/cert-rotation.md", "markdown") in out
        assert ("Contexts/handbook/handbook.md", "part_of") in out
        assert all(0 < len(link["context"]) <= 140 for link in body["outlinks"])
        back = {(link["document"]["path"], link["link_type"]) for link in body["backlinks"]}
        assert back
        assert all(
            link["to_doc_id"] == body["backlinks"][0]["to_doc_id"] for link in body["backlinks"]
        )

    def test_unknown_document(self, api: httpx.Client) -> None:
        """Links of an unknown note: 404 JSON."""
        error(api.get("/v1/vault/documents/nope/links"), 404)


class TestSearch:
    def test_hits_then_linked_notes(self, api: httpx.Client) -> None:
        """Hits (``source: vault``, with snippets) come first, then linked notes with why."""
        items = api.post("/v1/vault/search", json={"query": "cert rotation"}).json()
        sources = [item["source"] for item in items]
        assert sources == sorted(sources, key=lambda s: s != "vault")
        first = items[0]
        assert first["document"]["path"] == "Contexts/handbook/ops/runbooks/cert-rotation.md"
        assert "**" in first["snippet"]
        linked = [item for item in items if item["source"] == "linked"]
        assert 0 < len(linked) <= 6
        assert all(item["why"].startswith(("linked from ", "links to ")) for item in linked)

    def test_doc_types_and_max_results(self, api: httpx.Client) -> None:
        """``doc_types`` filters inside the query; ``max_results`` caps the hits."""
        body = {"query": "postgres", "doc_types": ["fact"], "max_results": 2}
        hits = [i for i in api.post("/v1/vault/search", json=body).json() if i["source"] == "vault"]
        assert len(hits) == 2
        assert {hit["document"]["doc_type"] for hit in hits} == {"fact"}

    def test_seed_scope_field_is_accepted(self, api: httpx.Client) -> None:
        """A ``scope`` field is ignored rather than refused."""
        response = api.post("/v1/vault/search", json={"query": "orbital", "scope": "team"})
        assert response.status_code == 200

    def test_bad_input(self, api: httpx.Client) -> None:
        """Empty query, too many results, a lone surrogate, not JSON: each a 4xx JSON answer."""
        error(api.post("/v1/vault/search", json={"query": ""}), 422)
        error(api.post("/v1/vault/search", json={"query": "x", "max_results": 101}), 422)
        raw = b'{"query": "\\ud800"}'
        headers = {"content-type": "application/json"}
        error(api.post("/v1/vault/search", content=raw, headers=headers), 422)
        assert error(api.post("/v1/vault/search", content=b"{", headers=headers), 400)["code"] == (
            "bad_json"
        )

    def test_nothing_searchable_matches_nothing(self, api: httpx.Client) -> None:
        """A query of punctuation only is valid and matches nothing."""
        assert api.post("/v1/vault/search", json={"query": "!!!"}).json() == []


class TestCreateLink:
    def test_added_then_unchanged(self, api: httpx.Client, demo: tuple[Path, Path]) -> None:
        """A new link is 201 and lands in links.json; drawing it again is 200 ``unchanged``."""
        body = {"from": "Projects/orbital.md", "to": "project:ledger", "rel": "Depends On"}
        first = api.post("/v1/vault/links", json=body)
        assert (first.status_code, first.json()["status"], first.json()["rel"]) == (
            201,
            "added",
            "depends_on",
        )
        again = api.post("/v1/vault/links", json=body)
        assert (again.status_code, again.json()["status"]) == (200, "unchanged")
        stored = {(link.source, link.target, link.rel) for link in read_links(demo[0])}
        assert ("project:orbital", "project:ledger", "depends_on") in stored

    def test_unknown_reference(self, api: httpx.Client) -> None:
        """A reference that names no note is a 404."""
        body = error(api.post("/v1/vault/links", json={"from": "zzzqqq", "to": "orbital"}), 404)
        assert "no note matches" in body["detail"]

    def test_ambiguous_reference(self, api: httpx.Client, demo: tuple[Path, Path]) -> None:
        """A name several notes share is a 409 listing them, and nothing is written."""
        before = read_links(demo[0])
        body = error(
            api.post("/v1/vault/links", json={"from": "troubleshooting", "to": "orbital"}), 409
        )
        assert body["code"] == "ambiguous_reference"
        assert body["detail"].count("doc:") >= 2
        assert len(body["candidates"]) == 2
        assert all(c.endswith("troubleshooting.md") for c in body["candidates"])
        assert read_links(demo[0]) == before

    def test_self_link(self, api: httpx.Client) -> None:
        """A link from a note to itself is the store's refusal: 409 link_refused, like the CLI's."""
        answer = api.post("/v1/vault/links", json={"from": "orbital", "to": "project:orbital"})
        error(answer, 409)
        assert answer.json()["code"] == "link_refused"

    def test_missing_field(self, api: httpx.Client) -> None:
        """A body without ``to`` is a 422 JSON answer."""
        error(api.post("/v1/vault/links", json={"from": "orbital"}), 422)


class TestServing:
    def test_openapi(self, api: httpx.Client) -> None:
        """The OpenAPI document lists the five vault routes."""
        paths = set(api.get("/openapi.json").json()["paths"])
        assert {
            "/v1/vault/documents",
            "/v1/vault/documents/{doc_id}",
            "/v1/vault/documents/{doc_id}/links",
            "/v1/vault/search",
            "/v1/vault/links",
        } <= paths

    def test_unknown_route_is_json(self, api: httpx.Client) -> None:
        """A route that does not exist is a JSON 404 too."""
        assert error(api.get("/v2/nothing"), 404)["code"] == "not_found"

    def test_foreign_host_header_refused(self, api: httpx.Client) -> None:
        """On loopback a request naming another host (DNS rebinding) is refused, token or not."""
        body = error(api.get("/v1/vault/documents", headers={"host": "evil.example:8765"}), 421)
        assert body["code"] == "wrong_host"

    def test_reads_while_a_sync_holds_the_vault(
        self, api: httpx.Client, demo: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Reads answer while a sync holds the vault lock, and never ask to wait for it."""
        from vaultsync.vault.write import VaultFS

        # The server runs in a thread of this process: every lock its reads ask for is seen
        # here (and still taken), with how long it would wait.
        waits: list[float] = []
        real_lock = VaultFS.lock

        def recording(
            fs: VaultFS, *, timeout: float, shared: bool = False
        ) -> AbstractContextManager[None]:
            waits.append(timeout)
            return real_lock(fs, timeout=timeout, shared=shared)

        with VaultFS(demo[1]) as fs, fs.lock(timeout=1.0):
            monkeypatch.setattr(VaultFS, "lock", recording)
            found = api.post("/v1/vault/search", json={"query": "orbital"})
            listed = api.get("/v1/vault/documents")
        assert (found.status_code, listed.status_code) == (200, 200)
        assert found.json() and listed.json()
        assert [wait for wait in waits if wait > 0] == []


class TestToken:
    def test_open_address_needs_a_token(self) -> None:
        """A non-loopback address without ``VAULTSYNC_API_TOKEN`` is refused; loopback is not."""
        with pytest.raises(ConfigError):
            check_binding("0.0.0.0", {})  # noqa: S104
        assert check_binding("0.0.0.0", {"VAULTSYNC_API_TOKEN": "t"}) == "t"  # noqa: S104
        assert check_binding("::1", {}) is None
        assert check_binding("127.0.0.1", {"VAULTSYNC_API_TOKEN": "t"}, auth=False) is None
        with pytest.raises(ConfigError):
            check_binding("0.0.0.0", {"VAULTSYNC_API_TOKEN": "t"}, auth=False)  # noqa: S104
        assert (is_loopback("localhost"), is_loopback("127.0.0.2"), is_loopback("10.0.0.1")) == (
            True,
            True,
            False,
        )

    def test_bearer_required_when_set(self, demo: tuple[Path, Path]) -> None:
        """With a token every route needs it, the OpenAPI document included."""
        state, vault = demo
        app = make_app(
            vault, state, host="127.0.0.1", refresh=0, environ={"VAULTSYNC_API_TOKEN": "s3cret"}
        )
        with serving(app) as url, httpx.Client(base_url=url) as client:
            assert error(client.get("/v1/vault/documents"), 401)["code"] == "unauthorized"
            wrong = client.get("/v1/vault/documents", headers={"authorization": "Bearer nope"})
            assert wrong.status_code == 401
            good = client.get("/v1/vault/documents", headers={"authorization": "Bearer s3cret"})
            assert good.status_code == 200
            assert error(client.get("/openapi.json"), 401)["code"] == "unauthorized"
            assert error(client.get("/docs"), 401)["code"] == "unauthorized"
            spec = client.get("/openapi.json", headers={"authorization": "Bearer s3cret"})
            assert json.loads(spec.text)["info"]["title"]

    def test_head_does_not_spend_the_login(self, demo: tuple[Path, Path]) -> None:
        """A HEAD of the one-time URL (a link preview) is refused and leaves it to the browser."""
        state, vault = demo
        app = make_app(vault, state, host="127.0.0.1", refresh=0, environ={})
        once = f"/auth?once={app.state.login.nonce}"
        with serving(app) as url, httpx.Client(base_url=url) as client:
            head = client.head(once)
            assert (head.status_code, head.content) == (401, b"")
            assert "set-cookie" not in head.headers
            assert client.get(once).status_code == 303


class TestRefresh:
    def test_new_note_appears_without_restart(self, tmp_path: Path) -> None:
        """The background refresh indexes a note written while the server runs."""
        vault = tmp_path / "vault"
        vault.mkdir()
        (vault / "a.md").write_text("alpha")
        app = make_app(
            vault, tmp_path / "state", host="127.0.0.1", refresh=0.1, auth=False, environ={}
        )
        with serving(app) as url, httpx.Client(base_url=url) as client:
            (vault / "b.md").write_text("# B\n\nwombat")
            # A wait, not a speed check: it ends as soon as the note is found; the bound only
            # keeps a broken refresh from hanging the suite (generous for a loaded machine).
            deadline = time.monotonic() + 60
            found: list[Any] = []
            while not found and time.monotonic() < deadline:
                found = client.post("/v1/vault/search", json={"query": "wombat"}).json()
                time.sleep(0.1)
            assert [item["document"]["path"] for item in found] == ["b.md"]


ERROR_KEYS = {"detail", "code", "hint", "candidates", "errors"}


class TestErrorShape:
    @pytest.mark.parametrize(
        ("method", "path", "kwargs", "status"),
        [
            ("GET", "/v1/vault/documents", {"params": {"doc_type": "nonsense"}}, 400),
            (
                "POST",
                "/v1/vault/search",
                {"content": b"{", "headers": {"content-type": "application/json"}},
                400,
            ),
            ("GET", "/v1/vault/documents", {"headers": {"authorization": "Bearer no"}}, 401),
            ("GET", "/v1/vault/documents/nothing:here", {}, 404),
            ("GET", "/v2/nothing", {}, 404),
            ("DELETE", "/v1/vault/documents", {}, 405),
            (
                "POST",
                "/v1/vault/links",
                {"json": {"from": "troubleshooting", "to": "orbital"}},
                409,
            ),
            ("GET", "/v1/vault/documents", {"headers": {"host": "evil.example"}}, 421),
            ("GET", "/v1/vault/documents", {"params": {"limit": 0}}, 422),
            ("POST", "/v1/vault/links", {"json": {"from": "orbital", "to": "orbital"}}, 409),
        ],
        ids=lambda v: v if isinstance(v, (int, str)) else "",
    )
    def test_every_4xx_has_one_shape(
        self, api: httpx.Client, method: str, path: str, kwargs: dict[str, Any], status: int
    ) -> None:
        """Each kind of 4xx answers the same JSON object: a one-line detail, a code, the rest."""
        body = error(api.request(method, path, **kwargs), status)
        assert set(body) == ERROR_KEYS
        assert body["detail"]
        assert "\n" not in body["detail"]
        assert body["code"].isidentifier()

    def test_openapi_documents_the_shape_for_every_4xx(self, api: httpx.Client) -> None:
        """Every operation's 4xx answers, 422 included, are ``ErrorOut`` in the OpenAPI document."""
        spec = api.get("/openapi.json").json()
        seen = set()
        for route in spec["paths"].values():
            for operation in route.values():
                for status, answer in operation["responses"].items():
                    if status.startswith("4"):
                        ref = answer["content"]["application/json"]["schema"]["$ref"]
                        assert ref == "#/components/schemas/ErrorOut", (status, ref)
                        seen.add(status)
        assert {"400", "401", "404", "405", "409", "422"} <= seen
        assert "HTTPValidationError" not in spec["components"]["schemas"]

    def test_a_route_added_later_documents_the_shape_too(self, demo: tuple[Path, Path]) -> None:
        """A route added after ``create_app`` (another feature's) lists ErrorOut for 422 too."""
        state, vault = demo
        app = make_app(vault, state, host="127.0.0.1", refresh=0, auth=False, environ={})

        @app.get("/v1/extra")
        def extra(n: int = 0) -> int:
            return n

        answers = app.openapi()["paths"]["/v1/extra"]["get"]["responses"]
        assert answers["422"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorOut"
        }
        assert {"400", "401", "404", "405", "409", "421", "422", "503"} <= set(answers)


class TestDocTypes:
    def test_unknown_doc_type_is_400_listing_the_kinds(self, api: httpx.Client) -> None:
        """A doc_type no note can have is a 400 whose candidates are the kinds there are."""
        body = error(api.get("/v1/vault/documents", params={"doc_type": "project,projekt"}), 400)
        assert body["code"] == "unknown_doc_type"
        assert "'projekt'" in body["detail"]
        assert "'project'" not in body["detail"]
        assert {"project", "doc", "user"} <= set(body["candidates"])
        assert body["candidates"] == sorted(body["candidates"])

    def test_kind_without_notes_is_an_empty_list(self, api: httpx.Client) -> None:
        """A graph kind this vault has no note of is a valid filter: 200 and an empty list."""
        present = {d["doc_type"] for d in api.get("/v1/vault/documents?limit=500").json()}
        missing = sorted({kind.value for kind in Kind} - present)
        assert missing
        response = api.get("/v1/vault/documents", params={"doc_type": missing[0]})
        assert (response.status_code, response.json()) == (200, [])

    def test_unknown_doc_type_in_search_is_400(self, api: httpx.Client) -> None:
        """Search refuses an unknown kind in ``doc_types`` the same way."""
        body = {"query": "orbital", "doc_types": ["fact", "facts"]}
        assert error(api.post("/v1/vault/search", json=body), 400)["code"] == "unknown_doc_type"


def links_of(response: httpx.Response) -> dict[str, str]:
    """The ``Link`` header's targets by relation."""
    return {str(rel): link["url"] for rel, link in response.links.items()}


class TestPagination:
    def test_first_page_links_next_only(self, api: httpx.Client) -> None:
        """The first page names the next one (filters kept) and no previous one."""
        response = api.get("/v1/vault/documents", params={"doc_type": "doc", "limit": 5})
        links = links_of(response)
        assert set(links) == {"next"}
        assert links["next"] == f"{api.base_url}/v1/vault/documents?doc_type=doc&limit=5&offset=5"

    def test_middle_page_links_both_ways(self, api: httpx.Client) -> None:
        """A page after the first names the previous page too."""
        response = api.get("/v1/vault/documents", params={"limit": 5, "offset": 7})
        links = links_of(response)
        assert links["next"].endswith("/v1/vault/documents?limit=5&offset=12")
        assert links["prev"].endswith("/v1/vault/documents?limit=5&offset=2")

    def test_last_page_has_no_next(self, api: httpx.Client) -> None:
        """The last page has no ``rel="next"``; a single page has no ``Link`` at all."""
        last = api.get("/v1/vault/documents", params={"folder": "Projects", "offset": 2})
        assert set(links_of(last)) == {"prev"}
        whole = api.get("/v1/vault/documents", params={"folder": "Projects"})
        assert "link" not in whole.headers

    def test_following_next_visits_every_note_once(self, api: httpx.Client) -> None:
        """Following ``next`` from the first page lists every note once, bodies bare arrays."""
        response = api.get("/v1/vault/documents", params={"limit": 40})
        total = int(response.headers["x-total-count"])
        paths: list[str] = []
        while True:
            page = response.json()
            assert isinstance(page, list)
            paths += [doc["path"] for doc in page]
            if "next" not in response.links:
                break
            response = api.get(response.links["next"]["url"])
        assert len(paths) == total
        assert paths == sorted(set(paths))


class TestHead:
    @pytest.mark.parametrize(
        "path",
        [
            "/v1/vault/documents?limit=3",
            f"/v1/vault/documents/{GATEWAY}",
            f"/v1/vault/documents/{GATEWAY}/links",
            "/openapi.json",
            "/docs",
            "/v1/vault/documents/nothing:here",
        ],
    )
    def test_head_is_get_without_body(self, api: httpx.Client, path: str) -> None:
        """HEAD answers a GET route with GET's status and headers and an empty body."""
        got, head = api.get(path), api.head(path)
        assert head.status_code == got.status_code
        assert head.content == b""
        same = {k: v for k, v in got.headers.items() if k != "date"}
        assert {k: v for k, v in head.headers.items() if k != "date"} == same

    def test_head_on_a_post_route_is_405(self, api: httpx.Client) -> None:
        """A route without GET has no HEAD either: 405, allowing POST."""
        head = api.head("/v1/vault/search")
        assert (head.status_code, head.headers["allow"], head.content) == (405, "POST", b"")

"""The vault REST API over the search index: ``create_app(vault, state)``; shell.

Routes (all JSON; OpenAPI at ``/openapi.json``):

* ``GET /v1/vault/documents`` (``doc_type`` comma-separated, ``folder``, ``limit`` 1-500
  default 20, ``offset``): the registry sorted by path, a bare array; the total is in
  ``X-Total-Count``, the neighbouring pages in ``Link`` (``rel="next"`` unless this is the
  last page, ``rel="prev"`` unless it is the first).  A ``doc_type`` that is neither a graph
  kind, ``user``, nor the kind of an indexed note is a 400 listing the kinds (``candidates``).
* ``GET /v1/vault/documents/{id}``: one note with its text (``id`` may also be a vault path).
* ``GET /v1/vault/documents/{id}/links``: ``outlinks`` and ``backlinks``, each with
  ``link_type`` and ``context``; one per (far note, type).
* ``POST /v1/vault/search`` (``query``, ``doc_types``, ``folder``, ``max_results``): the hits
  (``source: vault``, with a snippet), then up to 6 notes linked with the best ones (``source:
  linked``, with ``why``), in one list.
* ``GET /graph``: the interactive graph view, the page ``vaultsync graph view`` writes
  (:mod:`vaultsync.graphview`); HTML, left out of the OpenAPI document.
* ``POST /v1/vault/links`` (``from``, ``to``, ``rel``, ``note``): draws an explicit link with
  ``LinkStore.add``, exactly as ``vaultsync link``: each end must name one graph note
  (``find_note(..., strict=True)``; an engine note's id or vault path names its graph node).

Every error has one JSON shape, ``ErrorOut`` (``vaultsync.http.guard``), which the guard
documents for every route of the OpenAPI document, routes added later included: 400 an unknown
doc type or a body that is not JSON, 401 no token, 404 no such note or route, 405 wrong
method, 409 an ambiguous reference or a refused link (store full, sealed, locked), 421 a
foreign ``Host``, 422 bad input (each field in ``errors``), 503 no index yet or an unreadable
store; the token, cookie and ``Host`` rules are applied there too (every path, ``/docs`` and
``/openapi.json`` included, needs the bearer token or the session cookie ``GET
/auth?once=<nonce>`` sets, when a token is set).  ``HEAD`` works wherever ``GET`` does.

``/docs`` is Swagger UI served from this server, assets included (``fastapi-offline`` ships
them): it works without the internet, and no page of it asks another host for anything.

Handlers never touch the vault's files: they read the index (``vaultsync.search.reader``), so
a running sync never blocks them and they see the last complete index.  A background thread
refreshes the index every ``refresh`` seconds, skipping while a sync holds the vault.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse
from fastapi_offline import FastAPIOffline
from starlette.datastructures import URL
from vaultsync.app.links import draw_link
from vaultsync.app.search import VaultIndex
from vaultsync.app.workspace import Workspace
from vaultsync.core.errors import (
    NoteReferenceError,
    UnknownKindError,
    UsageError,
    VaultsyncError,
)
from vaultsync.core.model import Kind
from vaultsync.graphview.page import graph_page
from vaultsync.http.auth import BrowserLogin
from vaultsync.http.guard import AmbiguousReference, guard
from vaultsync.http.schemas import (
    MAX_REF,
    DocumentDetailOut,
    DocumentOut,
    LinkCreatedOut,
    LinkIn,
    LinkOut,
    LinksOut,
    SearchIn,
    SearchItemOut,
)
from vaultsync.search.index import update_index
from vaultsync.search.model import Document, NoteLink, SearchResult
from vaultsync.search.query import match_expression
from vaultsync.search.registry import USER_KIND
from vaultsync.vault.config import load_settings

__all__ = ["create_app"]

LOG = logging.getLogger("vaultsync.api")


def _link_id(source: str, target: str, link_type: str) -> str:
    return hashlib.sha256(f"{source}\0{target}\0{link_type}".encode()).hexdigest()[:16]


def _links_out(doc_id: str, links: Iterable[NoteLink], *, incoming: bool) -> list[LinkOut]:
    out = []
    for link in links:
        source, target = (link.other.id, doc_id) if incoming else (doc_id, link.other.id)
        out.append(
            LinkOut(
                id=_link_id(source, target, link.link_type),
                from_doc_id=source,
                to_doc_id=target,
                link_type=link.link_type,
                context=link.context,
                document=DocumentOut.of(link.other),
            )
        )
    return out


_GRAPH_KINDS = frozenset({*(kind.value for kind in Kind), USER_KIND})
"""Kinds a vault may have none of yet: a filter on one matches nothing rather than failing."""


def _checked_kinds(kinds: tuple[str, ...], indexed: Callable[[], frozenset[str]]) -> None:
    """Raise ``UnknownKindError`` (a 400) when a kind is neither a graph kind nor indexed."""
    if not kinds or _GRAPH_KINDS.issuperset(kinds):
        return
    known = _GRAPH_KINDS | indexed()
    unknown = sorted(set(kinds) - known)
    if unknown:
        raise UnknownKindError(
            f"unknown doc type {', '.join(map(repr, unknown))}",
            hint="drop the filter for every kind; candidates lists the kinds there are",
            candidates=tuple(sorted(known)),
        )


def _page_links(url: URL, *, limit: int, offset: int, total: int) -> str | None:
    """The ``Link`` header of one page of a list: its next and previous pages, if any."""
    pages = []
    if offset + limit < total:
        pages.append(("next", offset + limit))
    if offset > 0:
        pages.append(("prev", max(0, offset - limit)))
    links = [
        f'<{url.include_query_params(limit=limit, offset=at)}>; rel="{rel}"' for rel, at in pages
    ]
    return ", ".join(links) or None


_LIST_HEADERS = {
    "X-Total-Count": {
        "description": "how many notes pass the filters",
        "schema": {"type": "integer"},
    },
    "Link": {
        "description": 'the next page (rel="next", absent on the last page) and the previous'
        ' one (rel="prev", absent on the first), RFC 8288',
        "schema": {"type": "string"},
    },
}


def _lifespan(
    vault: Path, refresh: float
) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[None]]:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()

        def refresher() -> None:
            while not stop.wait(refresh):
                try:
                    update_index(vault, wait=0.0)
                except (VaultsyncError, sqlite3.Error, OSError) as err:
                    LOG.warning("index refresh failed: %s", err)

        try:
            update_index(vault)
        except (VaultsyncError, sqlite3.Error, OSError) as err:
            LOG.warning("index update at start failed: %s", err)
        worker = threading.Thread(target=refresher, name="vaultsync-index", daemon=True)
        if refresh > 0:
            worker.start()
        try:
            yield
        finally:
            stop.set()
            if worker.is_alive():
                worker.join(timeout=5)

    return lifespan


def _workspace(vault: Path, state: Path) -> Workspace:
    """The workspace of a request: the vault's saved config read anew (it may change)."""
    return Workspace(state=state, vault=vault, settings=load_settings(vault))


def _search_items(result: SearchResult) -> list[SearchItemOut]:
    """The hits (``source: vault``), then the notes linked with them (``source: linked``)."""
    items = [
        SearchItemOut(
            document=DocumentOut.of(h.document), score=h.score, source="vault", snippet=h.snippet
        )
        for h in result.hits
    ]
    items += [
        SearchItemOut(
            document=DocumentOut.of(n.document),
            score=0.0,
            source="linked",
            why=n.why,
            link_type=n.link_type,
        )
        for n in result.linked
    ]
    return items


def _document(index: VaultIndex, doc_id: str) -> tuple[Document, str]:
    """One note with its text; a miss never echoes the id typed (it may hold a secret)."""
    try:
        return index.document(doc_id)
    except NoteReferenceError as err:
        what = "ambiguous document reference" if err.candidates else "no such document"
        raise NoteReferenceError(what, hint=err.hint, candidates=err.candidates) from None


def create_app(
    vault: Path,
    state: Path,
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    login: BrowserLogin | None = None,
    refresh: float = 0.0,
) -> FastAPI:
    """The API over ``vault``'s index; explicit links go to ``state``'s ``links.json``.

    Args:
        vault: the vault folder (its index is updated at start).
        state: the ChatCLI state directory (graph and link store).
        token: when set, every route needs ``Authorization: Bearer <token>`` (or the cookie).
        allowed_hosts: when set, requests whose ``Host`` is not one of these get 421.
        login: a browser's one-time login to ``/auth`` (only with a token).
        refresh: seconds between background index refreshes (0: none).
    """
    vault, state = vault.absolute(), state.absolute()
    # Swagger UI's assets come from the fastapi-offline package, served here: /docs works
    # offline.  No validator: Swagger UI would send the document's URL to validator.swagger.io.
    app = FastAPIOffline(
        title="vaultsync vault API",
        version="1",
        summary="List, read, search and link the notes of a vaultsync vault.",
        lifespan=_lifespan(vault, refresh),
        redoc_url=None,
        swagger_ui_parameters={"validatorUrl": None},
    )
    guard(app, token=token, allowed_hosts=allowed_hosts, login=login)
    index = VaultIndex(vault, refresh=False)  # the lifespan brings it up to date
    ask = index.ask

    def indexed_kinds() -> frozenset[str]:
        kinds: frozenset[str] = ask(lambda r: r.kinds())
        return kinds

    @app.get(
        "/v1/vault/documents",
        response_model=list[DocumentOut],
        responses={200: {"headers": _LIST_HEADERS}},
    )
    def list_documents(
        request: Request,
        response: Response,
        *,
        doc_type: Annotated[str, Query(max_length=1000, description="comma-separated kinds")] = "",
        folder: Annotated[str, Query(max_length=MAX_REF)] = "",
        limit: Annotated[int, Query(ge=1, le=500)] = 20,
        offset: Annotated[int, Query(ge=0, le=2**31)] = 0,
    ) -> list[DocumentOut]:
        """The registry: every note with id, path, title, kind, SHA-256 and size, by path."""
        kinds = tuple(k.strip() for k in doc_type.split(",") if k.strip())
        _checked_kinds(kinds, indexed_kinds)
        docs, total = ask(
            lambda r: r.documents(kinds=kinds, folder=folder, limit=limit, offset=offset)
        )
        response.headers["X-Total-Count"] = str(total)
        link = _page_links(request.url, limit=limit, offset=offset, total=total)
        if link is not None:
            response.headers["Link"] = link
        return [DocumentOut.of(doc) for doc in docs]

    @app.get("/v1/vault/documents/{doc_id:path}/links", response_model=LinksOut)
    def document_links(doc_id: Annotated[str, PathParam(max_length=MAX_REF)]) -> LinksOut:
        """A note's outgoing links and backlinks, with link type and context."""
        found = ask(lambda r: r.links(doc_id))
        return LinksOut(
            outlinks=_links_out(found.document.id, found.outlinks, incoming=False),
            backlinks=_links_out(found.document.id, found.backlinks, incoming=True),
        )

    @app.get("/v1/vault/documents/{doc_id:path}", response_model=DocumentDetailOut)
    def get_document(doc_id: Annotated[str, PathParam(max_length=MAX_REF)]) -> DocumentDetailOut:
        """One note (by id or vault path) with its text after the front matter."""
        doc, body = _document(index, doc_id)
        return DocumentDetailOut(**DocumentOut.of(doc).model_dump(), content=body)

    @app.post("/v1/vault/search", response_model=list[SearchItemOut])
    def search(body: SearchIn) -> list[SearchItemOut]:
        """Search every note (``mode``: text, semantic or hybrid), then notes linked with the hits.

        A query without a searchable word (only punctuation or exclusions) matches nothing.
        """
        _checked_kinds(tuple(body.doc_types or ()), indexed_kinds)
        try:
            match_expression(body.query)
        except UsageError:
            if body.mode != "semantic":
                return []
        result = index.search(
            body.query,
            kinds=tuple(body.doc_types or ()),
            folder=body.folder,
            limit=body.max_results,
            mode=body.mode,
        )
        return _search_items(result)

    @app.get("/graph", response_class=HTMLResponse, include_in_schema=False)
    def graph_view() -> HTMLResponse:
        """The interactive graph view, as `vaultsync graph view` writes it."""
        page, _ = graph_page(state, vault, _workspace(vault, state).caps)
        return HTMLResponse(page)

    @app.post(
        "/v1/vault/links",
        response_model=LinkCreatedOut,
        status_code=201,
        responses={200: {"model": LinkCreatedOut}},
    )
    def create_link(body: LinkIn, response: Response) -> LinkCreatedOut:
        """Draw an explicit link, as `vaultsync link FROM -> TO --rel REL --note NOTE`."""
        ws = _workspace(vault, state)
        try:
            drawn = draw_link(ws, body.from_, body.to, body.rel, body.note, index=index)
        except NoteReferenceError as err:
            if not err.candidates:
                raise  # no note matches: a 404
            raise AmbiguousReference(err.message, hint=err.hint, candidates=err.candidates) from err
        result = drawn.result
        if result.quarantined is not None:
            LOG.warning("links.json was corrupt; moved aside to %s", result.quarantined.path)
        response.status_code = 201 if result.status == "added" else 200
        return LinkCreatedOut(
            status=result.status,
            from_doc_id=result.link.source,
            to_doc_id=result.link.target,
            rel=result.link.rel,
            note=result.link.note,
        )

    return app

"""``vaultsync search``, ``vaultsync registry`` and ``vaultsync serve``: thin click commands.

Each command resolves the vault as every command does (``--vault``, else the environment, else
``<state>/vault``), brings the index up to date (a stat walk; only changed notes are read) and
prints.  Errors are ``vaultsync.core.errors`` classes: the ``vaultsync`` group prints them.  The
index code loads only when a command runs, and FastAPI and uvicorn (the ``serve`` extra) only
inside ``serve``, so registering these commands makes no other command start slower, and none
but ``serve`` needs the extra installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from vaultsync.core.settings import chatcli_home, state_dir, vault_dir

if TYPE_CHECKING:
    from vaultsync.search.model import Document, IndexReport, SearchResult

__all__ = ["registry", "search", "serve"]

_MAX_LIMIT = 100


def _vault(vault: str | None, state: str | None) -> tuple[Path, Path]:
    root = state_dir(state)
    return vault_dir(vault, root), root


def _fresh(vault: Path, *, rebuild: bool = False) -> IndexReport:
    from vaultsync.search.index import update_index

    report = update_index(vault, rebuild=rebuild, wait=0.0)
    if report.skipped:
        click.echo(f"note: index not updated ({report.skipped}); showing the last one", err=True)
    return report


def _kinds(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(k.strip() for v in values for k in v.split(",") if k.strip()))


def document_json(doc: Document) -> dict[str, Any]:
    """A registry entry as plain data."""
    return {
        "id": doc.id,
        "path": doc.path,
        "title": doc.title,
        "kind": doc.kind,
        "aliases": list(doc.aliases),
        "tags": list(doc.tags),
        "content_hash": doc.content_hash,
        "size": doc.size,
        "engine": doc.engine,
    }


def result_json(text: str, result: SearchResult) -> dict[str, Any]:
    """A search result as plain data: hits, then linked notes with why."""
    return {
        "query": text,
        "mode": result.mode,
        "notice": result.notice,
        "hits": [
            {**document_json(h.document), "score": h.score, "snippet": h.snippet}
            for h in result.hits
        ],
        "linked": [
            {
                **document_json(n.document),
                "why": n.why,
                "direction": n.direction,
                "via": n.via,
                "link_type": n.link_type,
            }
            for n in result.linked
        ],
    }


def result_text(text: str, result: SearchResult) -> str:
    """A search result for people: rank, title, kind, path, snippet; then the linked notes."""
    if not result.hits:
        return f"no note matches {text!r}"
    lines: list[str] = []
    for rank, hit in enumerate(result.hits, 1):
        doc = hit.document
        lines.append(f"{rank:>2}. {doc.title}  [{doc.kind}]  {doc.path}")
        if hit.snippet.strip():
            lines.append("    " + " ".join(hit.snippet.split()))
    if result.linked:
        lines += ["", "Linked notes (not in the results above):"]
        lines += [f"- {n.document.path} — {n.document.title} ({n.why})" for n in result.linked]
    return "\n".join(lines)


def _options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--vault", metavar="DIR", help="The vault [env VAULTSYNC_VAULT_DIR; <state>/vault]"
    )(command)
    return click.option(
        "--state",
        metavar="DIR",
        help="ChatCLI state directory [env VAULTSYNC_STATE_DIR; ~/.chatcli]",
    )(command)


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    metavar="K,…",
    help="Only notes of these kinds (user = your own notes).",
)
@click.option("--folder", default="", metavar="F", help="Only notes under this vault folder.")
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(1, _MAX_LIMIT),
    help="Most results to show.",
)
@click.option(
    "--mode",
    type=click.Choice(["text", "semantic", "hybrid"]),
    default=None,
    help="text (BM25), semantic (by meaning) or hybrid (both, fused)"
    " [hybrid with the semantic extra, else text].",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--reindex", is_flag=True, help="Rebuild the index from scratch first.")
@_options
def search(
    words: tuple[str, ...],
    kinds: tuple[str, ...],
    folder: str,
    limit: int,
    mode: str | None,
    as_json: bool,
    reindex: bool,
    vault: str | None,
    state: str | None,
) -> None:
    """Search every note of the vault, yours included, best first.

    WORDS are all required (text mode); "a phrase" in quotes, word* for a prefix, -word to
    exclude, OR between alternatives.  Semantic mode finds notes by meaning (pip install
    'vaultsync[semantic]').  After the hits come up to 6 notes linked with the best ones.
    """
    from vaultsync.search.embed import choose_mode
    from vaultsync.search.model import SearchQuery
    from vaultsync.search.reader import IndexReader, read_repairing

    root, _ = _vault(vault, state)
    text = " ".join(words)
    chosen, embedder = choose_mode(mode)
    query = SearchQuery(text=text, kinds=_kinds(kinds), folder=folder, limit=limit, mode=chosen)
    _fresh(root, rebuild=reindex)
    reader = IndexReader(root)
    try:
        result = read_repairing(root, reader, lambda r: r.search(query, embedder))
    finally:
        reader.close()
    if result.notice:
        from vaultsync.search.vectors import start_background

        start_background(root)
        click.echo(f"note: {result.notice}", err=True)
    if as_json:
        click.echo(json.dumps(result_json(text, result), ensure_ascii=False, indent=2))
    else:
        click.echo(result_text(text, result))


@click.command()
@click.option("--kind", "kinds", multiple=True, metavar="K,…", help="Only notes of these kinds.")
@click.option("--folder", default="", metavar="F", help="Only notes under this vault folder.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_options
def registry(
    kinds: tuple[str, ...], folder: str, as_json: bool, vault: str | None, state: str | None
) -> None:
    """Every note of the vault: id, kind, size, SHA-256, path and title, sorted by path."""
    from vaultsync.search.reader import IndexReader, read_repairing

    root, _ = _vault(vault, state)
    _fresh(root)
    reader = IndexReader(root)
    try:
        docs, _total = read_repairing(
            root, reader, lambda r: r.documents(kinds=_kinds(kinds), folder=folder, limit=-1)
        )
    finally:
        reader.close()
    if as_json:
        click.echo(json.dumps([document_json(d) for d in docs], ensure_ascii=False, indent=2))
        return
    for doc in docs:
        click.echo(f"{doc.id}\t{doc.kind}\t{doc.size}\t{doc.content_hash}\t{doc.path}\t{doc.title}")


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; not loopback needs VAULTSYNC_API_TOKEN.",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: any free one).",
)
@click.option(
    "--refresh",
    default=5.0,
    show_default=True,
    type=click.FloatRange(0),
    help="Seconds between index refreshes (0: only at start).",
)
@click.option(
    "--no-auth",
    "no_auth",
    is_flag=True,
    help="Serve without a token (loopback only): any local user can read the vault.",
)
@_options
def serve(
    host: str, port: int, refresh: float, no_auth: bool, vault: str | None, state: str | None
) -> None:
    """Serve the vault API over HTTP; OpenAPI at /openapi.json, docs at /docs.

    Every request needs the vault's token (Authorization: Bearer, from .vaultsync/api-token or
    $VAULTSYNC_API_TOKEN); a browser opens the one-time URL printed at start.
    Needs the serve extra: pip install 'vaultsync[serve]'.
    """
    from vaultsync.search.server import run

    root, state_root = _vault(vault, state)
    run(
        root,
        state_root,
        host=host,
        port=port,
        refresh=refresh,
        auth=not no_auth,
        echo=click.echo,
        home=chatcli_home(state),
    )

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
from vaultsync.app.shapes import document_json, result_json
from vaultsync.core.settings import state_dir, vault_dir

if TYPE_CHECKING:
    from vaultsync.app.search import VaultIndex
    from vaultsync.search.model import SearchResult

__all__ = ["registry", "search", "serve"]

_MAX_LIMIT = 100


def _vault(vault: str | None, state: str | None) -> tuple[Path, Path]:
    root = state_dir(state)
    return vault_dir(vault, root), root


def _index(vault: Path, *, rebuild: bool = False) -> VaultIndex:
    """The vault's index brought up to date; why it could not be is said on stderr."""
    from vaultsync.app.search import open_index

    index = open_index(vault, rebuild=rebuild)
    if index.stale_because:
        click.echo(
            f"note: index not updated ({index.stale_because}); showing the last one", err=True
        )
    return index


def _kinds(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(k.strip() for v in values for k in v.split(",") if k.strip()))


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
    root, _ = _vault(vault, state)
    text = " ".join(words)
    with _index(root, rebuild=reindex) as index:
        result = index.search(text, kinds=_kinds(kinds), folder=folder, limit=limit, mode=mode)
    if result.notice:
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
    root, _ = _vault(vault, state)
    with _index(root) as index:
        docs, _total = index.documents(kinds=_kinds(kinds), folder=folder)
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
    from vaultsync.http.server import run

    root, state_root = _vault(vault, state)
    run(
        root,
        state_root,
        host=host,
        port=port,
        refresh=refresh,
        auth=not no_auth,
        echo=click.echo,
    )

"""Full-text search over the vault and the local REST API.

Stages: ``registry`` (walk and read notes) → ``links`` (outgoing links with context) →
``index`` (the SQLite FTS5 index, updated by content hash; file handling in ``database``) →
``query``, ``snippets`` and ``reader`` (ranked search, registry, links; with the ``semantic``
extra, ``embed`` (the local model), ``vectors`` (chunk vectors in the same database, built by
``embedjob`` in the background) and ``fusion`` (text + meaning, merged)) → ``cli`` (``search``,
``registry``, ``serve``) and ``api`` (FastAPI, loaded only by ``serve``; ``auth`` keeps its
token file and the browser's one-time login).

``update_index(vault)`` is the entry point a sync calls.  Nothing is imported here until it is
used, so registering the commands costs the ``vaultsync`` command line nothing at start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vaultsync.search.index import update_index
    from vaultsync.search.model import IndexReport

__all__ = ["IndexReport", "update_index"]


def __getattr__(name: str) -> Any:
    if name == "update_index":
        from vaultsync.search.index import update_index  # noqa: PLC0415 - loaded on first use

        return update_index
    if name == "IndexReport":
        from vaultsync.search.model import IndexReport  # noqa: PLC0415

        return IndexReport
    raise AttributeError(name)

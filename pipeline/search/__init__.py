"""Full-text search over the vault and the local REST API (issue #7).

Stages: ``registry`` (walk and read notes) → ``links`` (outgoing links with context) →
``index`` (the SQLite FTS5 index, updated by content hash) → ``query`` and ``reader``
(ranked search, registry, links) → ``cli`` (``search``, ``registry``, ``serve``) and ``api``
(FastAPI, loaded only by ``serve``).  ``update_index(vault)`` is the entry point a sync calls.
"""

from pipeline.search.index import update_index
from pipeline.search.model import IndexReport

__all__ = ["IndexReport", "update_index"]

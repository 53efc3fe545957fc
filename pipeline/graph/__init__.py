"""Stages 2-3, graph: ``Records`` → ``Graph``, every link resolved; pure but for load and cache.

:mod:`.nodes` (notes, ids, titles, aliases) → :mod:`.structure` (the links the stores record)
→ :mod:`.documents` (context documents and the links they hold) → :mod:`.resolve` (which note
a ``[[target]]`` names) → :mod:`.mentions` (autolinked names) → :mod:`.build` (the whole graph,
sorted).  :mod:`.stats` counts and ranks hubs, :mod:`.query` answers note references.
Edge: :mod:`.cache` (``graph.json`` and the parsed document texts) and :mod:`.load` (read the
stores, build or reuse the cached graph).
"""

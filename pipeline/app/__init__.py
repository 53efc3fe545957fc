"""The use cases: one module per thing a user does, over a resolved :class:`Workspace`.

* :mod:`.workspace` — where the stores and the vault are, and which settings apply;
* :mod:`.sync` — ``sync``, ``check``, ``status`` (where a sync happens);
* :mod:`.each` — ``sync --each``: many state directories, one vault each;
* :mod:`.watch` — the :class:`~vaultsync.app.watch.Watcher`;
* :mod:`.notes` — ``resolve`` and ``release`` one note;
* :mod:`.history` — commits that hold a secret, and their purge;
* :mod:`.links` — drawn links: add, remove, list;
* :mod:`.search` and :mod:`.knowledge` — search and the knowledge queries.

Adapters (``cli``, ``mcp``, ``http``) parse their input, call one of these and present the
frozen outcome; nothing here prints, and each module imports the stages it runs only when it
runs them, so a no-op sync loads no graph.
"""

from vaultsync.app.workspace import Workspace, open_workspace

__all__ = ["Workspace", "open_workspace"]

"""``ViewData`` → one self-contained HTML page; the vault's paths and the packaged assets; edge.

Contract:

* :func:`render_page` is pure given the assets: the page template, its style and script
  (``assets/``) and the vendored libraries (``vendor/``, read in a fixed order) are inlined;
  the page loads nothing (its Content-Security-Policy is ``default-src 'none'``), so it works
  offline, from a file or from ``vaultsync serve``.  The same data gives the same bytes.
* :func:`note_paths` reads the vault's manifest (what vaultsync wrote, at the paths the user
  moved notes to) for the Obsidian links; no vault or no manifest: no links, never an error.
* :func:`graph_page` is the whole edge: the current graph (``graph.json``, rebuilt when
  stale), the paths, the page.  The graph is the only source of titles, built after the store
  boundary masked every secret.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Mapping
from pathlib import Path

from vaultsync.core.settings import Caps
from vaultsync.graph.load import current_graph
from vaultsync.graphview.data import ViewData, view_data
from vaultsync.vault.manifest import MANIFEST, load_manifest

__all__ = ["VENDORED", "graph_page", "note_paths", "render_page"]

VENDORED = ("graphology.umd.min.js", "graphology-library.min.js", "sigma.min.js")
"""The vendored scripts, in load order (``vendor/README.md`` says where each comes from)."""
_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)
_SLOT = re.compile(r"@@(STYLE|DATA|VENDOR|APP)@@")


@functools.cache
def _asset(folder: str, name: str) -> str:
    return (importlib.resources.files("vaultsync.graphview") / folder / name).read_text("utf-8")


def _vendor_scripts() -> str:
    # A source map comment would make a browser's developer tools ask for a file not shipped.
    return "\n".join(
        f"<script>\n{_SOURCE_MAP.sub('', _asset('vendor', name))}\n</script>" for name in VENDORED
    )


def render_page(data: ViewData) -> bytes:
    """The HTML page drawing ``data``: UTF-8, everything inline."""
    slots = {
        "STYLE": _asset("assets", "graphview.css"),
        "DATA": data.to_json(),
        "VENDOR": _vendor_scripts(),
        "APP": _asset("assets", "graphview.js"),
    }
    # One pass: a slot's text is never searched for another slot.
    page = _SLOT.sub(lambda m: slots[m.group(1)], _asset("assets", "page.html"))
    return page.encode("utf-8")


def note_paths(vault: Path) -> Mapping[str, str]:
    """Node id → the vault path of its note, from the vault's manifest (empty when none)."""
    try:
        raw = (vault / MANIFEST).read_bytes()
    except OSError:
        return {}
    manifest = load_manifest(raw)
    return {
        entry.node: path
        for path, entry in sorted(manifest.entries.items())
        if entry.node and path not in manifest.deleted
    }


def graph_page(state: Path, vault: Path, caps: Caps) -> tuple[bytes, ViewData]:
    """The page of the current graph of ``state``, with Obsidian links into ``vault``.

    Raises what :func:`vaultsync.graph.load.current_graph` raises (a missing state directory
    is a ``UsageError``, an unreadable store a ``StoreError``).
    """
    paths = note_paths(vault)
    data = view_data(current_graph(state, caps), paths, vault.name if paths else "")
    return render_page(data), data

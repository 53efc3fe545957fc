"""Front-matter properties typed as Obsidian, Dataview and Bases read them.

Every time is Obsidian's *Date & time* form, every day its *Date* form, every number a YAML
number and every relation a link to a note that exists — checked on the rendered demo store
and the sample vault.  The ``external`` tests read the same values with the real grammars:
Dataview's ``EXPRESSION.date``/``EXPRESSION.embedLink`` from its published package and luxon's
``DateTime.fromISO``, under node (``make js-parsers`` installs them into ``.venv/js``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import DEMO_STORE
from samples import parse_note, render_vault, sample
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.load import read_records
from vaultsync.links.codespans import fenced_blocks
from vaultsync.renderers.base import link_to

ROOT = Path(__file__).resolve().parents[2]
JS_MODULES = ROOT / ".venv" / "js" / "node_modules"
PROBE = Path(__file__).resolve().parents[1] / "js" / "properties.js"

DATE_TIME_KEYS = frozenset(
    {"created", "updated", "last_accessed", "first_seen", "last_seen", "last_active", "saved"}
    | {"time"}
)
DATE_KEYS = frozenset({"date"})
NUMBER_KEYS = frozenset({"confidence", "mentions", "files", "priority"})
LINK_KEYS = frozenset({"project", "context"})

_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LINK = re.compile(r"\[\[([^\[\]|#^]+)\]\]")


@pytest.fixture(scope="module")
def vaults() -> dict[str, dict[str, bytes]]:
    """The rendered demo store and the hand-made sample vault."""
    records = read_records(DEMO_STORE)
    built = build_graph(records, Caps())
    return {
        "demo": render_vault(records, built.graph, built.resolver),
        "sample": render_vault(*sample()),
    }


def properties(files: dict[str, bytes]) -> Iterator[tuple[str, str, Any]]:
    """``(path, key, value)`` for every scalar front-matter value of every note."""
    for path, data in files.items():
        meta, _ = parse_note(data)
        for key, value in meta.items():
            if not isinstance(value, list):
                yield path, key, value


@pytest.mark.parametrize("name", ["demo", "sample"])
def test_every_typed_key_has_its_obsidian_form(
    vaults: dict[str, dict[str, bytes]], name: str
) -> None:
    """Times, days, numbers and links are written in the form of their Obsidian type."""
    files = vaults[name]
    seen: set[str] = set()
    for path, key, value in properties(files):
        seen.add(key)
        if key in DATE_TIME_KEYS:
            assert isinstance(value, str) and _DATE_TIME.fullmatch(value), (path, key, value)
        elif key in DATE_KEYS:
            assert isinstance(value, str) and _DATE.fullmatch(value), (path, key, value)
        elif key in NUMBER_KEYS:
            assert type(value) in (int, float), (path, key, value)
        elif key in LINK_KEYS:
            match = _LINK.fullmatch(value)
            assert match and f"{match.group(1)}.md" in files, (path, key, value)
    assert {"created", "updated", "date", "confidence", "project", "context"} <= seen


def _node_reads(values: list[str]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None or not (JS_MODULES / "obsidian-dataview").is_dir():
        pytest.skip("node, luxon and obsidian-dataview not installed (make js-parsers)")
    done = subprocess.run(
        [node, str(PROBE), str(JS_MODULES)],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        check=True,
    )
    reads: list[dict[str, Any]] = json.loads(done.stdout)
    return reads


@pytest.mark.external
@pytest.mark.parametrize("name", ["demo", "sample"])
def test_dataview_and_luxon_type_every_property(
    vaults: dict[str, dict[str, bytes]], name: str
) -> None:
    """Dataview reads every time and day as a date and every relation as its link; luxon too."""
    found = [(p, k, v) for p, k, v in properties(vaults[name]) if isinstance(v, str)]
    reads = _node_reads([value for _, _, value in found])
    typed = 0
    for (path, key, value), read in zip(found, reads, strict=True):
        where = (path, key, value, read)
        if key in DATE_TIME_KEYS | DATE_KEYS:
            assert read["dataview_date"] and read["luxon_iso"], where
            typed += 1
        elif key in LINK_KEYS:
            assert read["link"] == value[2:-2], where
            typed += 1
        else:
            assert not read["dataview_date"] and read["link"] is None, where
    assert typed > 0


@pytest.mark.external
def test_the_old_forms_fail_the_real_grammars() -> None:
    """The probe tells the forms apart: six fraction digits and "0.70" are not typed."""
    reads = _node_reads(["2026-10-20T08:31:12.045100Z", "0.70", "2026-10-20T08:31:12"])
    assert [r["dataview_date"] for r in reads] == [False, False, True]


_WIKILINK = re.compile(r"\[\[(?:[^\]\n]|\](?!\]))*\]\]")


def listed_links(files: dict[str, bytes]) -> list[str]:
    """Every wikilink vaultsync writes in a list: ``## Links`` lines and Home's entries."""
    found = []
    for path, data in files.items():
        text = data.decode()
        section = text if path == "Home.md" else text.partition("\n## Links\n")[2]
        for line in section.splitlines():
            if line.startswith("- "):
                found.extend(_WIKILINK.findall(line))
    return found


@pytest.mark.external
@pytest.mark.parametrize("name", ["demo", "sample"])
def test_dataview_reads_every_listed_link(vaults: dict[str, dict[str, bytes]], name: str) -> None:
    """Dataview's link grammar reads each listed link as a link to its exact path."""
    links = listed_links(vaults[name])
    assert links
    for written, read in zip(links, _node_reads(links), strict=True):
        assert read["link"] == written[2:-2].partition("|")[0], written


@pytest.mark.external
def test_bracketed_titles_stay_links() -> None:
    """A title with brackets (``[doing] …``) gives a label Dataview still reads as a link."""
    written = link_to("Board/doing/Rotate (card-4)", "[doing] Rotate [TLS] certs")
    assert written == "[[Board/doing/Rotate (card-4)|(doing) Rotate (TLS) certs]]"
    (read,) = _node_reads([written])
    assert read["link"] == "Board/doing/Rotate (card-4)"


@pytest.mark.parametrize("name", ["demo", "sample"])
def test_one_h1_per_note(vaults: dict[str, dict[str, bytes]], name: str) -> None:
    """Every note has exactly one level-1 heading outside code (its own, when it has one)."""
    for path, data in vaults[name].items():
        text = data.decode()
        fences = fenced_blocks(text)
        starts = [m.start() for m in re.finditer(r"^# \S", text, re.MULTILINE)]
        outside = [s for s in starts if not any(a <= s < b for a, b in fences)]
        assert len(outside) == 1, path

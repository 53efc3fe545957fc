"""``vaultsync templates``: what it says each template gets is what the renderers give it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import DEMO_STORE, Done, invoke
from samples import parse_note, render_vault, sample
from vaultsync.core.model import Kind
from vaultsync.core.scrub import scrub
from vaultsync.core.settings import Caps
from vaultsync.graph.build import build_graph
from vaultsync.graph.load import read_records
from vaultsync.render.catalog import catalog
from vaultsync.render.layout import vault_paths
from vaultsync.renderers import RENDERERS, home
from vaultsync.renderers.base import RenderInputs
from vaultsync.renderers.records import RecordIndex

BY_TEMPLATE = {info.template: info for info in catalog()}


def vaultsync(*args: str) -> Done:
    """Run the command line in-process."""
    return invoke(*args)


def top_level(template: str) -> set[str]:
    """The variables the catalog lists for ``template``, nested keys left out."""
    return {v.name for v in BY_TEMPLATE[template].variables if "." not in v.name}


def test_every_template_is_listed() -> None:
    """Each renderer's template and Home's are in the catalog, once."""
    expected = {r.template for r in RENDERERS.values()} | {home.TEMPLATE}
    assert set(BY_TEMPLATE) == expected
    assert len(catalog()) == len(expected)


def test_variables_are_the_real_context_keys() -> None:
    """For every note of the sample vault, the context's keys are the variables listed."""
    records, graph, resolver = sample()
    records = scrub(records)
    index = RecordIndex.build(records)
    paths = vault_paths(graph, records, index=index)
    inputs = RenderInputs(graph=graph, records=index, paths=paths, resolver=resolver)
    kinds = set()
    for node in graph.nodes:
        renderer = RENDERERS.get(node.kind)
        if renderer is None or node.id not in paths:
            continue
        kinds.add(node.kind)
        assert set(renderer.context(node, inputs)) == top_level(renderer.template), node.id
    assert set(home.context(inputs, "Home.md")) == top_level(home.TEMPLATE)
    assert kinds == set(RENDERERS)


@pytest.mark.parametrize("name", ["demo", "sample"])
def test_rendered_properties_are_listed_in_order(name: str) -> None:
    """Every property a note has is one its template's catalog lists, in the listed order."""
    if name == "demo":
        records = read_records(DEMO_STORE)
        built = build_graph(records, Caps())
        files = render_vault(records, built.graph, built.resolver)
    else:
        files = render_vault(*sample())
    for path, data in files.items():
        meta, _ = parse_note(data)
        kind = meta["kind"]
        template = home.TEMPLATE if kind == "home" else RENDERERS[Kind(kind)].template
        listed = BY_TEMPLATE[template].properties
        assert set(meta) <= set(listed), (path, set(meta) - set(listed))
        assert list(meta) == [key for key in listed if key in meta], path


def test_show_prints_variables_properties_and_source() -> None:
    """``templates show fact`` prints the properties, each variable and the built-in source."""
    done = vaultsync("templates", "show", "fact")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("fact: fact.md.j2 (built-in), context FactContext\n")
    assert "  vaultsync_id, kind, aliases, tags, category, confidence," in done.stdout
    for name in ("node_id", "properties", "links[].wikilink", "content"):
        assert f"\n  {name} " in done.stdout
    assert done.stdout.rstrip().endswith("{% endblock %}")


def test_show_json_and_override(tmp_path: Path) -> None:
    """With ``--templates``, the override's source is shown and named; ``--json`` is data."""
    (tmp_path / "fact.md.j2").write_text("{{ content }}\n", encoding="utf-8")
    done = vaultsync("templates", "show", "fact", "--templates", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["source"] == "{{ content }}\n"
    assert shown["from"] == str(tmp_path / "fact.md.j2")
    assert {"name": "content", "type": "str", "doc": ""} in shown["variables"]


def test_unknown_kind_is_a_usage_error() -> None:
    """A kind that does not exist is exit 2 with the kinds that do."""
    done = vaultsync("templates", "show", "facts")
    assert done.returncode == 2
    assert "'facts' is not one of 'card'" in done.stderr


def test_syntax_error_names_file_and_line(demo_state: Path, tmp_path: Path) -> None:
    """A broken override is exit 5 with one line naming its file and line."""
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "fact.md.j2").write_text("{% if content %}\n{{ content\n", encoding="utf-8")
    done = vaultsync(
        "sync", "--state", str(demo_state), "--vault", str(tmp_path / "v"),
        "--templates", str(folder), "--dry-run",
    )  # fmt: skip
    assert done.returncode == 5
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: template {folder / 'fact.md.j2'}, line ")


def test_stray_template_is_a_warning(demo_state: Path, tmp_path: Path) -> None:
    """A template file no kind uses (a misspelt name) is a warning; parts (``_x.j2``) are not."""
    folder = tmp_path / "templates"
    folder.mkdir()
    for name in ("facts.md.j2", "_parts.j2", "fact.md.j2"):
        (folder / name).write_text("{{ title }}\n", encoding="utf-8")
    done = vaultsync(
        "sync", "--state", str(demo_state), "--vault", str(tmp_path / "v"),
        "--templates", str(folder), "--dry-run",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: {folder / 'facts.md.j2'}: no note uses this template"
        " (`vaultsync templates list` names them)"
    ]

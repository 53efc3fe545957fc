"""``sync``/``status``/``check --json``: real outputs match their documented, frozen schemas."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from click.testing import CliRunner
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension
from vaultsync.cli.main import cli
from vaultsync.cli.schemas import SCHEMA_VERSION, SCHEMAS

JSON_PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "json.md"


def run_json(command: str, *args: str) -> tuple[int, dict[str, Any]]:
    """Run ``vaultsync COMMAND ARGS --json``; its exit code and its output, validated."""
    result = CliRunner().invoke(cli, [command, *args, "--json"])
    data = json.loads(result.stdout)
    jsonschema_rs.validator_for(SCHEMAS[command]).validate(data)
    assert data["schema_version"] == SCHEMA_VERSION
    return result.exit_code, data


@pytest.fixture
def where(demo_state: Path, tmp_path: Path) -> list[str]:
    """``--state`` and ``--vault`` options for a fresh vault of the demo store."""
    return ["--state", str(demo_state), "--vault", str(tmp_path / "vault")]


def test_schemas_are_valid_json_schemas() -> None:
    """Each schema is itself a valid draft 2020-12 schema."""
    for name, schema in SCHEMAS.items():
        assert jsonschema_rs.meta.is_valid(schema), name


def test_sync_outputs_match(where: list[str]) -> None:
    """A dry run, a sync and the quick no-op answer all match the sync schema."""
    code, dry = run_json("sync", *where, "--dry-run")
    assert code == 0 and dry["dry_run"] and dry["created"] and dry["commit"] is None
    code, done = run_json("sync", *where)
    assert code == 0 and done["changed"] and done["commit"]
    code, again = run_json("sync", *where)
    assert code == 0 and again["changed"] is False


def test_status_and_check_outputs_match(where: list[str], tmp_path: Path) -> None:
    """Status (an edited and a deleted note) and check, in sync and stale, match the schemas."""
    run_json("sync", *where)
    code, fine = run_json("check", *where)
    assert code == 0 and fine["in_sync"] and fine["differences"] == []
    home = tmp_path / "vault" / "Home.md"
    home.write_text(home.read_text(encoding="utf-8") + "\nmine\n", encoding="utf-8")
    (tmp_path / "vault" / "Projects" / "orbital.md").unlink()
    code, status = run_json("status", *where)
    assert code == 0 and [e["path"] for e in status["edited"]] == ["Home.md"]
    assert status["deleted"] == ["Projects/orbital.md"]
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "fact.md.j2").write_text("{{ content }}\n", encoding="utf-8")
    code, stale = run_json("check", *where, "--templates", str(tmp_path / "templates"))
    assert code == 1 and not stale["in_sync"] and stale["differences"]


def test_schemas_are_frozen(snapshot: SnapshotAssertion) -> None:
    """Any change to a schema shows as a snapshot diff (and needs a new schema_version)."""
    assert snapshot.use_extension(JSONSnapshotExtension) == SCHEMAS


def test_readme_documents_every_key() -> None:
    """The JSON output reference names every top-level key of each schema."""
    section = JSON_PAGE.read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_]+)`", section))
    for name, schema in SCHEMAS.items():
        for part in schema.get("oneOf", [schema]):
            missing = set(part["properties"]) - named
            assert not missing, (name, missing)

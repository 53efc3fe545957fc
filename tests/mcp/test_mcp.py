"""`vaultsync mcp`: the SDK's own stdio client drives every tool of a real server process."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from helpers import clean_env
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from vaultsync.cli.main import cli

Session = Callable[[ClientSession], Awaitable[Any]]


@pytest.fixture
def synced(demo_state: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The demo store and its synced vault."""
    state, vault = demo_state, tmp_path / "vault"
    done = CliRunner().invoke(cli, ["sync", "--state", str(state), "--vault", str(vault)])
    assert done.exit_code == 0, done.stderr
    return state, vault


def session(synced: tuple[Path, Path], body: Session) -> Any:
    """Start `vaultsync mcp` as a child, initialize an SDK client session, run ``body``."""
    state, vault = synced
    env = clean_env()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultsync", "mcp", "--state", str(state), "--vault", str(vault)],
        env=env,
    )

    async def run() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await body(client)

    return anyio.run(run)


async def call(client: ClientSession, tool: str, **arguments: Any) -> tuple[bool, Any]:
    """Call a tool: (is it an error, its structured answer or its error text)."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        first = result.content[0]
        return True, getattr(first, "text", "")
    return False, result.structured_content


def test_every_tool_over_stdio(synced: tuple[Path, Path]) -> None:
    """Initialize, list the tools, call each one; bad references are one-line tool errors."""
    state, _ = synced

    async def body(client: ClientSession) -> dict[str, Any]:
        listed = await client.list_tools()
        answers: dict[str, Any] = {"tools": sorted(t.name for t in listed.tools)}
        answers["search"] = await call(client, "search", query="orbital", kinds=["project"])
        answers["read"] = await call(client, "read_note", note="[[orbital]]")
        answers["links"] = await call(client, "note_links", note="Projects/orbital.md")
        answers["neighbors"] = await call(client, "neighbors", note="orbital")
        answers["link"] = await call(
            client, "link", source="telemetry security", target="orbital", rel="about"
        )
        answers["drawn"] = await call(client, "neighbors", note="telemetry security")
        answers["unlink"] = await call(
            client, "unlink", source="telemetry security", target="orbital"
        )
        answers["recent"] = await call(client, "recent_changes", limit=5)
        answers["health"] = await call(client, "health", query="hubs")
        answers["bad_health"] = await call(client, "health", query="vibes")
        templates = await client.list_resource_templates()
        answers["templates"] = [t.uri_template for t in templates.resource_templates]
        read = await client.read_resource("vault://note/Projects/orbital.md")
        answers["resource"] = getattr(read.contents[0], "text", "")
        answers["missing"] = await call(client, "read_note", note="no such note anywhere")
        answers["ambiguous"] = await call(client, "link", source="troubleshooting", target="x")
        answers["empty"] = await call(client, "search", query="   ")
        answers["after"] = await call(client, "read_note", note="project:orbital")
        return answers

    answers = session(synced, body)
    check_reads(answers)
    check_links(answers, state)
    check_errors(answers)


def check_reads(answers: dict[str, Any]) -> None:
    """The read-only tools answer from the demo vault."""
    assert answers["tools"] == [
        "health", "link", "neighbors", "note_links", "read_note", "recent_changes", "search",
        "unlink",
    ]  # fmt: skip
    assert answers["templates"] == ["vault://note/{+note}"]
    assert answers["resource"] == answers["read"][1]["text"]
    error, health = answers["health"]
    assert not error and health["query"] == "hubs" and health["answer"]
    assert answers["bad_health"][0] and "one of: orphans" in answers["bad_health"][1]
    error, recent = answers["recent"]
    assert not error and recent["changes"][0]["by"] == "sync"
    first = recent["changes"][-1]  # the first sync: many notes, the first 50 listed
    assert len(first["paths"]) == 50 and first["more_paths"] > 0
    error, found = answers["search"]
    assert not error and [h["id"] for h in found["hits"]] == ["project:orbital"]
    error, note = answers["read"]
    assert not error and note["path"] == "Projects/orbital.md" and "orbital" in note["text"]
    error, links = answers["links"]
    assert not error and links["backlinks"] and all("context" in b for b in links["backlinks"])
    error, view = answers["neighbors"]
    assert not error and view["note"]["id"] == "project:orbital" and view["neighbors"]


def check_links(answers: dict[str, Any], state: Path) -> None:
    """A link drawn through MCP is in the graph, marked as the user's, then removed."""
    assert answers["link"] == (
        False,
        {"status": "added", "source": "topic:telemetry security", "target": "project:orbital",
         "rel": "about", "note": ""},
    )  # fmt: skip
    drawn_rels = [r for n in answers["drawn"][1]["neighbors"] for r in n["relations"]]
    assert {"rel": "about", "direction": "out", "origin": "user", "weight": 2} in drawn_rels
    assert answers["unlink"][1]["removed"][0]["rel"] == "about"
    assert "about" in (state / "memory" / "links.json").read_text()  # a tombstone, under its lock


def check_errors(answers: dict[str, Any]) -> None:
    """Bad references are one-line tool errors, and the server goes on."""
    missing, ambiguous, empty = answers["missing"], answers["ambiguous"], answers["empty"]
    assert missing[0] and "no note matches" in missing[1] and "\n" not in missing[1]
    assert ambiguous[0] and "could mean" in ambiguous[1] and ambiguous[1].count("doc:") >= 2
    assert empty[0] and "empty" in empty[1]
    assert answers["after"] == (False, answers["read"][1])  # the server went on

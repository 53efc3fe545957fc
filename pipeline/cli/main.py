"""The ``vaultsync`` command group and its entry point; the commands live beside it.

Only this module prints errors: a ``VaultsyncError`` becomes one ``error: …`` line on stderr
(and a ``hint:`` line when there is one) and the exit code of its class.  Each command's
module (:mod:`.vault`, :mod:`.graph`, :mod:`.links`, :mod:`.config`, :mod:`.knowledge`,
:mod:`.search`, :mod:`.bench`) is imported only when that command runs.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any, ClassVar

import click
from vaultsync.core import process
from vaultsync.core.errors import VaultsyncError


class _ReportedError(click.ClickException):
    """A ``VaultsyncError`` on its way out: one line, its own exit code."""

    def __init__(self, error: VaultsyncError) -> None:
        super().__init__(error.message)
        self.hint = error.hint

    @classmethod
    def of(cls, error: VaultsyncError) -> _ReportedError:
        """Click reads ``exit_code`` from the class, so each code gets its own subclass."""
        coded: type[_ReportedError] = type(
            f"Reported{error.exit_code}", (cls,), {"exit_code": error.exit_code}
        )
        return coded(error)

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.message}", err=True)
        if self.hint:
            click.echo(f"hint: {self.hint}", err=True)


class _Group(click.Group):
    # Each command's module is imported only when it runs (or help lists it): a no-op sync,
    # the most common run, must not pay for loading the graph, search or the knowledge model.
    lazy: ClassVar[dict[str, str]] = {}

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultsyncError as error:
            raise _ReportedError.of(error) from error

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, name = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)


class _TopGroup(_Group):
    lazy: ClassVar[dict[str, str]] = {
        "sync": "vaultsync.cli.vault:sync",
        "watch": "vaultsync.cli.watch:watch",
        "status": "vaultsync.cli.vault:status",
        "check": "vaultsync.cli.vault:check",
        "path": "vaultsync.cli.vault:path",
        "resolve": "vaultsync.cli.vault:resolve",
        "release": "vaultsync.cli.vault:release",
        "history": "vaultsync.cli.history:history",
        "config": "vaultsync.cli.config:config",
        "graph": "vaultsync.cli.graph:graph",
        "link": "vaultsync.cli.links:link",
        "unlink": "vaultsync.cli.links:unlink",
        "links": "vaultsync.cli.links:links",
        "query": "vaultsync.cli.knowledge:query",
        "search": "vaultsync.cli.search:search",
        "registry": "vaultsync.cli.search:registry",
        "serve": "vaultsync.cli.search:serve",
        "mcp": "vaultsync.cli.assistant:mcp_command",
        "bench": "vaultsync.cli.bench:bench_group",
        "templates": "vaultsync.cli.templates:templates",
        "merge-manifest": "vaultsync.cli.gitdriver:merge_manifest",
        "merge-config": "vaultsync.cli.gitdriver:merge_config",
    }


@click.group(cls=_TopGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vaultsync")
def cli() -> None:
    """ChatCLI memory stores → one knowledge graph → an Obsidian vault kept in sync in git."""


def main() -> None:
    """Console-script entry point: run one command, flush, exit with its code.

    A big ``sync``/``check``/``status`` (see ``process.big_run``) leaves through ``os._exit``
    once the output is flushed; every other command exits normally, running atexit handlers.
    """
    process.one_shot = True
    try:
        cli(prog_name="vaultsync")
        code = 0
    except SystemExit as done:
        code = _exit_code(done.code)
    code = _flushed(code)
    if process.leave_fast:
        os._exit(code)
    sys.exit(code)


def _flushed(code: int) -> int:
    """Flush stdout and stderr; a closed pipe (``vaultsync … | head``) turns 0 into 1."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing to tell, and nobody to tell it
            code = code or 1
            _to_devnull(stream)
    return code


def _to_devnull(stream: Any) -> None:
    """Point a stream at ``/dev/null``, so the interpreter's own last flush fails no more."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints it and exits 1
    return 1

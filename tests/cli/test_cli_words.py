"""The command line's words: plurals right, one spelling of neighbors, no internal spec names."""

from __future__ import annotations

import click
from click.testing import CliRunner
from vaultsync.cli.main import cli
from vaultsync.core.text import plural


def every_help(group: click.Group, prefix: tuple[str, ...] = ()) -> dict[str, str]:
    """``--help`` of every command and subcommand, by command line."""
    ctx = click.Context(group)
    found = {" ".join(prefix): CliRunner().invoke(cli, [*prefix, "--help"]).stdout}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            found.update(every_help(command, (*prefix, name)))
        elif command is not None:
            found[" ".join((*prefix, name))] = (
                CliRunner().invoke(cli, [*prefix, name, "--help"]).stdout
            )
    return found


def test_plural() -> None:
    """One of a thing is singular, any other count plural."""
    assert [plural(n, "note") for n in (0, 1, 2)] == ["0 notes", "1 note", "2 notes"]


def test_help_has_one_spelling_and_no_spec_names() -> None:
    """No --help says 'neighbour' or names a seed; each is printed at all."""
    helps = every_help(cli)
    assert len(helps) > 20 and all(text.startswith("Usage: ") for text in helps.values())
    for command, text in helps.items():
        assert "neighbour" not in text.lower(), command
        assert "seed 0" not in text.lower(), command

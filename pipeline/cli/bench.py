"""``vaultsync bench``: benchmark helpers (the full run is ``make bench``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from vaultsync.core.errors import UsageError

if TYPE_CHECKING:
    pass


@click.group(name="bench")
def bench_group() -> None:
    """Benchmark helpers (the full run is `make bench`)."""


@bench_group.command(name="generate")
@click.option("--notes", type=click.IntRange(min=50), default=2800, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def bench_generate(notes: int, seed: int, directory: Path) -> None:
    """Write a synthetic ChatCLI state directory of about NOTES notes into DIRECTORY."""
    from vaultsync.synthetic import generate_store

    if directory.exists() and any(directory.iterdir()):
        raise UsageError(f"{directory}: not empty (the generator writes a fresh state directory)")
    size = generate_store(directory, notes=notes, seed=seed)
    click.echo(
        f"wrote {directory}: {size.facts} facts, {size.documents} documents in "
        f"{size.contexts} contexts, {size.episodes} episodes, {size.topics} topics"
    )

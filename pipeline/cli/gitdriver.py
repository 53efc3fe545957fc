"""``vaultsync merge-manifest O A B``: git's merge driver for ``.vaultsync/manifest.json``.

Registered per clone by ``sync --pull`` (``vault.remote.install_merge_driver``); git runs it
with the common ancestor's, our and their manifest in temporary files, and reads the result
from ``A``.  Exit 0: merged per note (``vault.manifestmerge``); exit 1: a side could not be
read, and git reports the conflict.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command(name="merge-manifest", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
def merge_manifest(base: Path, ours: Path, theirs: Path) -> None:
    """Merge three versions of the vault's manifest per note, into OURS (a git merge driver)."""
    from vaultsync.core.fsio import atomic_write
    from vaultsync.vault.manifestmerge import merge_manifests

    old = base.read_bytes() if base.stat().st_size else None
    merged = merge_manifests(old, ours.read_bytes(), theirs.read_bytes())
    if merged is None:
        click.echo("vaultsync: a manifest side is unreadable; left as a conflict", err=True)
        sys.exit(1)
    atomic_write(ours, merged, mode=ours.stat().st_mode & 0o777, durable=False)

"""``vaultsync merge-manifest`` and ``merge-config O A B``: git's merge drivers for ``.vaultsync/``.

Registered per clone by ``sync --pull`` (``vault.remote.install_merge_driver``); git runs one
with the common ancestor's, our and their file in temporary files, and reads the result from
``A``.  Exit 0: merged per note (``vault.manifestmerge``) or per setting
(``vault.configmerge``); exit 1: a side could not be read or a setting clashes, and git
reports the conflict.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click


def _merge(
    base: Path,
    ours: Path,
    theirs: Path,
    merge: Callable[[bytes | None, bytes, bytes], bytes | None],
) -> None:
    from vaultsync.core.fsio import atomic_write

    old = base.read_bytes() if base.stat().st_size else None
    merged = merge(old, ours.read_bytes(), theirs.read_bytes())
    if merged is None:
        click.echo(f"vaultsync: {ours.name}: left as a conflict for you to settle", err=True)
        sys.exit(1)
    atomic_write(ours, merged, mode=ours.stat().st_mode & 0o777, durable=False)


@click.command(name="merge-manifest", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
def merge_manifest(base: Path, ours: Path, theirs: Path) -> None:
    """Merge three versions of the vault's manifest per note, into OURS (a git merge driver)."""
    from vaultsync.vault.manifestmerge import merge_manifests

    _merge(base, ours, theirs, merge_manifests)


@click.command(name="merge-config", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
def merge_config(base: Path, ours: Path, theirs: Path) -> None:
    """Merge three versions of the vault's saved config per setting, into OURS (a merge driver)."""
    from vaultsync.vault.configmerge import merge_configs

    _merge(base, ours, theirs, merge_configs)

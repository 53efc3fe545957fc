"""``vaultsync resolve`` and ``vaultsync release``: one note, settled by the user; writes.

A merge conflict (``vault.merge``) leaves the user's file as it is and records, in the
manifest entry, the render that could not be merged (``Entry.theirs``).  :func:`resolve`
ends it, under the vault lock, as the user chooses:

* ``show``: the three versions (what vaultsync last wrote, the file, what the stores give
  now), nothing written;
* ``ours``: the file stays as it is;
* ``theirs``: the file gets the stores' version (the edit is replaced);
* ``markers``: git-style conflict markers are written into the file, for the user to edit.

Each choice but ``show`` makes the stores' version the base of later merges, so only what
the stores change next is merged in, and commits the manifest (and the stores' version for
``theirs``) in one commit.  A file that holds conflict markers no recorded conflict explains
(``markers`` wrote them, or a merge git did not finish) is settled too: ``ours`` keeps your
side of each block, ``theirs`` takes the stores' version (by then the base).
:func:`release` hands a note to the user for good: vaultsync never writes or removes it again.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path

from vaultsync.core.errors import UsageError, VaultWriteError
from vaultsync.vault import decide
from vaultsync.vault.manifest import MANIFEST, Entry, Manifest, blob_id, check_path, dump_manifest
from vaultsync.vault.markers import has_conflict_markers, take_side
from vaultsync.vault.vcs import VaultRepo
from vaultsync.vault.write import LOCK_TIMEOUT, VaultFS


class Choice(StrEnum):
    """How the user settles a conflict."""

    SHOW = "show"
    OURS = "ours"
    THEIRS = "theirs"
    MARKERS = "markers"


def _conflict(manifest: Manifest, path: str, ours: bytes | None) -> Entry:
    """The entry of a recorded conflict, or of a note whose file holds conflict markers."""
    if manifest.lost:
        raise UsageError(f"{MANIFEST}: unusable ({manifest.problem or 'missing'}); run a sync")
    entry = manifest.entries.get(path)
    markers = ours is not None and has_conflict_markers(ours)
    if entry is None or not (entry.theirs or markers):
        raise UsageError(f"{path}: no merge conflict is recorded there (`vaultsync status`)")
    return entry


def _blob(repo: VaultRepo | None, blob: str, what: str) -> bytes:
    found = repo.read_blob(blob) if repo is not None else None
    if found is None:
        raise VaultWriteError(f"{what} ({blob[:10]}) is not in the vault's git objects")
    return found


def show(base: bytes, ours: bytes | None, theirs: bytes) -> str:
    """The three versions, each under a heading line."""
    parts = [
        ("what vaultsync last wrote (the merge base)", base),
        ("your file now", ours if ours is not None else b"(deleted)\n"),
        ("what the stores give now", theirs),
    ]
    return "".join(
        f"=== {title} ===\n{data.decode('utf-8', 'replace')}"
        + ("" if data.endswith(b"\n") else "\n")
        for title, data in parts
    )


def resolve(vault: Path, path: str, choice: Choice) -> str:
    """Settle the conflict at ``path``; returns what to print (``show``) or a summary line.

    Raises:
        UsageError: no conflict is recorded at ``path``, or the manifest is unusable.
        VaultWriteError: a version is missing from git, or the file changed meanwhile.
    """
    check_path(path)
    with VaultFS(vault) as fs, fs.lock(timeout=LOCK_TIMEOUT):
        controls = decide.read_controls(fs)
        ours = fs.read(path)
        entry = _conflict(controls.manifest, path, ours)
        repo = VaultRepo.open(vault, create=False)
        if not entry.theirs:  # the file holds markers (``_conflict``)
            return _settle_markers(
                fs, repo, controls, path=path, entry=entry, ours=ours or b"", choice=choice
            )
        theirs = _blob(repo, entry.theirs, "the stores' version")
        if choice is Choice.SHOW:
            base = repo.read_blob(entry.blob) if repo is not None else None
            return show(base if base is not None else b"(not in git)\n", ours, theirs)
        assert repo is not None  # noqa: S101 - _blob raised without one
        data = _resolved_bytes(repo, entry, ours, theirs, choice)
        if data is not None:
            _write(fs, controls, path, data)
        settled = replace(entry, blob=entry.theirs, theirs="")
        # Only vaultsync's bytes enter its commit: the file of ``ours`` and ``markers`` is
        # the user's, for the user to commit.
        ours_now = theirs if choice is Choice.THEIRS else None
        subject = f"resolve {path} ({choice})"
        _commit(fs, repo, controls.manifest, path, settled, note=ours_now, subject=subject)
    return f"resolved {path} ({choice})"


def _settle_markers(
    fs: VaultFS,
    repo: VaultRepo | None,
    controls: decide.ControlFiles,
    *,
    path: str,
    entry: Entry,
    ours: bytes,
    choice: Choice,
) -> str:
    """Settle a file holding conflict markers that no recorded conflict explains.

    Left by ``--markers``, or by a merge git did not finish: the stores' version is the base
    by then.  ``ours`` keeps your side of each block, ``theirs`` takes the stores' version.
    """
    stores = _blob(repo, entry.blob, "the stores' version")
    if choice is Choice.SHOW:
        return show(stores, ours, stores)
    if choice is Choice.MARKERS:
        raise UsageError(f"{path}: it holds conflict markers already; edit them out")
    assert repo is not None  # noqa: S101 - _blob raised without one
    data = stores if choice is Choice.THEIRS else take_side(ours, "yours")
    if data is None:
        raise UsageError(f"{path}: its conflict markers are not in git's form; edit them out")
    _write(fs, controls, path, data)
    if choice is Choice.THEIRS:  # vaultsync's bytes, committed as a sync would
        _commit(fs, repo, controls.manifest, path, entry, note=stores, subject=f"resolve {path}")
    return f"resolved {path} ({choice})"


def _resolved_bytes(
    repo: VaultRepo, entry: Entry, ours: bytes | None, theirs: bytes, choice: Choice
) -> bytes | None:
    """What the file gets (``None``: it stays as it is)."""
    if choice is Choice.THEIRS:
        return theirs
    if choice is Choice.MARKERS:
        base = repo.read_blob(entry.blob) or b""
        return repo.merge_lines(base, ours or b"", theirs)[0]
    return None


def _write(fs: VaultFS, controls: decide.ControlFiles, path: str, data: bytes) -> None:
    """Write ``data`` at ``path`` if the file is still as just read."""
    disk, _racy = fs.scan([path], controls.cache)
    applied = fs.apply({path: data}, (), disk)
    if path not in applied.written:
        raise VaultWriteError(f"{path}: changed while resolving; nothing written, try again")


def _commit(
    fs: VaultFS,
    repo: VaultRepo,
    manifest: Manifest,
    path: str,
    entry: Entry | None,
    *,
    note: bytes | None,
    subject: str,
) -> None:
    """Write the manifest with ``path``'s new entry (``None``: released) and commit it.

    ``note``: vaultsync's bytes now at ``path``, committed too (``None``: the file is the
    user's and stays out of the commit).
    """
    entries = dict(manifest.entries)
    released, deleted = manifest.released, manifest.deleted
    if entry is None:
        entries.pop(path, None)
        released, deleted = released | {path}, deleted - {path}
    else:
        entries[path] = entry
    data = dump_manifest(entries, deleted, released, render_format=manifest.render_format)
    fs.write_control(MANIFEST, data)
    changes: dict[str, bytes | None] = {MANIFEST: data}
    if note is not None:
        changes[path] = note
    repo.commit(changes, fingerprint=blob_id(data), subject=subject)
    repo.sync_index(changes)


def release(vault: Path, path: str) -> str:
    """Hand the note at ``path`` to the user: never written or removed by vaultsync again.

    Raises:
        UsageError: vaultsync never wrote ``path``, or the manifest is unusable.
    """
    check_path(path)
    with VaultFS(vault) as fs, fs.lock(timeout=LOCK_TIMEOUT):
        manifest = decide.read_controls(fs).manifest
        if manifest.lost:
            raise UsageError(f"{MANIFEST}: unusable ({manifest.problem or 'missing'}); run a sync")
        if path in manifest.released:
            return f"{path} is already yours"
        if path not in manifest.entries and path not in manifest.deleted:
            raise UsageError(f"{path}: not a note vaultsync wrote (nothing to release)")
        repo = VaultRepo.open(vault, create=True)
        assert repo is not None  # noqa: S101 - create=True never gives None
        _commit(fs, repo, manifest, path, None, note=None, subject=f"release {path}")
    return f"released {path}: vaultsync will not write or remove it again"

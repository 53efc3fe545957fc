"""Stage 1, extract, the readers' entry point: a state directory → ``Records``; writes nothing.

``read_state`` reads every store that feeds the graph and returns frozen,
deterministically sorted records.  A missing store is empty; a malformed one raises
``StoreError`` (one line: file, ``line:column`` or field path, what is wrong).  A sealed store
that does not open (no key, ``stores.open_sealed`` off, wrong key, tampered, moved) is skipped
like a bad item, whatever its kind: listed in ``Records.skipped`` with what to set, its last
good value in its place, so its notes stay.  Which files those are is :mod:`.sources`' to
say (and its ``store_fingerprint`` tells, from ``stat`` alone, whether any of them changed
since the last run).

Per-item stores (a session, a skill, a context, a daily note, ``board.json``) that cannot be
read are skipped, not fatal (:mod:`.skips`): ``Records.skipped`` lists them and the item's
last good value, from ``last_good``, takes its place.  Every file is opened only if it is a
regular file no larger than ``limit`` bytes.

The folders read besides the state directory's own — the ``skills.extra_folders`` scanned
before ``<state>/skills`` — come in one frozen
:class:`~vaultsync.core.settings.Sources` (``Caps.sources``), chosen by the CLI; nothing here
reads the environment to find them.

``memory/links.json`` is not read here (its own module owns it), but it is part of the
fingerprint, so an edited link invalidates the graph like any other store.

Importing this module imports every reader; ``vaultsync.extract`` itself imports it only when
``read_state`` is first asked for, so the no-op sync never does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from vaultsync.core.errors import StoreError
from vaultsync.core.model import Records
from vaultsync.core.settings import Sources
from vaultsync.extract import contexts, journal, memory, workspace
from vaultsync.extract.jsonio import DEFAULT_LIMIT, Unsealing, size_limit, unsealing
from vaultsync.extract.memo import Memo
from vaultsync.extract.skips import Reading
from vaultsync.extract.sources import EPISODES, INDEX, PROFILE, PROJECTS, TOMBSTONES, TOPICS

__all__ = ["DEFAULT_LIMIT", "read_state", "read_state_keeping"]

T = TypeVar("T")


def read_state(
    state_dir: Path,
    *,
    sources: Sources | None = None,
    last_good: Mapping[str, Any] | None = None,
    limit: int = DEFAULT_LIMIT,
    unseal: Unsealing | None = None,
) -> Records:
    """Read every store under ``state_dir`` into ``Records`` (``links`` left empty).

    ``sources`` names the folders read besides the state directory's own (extra skill
    folders); chosen by the caller, never here.

    Raises:
        StoreError: a store that is not a per-item store is malformed (the memory index, the
            tombstones, topics, projects, profile, episodes); the message names the file and
            the place.
    """
    return read_state_keeping(
        state_dir, sources=sources, last_good=last_good, limit=limit, unseal=unseal
    )[0]


def read_state_keeping(
    state_dir: Path,
    *,
    sources: Sources | None = None,
    last_good: Mapping[str, Any] | None = None,
    limit: int = DEFAULT_LIMIT,
    memo: Memo | None = None,
    unseal: Unsealing | None = None,
) -> tuple[Records, dict[str, Any]]:
    """``read_state``, and the good value of every per-item source (the next ``last_good``).

    ``unseal`` opens sealed stores (keys, store-set root, tenant); after the read its
    ``opened`` lists the files that were sealed (then the caller says ``CLEAR_TEXT_NOTICE``).

    With a ``memo`` (:mod:`.memo`), a file unchanged since the memo's read is not read again:
    the memo's value, already masked, takes its place (``graph.load`` masks the rest).
    """
    if state_dir.exists() and not state_dir.is_dir():
        raise StoreError(path=str(state_dir), what="not a directory")
    extra = sources or Sources()
    # not ``last_good or {}``: asking a lazy mapping its length would load it
    kept = {} if last_good is None else last_good
    reading = Reading(state_dir, last_good=kept, memo=memo)
    stores = memo or _NO_MEMO
    sealing = unsealing(unseal) if unseal is not None else contextlib.nullcontext()
    with size_limit(limit), sealing:

        def fixed(rel: str, key: str, paths: tuple[Path, ...], read: Callable[[], Any]) -> Any:
            """A fixed memory store, from the memo while its files are unchanged."""
            return reading.store(rel, lambda: stores.value(key, paths, read, rel=rel)) or ()

        records = Records(
            facts=fixed(
                INDEX,
                "facts",
                (state_dir / INDEX, state_dir / TOMBSTONES),
                lambda: memory.read_facts(state_dir),
            ),
            topics=fixed(
                TOPICS, "topics", (state_dir / TOPICS,), lambda: memory.read_topics(state_dir)
            ),
            projects=fixed(
                PROJECTS,
                "projects",
                (state_dir / PROJECTS,),
                lambda: memory.read_projects(state_dir),
            ),
            profile=reading.store(PROFILE, lambda: memory.read_profile(state_dir)),
            episodes=fixed(
                EPISODES,
                "episodes",
                (state_dir / EPISODES,),
                lambda: memory.read_episodes(state_dir),
            ),
            journal=journal.read_journal(state_dir, reading),
            sessions=workspace.read_sessions(state_dir, reading),
            skills=workspace.read_skills(state_dir, reading, extra=extra.skills),
            cards=workspace.read_board(state_dir, reading),
            contexts=contexts.read_contexts(state_dir, reading),
            skipped=tuple(sorted(reading.skipped, key=lambda s: s.source)),
        )
    return records, reading.good


class _NoMemo:
    """Every fixed store read (no memo)."""

    @staticmethod
    def value(key: str, paths: tuple[Path, ...], read: Callable[[], T], *, rel: str = "") -> T:
        """``read()``."""
        return read()


_NO_MEMO = _NoMemo()

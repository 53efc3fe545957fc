"""State directory → ``Records`` → ``Graph``, through the graph cache; edge (stores, cache).

The redaction boundary: every string read from the stores here — records, drawn links,
skipped-file warnings, the last good records kept in the cache — passes through
:func:`vaultsync.core.scrub.scrub` before anything else sees it, so nothing downstream (graph,
cache, notes, file names, git, search, API) ever holds a secret in clear.

The CLI, search and the API call these; they print nothing.  ``Records.skipped`` lists the
store files skipped (each ``new`` when not warned about before: the caller prints those).  A
corrupt ``memory/links.json`` is read as empty and listed there; ``build(repair_links=True)``
(the sync) moves it aside first, as the link commands do.  Nothing is written into the state
directory except that move and the fresh ``links.json`` it leaves.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vaultsync.core import cachefile
from vaultsync.core.errors import SealedStoreError, StoreError, UsageError
from vaultsync.core.model import ExplicitLink, Graph, Origin, Records, Skipped
from vaultsync.core.process import paused_gc
from vaultsync.core.scrub import Scrubber, exposed_values, scrub, spread
from vaultsync.core.settings import Caps, cap_fields
from vaultsync.drawn.store import LinkStore, links_path, read_links
from vaultsync.extract import LINKS, read_state_keeping
from vaultsync.extract.atrest import SealKeys
from vaultsync.extract.jsonio import Unsealing, size_limit, unsealing
from vaultsync.extract.memo import Memo
from vaultsync.extract.memocache import load_extract_memo, memo_version_of, save_extract_memo
from vaultsync.extract.memory import read_profile
from vaultsync.extract.tenants import tenant_of
from vaultsync.graph.build import Build, patch_graph
from vaultsync.graph.cache import (
    LastGood,
    graph_fingerprint,
    load_masks,
    load_patch_state,
    mark_history_check,
    marked_new,
    save_last_good,
    save_masks,
    save_patch_state,
)
from vaultsync.graph.documents import context_documents
from vaultsync.graph.graphdb import load_graph, save_graph
from vaultsync.graph.nodes import build_nodes
from vaultsync.graph.parsedtexts import load_parsed_texts, save_parsed_texts
from vaultsync.graph.patch import parsed_texts


def read_records(state: Path, caps: Caps | None = None) -> Records:
    """Every store of a state directory, explicit links included.

    A missing store is empty; a missing state directory is refused, since it is far more often
    a mistyped ``--state`` than an empty memory (and syncing it would empty the vault).
    """
    return _read(state, caps or Caps())


def _read(state: Path, caps: Caps, *, use_memo: bool = True) -> Records:
    """The records, masked; the good values read now kept as the last good ones.

    With ``use_memo``, a store file unchanged since the last read is not read again
    (``extract.memo``): its masked value comes from the memo in the cache folder.
    """
    if not state.is_dir():
        what = "not a directory" if state.exists() else "no such directory"
        raise UsageError(
            f"{state}: {what} (expected a ChatCLI state directory)",
            hint="pass --state DIR or set VAULTSYNC_STATE_DIR",
        )
    known = LastGood(state)
    limit = caps.store_file_mib * 1024 * 1024
    salt, masks = load_masks(state)
    private_name = _private_name(state, caps) if use_memo else None
    memo, version = _memo(state, caps, salt, private_name)
    records, good = read_state_keeping(
        state, sources=caps.sources, last_good=known, limit=limit, memo=memo,
        unseal=unsealing_of(state, caps),
    )  # fmt: skip
    links, problems = links_or_empty(state, kept=known)
    good[LINKS] = links  # kept for a later sync that finds links.json sealed
    profile = records.profile
    name = profile.name if profile is not None and profile.name_private else ""
    if memo is not None and name != private_name:  # the profile changed while being read
        return _read(state, caps, use_memo=False)
    # the last good values are the records' own objects
    masked = Scrubber(masks, salt, private_name=name)
    if memo is not None:
        masked.keep(memo.reused())
    records = masked(replace(records, links=links, skipped=records.skipped + problems))
    masked_good = {masked(rel): masked(value) for rel, value in good.items()}
    # A secret known once is masked everywhere: in every string of every record.
    secrets = masked.secrets

    def everywhere(value: Any) -> Any:
        return spread(masked(value), secrets)

    records = spread(records, secrets)
    masked_good = {
        spread(rel, secrets): spread(value, secrets) for rel, value in masked_good.items()
    }
    skipped = marked_new(state, records.skipped)
    # before the memo: a value read again must replace the last good one its proof named
    masking = [version, masked.digest(""), *sorted(masked.digest(s) for s in secrets)]
    _save_good(state, masked_good, memo, everywhere, masking)
    if memo is not None:
        save_extract_memo(state, version, memo, memo.settle(everywhere))
    _keep_masks(state, salt, masks, masked, reused=memo is not None and bool(memo.kept))
    return replace(records, skipped=skipped)


def _save_good(
    state: Path,
    good: Mapping[str, Any],
    memo: Memo | None,
    everywhere: Callable[[Any], Any],
    masking: list[str],
) -> None:
    """Keep the read's good values (masked) as the last good ones, by the memo's proofs.

    A proven value (``extract.memo.Memo.proven``) is what its file gives under the same
    ``masking``: the memo's version (code, rules, size limit, folders, private name), the
    masks' salt and the read's secrets (salted digests), which decide how it is masked.
    """
    proofs = memo.proven if memo is not None else {}
    proven = {everywhere(rel): proof for rel, proof in proofs.items()}
    save_last_good(state, good, proven=proven, masking="\0".join(masking).encode())


def _keep_masks(
    state: Path, salt: bytes, masks: dict[str, str | None], masked: Scrubber, *, reused: bool
) -> None:
    """Keep what this read masked; ask for a history check when it masked something new.

    ``reused``: some values came from the extract memo, whose texts were not walked again, so
    what was known of them is kept too.
    """
    save_masks(state, salt, {**masks, **masked.learned} if reused else masked.learned, masks)
    if any(value is not None and digest not in masks for digest, value in masked.learned.items()):
        mark_history_check(state)  # newly masked: an earlier sync may have committed it in clear


def _memo(
    state: Path, caps: Caps, salt: bytes, private_name: str | None
) -> tuple[Memo | None, str]:
    """The extract memo of this read, and its version; ``None`` when it is not to be used."""
    if private_name is None:
        return None, ""
    version = memo_version_of(state, caps, private_name)
    return load_extract_memo(state, version, salt), version


def _private_name(state: Path, caps: Caps) -> str | None:
    """The profile's name when it is private, else ``""``; ``None``: the profile cannot be read.

    The full read then reports the error, in its own order.
    """
    try:
        with size_limit(caps.store_file_mib * 1024 * 1024), unsealing(unsealing_of(state, caps)):
            profile = read_profile(state)
    except StoreError:
        return None
    return profile.name if profile is not None and profile.name_private else ""


def unsealing_of(state: Path, caps: Caps) -> Unsealing:
    """How the stores of ``state`` open when ChatCLI sealed them: its keys, the setting."""
    keys = SealKeys(caps.seal_keys)  # the key is never kept, shown or written
    tenant = tenant_of(state)  # ChatCLI binds a tenant's stores to its slug, by their path
    return Unsealing(keys=keys, root=state, tenant=tenant, enabled=caps.open_sealed)


def exposed(state: Path, caps: Caps) -> frozenset[str]:
    """The stores' secrets and private values, unmasked (``vault.history`` looks for them).

    Read as a sync reads the stores (last good values of skipped items included); reads only.
    A store file the extract memo holds is not read again: the memo keeps a file's value only
    when it holds no secret of its own (``extract.memo``), so the files that do are read raw,
    and give every secret.  The private values come from the profile, which is always read.
    """
    salt, masks = load_masks(state)
    private_name = _private_name(state, caps)
    memo = _memo(state, caps, salt, private_name)[0]
    records, _good = read_state_keeping(
        state, sources=caps.sources, last_good=LastGood(state),
        limit=caps.store_file_mib * 1024 * 1024, memo=memo, unseal=unsealing_of(state, caps),
    )  # fmt: skip
    try:
        links: tuple[ExplicitLink, ...] = read_links(state)
    except StoreError:
        links = ()
    # The texts the last sync masked are looked up, not judged again (most of the cost).
    scrubber = Scrubber(masks, salt)
    if memo is not None:
        scrubber.keep(memo.reused())
    return exposed_values((records, links), scrubber)


def links_or_empty(
    state: Path, kept: Mapping[str, Any] | None = None
) -> tuple[tuple[ExplicitLink, ...], tuple[Skipped, ...]]:
    """The drawn links, masked; a corrupt ``links.json`` reads as none, and is listed as skipped.

    A sealed one is listed as skipped too, and its last good links (from ``kept``) stand in.
    """
    try:
        return scrub(read_links(state)), ()
    except SealedStoreError as err:
        last: tuple[ExplicitLink, ...] = (kept or {}).get(LINKS, ())
        return last, (Skipped(source=LINKS, where=err.where, what=f"{err.what}; {err.hint}"),)
    except StoreError as err:
        try:
            digest = hashlib.sha256(links_path(state).read_bytes()).hexdigest()
        except OSError:
            digest = ""
        what = f"{err.what} (read as empty; sync or a link command moves it aside)"
        return (), (Skipped(source=LINKS, where=err.where, what=what, digest=digest),)


def repair_links(state: Path) -> Skipped | None:
    """Move a corrupt ``links.json`` aside (as a link command would); what was done, if anything.

    The file is only touched when it cannot be read: a good or missing store is left alone
    (no lock file is created).
    """
    try:
        read_links(state)
    except SealedStoreError:
        return None  # sealed, not corrupt: never moved aside
    except StoreError:
        pass
    else:
        return None
    quarantined = LinkStore(state).repair(datetime.now(UTC))
    if quarantined is None:
        return None
    where = quarantined.path.name
    return Skipped(
        source=LINKS, where="", what=f"was corrupt ({quarantined.reason}); moved aside to {where}"
    )


def build(state: Path, caps: Caps, *, repair: bool = False) -> tuple[Records, Build]:
    """Read the stores and build the graph, refreshing the graph cache.

    ``repair`` (the sync): a corrupt ``links.json`` is moved aside first.
    """
    moved = repair_links(state) if repair else None
    fingerprint = graph_fingerprint(state, caps)
    # Patched from the last build's state when there is a usable one (graph.patch), else full.
    with paused_gc():  # unpickling makes millions of objects and no cycles
        previous = load_patch_state(state, caps)
    # Patched, the read and the build parse next to nothing new and make no cycles: the
    # collector would only walk their millions of objects again and again (1.7 s of a one-fact
    # sync at 100,000 notes).  A full build parses every document: the collector stays on.
    with paused_gc() if previous is not None else contextlib.nullcontext():
        records = _read(state, caps)
        if moved is not None:
            records = replace(records, skipped=(moved, *records.skipped))
        known = load_parsed_texts(state) if previous is None else parsed_texts(previous)
        built, patch = patch_graph(
            records,
            caps,
            previous,
            fingerprint=fingerprint,
            known=known,
            remember=cachefile.is_resident(),
        )
        # by its delta: a one-fact change rewrites a few rows
        save_graph(state, built.graph, build_id=built.build_id, delta=built.delta)
        save_parsed_texts(state, built.documents, known)
        save_patch_state(state, caps, patch)
        cachefile.hand_over(len(built.graph.nodes))  # written aside, if the command lets them
    return records, built


def current_graph(state: Path, caps: Caps) -> Graph:
    """The graph, from ``graph.db`` while the stores are unchanged, else rebuilt."""
    cached = load_graph(state, graph_fingerprint(state, caps))
    if cached is None:
        return build(state, caps)[1].graph
    # graph.db keeps the shape graph.json exports, which has no room for the notes people
    # write on links they draw; those come back from links.json (a small file).
    drawn = links_or_empty(state)[0]
    notes = {(link.source, link.target, link.rel): link.note for link in drawn if link.note}
    if not notes:
        return cached
    links = tuple(
        replace(link, note=notes.get(link.key, "")) if link.origin is Origin.USER else link
        for link in cached.links
    )
    return Graph(nodes=cached.nodes, links=links, fingerprint=cached.fingerprint)


def every_node_id(records: Records) -> frozenset[str]:
    """Every note the stores hold, including those outside the graph's caps.

    Link compaction collects only links whose note is gone from the *stores*; a note that
    merely fell outside a cap (an old session, an old episode) keeps its links.
    """
    limits: dict[str, Any] = {f.name: 2**62 for f in cap_fields()}
    unlimited = replace(Caps(), **limits)
    documents = tuple(doc for c in records.contexts for doc in context_documents(c, 2**62))
    return frozenset(node.id for node in build_nodes(records, unlimited, documents).nodes)

"""``vault.vaultevents`` and the scan it spares: only notes an event named are looked at."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from vaultsync.core.fsio import RACY_NS
from vaultsync.vault import vaultevents
from vaultsync.vault.manifest import StatCache, StatKey, blob_id, stat_key
from vaultsync.vault.plan import FileKind
from vaultsync.vault.vaultevents import MANY_WRITES, VaultEvents, events_of, watching
from vaultsync.vault.write import VaultFS

CACHE_A: StatKey = (10, 1, 1)
CACHE_B: StatKey = (10, 2, 1)


class Heard:
    """Events as a test tells them: the paths named, or ``None`` (not vouched for)."""

    def __init__(self, paths: frozenset[str] | None = frozenset()) -> None:
        self.paths = paths
        self.asked: list[int] = []
        self.forgotten = 0

    def changed_since(self, moment_ns: int) -> frozenset[str] | None:
        self.asked.append(moment_ns)
        return self.paths

    def forget_before(self, moment_ns: int) -> None:
        self.forgotten = moment_ns


def tied(tmp_path: Path, heard: Heard, cache: StatKey = CACHE_A) -> VaultEvents:
    """Events of a vault whose last scan left the stat cache ``cache``."""
    events = VaultEvents(tmp_path, heard)
    events.began_scan(None)
    events.cache_kept(cache, written=1)
    return events


def test_the_paths_changed_come_relative_to_the_vault(tmp_path: Path) -> None:
    """Events name resolved absolute paths; the scan is given the vault's, relative."""
    inside = os.fspath(tmp_path.resolve() / "Facts" / "a.md")
    events = tied(tmp_path, Heard(frozenset({inside, "/elsewhere/b.md"})))
    assert events.began_scan(CACHE_A) == frozenset({"Facts/a.md"})


def test_another_stat_cache_is_not_built_on(tmp_path: Path) -> None:
    """A stat cache this process did not leave (a cron sync wrote one) means a full scan."""
    assert tied(tmp_path, Heard()).began_scan(CACHE_B) is None
    assert VaultEvents(tmp_path, Heard()).began_scan(CACHE_A) is None  # none left yet


def test_events_that_cannot_vouch_mean_a_full_scan(tmp_path: Path) -> None:
    """Not listening all along since the cache's scan: every note is looked at."""
    assert tied(tmp_path, Heard(None)).began_scan(CACHE_A) is None


def test_they_are_asked_from_the_moment_the_caches_scan_began(tmp_path: Path) -> None:
    """The moment asked about is the scan's start, before any write of that sync."""
    heard = Heard()
    events = VaultEvents(tmp_path, heard)
    before = time.monotonic_ns()
    events.began_scan(None)
    after = time.monotonic_ns()
    events.cache_kept(CACHE_A, written=1)
    events.began_scan(CACHE_A)
    assert before <= heard.asked[0] <= after
    assert heard.forgotten == heard.asked[0]  # what came before that scan is never asked about


def test_a_sync_that_wrote_many_files_leaves_a_full_scan(tmp_path: Path) -> None:
    """Past the kernel's queue, events may be lost unsaid: the next scan looks at everything."""
    events = VaultEvents(tmp_path, Heard())
    events.began_scan(None)
    events.cache_kept(CACHE_A, written=MANY_WRITES + 1)
    assert events.began_scan(CACHE_A) is None


def test_every_note_is_looked_at_every_ten_minutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However often the syncs come, a lost event hides a change for a bounded time only."""
    events = tied(tmp_path, Heard())
    assert events.began_scan(CACHE_A) is not None  # looks at the notes an event named
    events.cache_kept(CACHE_A, written=1)
    later = time.monotonic_ns() + (vaultevents.TRUSTED_S + 1) * 1_000_000_000
    monkeypatch.setattr(time, "monotonic_ns", lambda: later)
    assert events.began_scan(CACHE_A) is None


def test_events_are_followed_for_their_vault_only(tmp_path: Path) -> None:
    """Inside ``watching``, that vault's syncs find the events; others and afterwards, none."""
    with watching(tmp_path, Heard()) as events:
        assert events_of(tmp_path) is events
        assert events_of(tmp_path / "other") is None
    assert events_of(tmp_path) is None


def _written(vault: Path, rel: str, text: str) -> tuple[StatKey, str]:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    old = time.time_ns() - 10 * RACY_NS  # out of the racy window of a cache written now
    os.utime(path, ns=(old, old))
    return stat_key(path.stat()), blob_id(text.encode())


def _cache_of(vault: Path, *paths: str) -> StatCache:
    """A stat cache recording ``paths`` as they are, written now."""
    entries = {
        rel: (stat_key((vault / rel).stat()), blob_id((vault / rel).read_bytes())) for rel in paths
    }
    return StatCache(entries=entries, written_ns=time.time_ns())


class TestScanWithEvents:
    def test_a_note_no_event_named_is_not_looked_at(self, tmp_path: Path) -> None:
        """Its recorded state stands (here the file changed unheard, which a lost event is)."""
        key, blob = _written(tmp_path, "Facts/a.md", "a")
        cache = _cache_of(tmp_path, "Facts/a.md")
        (tmp_path / "Facts" / "a.md").write_text("changed unheard", encoding="utf-8")
        with VaultFS(tmp_path) as fs:
            states, _ = fs.scan(["Facts/a.md"], cache, frozenset())
        assert (states["Facts/a.md"].blob, states["Facts/a.md"].stat) == (blob, key)

    def test_a_note_an_event_named_is_looked_at(self, tmp_path: Path) -> None:
        """Its new bytes are found, as a full scan finds them."""
        _written(tmp_path, "Facts/a.md", "a")
        cache = _cache_of(tmp_path, "Facts/a.md")
        (tmp_path / "Facts" / "a.md").write_text("edited", encoding="utf-8")
        with VaultFS(tmp_path) as fs:
            states, _ = fs.scan(["Facts/a.md"], cache, frozenset({"Facts/a.md"}))
        assert states["Facts/a.md"].blob == blob_id(b"edited")

    def test_a_changed_folder_unsettles_every_note_under_it(self, tmp_path: Path) -> None:
        """A folder renamed away or replaced is one event for all of its notes."""
        _written(tmp_path, "Facts/deep/a.md", "a")
        cache = _cache_of(tmp_path, "Facts/deep/a.md")
        (tmp_path / "Facts" / "deep" / "a.md").unlink()
        with VaultFS(tmp_path) as fs:
            states, _ = fs.scan(["Facts/deep/a.md"], cache, frozenset({"Facts"}))
        assert states["Facts/deep/a.md"].kind is FileKind.ABSENT

    def test_racy_and_unrecorded_notes_are_looked_at(self, tmp_path: Path) -> None:
        """Only a note recorded out of the racy window is taken as recorded."""
        _written(tmp_path, "old.md", "old")
        (tmp_path / "new.md").write_text("new", encoding="utf-8")  # racy: just written
        cache = _cache_of(tmp_path, "old.md", "new.md")
        (tmp_path / "new.md").write_text("newer", encoding="utf-8")
        with VaultFS(tmp_path) as fs:
            states, _ = fs.scan(["old.md", "new.md", "never.md"], cache, frozenset())
        assert states["new.md"].blob == blob_id(b"newer")
        assert states["never.md"].kind is FileKind.ABSENT

"""Stage 6a: file-system access: never outside the vault, atomic, no-clobber, locked."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from vaultsync.core.errors import UnsafePathError, VaultWriteError
from vaultsync.core.fsio import RACY_NS
from vaultsync.vault.manifest import CACHE, MANIFEST, StatCache, blob_id
from vaultsync.vault.plan import ABSENT, FileKind, FileState
from vaultsync.vault.write import TEMP_PATTERN, VaultFS


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A vault folder next to an ``outside`` folder holding one precious file."""
    (tmp_path / "vault").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "precious.md").write_bytes(b"precious\n")
    return tmp_path


@pytest.fixture
def fs(sandbox: Path) -> Iterator[VaultFS]:
    with VaultFS(sandbox / "vault") as opened:
        yield opened


def outside_untouched(sandbox: Path) -> bool:
    outside = sandbox / "outside"
    return (
        sorted(p.name for p in outside.iterdir()) == ["precious.md"]
        and (outside / "precious.md").read_bytes() == b"precious\n"
    )


def temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if TEMP_PATTERN.fullmatch(p.name)]


class TestNeverOutside:
    @pytest.mark.parametrize(
        "path", ["../outside/x.md", "/etc/x.md", "C:/x.md", ".obsidian/x.md", "a/../../x.md"]
    )
    def test_unsafe_paths_raise(self, fs: VaultFS, sandbox: Path, path: str) -> None:
        """Lexically unsafe paths are refused before any write."""
        with pytest.raises(UnsafePathError):
            fs.apply({path: b"x"}, (), {})
        with pytest.raises(UnsafePathError):
            fs.scan([path], StatCache())
        assert outside_untouched(sandbox)

    def test_symlinked_folder_is_blocked(self, fs: VaultFS, sandbox: Path) -> None:
        """A folder that is a symlink (here, out of the vault) is never followed."""
        (sandbox / "vault" / "Facts").symlink_to(sandbox / "outside")
        states, _ = fs.scan(["Facts/precious.md", "Facts/new.md"], StatCache())
        assert {s.kind for s in states.values()} == {FileKind.BLOCKED}
        done = fs.apply(
            {"Facts/new.md": b"x"},
            ["Facts/precious.md"],
            {"Facts/precious.md": states["Facts/precious.md"]},
        )
        assert done.written == {}
        assert set(done.skipped) == {"Facts/new.md", "Facts/precious.md"}
        assert outside_untouched(sandbox)

    def test_symlinked_note_is_not_a_file(self, fs: VaultFS, sandbox: Path) -> None:
        """A symlink at the note's path reads as "other" and is never replaced."""
        (sandbox / "vault" / "n.md").symlink_to(sandbox / "outside" / "precious.md")
        states, _ = fs.scan(["n.md"], StatCache())
        assert states["n.md"].kind is FileKind.OTHER
        done = fs.apply({"n.md": b"x"}, (), {"n.md": ABSENT})
        assert done.skipped == ("n.md",)
        assert (sandbox / "vault" / "n.md").is_symlink()
        assert outside_untouched(sandbox)

    def test_symlink_swapped_in_after_the_scan(self, fs: VaultFS, sandbox: Path) -> None:
        """A folder replaced by a symlink between scan and write is not written through."""
        vault = sandbox / "vault"
        (vault / "F").mkdir()
        (vault / "F" / "a.md").write_bytes(b"a")
        states, _ = fs.scan(["F/a.md", "F/b.md"], StatCache())
        (vault / "F" / "a.md").unlink()
        (vault / "F").rmdir()
        (vault / "F").symlink_to(sandbox / "outside")
        done = fs.apply({"F/a.md": b"new", "F/b.md": b"new"}, (), states)
        assert done.written == {}
        assert outside_untouched(sandbox)
        assert temps(sandbox) == []

    def test_engine_folder_symlink_is_refused(self, fs: VaultFS, sandbox: Path) -> None:
        """``.vaultsync`` as a symlink: no control file, no lock is written through it."""
        (sandbox / "vault" / ".vaultsync").symlink_to(sandbox / "outside")
        with pytest.raises(VaultWriteError):
            fs.write_control(MANIFEST, b"{}")
        with pytest.raises(VaultWriteError), fs.lock(timeout=0.1):
            pass
        assert outside_untouched(sandbox)


class TestAtomicWrites:
    def test_modes_and_stat_data(self, fs: VaultFS, sandbox: Path) -> None:
        """Notes are 0600 and new folders 0700 whatever the umask; returned stat data match."""
        old = os.umask(0o022)
        try:
            done = fs.apply({"A/B/n.md": b"hello\n", "top.md": b"t\n"}, (), {})
        finally:
            os.umask(old)
        vault = sandbox / "vault"
        assert stat.S_IMODE((vault / "A/B/n.md").stat().st_mode) == 0o600
        assert stat.S_IMODE((vault / "A").stat().st_mode) == 0o700
        assert stat.S_IMODE((vault / "A/B").stat().st_mode) == 0o700
        st = (vault / "A/B/n.md").stat()
        assert done.written["A/B/n.md"] == (st.st_size, st.st_mtime_ns, st.st_ino)
        assert (vault / "A/B/n.md").read_bytes() == b"hello\n"
        assert temps(vault) == []

    def test_create_never_clobbers(self, fs: VaultFS, sandbox: Path) -> None:
        """A file that appeared after the scan is kept; our bytes are dropped."""
        (sandbox / "vault" / "n.md").write_bytes(b"the user's\n")
        done = fs.apply({"n.md": b"ours\n"}, (), {"n.md": ABSENT})
        assert done.skipped == ("n.md",)
        assert (sandbox / "vault" / "n.md").read_bytes() == b"the user's\n"
        assert temps(sandbox) == []

    def test_update_only_if_unchanged_since_the_scan(self, fs: VaultFS, sandbox: Path) -> None:
        """An edit saved after the scan (as during rendering) is kept."""
        note = sandbox / "vault" / "n.md"
        note.write_bytes(b"ours v1\n")
        states, _ = fs.scan(["n.md"], StatCache())
        note.write_bytes(b"user edit, saved while we rendered\n")
        done = fs.apply({"n.md": b"ours v2\n"}, ["n.md"], states)
        assert note.read_bytes() == b"user edit, saved while we rendered\n"
        assert set(done.skipped) == {"n.md"}
        states, _ = fs.scan(["n.md"], StatCache())
        done = fs.apply({"n.md": b"ours v2\n"}, (), states)
        assert done.written.keys() == {"n.md"}
        assert note.read_bytes() == b"ours v2\n"


class TestRemove:
    def test_prunes_empty_folders_only(self, fs: VaultFS, sandbox: Path) -> None:
        """Emptied folders go, upward; a folder holding a user file stays; the root stays."""
        vault = sandbox / "vault"
        for rel in ("A/B/x.md", "C/y.md", "C/mine.png", "z.md"):
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_bytes(rel.encode())
        states, _ = fs.scan(["A/B/x.md", "C/y.md", "z.md"], StatCache())
        done = fs.apply({}, ["A/B/x.md", "C/y.md", "z.md"], states)
        assert set(done.removed) == {"A/B/x.md", "C/y.md", "z.md"}
        assert sorted(p.name for p in vault.iterdir()) == ["C"]
        assert [p.name for p in (vault / "C").iterdir()] == ["mine.png"]


class TestTemps:
    def test_only_our_pattern_is_swept(self, fs: VaultFS, sandbox: Path) -> None:
        """Our temp names go; look-alikes and anything in other dot folders stay."""
        vault = sandbox / "vault"
        (vault / "F").mkdir()
        (vault / ".obsidian").mkdir()
        ours = [vault / "F" / ".vaultsync-0123456789ab.tmp", vault / ".vaultsync-abcdefabcdef.tmp"]
        kept = [
            vault / "F" / "vaultsync-0123456789ab.tmp",
            vault / "F" / ".vaultsync-xyz.tmp",
            vault / ".obsidian" / ".vaultsync-0123456789ab.tmp",
        ]
        for path in ours + kept:
            path.write_bytes(b"x")
        assert fs.clean_temps(["F"]) == 1
        assert fs.clean_temps(None) == 1
        assert all(p.exists() for p in kept)
        assert not any(p.exists() for p in ours)


class TestScanCache:
    def test_trusted_entry_skips_hashing(self, fs: VaultFS, sandbox: Path) -> None:
        """A stat match, older than the racy window: the cached blob is used, the file unread."""
        note = sandbox / "vault" / "n.md"
        note.write_bytes(b"text\n")
        old = time.time_ns() - 10 * RACY_NS
        os.utime(note, ns=(old, old))
        st = note.stat()
        fake = "f" * 40
        cache = StatCache(
            entries={"n.md": ((st.st_size, st.st_mtime_ns, st.st_ino), fake)},
            written_ns=time.time_ns(),
        )
        states, racy = fs.scan(["n.md"], cache)
        assert states["n.md"].blob == fake
        assert racy == 0

    def test_racy_entry_is_hashed(self, fs: VaultFS, sandbox: Path) -> None:
        """Modified within the racy window of the cache write: hashed, and counted."""
        note = sandbox / "vault" / "n.md"
        note.write_bytes(b"text\n")
        st = note.stat()
        cache = StatCache(
            entries={"n.md": ((st.st_size, st.st_mtime_ns, st.st_ino), "f" * 40)},
            written_ns=st.st_mtime_ns,
        )
        states, racy = fs.scan(["n.md"], cache)
        assert states["n.md"].blob == blob_id(b"text\n")
        assert racy == 1

    def test_changed_stat_is_hashed(self, fs: VaultFS, sandbox: Path) -> None:
        """Any stat difference (size, mtime, inode) means hashing."""
        note = sandbox / "vault" / "n.md"
        note.write_bytes(b"text\n")
        st = note.stat()
        cache = StatCache(
            entries={"n.md": ((st.st_size + 1, st.st_mtime_ns, st.st_ino), "f" * 40)},
            written_ns=time.time_ns() + 10 * RACY_NS,
        )
        states, _ = fs.scan(["n.md"], cache)
        assert states["n.md"] == FileState(
            kind=FileKind.FILE,
            blob=blob_id(b"text\n"),
            stat=(st.st_size, st.st_mtime_ns, st.st_ino),
        )


class TestControlFiles:
    def test_write_read_remove(self, fs: VaultFS, sandbox: Path) -> None:
        """Engine files round-trip and live only in ``.vaultsync``."""
        fs.write_control(CACHE, b"one")
        fs.write_control(CACHE, b"two", durable=False)
        found = fs.read_control_file(CACHE)
        assert found is not None
        assert found.data == b"two"
        assert found.mtime_ns == (sandbox / "vault" / CACHE).stat().st_mtime_ns
        assert fs.read_control(CACHE) == (found.data, found.mtime_ns)
        assert temps(sandbox) == []
        fs.remove_control(CACHE)
        assert fs.read_control_file(CACHE) is None
        assert stat.S_IMODE((sandbox / "vault" / ".vaultsync").stat().st_mode) == 0o700
        with pytest.raises(UnsafePathError):
            fs.write_control("notes.md", b"x")


class TestLock:
    def test_second_sync_waits_then_times_out(self, sandbox: Path) -> None:
        """While one holder has the vault lock, another waits and gives up with an error."""
        with (
            VaultFS(sandbox / "vault") as one,
            VaultFS(sandbox / "vault") as two,
            one.lock(timeout=1),
            pytest.raises(VaultWriteError, match="another sync holds the vault lock") as caught,
            two.lock(timeout=0.3),
        ):
            pass
        assert caught.value.hint == "waited 0.3 s; try again when it has finished"

    def test_lock_file_symlink_is_refused(self, sandbox: Path) -> None:
        """A symlink in place of ``.vaultsync/lock`` is an error, never followed."""
        control = sandbox / "vault" / ".vaultsync"
        control.mkdir()
        (control / "lock").symlink_to(sandbox / "outside" / "precious.md")
        with (
            VaultFS(sandbox / "vault") as fs,
            pytest.raises(VaultWriteError, match="cannot open the lock"),
            fs.lock(timeout=1),
        ):
            pass
        assert outside_untouched(sandbox)

    def test_holders_are_serialized(self, sandbox: Path) -> None:
        """The second holder gets the lock as soon as the first releases it."""
        events: list[str] = []
        first_in = threading.Event()

        def hold(name: str, pause: float) -> None:
            with VaultFS(sandbox / "vault") as fs, fs.lock(timeout=5):
                events.append(f"{name} in")
                first_in.set()
                time.sleep(pause)
                events.append(f"{name} out")

        a = threading.Thread(target=hold, args=("a", 0.2))
        a.start()
        first_in.wait()
        hold("b", 0)
        a.join()
        assert events == ["a in", "a out", "b in", "b out"]

    def test_shared_lock_creates_nothing(self, sandbox: Path) -> None:
        """Read-only commands on a vault without ``.vaultsync`` leave it that way."""
        with VaultFS(sandbox / "vault") as fs, fs.lock(timeout=1, shared=True):
            pass
        assert list((sandbox / "vault").iterdir()) == []

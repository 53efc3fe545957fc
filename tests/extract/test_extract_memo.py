"""The extract memo: a read that reuses unchanged store files equals a full read, and keeps
no secret."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.core import cachefile, fsio
from vaultsync.core.errors import StoreError
from vaultsync.core.settings import Caps
from vaultsync.extract import LINKS, jsonio
from vaultsync.extract import memo as memo_module
from vaultsync.extract.memo import Memo, stamp
from vaultsync.graph import cache, load
from vaultsync.graph.load import _read

PAT = "ghp_" + "R8vK2mQ9xL4tW7nZ3pB6" + "yH1cF5dJ0sG2aE8uXk4i"
NAME = "Ana Ribeiro"
TEXTS = ("plain words here", f"{NAME} wrote this", f"token {PAT}", "x", "ctl\x01char text")
CAPS = Caps()


def write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def facts_json(texts: dict[int, str]) -> str:
    return json.dumps(
        [
            {"id": f"f{i}", "content": text, "created_at": "2026-01-02T03:04:05Z"}
            for i, text in texts.items()
        ]
    )


def seed(state: Path) -> None:
    """A small store with one file of every kind."""
    write(state / "memory" / "memory_index.json", facts_json({0: "first fact", 1: TEXTS[1]}))
    write(state / "memory" / "topics.json", json.dumps([{"name": "auth", "summary": TEXTS[2]}]))
    write(state / "memory" / "user_profile.json", json.dumps({"name": NAME}))
    write(state / "sessions" / "s0.json", json.dumps({"title": "first session"}))
    write(state / "skills" / "k0" / "SKILL.md", "---\nname: k0\ndescription: a skill\n---\nbody\n")
    write(state / "contexts" / "c0.json", context_json("c0", "doc text"))
    write(state / "memory" / "202601" / "20260101.md", "a day\n")
    write(state / "board.json", json.dumps({"cards": [{"id": "card-1", "title": "a card"}]}))


def context_json(ident: str, content: str) -> str:
    files = [{"Path": f"docs/{ident}.md", "Content": content}, {"Path": "b.md", "Content": "b"}]
    return json.dumps({"id": ident, "name": ident, "files": files})


OPS = st.one_of(
    st.tuples(st.just("fact"), st.integers(0, 2), st.sampled_from(TEXTS)),
    st.tuples(st.just("index-corrupt"), st.just(0), st.just("")),
    st.tuples(st.just("session"), st.integers(0, 2), st.sampled_from((*TEXTS, None, "{"))),
    st.tuples(st.just("skill"), st.integers(0, 2), st.sampled_from((*TEXTS, None, "[: "))),
    st.tuples(st.just("context"), st.integers(0, 1), st.sampled_from((*TEXTS, None, "{"))),
    st.tuples(st.just("journal"), st.integers(1, 2), st.sampled_from((*TEXTS, None, "\xff"))),
    st.tuples(st.just("board"), st.just(0), st.sampled_from((*TEXTS, "{"))),
    st.tuples(st.just("profile"), st.integers(0, 1), st.sampled_from((NAME, "Bo Lund"))),
    st.tuples(st.just("touch"), st.integers(0, 50), st.just("")),
    st.tuples(st.just("same-size"), st.integers(0, 50), st.just("")),
    st.tuples(st.just("forget"), st.just(0), st.just("")),  # a new process: only files remain
    st.tuples(st.just("flush"), st.just(0), st.just("")),  # what a resident one left is written
)


def _item_file(state: Path, kind: str, n: int) -> Path:
    return {
        "session": state / "sessions" / f"s{n}.json",
        "skill": state / "skills" / f"k{n}" / "SKILL.md",
        "context": state / "contexts" / f"c{n}.json",
        "journal": state / "memory" / "202601" / f"2026010{n}.md",
    }[kind]


def _item_bytes(kind: str, n: int, text: str) -> str | bytes:
    if kind == "session":
        return text if text == "{" else json.dumps({"title": text})
    if kind == "skill":
        broken = text if text == "[: " else ""
        return f"---\nname: k{n}\ndescription: {json.dumps(text)}\n{broken}\n---\n"
    if kind == "context":
        return text if text == "{" else context_json(f"c{n}", text)
    return text.encode("latin-1") if text == "\xff" else text  # a journal note


def _fixed(state: Path, kind: str, n: int, text: str) -> None:
    if kind == "fact":
        write(state / "memory" / "memory_index.json", facts_json({0: "first fact", n: text}))
    elif kind == "index-corrupt":
        write(state / "memory" / "memory_index.json", "[{")
    elif kind == "board":
        board = {"cards": [{"id": "card-1", "title": text}]}
        write(state / "board.json", text if text == "{" else json.dumps(board))
    elif kind == "profile":
        meta = {"name": {"sensitive": True}} if n else {}
        profile = {"name": text, "field_meta": meta}
        write(state / "memory" / "user_profile.json", json.dumps(profile))
    elif kind in ("touch", "same-size"):
        change(state, n, same_size=kind == "same-size")


def apply(state: Path, op: tuple[str, int, str | None]) -> None:
    """One change to a store (the same bytes in every copy)."""
    kind, n, text = op
    if kind in ("session", "skill", "context", "journal"):
        path = _item_file(state, kind, n)
        if text is None:
            path.unlink(missing_ok=True)
        else:
            write(path, _item_bytes(kind, n, text))
    else:
        _fixed(state, kind, n, text or "")


def change(state: Path, n: int, *, same_size: bool) -> None:
    """Touch the n-th store file, or edit it keeping its size and mtime."""
    files = sorted(p for p in state.rglob("*") if p.is_file())
    path = files[n % len(files)]
    info = path.stat()
    if same_size:
        data = path.read_bytes()
        flipped = data.replace(b"a", b"e", 1) if b"a" in data else data.replace(b"e", b"a", 1)
        path.write_bytes(flipped)
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    else:
        os.utime(path)


def read(state: Path, *, memo: bool) -> Any:
    """What one sync's extract gives, and the last good values it keeps."""
    kept: dict[str, Any] = {}

    def keep(state: Path, good: dict[str, Any], **proofs: Any) -> bool:
        kept.update(good)
        return cache.save_last_good(state, good, **proofs)

    try:
        with mock.patch.object(load, "save_last_good", keep):
            records = _read(state, CAPS, use_memo=memo)
    except StoreError as err:
        return ("error", Path(err.path).name, err.where, err.what)
    return records, kept


@contextmanager
def racy_window(ns: int) -> Iterator[None]:
    with mock.patch.object(fsio, "RACY_NS", ns):
        yield


@settings(max_examples=40)
@given(ops=st.lists(OPS, min_size=1, max_size=8), window=st.sampled_from((0, fsio.RACY_NS)))
def test_memo_read_equals_full_read(ops: list[tuple[str, int, str | None]], window: int) -> None:
    """After every edit, addition, removal, corruption or touch, a memo read equals a full read."""
    # resident, as ``watch`` is: a later read may start from the very memo held in memory
    with tempfile.TemporaryDirectory() as folder, racy_window(window), cachefile.resident():
        root = Path(folder)
        with mock.patch.dict(os.environ, {"VAULTSYNC_CACHE_DIR": str(root / "cache")}):
            memo_state, full_state = root / "a", root / "b"
            for state in (memo_state, full_state):
                seed(state)
            assert read(memo_state, memo=True) == read(full_state, memo=False)
            for op in ops:
                if op[0] == "forget":
                    cachefile.forget()
                if op[0] == "flush":
                    cachefile.flush()
                for state in (memo_state, full_state):
                    apply(state, op)
                assert read(memo_state, memo=True) == read(full_state, memo=False)


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A seeded store whose cache lives in ``tmp_path/cache``; no racy window."""
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fsio, "RACY_NS", 0)
    seed(tmp_path / "state")
    return tmp_path / "state"


def test_unchanged_records_are_the_same_objects(state: Path) -> None:
    """A second read in a resident process gives an unchanged file's very records."""
    with cachefile.resident():
        first = _read(state, CAPS)
        second = _read(state, CAPS)
    assert second.contexts[0] is first.contexts[0]
    assert second.sessions[0] is first.sessions[0]


def test_a_resident_read_leaves_its_masks_for_the_flush(state: Path) -> None:
    """In ``watch``, the masked texts are written at ``cachefile.flush`` (after the commit),
    not on the way to it; until then the next read takes them from memory."""
    masks = cachefile.cache_dir(state) / cache.MASKS_FILE
    with cachefile.resident():
        first = _read(state, CAPS)
        assert not masks.exists()
        assert cache.load_masks(state)[1]  # held: what the read masked
        cachefile.flush()
        assert masks.exists()
    assert _read(state, CAPS) == first  # a new process, from the files


def test_unchanged_files_are_not_read_again(state: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process reading unchanged stores opens no unchanged context file."""
    _read(state, CAPS)
    opened: list[Path] = []
    real = jsonio.load_json

    def spy(path: Path) -> object:
        opened.append(path)
        return real(path)

    monkeypatch.setattr("vaultsync.extract.contexts.load_json", spy)
    _read(state, CAPS)
    write(state / "contexts" / "c1.json", context_json("c1", "new"))
    _read(state, CAPS)
    assert opened == [state / "contexts" / "c1.json"]


def test_one_changed_fact_keeps_the_other_facts(state: Path) -> None:
    """A fact edited: the store is read again, the unchanged facts are the same objects (in a
    resident process)."""
    with cachefile.resident():
        first = _read(state, CAPS)
        write(state / "memory" / "memory_index.json", facts_json({0: "first fact", 1: "edited"}))
        second = _read(state, CAPS)
    assert second.facts[0] is first.facts[0]
    assert second.facts[1].content == "edited"


def test_a_time_written_otherwise_is_not_taken_for_the_old_one(state: Path) -> None:
    """A fact whose time names the same instant in another zone is read as now written."""
    index = state / "memory" / "memory_index.json"
    fact = {"id": "f0", "content": "a fact", "created_at": "2026-01-02T04:04:05+01:00"}
    write(index, json.dumps([fact]))
    _read(state, CAPS)
    write(index, json.dumps([{**fact, "created_at": "2026-01-02T03:04:05Z"}, {"id": "f1"}]))
    memo_read = _read(state, CAPS).facts[0]
    assert repr(memo_read) == repr(_read(state, CAPS, use_memo=False).facts[0])


def test_file_changed_within_the_racy_window_is_read_again(tmp_path: Path) -> None:
    """Stat data equal to the memo's do not prove a file unchanged when it changed near the
    memo's writing."""
    path = tmp_path / "f.json"
    write(path, "{}")
    mtime = path.stat().st_mtime_ns
    key = Memo().digest("p|k")
    entries, its_file = {key: ((stamp(path),), "old")}, memo_module.part(key)
    near = Memo(entries=entries, written={its_file: mtime + fsio.RACY_NS // 2})
    later = Memo(
        entries=entries,
        written={its_file: max(mtime, path.stat().st_ctime_ns) + 2 * fsio.RACY_NS},
    )
    assert near.item("p|k", path)[0] is False
    assert later.item("p|k", path)[:2] == (True, "old")


def test_memo_holds_no_secret(state: Path) -> None:
    """A secret and a private name in the stores never reach the memo's bytes; files are 0600."""
    write(
        state / "memory" / "user_profile.json",
        json.dumps({"name": NAME, "field_meta": {"name": {"sensitive": True}}}),
    )
    write(state / "sessions" / "s1.json", json.dumps({"title": f"{NAME} and {PAT}"}))
    write(state / "contexts" / "c1.json", context_json("c1", f"key {PAT}"))
    write(state / "memory" / "memory_index.json", facts_json({0: f"{NAME} uses {PAT}", 1: "plain"}))
    _read(state, CAPS)
    memos = sorted((state.parent / "cache").rglob("extract-memo-*.pickle"))
    assert memos
    for memo in memos:
        data = memo.read_bytes()
        assert PAT.encode() not in data
        assert b"Ribeiro" not in data
        assert memo.stat().st_mode & 0o777 == 0o600


def test_corrupt_memo_reads_everything(state: Path) -> None:
    """A memo file that does not load is ignored: the read equals a full read."""
    _read(state, CAPS)
    for memo in (state.parent / "cache").rglob("extract-memo-*.pickle"):
        memo.write_bytes(memo.read_bytes()[:60] + b"garbage")
    assert _read(state, CAPS) == _read(state, CAPS, use_memo=False)


def _one_shot_read(state: Path, *, memo: bool = True) -> None:
    """One sync's read in a new process (nothing held from an earlier one)."""
    cachefile.forget()
    with contextlib.suppress(StoreError):
        _read(state, CAPS, use_memo=memo)


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(OPS, min_size=1, max_size=8), window=st.sampled_from((0, fsio.RACY_NS)))
def test_last_good_kept_by_proofs_equals_a_full_read(
    ops: list[tuple[str, int, str | None]], window: int
) -> None:
    """New processes keep, by the memo's proofs, the last good values a full read keeps."""
    with tempfile.TemporaryDirectory() as folder, racy_window(window):
        root = Path(folder)
        states = (root / "a", root / "b")
        for state in states:
            seed(state)
        for op in [("touch", 0, ""), *ops]:
            for state, cache_dir in zip(states, ("memo", "full"), strict=True):
                apply(state, op)
                with mock.patch.dict(os.environ, {"VAULTSYNC_CACHE_DIR": str(root / cache_dir)}):
                    _one_shot_read(state, memo=cache_dir == "memo")
            with mock.patch.dict(os.environ, {"VAULTSYNC_CACHE_DIR": str(root / "memo")}):
                kept = cache.load_last_good(states[0])
            with mock.patch.dict(os.environ, {"VAULTSYNC_CACHE_DIR": str(root / "full")}):
                assert kept == cache.load_last_good(states[1])


def _writes_of(state: Path) -> list[str]:
    """The cache files one new process's read writes, in order."""
    written: list[str] = []
    real = cachefile.write

    def write(path: Path, head: bytes, payload: bytes, **options: Any) -> bool:
        written.append(path.name)
        return real(path, head, payload, **options)

    with mock.patch.object(cachefile, "write", write):
        _one_shot_read(state)
    return written


def test_unchanged_last_good_parts_are_not_pickled(state: Path) -> None:
    """From the first read on, a read pickles only the last good parts holding a value that is
    not proven (read anew from a changed file, or from a fixed store)."""
    _one_shot_read(state)  # the first read: its values proven by their files' stamps
    apply(state, ("fact", 1, "another fact"))
    pickled: list[dict[str, Any]] = []

    def dumps(value: dict[str, Any], protocol: int) -> bytes:
        pickled.append(value)
        return pickle.dumps(value, protocol=protocol)

    counting = types.SimpleNamespace(dumps=dumps, HIGHEST_PROTOCOL=pickle.HIGHEST_PROTOCOL)
    with mock.patch.object(cache, "pickle", counting):
        _one_shot_read(state)
    # the changed facts, the profile (read every time) and the drawn links (never memoised)
    unproven = {"memory/memory_index.json", "memory/user_profile.json", LINKS}
    assert pickled
    assert all(set(part) & unproven for part in pickled)


def test_last_good_is_written_before_the_memo_that_proves_it(state: Path) -> None:
    """A process killed between the two writes leaves no proof naming a value it replaced."""
    _one_shot_read(state)
    apply(state, ("context", 0, "doc text, changed"))
    written = _writes_of(state)
    good = max(i for i, name in enumerate(written) if name.startswith("last-good-"))
    memo = min(i for i, name in enumerate(written) if name.startswith("extract-memo-"))
    assert good < memo


def test_a_last_good_part_not_written_is_not_trusted_later(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value read again under the same stat data, whose last good part could not be written,
    replaces the old one at the next read, not kept by the proof that named the old one."""
    context = state / "contexts" / "c0.json"
    _one_shot_read(state)
    _one_shot_read(state)  # its part now said by the memo's proof
    frozen = stamp(context)
    real_stamp = memo_module.stamp
    monkeypatch.setattr(
        memo_module, "stamp", lambda path: frozen if path == context else real_stamp(path)
    )
    write(context, context_json("c0", "doc text, same stat data"))
    real_write = cachefile.write

    def failing(path: Path, head: bytes, payload: bytes, **options: Any) -> bool:
        return False if path.name.startswith("last-good-") else real_write(path, head, payload)

    racy = mock.patch.object(memo_module, "is_racy", return_value=True)
    with racy, mock.patch.object(cachefile, "write", failing):
        _one_shot_read(state)  # read again (racy): the memo takes the new text
    _one_shot_read(state)
    kept = [value for rel, value in cache.load_last_good(state).items() if "c0" in rel]
    assert kept and "same stat data" in repr(kept)


def test_a_secret_learned_since_masks_a_proven_last_good_value(state: Path) -> None:
    """A last good value the memo gave is kept with a secret learned since masked, not as the
    proof wrote it."""
    plain = "Zr4tQ8wLm2Vx9Kp7"
    session = state / "sessions" / "s2.json"  # a part holding no fixed store: said by proofs
    write(session, json.dumps({"title": f"deploy with {plain}"}))
    _one_shot_read(state)
    _one_shot_read(state)  # the session's part now said by the memo's proof
    apply(state, ("fact", 1, f"staging db PGPASSWORD: {plain}"))
    _one_shot_read(state)
    kept = repr(cache.load_last_good(state))
    assert "deploy with" in kept
    assert plain not in kept


def test_a_changed_context_rewrites_a_sixteenth_of_the_contexts_memo(state: Path) -> None:
    """One context changed among many: one of the contexts' memo files is written again."""
    for n in range(1, 48):
        write(state / "contexts" / f"c{n}.json", context_json(f"c{n}", f"doc {n}"))
    _one_shot_read(state)
    apply(state, ("context", 0, "doc text, changed"))
    memo_files = [name for name in _writes_of(state) if name.startswith("extract-memo-contexts")]
    assert len(memo_files) == 1
    shards = list(cachefile.cache_dir(state).glob("extract-memo-contexts-*.pickle"))
    assert len(shards) > 8  # 48 contexts, by their keys' first hex digit


def test_a_memo_file_no_part_uses_is_removed(state: Path) -> None:
    """A memo file of a part nothing lives in any more (an older layout's) does not stay."""
    _one_shot_read(state)
    stale = cachefile.cache_dir(state) / "extract-memo-contexts-read_context.pickle"
    stale.write_bytes(b"an older layout's file")
    apply(state, ("fact", 1, "another fact"))
    _one_shot_read(state)
    assert not stale.exists()


def test_a_name_made_private_since_masks_a_proven_last_good_value(state: Path) -> None:
    """A last good value proven by its file's stamps is kept masked once the profile's name
    becomes private, not as the proof wrote it."""
    write(state / "sessions" / "s2.json", json.dumps({"title": f"notes by {NAME}"}))
    _one_shot_read(state)
    _one_shot_read(state)
    apply(state, ("profile", 1, NAME))  # the name is private from now on
    _one_shot_read(state)
    kept = repr(cache.load_last_good(state))
    assert "notes by" in kept
    assert NAME not in kept


def test_a_value_read_from_a_racy_file_is_not_proven(tmp_path: Path) -> None:
    """A file changed within git's racy window may change again under the same stamps: the
    value read from it is not proven by them; one changed before the window is."""
    path = tmp_path / "s.json"
    write(path, "{}")
    memo = Memo()
    with racy_window(10**12):  # everything is recent
        memo.offer_item("p|k", (stamp(path),), "value", "s.json")
    assert "s.json" not in memo.proven
    with racy_window(0):
        memo.offer_item("p|k", (stamp(path),), "value", "s.json")
    assert "s.json" in memo.proven

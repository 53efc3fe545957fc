"""A merge left waiting is finished by the next sync; one id is never two notes (issue 34, 6).

When the stores move a note (its path changes) within seconds of the user's edit of it (``git
pull && vaultsync sync``), the sync writes the new path as rendered and leaves the merge for the
next sync, since an editor may still be saving the file.  The next sync must merge the edit into
the note at its new path and remove the old file; until then ``check`` is red.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from helpers import invoke
from hypothesis import example, given, settings
from hypothesis import strategies as st
from syncdriver import make_spec
from vaultsync.core.model import NoteSpec
from vaultsync.vault.sync import check_vault, sync_vault

CARD = "Board/{column}/Write the Kubernetes operator upgrade guide (card-6).md"
EDIT = "My own line, written just before the pull.\n"


def age(path: Path) -> None:
    """Move a file's mtime a minute back: the editor that saved it is long done."""
    past = time.time_ns() - 60_000_000_000
    os.utime(path, ns=(past, past))


def move_card(state: Path, card: str, column: str) -> None:
    """The stores move a card to another column (its note's path changes)."""
    board = state / "board.json"
    data = json.loads(board.read_text())
    next(c for c in data["cards"] if c["id"] == card)["column"] = column
    board.write_text(json.dumps(data))


def holding_id(vault: Path, node: str) -> list[str]:
    """The vault's notes whose front matter names ``node``."""
    needle = f'vaultsync_id: "{node}"\n'
    return sorted(
        p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if needle in p.read_text()
    )


def test_a_merge_left_waiting_is_finished_by_the_next_sync(
    demo_state: Path, tmp_path: Path
) -> None:
    """Edit, pull a move, sync at once: check is red; the next sync merges; one file, green."""
    vault = tmp_path / "vault"
    where = ["--state", str(demo_state), "--vault", str(vault)]
    assert invoke("sync", *where).returncode == 0
    old = vault / CARD.format(column="backlog")
    with old.open("a", encoding="utf-8") as note:
        note.write(EDIT)
    move_card(demo_state, "card-6", "doing")
    first = invoke("sync", *where)
    assert "merge left for the next sync" in first.stdout, first.stdout
    assert holding_id(vault, "card:card-6") == sorted(
        [CARD.format(column="backlog"), CARD.format(column="doing")]
    )
    assert invoke("check", *where).returncode != 0
    age(old)
    assert invoke("sync", *where).returncode == 0
    assert holding_id(vault, "card:card-6") == [CARD.format(column="doing")]
    assert (vault / CARD.format(column="doing")).read_text().endswith(EDIT)
    assert invoke("check", *where).returncode == 0


def note_text(node: str, folder: int, version: int) -> str:
    """A note that names its folder, as a card names its column."""
    return f"id: {node}\nfolder {folder}\nversion {version}\n\nthe body\nof the note\n"


class Stores:
    """Notes a, b, c, each with a path (a folder that changes) and a version."""

    def __init__(self) -> None:
        self.folder = dict.fromkeys("abc", 0)
        self.version = dict.fromkeys("abc", 0)

    def specs(self) -> list[NoteSpec]:
        return [
            make_spec(
                f"F{self.folder[n]}/{n}.md", note_text(n, self.folder[n], self.version[n]), node=n
            )
            for n in sorted(self.folder)
        ]

    def path(self, node: str) -> str:
        return f"F{self.folder[node]}/{node}.md"


OPS = st.lists(
    st.tuples(
        st.sampled_from(("edit", "edit-aged", "move", "update", "sync", "age")),
        st.sampled_from("abc"),
    ),
    min_size=1,
    max_size=12,
)


def files_of(vault: Path, node: str) -> list[Path]:
    return [p for p in vault.rglob("*.md") if p.read_text().startswith(f"id: {node}\n")]


def apply(vault: Path, stores: Stores, op: str, node: str, lines: list[str]) -> None:
    """One step: a user's edit (fresh or aged), a store change, a sync, or time passing."""
    if op in ("edit", "edit-aged"):
        found = files_of(vault, node)
        if found:
            line = f"user line {len(lines)}\n"
            with found[0].open("a", encoding="utf-8") as note:
                note.write(line)
            lines.append(line)
            if op == "edit-aged":
                age(found[0])
    elif op == "move":
        stores.folder[node] += 1
    elif op == "update":
        stores.version[node] += 1
    elif op == "sync":
        sync_vault(vault, stores.specs())
        shared = [n for n in "abc" if len(files_of(vault, n)) > 1]
        assert not shared or check_vault(vault, stores.specs()) != (), shared
    else:
        for path in vault.rglob("*.md"):
            age(path)


@settings(max_examples=25, deadline=None)
@given(ops=OPS)
@example(ops=[("edit", "a"), ("move", "a"), ("sync", "a")])  # the pull right after an edit
def test_one_id_is_never_two_notes_once_settled(ops: list[tuple[str, str]]) -> None:
    """Any edits, moves and syncs: once editors are done, a sync leaves one file per id (a second
    edited copy is a conflict), every user line kept; while two files share an id, check is red."""
    with tempfile.TemporaryDirectory() as folder:
        vault, stores = Path(folder) / "vault", Stores()
        lines: list[str] = []
        sync_vault(vault, stores.specs())
        for op, node in ops:
            apply(vault, stores, op, node, lines)
        for path in vault.rglob("*.md"):
            age(path)
        sync_vault(vault, stores.specs())
        conflicts = {line.split(" ")[1].rstrip(":") for line in check_vault(vault, stores.specs())}
        for node in "abc":
            paths = {p.relative_to(vault).as_posix() for p in files_of(vault, node)}
            # a second edited copy (both were edited) is kept and named a conflict, never merged
            assert stores.path(node) in paths and paths - {stores.path(node)} <= conflicts
        text = "".join(p.read_text() for p in vault.rglob("*.md"))
        assert all(line in text for line in lines)
        assert all(line.startswith("conflict ") for line in check_vault(vault, stores.specs()))

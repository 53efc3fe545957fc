"""Layout and note keys, full and incremental: ``python bench/keys.py DIR TOKEN``.

``DIR`` holds ``state/`` (a copy: one fact of ``memory/memory_index.json`` is edited, as
``make bench`` does, with ``TOKEN`` written into it); the caps come from the environment
(``VAULTSYNC_CAP_*``).  Builds the graph, computes the specs on the full path and saves their
memo, edits one fact, builds again, and computes the specs incrementally (the delta is a diff of
the two builds, ``tests/graphdelta.py``, until the graph patch provides one) and fully; prints
each time and whether both give the same specs and memo.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from graphdelta import graph_delta
from vaultsync.core import process
from vaultsync.core.config import resolve
from vaultsync.graph.load import build
from vaultsync.render import keycache, specs


def edit_one_fact(state: Path, token: str) -> None:
    """Change the first fact's content the way ``make bench`` does."""
    path = state / "memory" / "memory_index.json"
    facts = json.loads(path.read_text())
    facts[0]["content"] = f"{facts[0]['content'].split(' [edit')[0]} [edit {token}]"
    path.write_text(json.dumps(facts, indent=2))


def main() -> None:
    root, token = Path(sys.argv[1]), sys.argv[2]
    state = root / "state"
    caps = resolve({}, vault=root / "vault").caps
    env = specs.make_environment()
    records, built = build(state, caps)
    with process.paused_gc():
        start = time.perf_counter()
        before = specs.note_specs(records, built.graph, built.resolver, env, zone=caps.zone)
        print(f"full, {len(before.specs)} notes: {time.perf_counter() - start:.2f} s")
        keycache.save_specs_memo(state, caps, before.memo)
    edit_one_fact(state, token)
    records2, built2 = build(state, caps)
    delta = graph_delta(records, built.graph, records2, built2.graph)
    with process.paused_gc():
        start = time.perf_counter()
        memo = keycache.load_specs_memo(state, caps)
        loaded = time.perf_counter()
        made = specs.note_specs(
            records2,
            built2.graph,
            built2.resolver,
            env,
            zone=caps.zone,
            delta=delta,
            previous=memo,
        )
        keyed = time.perf_counter()
        keycache.save_specs_memo(state, caps, made.memo)
        saved = time.perf_counter()
        print(
            f"incremental, {made.keyed} keyed: memo read {loaded - start:.2f} s, specs "
            f"{keyed - loaded:.2f} s, memo written {saved - keyed:.2f} s"
        )
        start = time.perf_counter()
        full = specs.note_specs(records2, built2.graph, built2.resolver, env, zone=caps.zone)
        print(f"full after the edit: {time.perf_counter() - start:.2f} s")
    same = [(s.path, s.key) for s in made.specs] == [(s.path, s.key) for s in full.specs]
    print(f"same specs: {same}, same memo: {made.memo == full.memo}")


if __name__ == "__main__":
    main()

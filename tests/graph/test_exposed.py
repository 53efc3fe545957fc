"""``graph.load.exposed``: the values the history check looks for, the extract memo's files not
read again, always exactly what a full read of the stores finds."""

from __future__ import annotations

import json
from pathlib import Path

from secretcorpus import FORMS, plant_state
from vaultsync.core.scrub import exposed_values
from vaultsync.core.settings import Caps
from vaultsync.drawn.store import read_links
from vaultsync.extract import read_state_keeping
from vaultsync.graph.load import build, exposed

CAPS = Caps()


def judged_afresh(state: Path) -> frozenset[str]:
    """Every store read raw, every text judged again: the reference answer."""
    records, _ = read_state_keeping(state, sources=CAPS.sources, last_good={})
    return exposed_values((records, read_links(state)))


def test_before_any_sync_the_values_are_a_full_reads(tmp_path: Path) -> None:
    """With no memo and no masks kept, the values are those of a fresh judgement."""
    state = plant_state(tmp_path / "state")
    assert exposed(state, CAPS) == judged_afresh(state)


def test_after_a_sync_the_memos_files_give_the_same_values(tmp_path: Path) -> None:
    """A sync kept its memo and masks: reading through them finds every secret and private
    value a full read finds (the planted forms included), and nothing else."""
    state = plant_state(tmp_path / "state")
    build(state, CAPS)
    found = exposed(state, CAPS)
    assert found == judged_afresh(state)
    assert any(secret in found for form in FORMS for secret in form.secrets)


def test_a_secret_added_after_the_sync_is_found(tmp_path: Path) -> None:
    """A store file changed since the memo (a session with a new token) is read again."""
    state = plant_state(tmp_path / "state")
    build(state, CAPS)
    token = "ghp_" + "Zk3mN8pQ2rS5tV7wX9yA1bC4dE6fG0hJ2kL4"
    session = {"version": 2, "title": f"deploy with {token}", "chat_history": []}
    (state / "sessions" / "later.json").write_text(json.dumps(session))
    found = exposed(state, CAPS)
    assert token in found
    assert found == judged_afresh(state)


def test_a_private_profile_value_without_a_secret_is_found(tmp_path: Path) -> None:
    """A profile field marked sensitive, holding no secret: its value is looked for in clear."""
    state = tmp_path / "state"
    (state / "memory").mkdir(parents=True)
    profile = {
        "name": "Ana",
        "role": "Rua das Flores 12, Lisboa",
        "field_meta": {"role": {"sensitive": True}},
    }
    (state / "memory" / "user_profile.json").write_text(json.dumps(profile))
    build(state, CAPS)
    found = exposed(state, CAPS)
    assert "Rua das Flores 12, Lisboa" in found
    assert found == judged_afresh(state)


def test_a_private_map_entry_is_found(tmp_path: Path) -> None:
    """A private entry of a profile map (listed, its text never kept): its text is looked for."""
    state = tmp_path / "state"
    (state / "memory").mkdir(parents=True)
    profile = {"name": "Ana", "preferences": {"home_address": "Rua das Flores 12", "editor": "vim"}}
    (state / "memory" / "user_profile.json").write_text(json.dumps(profile))
    build(state, CAPS)
    found = exposed(state, CAPS)
    assert "Rua das Flores 12" in found
    assert found == judged_afresh(state)


def test_a_private_name_is_found_as_written(tmp_path: Path) -> None:
    """A private profile name (masked as ``user`` in what the sync kept) is looked for as the
    profile writes it."""
    state = tmp_path / "state"
    (state / "memory").mkdir(parents=True)
    profile = {"name": "Ana Ribeiro", "field_meta": {"name": {"sensitive": True}}}
    (state / "memory" / "user_profile.json").write_text(json.dumps(profile))
    (state / "memory" / "topics.json").write_text(json.dumps([{"name": "Ana Ribeiro's notes"}]))
    build(state, CAPS)
    found = exposed(state, CAPS)
    assert "Ana Ribeiro" in found
    assert found == judged_afresh(state)

"""``sync --each`` over a ChatCLI hub as the newest ChatCLI writes it: sealed, tenants, chunks."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_tree, dumps
from vaultsync.app.each import Outcome, plan_each, state_dirs, sync_each
from vaultsync.app.sync import SyncRequest

SEALED = Path(__file__).resolve().parents[2] / "fixtures" / "stores" / "sealed"
LONG = "0123456789abcdef0123456789abcdef-long-key"
PASSPHRASE = "correct horse"  # noqa: S105 - the test fixtures' passphrase
RETIRED = "an-older-secret-that-is-long-enough-32"
ALICE = "tenants/alice-0a1b2c3d"
BOB = "tenants/bob-89abcdef"
SKILL = "---\nname: deploy\ndescription: ship the release\n---\nSteps.\n"
BOARD = {"cards": [{"id": "card-1", "title": "Hub board card", "column": "doing"}]}
SEALED_FILES = (
    "memory/memory_index.json",
    "contexts/ctx-hub.json",
    f"{ALICE}/memory/memory_index.json",
    f"{BOB}/memory/memory_index.json",
    f"{BOB}/sessions/chat.json",
)


def hub(root: Path) -> Path:
    """A gateway's state root: its own sealed stores, two tenants, shared skills and board."""
    return build_tree(
        root,
        {
            "memory/memory_index.json": (SEALED / "v2-passphrase.bin").read_bytes(),
            "contexts/ctx-hub.json": (SEALED / "hub-root-context-long.bin").read_bytes(),
            "skills/deploy/SKILL.md": SKILL,
            "board.json": dumps(BOARD),
            f"{ALICE}/memory/memory_index.json": (SEALED / "v2-tenant.bin").read_bytes(),
            f"{BOB}/memory/memory_index.json": (SEALED / "hub-bob-index-retired.bin").read_bytes(),
            f"{BOB}/sessions/chat.json": (SEALED / "hub-bob-session-passphrase.bin").read_bytes(),
        },
    )


def vault_text(vault: Path) -> str:
    """Every note of a vault, one after the other."""
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(vault.rglob("*.md")))


def run(root: Path) -> dict[str, Outcome]:
    """Every vault of ``sync --each ROOT``, by name."""
    return {o.name: o for o in sync_each(plan_each(root, None), SyncRequest())}


@pytest.fixture
def with_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """ChatCLI's current key, and the passphrase and long key it used before."""
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY", LONG)
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY_PREVIOUS", f"{RETIRED}, {PASSPHRASE}")


@pytest.fixture
def without_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key at all."""
    monkeypatch.delenv("CHATCLI_ENCRYPTION_KEY", raising=False)
    monkeypatch.delenv("CHATCLI_ENCRYPTION_KEY_PREVIOUS", raising=False)


def test_a_hub_is_its_own_set_and_one_per_tenant(tmp_path: Path) -> None:
    """ROOT's own stores are ``.``, each tenant is named by its folder under ``tenants/``."""
    assert state_dirs(hub(tmp_path / "hub")) == (".", ALICE, BOB)


def test_a_tenants_folder_given_as_root(tmp_path: Path) -> None:
    """``--each ROOT/tenants`` syncs the tenants, named by their slug."""
    root = hub(tmp_path / "hub")
    assert state_dirs(root / "tenants") == ("alice-0a1b2c3d", "bob-89abcdef")


def test_a_hub_found_in_the_walk_is_split_into_tenants(tmp_path: Path) -> None:
    """A hub below ROOT is its own set and its tenants, beside a plain state directory."""
    hub(tmp_path / "root" / "gw")
    build_tree(tmp_path / "root" / "laptop", {"memory/memory_index.json": "[]"})
    assert state_dirs(tmp_path / "root") == ("gw", f"gw/{ALICE}", f"gw/{BOB}", "laptop")


@pytest.mark.usefixtures("with_keys")
def test_with_the_keys_every_vault_syncs_completely(tmp_path: Path) -> None:
    """Every sealed store opens (long key, passphrase, retired key, tenant-bound)."""
    root = hub(tmp_path / "hub")
    outcomes = run(root)
    assert all(o.ok for o in outcomes.values())
    assert not any("skipped" in line for o in outcomes.values() for line in o.lines)
    own, alice, bob = (vault_text(root / name / "vault") for name in (".", ALICE, BOB))
    assert "sealed fact" in own and "First part." in own and "Second part." in own
    assert "sealed fact" in alice and "sealed fact" in bob and "bob asks" in bob
    written = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
    assert not any(key.encode() in written for key in (LONG, PASSPHRASE, RETIRED))


@pytest.mark.usefixtures("with_keys")
def test_tenants_read_the_shared_skills_and_board(tmp_path: Path) -> None:
    """A tenant's vault holds the root's skill and board card, as ChatCLI reads them."""
    root = hub(tmp_path / "hub")
    run(root)
    alice = vault_text(root / ALICE / "vault")
    assert "ship the release" in alice and "Hub board card" in alice


@pytest.mark.usefixtures("with_keys")
def test_a_tenant_store_copied_into_another_tenant_does_not_open(tmp_path: Path) -> None:
    """Alice's sealed index moved into Bob's folder is refused there, in one line."""
    root = hub(tmp_path / "hub")
    (root / BOB / "memory/memory_index.json").write_bytes((SEALED / "v2-tenant.bin").read_bytes())
    bob = run(root)[BOB]
    assert bob.ok
    assert [line for line in bob.lines if "memory_index.json" in line]
    assert "sealed fact" not in vault_text(root / BOB / "vault")


@pytest.mark.usefixtures("without_keys")
def test_without_the_key_everything_else_syncs(tmp_path: Path) -> None:
    """No vault fails; each sealed file is named once; the plain skill is synced."""
    root = hub(tmp_path / "hub")
    outcomes = run(root)
    assert all(o.ok for o in outcomes.values())
    lines = [f"{o.name}/{line}" for o in outcomes.values() for line in o.lines]
    for rel in SEALED_FILES:
        name = rel.rsplit("/", 1)[-1]
        said = [line for line in lines if name in line and "CHATCLI_ENCRYPTION_KEY" in line]
        assert said, rel
    assert "ship the release" in vault_text(root / "vault")
    assert LONG not in "\n".join(lines)


@pytest.mark.usefixtures("with_keys")
def test_notes_stay_when_the_key_goes_away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vault synced with the key keeps its sealed stores' notes when the key is gone."""
    root = hub(tmp_path / "hub")
    run(root)
    before = vault_text(root / BOB / "vault")
    monkeypatch.delenv("CHATCLI_ENCRYPTION_KEY")
    (root / BOB / "memory").touch()  # something changed: a full sync, not the quick answer
    (root / BOB / "sessions/chat.json").write_bytes(
        (SEALED / "hub-bob-session-passphrase.bin").read_bytes()
    )
    bob = run(root)[BOB]
    assert bob.ok
    after = vault_text(root / BOB / "vault")
    assert "sealed fact" in after and "bob asks" in after
    assert before.count("sealed fact") == after.count("sealed fact")


def test_a_key_set_after_a_sync_without_it_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stores unchanged, a key set since the last sync still makes the next one read them."""
    monkeypatch.delenv("CHATCLI_ENCRYPTION_KEY", raising=False)
    root = hub(tmp_path / "hub")
    run(root)
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY", LONG)
    alice = run(root)[ALICE]
    assert not alice.quick
    assert "sealed fact" in vault_text(root / ALICE / "vault")


def notices(outcome: Outcome) -> list[str]:
    """The clear-text notices among a vault's lines."""
    return [line for line in outcome.lines if "in clear" in line]


@pytest.mark.usefixtures("with_keys")
def test_the_clear_text_notice_is_said_once_per_vault(tmp_path: Path) -> None:
    """The first sync from sealed stores says it; a later full sync does not say it again."""
    root = hub(tmp_path / "hub")
    first = run(root)
    assert all(len(notices(o)) == 1 for o in first.values())
    assert "stores.open_sealed = false" in notices(first[ALICE])[0]
    (root / ALICE / "memory/memory_index.json").touch()
    again = run(root)
    assert not again[ALICE].quick
    assert not any(notices(o) for o in again.values())


@pytest.mark.usefixtures("with_keys")
def test_the_notice_is_recorded_in_the_vaults_own_config(tmp_path: Path) -> None:
    """What says it was said is the vault's saved ``stores.open_sealed``, committed with it."""
    root = hub(tmp_path / "hub")
    run(root)
    config = (root / ALICE / "vault/.vaultsync/config.toml").read_text(encoding="utf-8")
    assert "open_sealed = true" in config


def test_no_notice_when_nothing_sealed_was_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a key, or with the setting off, nothing is in clear: nothing is said."""
    root = hub(tmp_path / "hub")
    monkeypatch.delenv("CHATCLI_ENCRYPTION_KEY", raising=False)
    assert not any(notices(o) for o in run(root).values())
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY", LONG)
    monkeypatch.setenv("VAULTSYNC_STORES_OPEN_SEALED", "false")
    assert not any(notices(o) for o in run(root).values())


@pytest.mark.usefixtures("without_keys")
def test_a_sealed_links_store_is_skipped_and_never_moved_aside(tmp_path: Path) -> None:
    """``memory/links.json`` sealed: one line, the sync goes on, the file stays where it is."""
    root = hub(tmp_path / "hub")
    links = root / ALICE / "memory/links.json"
    links.write_bytes(b"CHATCLI_ENC_v2\n" + b"\0" * 40)
    alice = run(root)[ALICE]
    assert alice.ok
    assert [line for line in alice.lines if "links.json" in line]
    assert links.read_bytes().startswith(b"CHATCLI_ENC_v2\n")
    assert [p.name for p in links.parent.iterdir() if p.name.startswith("links.json")] == [
        "links.json"
    ]


def test_no_notice_when_the_key_opens_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong key leaves the sealed text closed: no notice, and nothing saved for it."""
    root = hub(tmp_path / "hub")
    monkeypatch.setenv("CHATCLI_ENCRYPTION_KEY", "not the key ChatCLI sealed with")
    monkeypatch.delenv("CHATCLI_ENCRYPTION_KEY_PREVIOUS", raising=False)
    assert not any(notices(o) for o in run(root).values())
    config = root / ALICE / "vault/.vaultsync/config.toml"
    assert not config.exists() or "open_sealed" not in config.read_text(encoding="utf-8")


@pytest.mark.usefixtures("with_keys")
def test_a_shared_skill_changed_at_the_root_reaches_every_tenant(tmp_path: Path) -> None:
    """The no-op check of a tenant sees the root's skills: an edit there syncs every vault."""
    root = hub(tmp_path / "hub")
    run(root)
    (root / "skills/deploy/SKILL.md").write_text(SKILL.replace("ship", "roll out"), "utf-8")
    again = run(root)
    assert not any(o.quick for o in again.values())
    assert "roll out the release" in vault_text(root / BOB / "vault")

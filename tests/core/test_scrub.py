"""The redaction boundary: every string of the records masked, map entries judged with their key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from samples import sample_records
from secretcorpus import FORMS, PROFILE_ENTRIES, Form
from vaultsync.core.model import (
    Card,
    CardNote,
    ExplicitLink,
    Profile,
    ProfileField,
    Project,
    Records,
    Topic,
)
from vaultsync.core.redact import MASKED, mask, redact
from vaultsync.core.scrub import Scrubber, scrub, scrub_keyed, spread

PAT = "ghp_" + "R8vK2mQ9xL4tW7nZ3pB6" + "yH1cF5dJ0sG2aE8uXk4i"


def strings(value: object) -> list[str]:
    """Every string inside a record, a tuple or a list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple | list):
        return [s for item in value for s in strings(item)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [s for f in dataclasses.fields(value) for s in strings(getattr(value, f.name))]
    return []


class TestWalk:
    def test_every_string_of_every_record(self) -> None:
        """A token planted in every string of the sample records is gone from all of them."""
        records = sample_records()
        planted = _plant(records)
        assert any(PAT in s for s in strings(planted))
        assert not any(PAT in s for s in strings(scrub(planted)))

    def test_other_values_kept(self) -> None:
        """Times, numbers and flags pass unchanged; a record without secrets is the same object."""
        topic = Topic(name="auth", mentions=3, first_seen=datetime(2026, 1, 1, tzinfo=UTC))
        assert scrub(topic) is topic
        masked = scrub(dataclasses.replace(topic, summary=f"uses {PAT}"))
        assert (masked.mentions, masked.first_seen, masked.summary) == (
            3,
            topic.first_seen,
            f"uses {mask(PAT)}",
        )

    def test_names_and_links(self) -> None:
        """Names, card assignees, note authors and drawn links' ends and notes are masked."""
        card = Card(
            id="card-1",
            title=f"rotate {PAT}",
            column="doing",
            assignee=PAT,
            notes=(CardNote(author=PAT, text="done"),),
        )
        link = ExplicitLink(source=f"topic:{PAT}", target="topic:x", note=f"see {PAT}")
        masked = scrub(Records(cards=(card,), links=(link,)))
        assert masked.cards[0].title == f"rotate {mask(PAT)}"
        assert masked.cards[0].assignee == masked.cards[0].notes[0].author == mask(PAT)
        assert masked.links[0].source == f"topic:{mask(PAT)}"
        assert masked.links[0].note == f"see {mask(PAT)}"

    def test_stable_and_distinct(self) -> None:
        """The same text masks the same way; texts differing only in their secret stay apart."""
        names = [f"deploy {form.text}" for form in FORMS]
        first = [scrub(Topic(name=name)).name for name in names]
        assert first == [scrub(Topic(name=name)).name for name in names]
        assert len(set(first)) == len(first)
        other = "export PGPASSWORD=Zz9Yy8Xx7Ww6 && psql -h db"
        assert scrub(Topic(name=other)).name != first[0]


class TestKeyed:
    def test_profile_map_entries(self) -> None:
        """``api_key``, ``PGPASSWORD`` and ``OPENAI_API_KEY`` entries are masked with their key."""
        pairs = tuple(PROFILE_ENTRIES.items())
        field = ProfileField(key="environment", value=(*pairs, ("editor", "neovim")))
        masked = scrub(Profile(fields=(field,)))
        assert masked.fields[0].value == (
            *((key, mask(value)) for key, value in pairs),
            ("editor", "neovim"),
        )

    def test_scalar_profile_field(self) -> None:
        """A profile field holding one string is judged with its key too."""
        field = ProfileField(key="api_key", value=PROFILE_ENTRIES["api_key"])
        assert scrub(field).value == mask(PROFILE_ENTRIES["api_key"])

    def test_metadata_pairs(self) -> None:
        """Project metadata is a map: its entries are judged with their key."""
        project = Project(name="x", metadata=(("db_password", "Tr0ub4dor3x"), ("tier", "1")))
        assert scrub(project).metadata == (("db_password", mask("Tr0ub4dor3x")), ("tier", "1"))

    def test_private_entry_keys_match_their_pairs(self) -> None:
        """A masked key is masked alike in the pair and in ``private_entries``."""
        key = f"backup {PAT}"
        field = ProfileField(key="notes", value=((key, "x"),), private_entries=(key,))
        masked = scrub(field)
        assert isinstance(masked.value, tuple)
        assert masked.private_entries == (masked.value[0][0],) == (f"backup {mask(PAT)}",)

    def test_private_entries_lose_their_text(self) -> None:
        """A profile map's private entries stay listed; no masked record holds their text."""
        value = (("bank_account", "0012-345678-9"), ("editor", "vim"))
        field = ProfileField(key="preferences", value=value, private_entries=("bank_account",))
        assert scrub(field).value == (("bank_account", ""), ("editor", "vim"))

    def test_a_secret_in_a_private_entry_is_known(self) -> None:
        """The secret of a private entry is learnt before its text is dropped: spread masks it."""
        value = (("db_password", "Hk4Lm9Qz2Wx7"),)
        field = ProfileField(key="preferences", value=value, private_entries=("db_password",))
        scrubber = Scrubber()
        scrubber(field)
        assert scrubber.secrets == {"Hk4Lm9Qz2Wx7"}
        assert spread("it is Hk4Lm9Qz2Wx7", scrubber.secrets) == f"it is {mask('Hk4Lm9Qz2Wx7')}"

    def test_prose_after_a_key_stays(self) -> None:
        """A value that reads as prose is not a secret, even after a secret-like key."""
        assert scrub_keyed("password_policy", "choose a long one") == "choose a long one"
        assert scrub_keyed("editor", "neovim") == "neovim"


class TestProperties:
    @settings(max_examples=60, deadline=None)
    @given(st.sampled_from(FORMS), st.text(max_size=40), st.text(max_size=40))
    def test_no_form_survives_in_any_field(self, form: Form, before: str, after: str) -> None:
        """Whatever surrounds a form on its own line, none of its secrets survives the walk."""
        text = f"{before}\n{form.text}\n{after}"
        masked = scrub(Records(topics=(Topic(name=text, summary=text),)))
        for value in strings(masked):
            assert not any(secret in value for secret in form.secrets)
            assert redact(value) == value  # idempotent
            assert MASKED.search(value)


def _plant(records: Records) -> Records:
    """Every string of the records with a token appended (ids and structure kept usable)."""

    def plant(value: object) -> object:
        if isinstance(value, str):
            return f"{value} {PAT}"
        if isinstance(value, tuple):
            return tuple(plant(item) for item in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {
                f.name: plant(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
            }
            return dataclasses.replace(value, **changes)
        return value

    planted = plant(records)
    assert isinstance(planted, Records)
    return planted


class TestMemo:
    def test_known_texts_are_not_masked_again(self) -> None:
        """A text an earlier run masked is answered from the memo; a new one is masked."""
        first = Scrubber({}, b"salt")
        topic = Topic(name=f"deploy {PAT}", summary="plain words, nothing to hide")
        masked = first(topic)
        assert set(first.learned.values()) == {masked.name, None}
        stale = {digest: "from the memo" for digest, value in first.learned.items() if value}
        again = Scrubber(stale, b"salt")(topic)
        assert (again.name, again.summary) == ("from the memo", topic.summary)

    def test_memo_holds_no_secret(self) -> None:
        """What a run learns holds masked texts and salted digests only."""
        scrubber = Scrubber({}, b"salt")
        scrubber(Records(topics=tuple(Topic(name=f.text, summary=f.text) for f in FORMS)))
        learned = repr(scrubber.learned)
        assert not any(secret in learned for form in FORMS for secret in form.secrets)


def test_control_characters_never_leave_the_stores() -> None:
    """NUL, ESC, DEL and C1 controls are dropped; tabs and line breaks stay."""
    assert scrub(("ctl\x1b[31mred\x00nul\x7f\x85", "a\tb\r\nc")) == ("ctl[31mrednul", "a\tb\r\nc")


def test_private_name_becomes_user_in_every_string() -> None:
    """The whole name and its capitalised words become ``user``; other words are left alone."""
    masked = Scrubber(private_name="Ana Ribeiro")(
        ("Ana Ribeiro owns it", "Ana's lab", "Ribeiro", "Banana and anagram", "Anabel")
    )
    assert masked == ("user owns it", "user's lab", "user", "Banana and anagram", "Anabel")


def test_private_name_of_short_words_replaces_only_the_whole_name() -> None:
    """A word under three letters is never replaced alone: only the whole name is."""
    assert Scrubber(private_name="Li Wu")(("Li Wu wrote", "Li said")) == ("user wrote", "Li said")


def test_two_tags_are_no_key_and_value() -> None:
    """Tags ``(token, rotation)`` are two words: nothing for the history check to look for."""
    from vaultsync.core.scrub import exposed_values

    assert exposed_values(("token", "rotation")) == frozenset()


def test_history_looks_for_exactly_what_was_masked() -> None:
    """The secrets a scrubber masked are the values ``exposed_values`` returns."""
    from vaultsync.core.scrub import Scrubber, exposed_values

    raw = (("PGPASSWORD", "Xq7vR2mPz9Lk"), "plain words")
    scrubber = Scrubber()
    scrubber(raw)
    assert scrubber.secrets == frozenset({"Xq7vR2mPz9Lk"})
    assert exposed_values(raw) == scrubber.secrets


def test_a_known_secret_is_masked_in_every_string() -> None:
    """``spread`` masks a known value where no rule would find it alone (a title, a path)."""
    from vaultsync.core.redact import mask
    from vaultsync.core.scrub import spread

    masked = spread(("Rotate Xq7vR2mPz9Lk", ["docs/Xq7vR2mPz9Lk.md"]), {"Xq7vR2mPz9Lk"})
    assert masked == (f"Rotate {mask('Xq7vR2mPz9Lk')}", [f"docs/{mask('Xq7vR2mPz9Lk')}.md"])


def test_an_earlier_runs_mask_gives_back_its_secret() -> None:
    """A text masked by an earlier run still tells this run which secret it held."""
    from vaultsync.core.redact import redact, unmask_secrets

    text = "export PGPASSWORD=Xq7vR2mPz9Lk && psql"
    assert unmask_secrets(text, redact(text)) == ["Xq7vR2mPz9Lk"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(FORMS), min_size=1, max_size=4),
    st.lists(st.text(min_size=0, max_size=30), max_size=3),
)
def test_exposed_values_from_an_earlier_runs_masks_equal_a_fresh_judgement(
    forms: list[Form], words: list[str]
) -> None:
    """The history check reads the last run's masks instead of judging every text again, and
    finds exactly the values a fresh judgement finds."""
    from vaultsync.core.scrub import exposed_values

    raw = (
        tuple(f"{word} {form.text}" for form in forms for word in (words or [""])),
        tuple(("PGPASSWORD", form.secrets[0]) for form in forms),
    )
    earlier = Scrubber(salt=b"s" * 16)
    earlier(raw)
    remembered = Scrubber(earlier.learned, b"s" * 16)
    assert exposed_values(raw, remembered) == exposed_values(raw)


@dataclass(frozen=True)
class _Anything:
    value: Any


@dataclass(frozen=True)
class _Fields:
    fields: tuple[ProfileField, ...]
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Nested:
    inner: _Fields | None
    count: int = 0


_PRIVATE = ProfileField(key="address", value="Rua das Flores 12", private=True)


@pytest.mark.parametrize(
    "value",
    [
        _Anything(value=(_PRIVATE,)),
        _Fields(fields=(_PRIVATE,)),
        _Nested(inner=_Fields(fields=(_PRIVATE,))),
        (_Nested(inner=None), [_Anything(value=_Anything(value=_PRIVATE))]),
    ],
)
def test_a_private_value_is_found_wherever_its_record_types_let_it_be(value: object) -> None:
    """A record whose field may hold a profile value (by its declared type, or ``Any``) is
    walked into: the private value is found however deep."""
    from vaultsync.core.scrub import exposed_values

    assert exposed_values(value) == frozenset({"Rua das Flores 12"})

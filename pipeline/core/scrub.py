"""Store records → the same records with every string's secrets masked; pure.

This is the one redaction boundary (issue 14): :mod:`vaultsync.graph.load`, the only way from
the stores to anything vaultsync writes or serves, passes what it read through :func:`scrub`
— the records, the hand-drawn links, the skipped-file warnings and the last good records it
caches.  So titles, names, aliases, tags, folder and file names, link labels, ``Home.md``, the
manifest, git trees, the graph cache and export, the search index and the API never see a
secret: they only ever see the masked text.

Control characters are dropped at the same boundary (every C0 control but tab, line feed and
carriage return, DEL, and the C1 controls): a NUL or an ESC in a store's text would otherwise
reach headings, link labels and ``Home.md`` raw, and git would show the note as binary.

The walk is generic, so a field added to a record later is covered without a change here:
every ``str`` inside a frozen dataclass, a tuple or a list goes through
:func:`~vaultsync.core.redact.redact`; other values (times, numbers, flags) are kept.  Two
shapes are judged *with their key*, since ``api_key: k8Rk2…`` is a secret where ``k8Rk2…``
alone may not look like one:

* a ``(key, text)`` pair, the form every store map takes (profile maps, project and context
  metadata): the text is masked as the line ``key: text`` would be;
* a :class:`~vaultsync.core.model.ProfileField` whose value is one string.

The key itself is masked alone, like any string, so a private entry's key in
``ProfileField.private_entries`` stays equal to the key of its pair.  Masking is stable
(:func:`~vaultsync.core.redact.mask`): the same store text gives the same masked text, so a
masked title gives the same file name on every sync, and a drawn link's end still names its
note.

Masking every string costs a sync that reads the stores about half a second more (loading the
provider rules, then scanning).  :class:`Scrubber` can be given what an earlier run masked, by
a salted digest of each text (``graph.cache`` keeps it in vaultsync's cache folder, 0600: the
masked texts and digests, never a secret), so an unchanged text is not masked again and an
unchanged store never loads the rules.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import re
import typing
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime
from typing import Any, TypeVar

from vaultsync.core.model import Profile, ProfileField, ProfileValue
from vaultsync.core.redact import find_secrets, mask, mask_spans, redact, unmask_secrets

__all__ = [
    "Scrubber",
    "exposed_values",
    "map_strings",
    "scrub",
    "scrub_keyed",
    "spread",
]

T = TypeVar("T")

MEMO_MIN = 8
"""Texts this long or longer are remembered between runs (shorter ones hold no secret that
needs the provider rules, so masking them again is cheap)."""


def scrub(value: T) -> T:
    """``value`` with every string inside it masked (see the module docstring)."""
    return Scrubber()(value)


def scrub_keyed(key: str, text: str, mask_text: Callable[[str], str] = redact) -> str:
    """``text`` masked as it reads after its key (``api_key: k8Rk2…`` → ``api_key: ‹secret-…›``)."""
    prefix = f"{key}: "
    masked = mask_text(prefix + text)
    if masked.startswith(prefix):
        return mask_text(masked[len(prefix) :])
    return mask_text(text)  # the key itself held a secret: the value is judged alone


class Scrubber:
    """:func:`scrub` that remembers: a value shared by several inputs is masked once.

    The last good records are the records' own objects, and a text often fills many fields.
    """

    def __init__(
        self,
        known: Mapping[str, str | None] | None = None,
        salt: bytes = b"",
        *,
        private_name: str = "",
    ) -> None:
        """``known``: what an earlier run masked, by :meth:`digest` (``None``: nothing to mask).

        With a ``salt``, every text of at least ``MEMO_MIN`` characters is looked up there
        first, and :attr:`learned` collects what this run masked, for the next one.
        ``private_name``: the profile's name when it is private; it becomes ``user`` in every
        string (:func:`name_pattern` says which spellings).
        """
        self._name = name_pattern(private_name)
        self._known = known or {}
        self._salt = salt
        self._texts: dict[str, str] = {}
        self._objects: dict[int, tuple[object, object]] = {}
        """``id`` → (the object, kept alive so the id is not reused; its masked copy)."""
        self.learned: dict[str, str | None] = {}
        self._secrets: set[str] = set()

    @property
    def secrets(self) -> frozenset[str]:
        """Every secret masked so far, as written in the stores: the known secrets of a read.

        The one decision of what is secret: :func:`spread` masks these in every string, and
        the history check looks for exactly these (``EXPOSED_MIN`` characters or more).
        """
        return frozenset(s for s in self._secrets if len(s) >= EXPOSED_MIN)

    def __call__(self, value: T) -> T:
        """``value`` with every string inside it masked."""
        return self._scrub(value)  # type: ignore[no-any-return]

    def keep(self, values: Iterable[object]) -> None:
        """Take ``values`` as masked already (an earlier run masked them): each is kept as is.

        ``extract.memo`` gives the values of unchanged store files this way, so they are not
        walked again.
        """
        for value in values:
            if isinstance(value, tuple | list) or _is_record(value):
                self._objects[id(value)] = (value, value)

    def digest(self, text: str) -> str:
        """The salted BLAKE2b of a text (hex), the key of :attr:`learned`."""
        data = text.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, key=self._salt, digest_size=16).hexdigest()

    def _text(self, text: str) -> str:
        masked = self._texts.get(text)
        if masked is not None:
            return masked
        masked = _printable(self._masked(text))
        if self._name is not None:
            masked = self._name.sub(PRIVATE_NAME, masked)
        self._texts[text] = masked
        return masked

    def _masked(self, text: str) -> str:
        if self._salt and len(text) >= MEMO_MIN:
            digest = self.digest(text)
            if digest in self._known:
                stored = self._known[digest]
                masked = text if stored is None else stored
                self._secrets.update(unmask_secrets(text, masked))
            else:
                masked = self._redact(text)
            self.learned[digest] = None if masked == text else masked
            return masked
        return self._redact(text)

    def _redact(self, text: str) -> str:
        """:func:`redact`, remembering each secret it masked."""
        spans = find_secrets(text)
        self._secrets.update(text[start:end] for start, end in spans)
        return mask_spans(text, spans) if spans else text

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if not isinstance(value, tuple | list) and not _is_record(value):
            return value
        known = self._objects.get(id(value))
        if known is not None:
            return known[1]
        if isinstance(value, tuple):
            masked: Any = tuple(self._item(item) for item in value)
        elif isinstance(value, list):
            masked = [self._item(item) for item in value]
        else:
            masked = self._record(value)
        self._objects[id(value)] = (value, masked)
        return masked

    def _item(self, item: Any) -> Any:
        """One element of a collection: a ``(key, text)`` pair is judged with its key."""
        if _is_pair(item):
            key, text = item
            return (self._text(key), scrub_keyed(key, text, self._text))
        return self._scrub(item)

    def _record(self, record: Any) -> Any:
        """A dataclass with every init field scrubbed; the same object when nothing changed."""
        changes = {}
        for field in dataclasses.fields(record):
            if not field.init:
                continue
            old = getattr(record, field.name)
            if isinstance(record, ProfileField) and field.name == "value" and isinstance(old, str):
                new = scrub_keyed(record.key, old, self._text)
            else:
                new = self._scrub(old)
            if new != old:
                changes[field.name] = new
        masked = dataclasses.replace(record, **changes) if changes else record
        if isinstance(masked, ProfileField) and masked.private_entries:
            return _private_texts_dropped(masked)
        return masked


def _private_texts_dropped(field: ProfileField) -> ProfileField:
    """A profile map masked, its private entries' texts dropped (listed, never kept).

    Masked first, so a secret in one (``db_password: …``) is known and masked everywhere.
    """
    private = {pair for pair in _private_pairs(field) if pair[1]}
    if not private:
        return field
    value = tuple((item[0], "") if item in private else item for item in field.value)
    return dataclasses.replace(field, value=typing.cast("ProfileValue", value))


PRIVATE_NAME = "user"
"""What a private name becomes, everywhere."""


def name_pattern(name: str) -> re.Pattern[str] | None:
    """The spellings of a private name that become ``user`` (``None``: no name).

    The whole name, and each of its words of three letters or more that starts with a capital
    (``Ana Ribeiro``, ``Ana``, ``Ribeiro``), as whole words, case as written.
    """
    words = [w for w in re.split(r"\s+", name.strip()) if len(w) >= 3 and w[:1].isupper()]
    spellings = sorted({name.strip(), *words} - {""}, key=len, reverse=True)
    if not spellings:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, spellings)) + r")(?!\w)")


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _printable(text: str) -> str:
    """``text`` without control characters (tab and line breaks kept)."""
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def _is_record(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _is_pair(item: Any) -> bool:
    return (
        isinstance(item, tuple)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], str)
    )


EXPOSED_MIN = 6
"""Shorter private values are not looked for in history (``user``, ``42``: they would match
everywhere and prove nothing)."""


def exposed_values(value: Any, scrubber: Scrubber | None = None) -> frozenset[str]:
    """Every secret :func:`scrub` masks in the raw records, and every private profile value.

    What must not be found in anything vaultsync wrote (``vault.history`` looks in git): the
    secrets are decided by the same :class:`Scrubber` that masks them, never by a second rule.
    ``scrubber``: one holding what the last sync masked (its texts are not judged again).
    """
    scrubber = scrubber if scrubber is not None else Scrubber()
    scrubber(value)
    private: set[str] = set()
    _collect_private(value, private)
    return scrubber.secrets | frozenset(v for v in private if len(v) >= EXPOSED_MIN)


def _collect_private(value: Any, found: set[str]) -> None:
    """The private profile values inside ``value`` (rendered ``‹private›``, never in clear)."""
    if isinstance(value, tuple | list):
        for item in value:
            _collect_private(item, found)
    elif isinstance(value, ProfileField) and value.private:
        found.update(_strings(value.value))
    elif isinstance(value, ProfileField) and value.private_entries:
        found.update(text for _key, text in _private_pairs(value) if text)
    elif isinstance(value, Profile):
        hidden = (value.name_private, [value.name]), (value.skills_private, value.skills)
        for private, texts in (*hidden, (value.goals_private, value.goals)):
            if private:
                found.update(texts)
        _collect_private(value.fields, found)
    elif _is_record(value):
        for name in _fields_holding_private(type(value)):
            _collect_private(getattr(value, name), found)


def _private_pairs(field: ProfileField) -> list[tuple[str, str]]:
    """The ``(key, text)`` entries of a profile map that ``private_entries`` names."""
    hidden = frozenset(field.private_entries)
    if isinstance(field.value, str) or not hidden:
        return []
    pairs = [item for item in field.value if _is_pair(item) and item[0] in hidden]
    return typing.cast("list[tuple[str, str]]", pairs)


def _fields_holding_private(cls: type) -> tuple[str, ...]:
    """The fields of the record class ``cls`` whose declared type can hold a profile value.

    The walk then skips every fact, episode and document (0.4 s of a history check at 100,000
    notes found nothing there): their fields are strings, times and tuples of them.  Any field
    whose type cannot be told (``Any``, ``object``, an unresolved name) is walked.
    """
    found = _HOLDING_PRIVATE.get(cls)
    if found is None:
        found = _HOLDING_PRIVATE[cls] = _record_fields(cls, frozenset({cls}))
    return found


_HOLDING_PRIVATE: dict[type, tuple[str, ...]] = {}
""":func:`_fields_holding_private` of each record class, worked out once per process."""

_PLAIN = frozenset({str, int, float, bool, bytes, type(None), datetime, date})
"""Types that hold no record."""


def _can_hold_private(kind: Any, seen: frozenset[type]) -> bool:
    """Whether a value of the declared type ``kind`` can be or hold a profile value."""
    if isinstance(kind, list):  # a callable's parameters
        return any(_can_hold_private(argument, seen) for argument in kind)
    if isinstance(kind, type):
        return _class_can_hold_private(kind, seen)
    if kind is Ellipsis:
        return False
    arguments = typing.get_args(kind)
    if typing.get_origin(kind) is None or not arguments:
        return True  # Any, a type variable, an unresolved name: it may hold anything
    return any(_can_hold_private(argument, seen) for argument in arguments)


def _class_can_hold_private(cls: type, seen: frozenset[type]) -> bool:
    """:func:`_can_hold_private` of a class: a profile's, a record holding one, or unknown."""
    if cls in (Profile, ProfileField):
        return True
    if dataclasses.is_dataclass(cls):
        # a record class met again inside itself adds nothing to what its other fields say
        return cls not in seen and bool(_record_fields(cls, seen | {cls}))
    return not (cls in _PLAIN or issubclass(cls, enum.Enum))  # object, a bare tuple: anything


def _record_fields(cls: type, seen: frozenset[type]) -> tuple[str, ...]:
    """:func:`_fields_holding_private` of a class met inside another (cycles cut by ``seen``)."""
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        return tuple(field.name for field in dataclasses.fields(cls))
    return tuple(
        field.name
        for field in dataclasses.fields(cls)
        if _can_hold_private(hints.get(field.name, Any), seen)
    )


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple | list):
        return [s for item in value for s in _strings(item)]
    return []


def spread(value: T, secrets: Iterable[str]) -> T:
    """``value`` with every known secret masked wherever it appears, in every string.

    A secret the stores mark once (``PGPASSWORD: …`` in the profile) is masked in a title, a
    file name or a tag too, where no rule would recognise it alone.
    """
    ordered = sorted(set(secrets), key=lambda s: (-len(s), s))  # the longest secret wins
    if not ordered:
        return value
    pattern = re.compile("|".join(map(re.escape, ordered)))

    def masked(text: str) -> str:
        return pattern.sub(lambda found: mask(found.group()), text)

    return map_strings(value, masked)


def map_strings(value: T, change: Callable[[str], str]) -> T:
    """``value`` with ``change`` applied to every string in its dataclasses, tuples and lists."""
    return _StringMap(change)(value)  # type: ignore[no-any-return]


class _StringMap:
    """One generic walk over frozen records; a shared object is changed once."""

    def __init__(self, change: Callable[[str], str]) -> None:
        self._change = change
        self._seen: dict[int, tuple[object, object]] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._change(value)
        if not isinstance(value, tuple | list) and not _is_record(value):
            return value
        seen = self._seen.get(id(value))
        if seen is not None:
            return seen[1]
        if isinstance(value, tuple | list):
            changed: Any = type(value)(self(item) for item in value)
        else:
            changed = self._record(value)
        self._seen[id(value)] = (value, changed)
        return changed

    def _record(self, record: Any) -> Any:
        changes = {}
        for field in dataclasses.fields(record):
            if field.init:
                old = getattr(record, field.name)
                new = self(old)
                if new != old:
                    changes[field.name] = new
        return dataclasses.replace(record, **changes) if changes else record

r"""Store file → Python values, strictly; typed field access with one-line errors; reads files.

Every reader in ``vaultsync.extract`` goes through this module, so every malformed store fails
the same way: a ``StoreError`` whose message is ``<path>:<where>: <what>``, where *where* is
``line:column`` for JSON syntax errors, ``byte <offset>`` for invalid UTF-8 and a field path
such as ``[3].tags[1]`` for type errors.  A sealed store (ChatCLI's at-rest encryption) raises
``SealedStoreError`` before anything is decoded.

Conventions, matching Go's ``encoding/json`` as ChatCLI uses it:

* a missing file, and an empty (whitespace-only) one, reads as ``None``: the store is empty;
* ``null`` in place of any value means "absent" and yields the field's default;
* ``NaN``/``Infinity`` and a UTF-8 byte order mark are refused, as Go refuses them;
* a lone UTF-16 surrogate escape (``"\ud800"``) becomes U+FFFD, as Go decodes it, so later
  stages can always encode the text back to UTF-8;
* nesting up to ``MAX_DEPTH`` (10,000, Go's limit) is read; deeper is refused, and so is a
  number no float64 holds (``1e400``) or, in an integer field, no int64.

Only regular files are opened (a FIFO or a link to ``/dev/zero`` is refused, never waited on or
read without end), and none larger than the limit ``size_limit`` sets (``caps.store_file_mib``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
import sys
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from vaultsync.core.errors import SealedStoreError, StoreError
from vaultsync.core.model import ZERO_TIME
from vaultsync.extract.atrest import SealKeys, open_sealed, place_data, seal_version

SEAL_MAGIC = b"CHATCLI_ENC_v1\n"
"""The first bytes of a file sealed by ChatCLI's ``pkg/atrest`` v1 (see ``is_sealed`` for all)."""
SEAL_PREFIX = b"enc:"
"""The prefix of a sealed export line (``enc:`` + base64)."""

SEALED_WHAT = "store is sealed (encrypted at rest by ChatCLI)"
SEALED_HINT = "set CHATCLI_ENCRYPTION_KEY to the key ChatCLI seals with to read it"
_OFF_HINT = "stores.open_sealed is false (VAULTSYNC_STORES_OPEN_SEALED): its items are skipped"
_WONT_OPEN = (
    "store is sealed and no key opens it (wrong key, tampered, or moved from another store's path)"
)
_WONT_OPEN_HINT = "set CHATCLI_ENCRYPTION_KEY, and CHATCLI_ENCRYPTION_KEY_PREVIOUS for retired keys"
CLEAR_TEXT_NOTICE = (
    "note: this vault holds the text of ChatCLI's sealed stores in clear; keep the vault "
    "private (an encrypted disk, a private remote), or set stores.open_sealed = false"
)
"""Said once, when a vault is first written from sealed stores."""

_LONE_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d\d):(\d\d))"
)
_OFFSETS: dict[str, timezone] = {}
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)

MAX_DEPTH = 10_000
"""The deepest nesting Go's ``encoding/json`` accepts (ChatCLI reads with it)."""
DEFAULT_LIMIT = 256 * 1024 * 1024
"""The default largest store file read, in bytes (``caps.store_file_mib``)."""
INT64 = 2**63
_RANGE_64 = " that fits in 64 bits"
_LIMIT: ContextVar[int] = ContextVar("store_size_limit", default=DEFAULT_LIMIT)


@dataclass(slots=True)
class Unsealing:
    """How sealed stores under one store set open: its keys, root and tenant, and what opened."""

    keys: SealKeys
    root: Path
    tenant: str = ""
    enabled: bool = True
    opened: list[str] = field(default_factory=list)
    """Store files opened (relative to ``root``): any means the vault holds sealed text."""

    def notice(self) -> str | None:
        """``CLEAR_TEXT_NOTICE`` when a sealed store was opened; the caller says it once."""
        return CLEAR_TEXT_NOTICE if self.opened else None

    def place(self, path: Path) -> bytes:
        """The additional data ChatCLI binds ``path`` with (custom roots: parent/name).

        A tenant's shared stores (the root's board) are bound as the root's: no tenant.
        """
        if path.is_relative_to(self.root):
            return place_data(path.relative_to(self.root).as_posix(), self.tenant)
        shared = self.root.parent.parent
        if self.tenant and path.is_relative_to(shared):
            return place_data(path.relative_to(shared).as_posix())
        return place_data(f"{path.parent.name}/{path.name}")


_UNSEALING: ContextVar[Unsealing | None] = ContextVar("store_unsealing", default=None)

T = TypeVar("T")
JSONObject = dict[str, Any]


# ---------------------------------------------------------------------------------------------
# Reading files


def fail(path: Path | str, where: str, what: str) -> NoReturn:
    """Raise the one ``StoreError`` shape every reader uses."""
    raise StoreError(path=str(path), where=where, what=what)


@contextlib.contextmanager
def size_limit(limit: int) -> Iterator[None]:
    """Read no store file larger than ``limit`` bytes inside the ``with`` block."""
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or ``None`` when it does not exist; sealed stores are refused.

    Only a regular file is read (a FIFO is never waited on, a device never read), and only up
    to the size limit.
    """
    try:
        data = _read_regular(path, _LIMIT.get())
    except FileNotFoundError:
        return None
    except OSError as err:
        fail(path, "", f"cannot read: {err.strerror or err}")
    if is_sealed(data):
        return _unseal(path, data)
    return data


def is_sealed(data: bytes) -> bool:
    """Whether ``data`` is sealed: any ``CHATCLI_ENC_v*`` header, or an ``enc:`` export line."""
    return seal_version(data) is not None or data.startswith(SEAL_PREFIX)


@contextlib.contextmanager
def unsealing(how: Unsealing) -> Iterator[Unsealing]:
    """Open sealed store files as ``how`` says inside the ``with`` block."""
    token = _UNSEALING.set(how)
    try:
        yield how
    finally:
        _UNSEALING.reset(token)


def _unseal(path: Path, data: bytes) -> bytes:
    """The plaintext of a sealed store, or one ``SealedStoreError`` saying what to set."""
    how = _UNSEALING.get()
    if how is None or not how.keys:
        raise SealedStoreError(path=str(path), what=SEALED_WHAT, hint=SEALED_HINT)
    if not how.enabled:
        raise SealedStoreError(path=str(path), what=SEALED_WHAT, hint=_OFF_HINT)
    plain = open_sealed(data, how.keys, how.place(path))
    if plain is None:
        raise SealedStoreError(path=str(path), what=_WONT_OPEN, hint=_WONT_OPEN_HINT)
    how.opened.append(path.as_posix())
    return plain


def _read_regular(path: Path, limit: int) -> bytes:
    # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            fail(path, "", "expected a file, found a directory")
        if not stat.S_ISREG(info.st_mode):
            fail(path, "", "not a regular file (a FIFO, socket or device is never read)")
        if info.st_size > limit:
            fail(
                path,
                "",
                f"{_mib(info.st_size)} is over the size limit of {_mib(limit)} "
                "(setting caps.store_file_mib)",
            )
        chunks = []
        left = limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 24))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # it grew while we read it
        fail(path, "", f"over the size limit of {_mib(limit)} (setting caps.store_file_mib)")
    return data


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def decode_utf8(data: bytes, path: Path) -> str:
    """Strict UTF-8 decoding; an invalid sequence is reported at its byte offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        fail(path, f"byte {err.start}", f"invalid UTF-8 (byte 0x{data[err.start]:02x})")


def read_text(path: Path) -> str | None:
    """A UTF-8 text file (Markdown), or ``None`` when it does not exist."""
    data = read_bytes(path)
    return None if data is None else decode_utf8(data, path)


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(name)


class _OutOfRange(ValueError):
    """A JSON number no float64 holds (``1e400``): Go refuses it."""


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _OutOfRange(text if len(text) <= 40 else text[:37] + "...")
    return value


def _parse(text: str, surrogates: bool = False) -> object:
    value: object = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    return _replace_lone_surrogates(value) if surrogates else value


def _depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects (strings skipped); stops past ``MAX_DEPTH``."""
    depth = deepest = 0
    for byte in _STRING.sub(b"", data).translate(None, delete=_NOT_BRACKETS):
        depth += 1 if byte in b"[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_DEPTH:
                break
    return deepest


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _parse_deep(text: str, surrogates: bool) -> object:
    """Parse nesting deeper than Python's recursion allows, in a thread with a large stack."""
    result: list[object] = []
    failure: list[BaseException] = []

    def run() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH))
        try:
            result.append(_parse(text, surrogates))
        except (ValueError, RecursionError) as err:
            failure.append(err)
        finally:
            sys.setrecursionlimit(limit)

    previous = threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=run, name="deep-json")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if failure:
        raise failure[0]
    return result[0]


def load_json(path: Path) -> object | None:
    """Parse one JSON store; ``None`` when the file is missing or holds only whitespace."""
    data = read_bytes(path)
    return None if data is None else parse_json(data, path)


def parse_json(data: bytes, path: Path) -> object | None:
    """A store file's bytes → its JSON value, strictly (``None`` when only whitespace).

    The one strict JSON reader of every store file, ``links.json`` included: the conventions
    of the module docstring, and a ``StoreError`` of ``<path>:<where>: <what>`` otherwise.
    """
    if not data.strip():
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        fail(path, "1:1", "file starts with a UTF-8 byte order mark, which JSON does not allow")
    text = decode_utf8(data, path)
    try:
        value = _decode(text, data, path)
    except json.JSONDecodeError as err:
        fail(path, f"{err.lineno}:{err.colno}", f"invalid JSON: {err.msg}")
    except _OutOfRange as err:
        fail(path, "", f"invalid JSON: the number {err} is out of range for a float64")
    except ValueError as err:
        fail(path, "", f"invalid JSON: {err} is not a JSON value")
    return value


def _decode(text: str, data: bytes, path: Path) -> object:
    surrogates = _LONE_SURROGATE_ESCAPE.search(data) is not None
    try:
        return _parse(text, surrogates)
    except RecursionError:
        pass
    if _depth(data) > MAX_DEPTH:
        fail(path, "", f"JSON nested deeper than {MAX_DEPTH:,} levels (ChatCLI's limit)")
    return _parse_deep(text, surrogates)


def _replace_lone_surrogates(value: object) -> object:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_SURROGATE.sub("\ufffd", k): _replace_lone_surrogates(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# Typed access


def describe(value: object) -> str:
    """How a wrong value is named in a message: ``42``, ``"text"``, ``an array``, ``null``."""
    if isinstance(value, list | dict):
        return "an array" if isinstance(value, list) else "an object"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return json.dumps(shown, ensure_ascii=False)
    if type(value) is int and not -INT64 <= value < INT64:
        return f"a {len(str(abs(value)))}-digit number"
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return type(value).__name__


def join(at: str, key: str) -> str:
    """The field path of ``key`` inside the value at ``at`` (``[3]`` + ``tags`` → ``[3].tags``)."""
    return f"{at}.{key}" if at else key


def wrong(path: Path, where: str, expected: str, value: object) -> NoReturn:
    """Raise ``<path>:<where>: expected <expected>, got <value>``."""
    fail(path, where, f"expected {expected}, got {describe(value)}")


def as_list(value: object, path: Path, at: str) -> list[Any]:
    """An array; ``null`` is empty."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    wrong(path, at, "an array", value)


def as_object(value: object, path: Path, at: str) -> JSONObject:
    """An object; ``null`` is empty."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    wrong(path, at, "an object", value)


def objects(value: object, path: Path, at: str = "") -> Iterable[tuple[str, JSONObject]]:
    """``(field path, object)`` for each element of an array of objects."""
    for index, item in enumerate(as_list(value, path, at)):
        where = f"{at}[{index}]"
        if not isinstance(item, dict):
            wrong(path, where, "an object", item)
        yield where, item


def get_str(obj: JSONObject, key: str, path: Path, at: str) -> str:
    """A string field; absent or ``null`` is ``""``."""
    value = obj.get(key)
    if type(value) is str:
        return value
    if value is None:
        return ""
    wrong(path, join(at, key), "a string", value)


MAX_ID_CHARS = 512
"""The longest item id read (ChatCLI's are UUIDs or 24 hex digits): an id is in every link and
file name of its note, and one of megabytes made a sync take gigabytes."""


def get_id(obj: JSONObject, path: Path, at: str) -> str:
    """An item's ``id`` (a string field; absent or ``null`` is ``""``), at most ``MAX_ID_CHARS``."""
    ident = get_str(obj, "id", path, at)
    if len(ident) > MAX_ID_CHARS:
        fail(
            path, join(at, "id"), f"{len(ident):,} characters long (ids are at most {MAX_ID_CHARS})"
        )
    return ident


def get_int(obj: JSONObject, key: str, path: Path, at: str) -> int:
    """An integer field; absent or ``null`` is 0.  ``1.5`` and ``true`` are refused."""
    value = obj.get(key)
    if type(value) is int and -INT64 <= value < INT64:
        return value
    if value is None:
        return 0
    wrong(path, join(at, key), "an integer" + _RANGE_64 * (type(value) is int), value)


def get_float(obj: JSONObject, key: str, path: Path, at: str) -> float:
    """A number field; absent or ``null`` is 0.0."""
    value = obj.get(key)
    if type(value) is float:
        return value
    if type(value) is int:
        with contextlib.suppress(OverflowError):
            return float(value)
    if value is None:
        return 0.0
    wrong(path, join(at, key), "a number" + _RANGE_64 * (type(value) is int), value)


def get_bool(obj: JSONObject, key: str, path: Path, at: str) -> bool:
    """A boolean field; absent or ``null`` is ``False``."""
    value = obj.get(key)
    if type(value) is bool:
        return value
    if value is None:
        return False
    wrong(path, join(at, key), "a boolean", value)


def get_strs(obj: JSONObject, key: str, path: Path, at: str) -> tuple[str, ...]:
    """An array of strings, in order; ``null`` and empty elements are dropped."""
    value = obj.get(key)
    if value is None:
        return ()
    where = join(at, key)
    items = as_list(value, path, where)
    for index, item in enumerate(items):
        if type(item) is not str and item is not None:
            wrong(path, f"{where}[{index}]", "a string", item)
    return tuple(item for item in items if item)


def get_str_map(obj: JSONObject, key: str, path: Path, at: str) -> tuple[tuple[str, str], ...]:
    """A ``{string: string}`` object as ``(key, text)`` pairs sorted by key; ``null`` is ``()``."""
    where = join(at, key)
    entries = as_object(obj.get(key), path, where)
    return tuple((name, get_str(entries, name, path, where)) for name in sorted(entries))


def get_time(obj: JSONObject, key: str, path: Path, at: str) -> datetime | None:
    """An RFC 3339 timestamp field; absent, ``null`` or Go's zero time is ``None``."""
    value = obj.get(key)
    if value is None:
        return None
    if type(value) is not str:
        wrong(path, join(at, key), "an RFC 3339 timestamp string", value)
    return parse_time(value, path=path, where=join(at, key))


# ---------------------------------------------------------------------------------------------
# Timestamps


def parse_time(text: str, *, path: Path | str = "", where: str = "") -> datetime | None:
    """RFC 3339 (0 to 9 fractional digits, ``Z`` or an offset) → aware datetime; zero time → None.

    Nanoseconds are truncated to microseconds.  Anything else, including a moment that cannot
    be expressed in UTC, raises ``StoreError`` naming ``where``.
    """
    match = _RFC3339.fullmatch(text)
    if match is None:
        fail(path, where, f"invalid RFC 3339 timestamp {describe(text)}")
    year = match[1]
    if "0001" < year < "9999" and match[6] != "60":
        # Fast path: the C parser, once the text is known to be RFC 3339 and in range.
        frac = match[7]
        if frac and len(frac) > 6:
            text = text[: match.start(7) + 6] + text[match.end(7) :]
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            pass  # an impossible date, a lowercase t/z, an odd offset: the slow path tells
    return _parse_fields(match, path, where)


def _parse_fields(match: re.Match[str], path: Path | str, where: str) -> datetime | None:
    year, month, day, hour, minute, second, frac, zulu, sign, off_h, off_m = match.groups()
    tz = UTC if zulu else _offset(sign, off_h, off_m)
    try:
        if tz is None:
            raise ValueError("offset out of range")
        micro = int(frac[:6].ljust(6, "0")) if frac else 0
        # RFC 3339 allows a leap second; Python cannot hold one, so it becomes :59.
        sec = 59 if second == "60" else int(second)
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute), sec, micro, tzinfo=tz
        )
        if tz is not UTC:
            moment.astimezone(UTC)  # refuse moments before year 1 or after 9999 in UTC
    except (ValueError, OverflowError):
        fail(path, where, f"invalid RFC 3339 timestamp {describe(match[0])} (out of range)")
    return None if moment == ZERO_TIME else moment


def _offset(sign: str, hours: str, minutes: str) -> timezone | None:
    key = sign + hours + minutes
    tz = _OFFSETS.get(key)
    if tz is None:
        h, m = int(hours), int(minutes)
        if h > 23 or m > 59:
            return None
        delta = timedelta(hours=h, minutes=m)
        tz = UTC if not delta else timezone(-delta if sign == "-" else delta)
        _OFFSETS[key] = tz
    return tz


# ---------------------------------------------------------------------------------------------
# Determinism


def unique_sorted(
    items: Iterable[T],
    key: Callable[[T], Hashable],
    sort_key: Callable[[T], Any],
    rank: Callable[[T], Any],
) -> tuple[T, ...]:
    """One item per ``key`` (the highest ``rank``, ties broken by ``repr``), sorted by ``sort_key``.

    Hand-edited or merged stores can repeat an id; keeping a winner chosen by content rather
    than by position keeps the output independent of input order.
    """
    chosen: dict[Hashable, T] = {}
    for item in items:
        k = key(item)
        held = chosen.get(k)
        if held is None or (rank(item), repr(item)) > (rank(held), repr(held)):
            chosen[k] = item
    return tuple(sorted(chosen.values(), key=sort_key))


def time_key(moment: datetime | None) -> datetime:
    """A sortable stand-in for an optional time: missing sorts first."""
    return ZERO_TIME if moment is None else moment

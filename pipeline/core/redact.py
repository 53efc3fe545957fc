"""Text → the same text with secrets masked (:func:`mask`); pure apart from a lazy rule load.

Two detectors, merged:

* **kingfisher** (``kingfisher_sdk``): hundreds of provider rules (GitHub, Slack, Stripe, JWT,
  credential URIs…), about 5 ms per MB.  Loading its rules costs ~0.3 s warm and ~3 s cold, so
  they are loaded once per process, and only when a text holds a *candidate* (a run of at least
  16 token characters mixing letters and digits, other than one of our ids, a path of short
  parts or a file name; or a word such as ``Authorization`` or ``api-key`` that kingfisher's
  context rules key on): notes that need no scan never pay for it.
  Only ``visible`` findings count (the others are parts of a finding, such as an account id).
  Its offsets are UTF-8 byte offsets and are mapped back to characters here.
* **Our own patterns** for what kingfisher does not report (libraries.md §4, re-measured):
  a lone AWS access key id (``AKIA``/``ASIA`` + 16), the password of ``scheme://user:pw@``,
  the 40-character secret written after an access key id (``AKIA… / …``), GitHub tokens
  (``ghp_…``, ``github_pat_…``), values assigned to password/secret/token/api-key names
  (``password = "…"``, ``PASSWORD=…``, ``"password": "…"``, ``password: hunter2``,
  ``Server=db;Password=…;``, and a value that looks like a credential — letters and digits —
  even when a command or prose follows it: ``export PGPASSWORD=… && psql``,
  ``api_key=sk-live-… (rotate!)``), ``Bearer`` tokens, and private key blocks (the body between
  the ``BEGIN``/``END`` armour, on one line or many).

Only the secret is replaced — quotes, names and the key block's armour lines stay, so the
reader sees what was there.  The mask names the secret by a short digest (:func:`mask`,
``‹secret-3fa9c1›``): the same secret gives the same mask wherever it appears (a masked title
gives the same file name on every sync, and a wikilink to it still resolves), and two titles
that differ only in their secret stay two notes.  Six hex digits of BLAKE2b (personalized for
vaultsync, no key: the same on every machine, so ``check`` in CI agrees): enough to tell a few
secrets apart, too few to identify a strong one; a *weak* password can be confirmed by
someone who guesses it, so the README says so.

Precision over recall: an assignment whose value is prose (``Password: choose a strong one``),
a placeholder (``<token>``, ``${TOKEN}``, ``changeme``) or code (``password = input()``) is
left alone, and our 24-hex note ids are never masked.
Masking is idempotent: ``redact(redact(t)) == redact(t)``.  It is linear in the length of the
text: every pattern looks a bounded distance past where it starts, and the key-block scan
never searches the same stretch twice.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import re
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["MASKED", "find_secrets", "mask", "mask_spans", "redact", "unmask_secrets"]

_MASK_OPEN = "\u2039secret-"
MASKED = re.compile(r"\u2039secret-[0-9a-f]{6}\u203a")
"""What a secret is replaced with: ``‹secret-`` six hex digits ``›`` (see :func:`mask`)."""


def mask(secret: str) -> str:
    """The mask of one secret: ``‹secret-`` + 6 hex digits of its BLAKE2b digest + ``›``."""
    data = secret.encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(data, digest_size=3, person=b"vaultsync-mask").hexdigest()
    return f"{_MASK_OPEN}{digest}\u203a"


def _has_mask(text: str) -> bool:
    return _MASK_OPEN in text


Span = tuple[int, int]

# --- our own patterns ----------------------------------------------------------------------

# Case-insensitive, like the key-block armour: a store may lowercase a name (projects) before
# anything sees it, and a lowercased key is still the key.
_AWS_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])", re.IGNORECASE)
# The secret access key written right after its key id (``AKIA… / <40 characters>``).
_AWS_PAIR_SECRET = re.compile(
    r"(?:[ \t]*[/:,;|=][ \t]*|[ \t]+)(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9+=])"
)
_PRIVATE_KEY_WORDS = re.compile(r"PRIVATE KEY", re.IGNORECASE)
_AWS_PREFIXES = re.compile(r"AKIA|ASIA", re.IGNORECASE)
_GITHUB_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
# GitHub's token shapes, also when kingfisher's checks would pass one by.
_GITHUB_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_])(?:github_pat_[A-Za-z0-9_]{22,255}|gh[pousr]_[A-Za-z0-9]{36,255})"
    r"(?![A-Za-z0-9_])"
)
_URL_PASSWORD = re.compile(r"://[^\s/?#@:\"'<>`]+:(?P<secret>[^\s/?#@\"'<>`]+)@")
_BEARER = re.compile(
    r"\bBearer[ \t]+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)(?![A-Za-z0-9\-._~+/=])", re.IGNORECASE
)
_BEARER_WORD = re.compile(r"bearer", re.IGNORECASE)
# ``user:password@host`` without a scheme (a URL whose ``//`` was lost, an scp-style remote):
# only a password that looks like a credential, since prose has ``a:b@c`` too.
_USERINFO = re.compile(
    r"(?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]{1,64}:(?P<secret>[^\s/?#@:\"'<>`]{8,200})"
    r"@[A-Za-z0-9\-]+\.[A-Za-z0-9.\-]+"
)
# An HTTP Authorization header's credentials (Basic, Token, Digest), however short.
_AUTH_HEADER = re.compile(
    r"\bAuthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:Basic|Token|Digest)[ \t]+"
    r"(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)",
    re.IGNORECASE,
)
# Credentials, not a word of prose: a digit, an inner capital, or a base64 sign.
_LOOKS_ENCODED = re.compile(r"[0-9+/=]|.[A-Z]")
# The armour line may end the line or (a key pasted onto one line) be followed by the body.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?)-----[ \t]*(?:\r?\n)?",
    re.IGNORECASE,
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# An assignment to a secret-like name: the name must END with one of these words
# (``tokenizer = …`` is not a token, ``max_tokens`` is not either); ``key`` only after ``api``,
# ``access``, ``private``… (``key = 3`` is not a secret).  Found in the lowercased text with one
# literal alternation (fast), then the operator and value are matched from there.
_NAME_WORD = re.compile(r"(?:password|passwd|passphrase|secret|token|key|credentials?)(?![a-z0-9])")
_KEY_PREFIX = re.compile(r"(?:api|access|private|secret|signing|encryption|master)[_-]?\Z")
# After a bare value only the next two visible characters of the line matter (more words, or
# a comment): reading the rest of the line for every assignment made long lines quadratic.
_VALUE = re.compile(
    r"(?P<close>[\"']?)[ \t]*(?P<op>:=|=>|=|:)[ \t]*"
    r"(?:(?P<quote>[\"'`])(?P<quoted>[^\"'`\n]{1,500})(?P=quote)"
    r"|(?P<bare>[^\s\"'`,;]{1,500})(?P<rest>(?:(?!\n)\s)*+[^\n]{0,2}))"
)
# Where a bare value ends even though more characters follow: a separator of a connection
# string, a comment, a shell operator.
_VALUE_END = (";", ",", "#", "//", "&&", "||", "|")
_PLACEHOLDER = re.compile(
    r"""(?ix)
    \A(?:
        | none | null | nil | true | false | yes | no | undefined | empty | required | optional
        | changeme | change[-_]me | redacted | hidden | secret | password | token | example
        | x+ | \*+ | \.+ | -+ | _+ | #+
    )\Z
    | \A[$%{<\[]                      # ${VAR}, %VAR%, {{ var }}, <token>, [TOKEN]
    | \A(?:process\.env|os\.environ|os\.getenv|env\.|import\.meta|getenv|secrets\.)
    """
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_LINE_KEY = re.compile(r"[ \t]*(?:[-*][ \t]+)?[\"']?[\w.-]*")
_NAME_HINTS = ("pass", "secret", "token", "key", "cred")
_HEX_ID = re.compile(r"(?:ep_)?[0-9a-f]{24}")

# --- kingfisher ----------------------------------------------------------------------------

# A run of token characters, 16 or longer; a candidate when it mixes letters and digits.
_TOKEN_RUN = re.compile(r"(?<![A-Za-z0-9_\-+/=.~])[A-Za-z0-9_\-+/=.~]{16,}")
_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_LETTER = re.compile(r"[A-Za-z]")
# A path of short parts (``Projects/project003``, ``/docs/v2/page103.md``,
# ``//example.com/a/b2``) or a file name (``page103.md``): the most common candidates in notes
# (wikilink targets, links, file names), and never a secret on their own: no part is long
# enough to hold one.
_SHORT_PATH = re.compile(
    r"/*(?:[A-Za-z0-9_.~-]{1,15}/+)+[A-Za-z0-9_.~-]{0,15}"
    r"|[A-Za-z0-9_~-]{1,15}\.[A-Za-z][A-Za-z0-9]{0,4}"
)

# Words that kingfisher's context rules key on (``curl -H "Authorization: Basic …"``, ``X-Api-Key``,
# ``kind: Secret``): a secret after one of them may be too short to be a candidate itself.
# (Assignments to password, secret or token names are our own patterns' job.)
_CONTEXT = re.compile(
    r"authori[sz]ation|api[-_ ]?key|x-api|credential|bearer|basic[ \t]|kind:[ \t]*secret",
    re.IGNORECASE,
)

_scanner_lock = threading.Lock()
_scanner: Any = None
_scanner_loaded = False


def _kingfisher() -> Any:
    """The process-wide kingfisher scanner, loaded on first use; None if unavailable."""
    global _scanner, _scanner_loaded  # noqa: PLW0603 - one lazily built scanner per process
    if _scanner_loaded:
        return _scanner
    with _scanner_lock:
        if not _scanner_loaded:
            try:
                from kingfisher_sdk import Rules, Scanner  # noqa: PLC0415 - costly, lazy
            except ImportError:  # pragma: no cover - a declared dependency
                _scanner = None
            else:
                _scanner = Scanner(Rules())
            _scanner_loaded = True
    return _scanner


def _needs_kingfisher(text: str) -> bool:
    if _CONTEXT.search(text):
        return True
    for match in _TOKEN_RUN.finditer(text):
        run = match.group()
        if (
            _HAS_DIGIT.search(run)
            and _HAS_LETTER.search(run)
            and not _HEX_ID.fullmatch(run)
            and not _SHORT_PATH.fullmatch(run)
        ):
            return True
    return False


def _byte_to_char(text: str, offsets: Iterable[int]) -> dict[int, int]:
    """Map UTF-8 byte offsets of ``text`` to character offsets."""
    wanted = sorted(set(offsets))
    if text.isascii():
        return {offset: offset for offset in wanted}
    found: dict[int, int] = {}
    position = 0
    size = 0
    for offset in wanted:
        while size < offset and position < len(text):
            size += len(text[position].encode("utf-8"))
            position += 1
        found[offset] = position
    return found


def _kingfisher_spans(text: str) -> list[Span]:
    if not _needs_kingfisher(text):
        return []
    scanner = _kingfisher()
    if scanner is None:  # pragma: no cover - a declared dependency
        return []
    found = [
        (f.location["start_offset"], f.location["end_offset"])
        for f in scanner.scan(text)
        if f.visible
    ]
    if not found:
        return []
    chars = _byte_to_char(text, (offset for span in found for offset in span))
    spans = []
    for start, end in found:
        span = (chars[start], chars[end])
        if span[0] < span[1] and not _HEX_ID.fullmatch(text[span[0] : span[1]]):
            spans.append(span)
    return spans


# --- our patterns --------------------------------------------------------------------------


def _key_starts_line(text: str, keyword_start: int) -> bool:
    """Whether the assigned name is the first thing on its line (``  db_password: x``)."""
    line_start = text.rfind("\n", 0, keyword_start) + 1
    return _LINE_KEY.fullmatch(text, line_start, keyword_start) is not None


def _is_value_secret(text: str, name_start: int, match: re.Match[str]) -> bool:
    """Whether an assigned value looks like a real secret rather than prose, code or a stub."""
    bare = match.group("bare")
    value = match.group("quoted") if bare is None else bare
    if _has_mask(value) or _PLACEHOLDER.search(value):
        return False
    return bare is None or _is_bare_value_secret(text, name_start, match)


def _is_bare_value_secret(text: str, name_start: int, match: re.Match[str]) -> bool:
    """Whether an unquoted value is a secret: a lone token, or a credential before more words."""
    value, rest = match.group("bare"), match.group("rest")
    if "(" in value or "[" in value or "{" in value:
        return False  # a call, an index or a template: code
    if rest.strip() and not rest.lstrip().startswith(_VALUE_END):
        # More words follow: prose or an expression, unless the value itself is a credential
        # (``PGPASSWORD=Tr0ub4dor3 && psql``, ``api_key=sk-live-4f9a… (rotate!)``).
        return _looks_like_credential(value)
    if _HAS_DIGIT.search(value) and len(value) >= 6:
        return True
    if not _IDENTIFIER.fullmatch(value):
        return len(value) >= 6  # symbols: ``p@ss!word``
    # A bare word: ``password = input`` is code, ``password: swordfish`` in a config line and
    # ``PASSWORD=swordfish`` (env-file style) are values.
    op = match.group("op")
    if op == ":":
        return len(value) >= 6 and _key_starts_line(text, name_start)
    return op == "=" and text[name_start].isupper() and "." not in value


def _looks_like_credential(value: str) -> bool:
    """Letters and digits, 8 to 256 characters, not a web address: no word of prose.

    (Longer tokens are provider formats, kingfisher's; the bound keeps a line of ``password=``
    repeated from scanning every 500-character value for a digit.)
    """
    return (
        8 <= len(value) <= 256
        and _HAS_DIGIT.search(value) is not None
        and _HAS_LETTER.search(value) is not None
        and "://" not in value
    )


def _private_key_spans(text: str) -> Iterable[Span]:
    """Key bodies; the scan resumes after each body, so no stretch is searched twice."""
    position = 0
    folded = _lowered(text)
    no_end: set[str] = set()  # labels with no END line after some point: none after it either
    while (match := _PRIVATE_KEY.search(text, position)) is not None:
        start = match.end()
        end_marker = _key_end(folded, start, match.group("label").lower(), no_end)
        body = text[start:end_marker].rstrip()
        if body and not MASKED.fullmatch(body):
            yield start, start + len(body)
        position = max(end_marker, start)


def _key_end(folded: str, start: int, label: str, no_end: set[str]) -> int:
    """Where a key body ends: its END line, else (a cut block) the first blank line or the end.

    ``folded`` is the lowercased text and ``label`` the lowercased label.
    """
    end_marker = -1 if label in no_end else folded.find(f"-----end {label}-----", start)
    if end_marker == -1:
        no_end.add(label)
        blank = _BLANK_LINE.search(folded, start)
        end_marker = blank.start() + 1 if blank else len(folded)
    return end_marker


def _lowered(text: str) -> str:
    """``text`` lowercased, character for character (offsets stay valid)."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a few letters lowercase to two characters (``İ``)
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return lowered


def _assignment_spans(text: str) -> Iterable[Span]:
    lowered = _lowered(text)
    if not any(word in lowered for word in _NAME_HINTS):
        return
    for name in _NAME_WORD.finditer(lowered):
        start, end = name.span()
        if name.group() == "key" and not _KEY_PREFIX.search(lowered, max(0, start - 12), start):
            continue
        value = _VALUE.match(text, end)
        if value is not None and _is_value_secret(text, start, value):
            yield value.span("bare" if value.group("bare") is not None else "quoted")


def _aws_spans(text: str) -> Iterable[Span]:
    """An access key id, and the secret key written right after it."""
    for match in _AWS_KEY_ID.finditer(text):
        yield match.span()
        pair = _AWS_PAIR_SECRET.match(text, match.end())
        if pair is not None:
            yield pair.span("secret")


def _userinfo_spans(text: str) -> Iterable[Span]:
    """``user:password@host`` with no scheme, when the password looks like a credential."""
    for match in _USERINFO.finditer(text):
        secret = match.group("secret")
        if _looks_like_credential(secret) and not _has_mask(secret):
            yield match.span("secret")


def _url_password_spans(text: str) -> Iterable[Span]:
    """The password of ``scheme://user:pw@``, unless masked already or a placeholder."""
    for match in _URL_PASSWORD.finditer(text):
        secret = match.group("secret")
        if (
            match.start() > 0
            and text[match.start() - 1].isalnum()
            and not _has_mask(secret)
            and not _PLACEHOLDER.search(secret)
        ):
            yield match.span("secret")


def _auth_header_spans(text: str) -> Iterable[Span]:
    """An Authorization header's credentials, when they look encoded rather than a word."""
    for match in _AUTH_HEADER.finditer(text):
        if _LOOKS_ENCODED.search(match.group("secret")):
            yield match.span("secret")


def _own_spans(text: str) -> list[Span]:
    # Each pattern runs only when a cheap substring test says it can match.
    spans: list[Span] = []
    if _AWS_PREFIXES.search(text):
        spans.extend(_aws_spans(text))
    if "github_pat_" in text or any(prefix in text for prefix in _GITHUB_PREFIXES):
        spans.extend(m.span() for m in _GITHUB_TOKEN.finditer(text))
    if "://" in text:
        spans.extend(_url_password_spans(text))
    if _BEARER_WORD.search(text):
        spans.extend(m.span("secret") for m in _BEARER.finditer(text))
    if "@" in text:
        spans.extend(_userinfo_spans(text))
    if "uthori" in text or "UTHORI" in text:
        spans.extend(_auth_header_spans(text))
    if _PRIVATE_KEY_WORDS.search(text):
        spans.extend(_private_key_spans(text))
    spans.extend(_assignment_spans(text))
    return spans


def _merge(spans: Iterable[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def find_secrets(text: str) -> tuple[Span, ...]:
    """The character spans of ``text`` to mask, sorted and merged."""
    if not text:
        return ()
    return tuple(_merge([*_own_spans(text), *_kingfisher_spans(text)]))


def redact(text: str) -> str:
    """``text`` with every secret replaced by its :func:`mask`.

    Args:
        text: any text from a store (Markdown, source code, a title, a name, a path).

    Returns:
        The text with only the secret characters replaced; unchanged when nothing is found.
    """
    return mask_spans(text, find_secrets(text))


def mask_spans(text: str, spans: Iterable[Span]) -> str:
    """``text`` with each of ``spans`` (sorted, apart) replaced by the :func:`mask` of its text."""
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        pieces.append(text[cursor:start])
        pieces.append(mask(text[start:end]))
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def unmask_secrets(text: str, masked: str) -> list[str]:
    """The secrets :func:`redact` replaced in ``text`` to give ``masked`` (an earlier run's).

    Each mask names its secret by digest, so the secret is the stretch of ``text`` between the
    literal pieces around the mask whose :func:`mask` is that mask; ``[]`` when none fits.
    """
    pieces = MASKED.split(masked)
    masks = MASKED.findall(masked)
    if not text.startswith(pieces[0]):
        return []
    secrets: list[str] = []
    position = len(pieces[0])
    for wanted, after in zip(masks, pieces[1:], strict=True):
        end = _masked_end(text, position, wanted, after)
        if end is None:
            return []
        secrets.append(text[position:end])
        position = end + len(after)
    return secrets


def _masked_end(text: str, start: int, wanted: str, after: str) -> int | None:
    """Where the secret starting at ``start`` ends: before ``after``, with ``wanted`` as mask."""
    end = text.find(after, start + 1)
    while end != -1:
        if mask(text[start:end]) == wanted:
            return end
        end = text.find(after, end + 1)
    return None


@functools.cache
def rules_version() -> str:
    """The secret rules' version: what masking gives depends on it (caches are keyed by it)."""
    try:
        return importlib.metadata.version("kingfisher-secret-scanner")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a declared dependency
        return "none"

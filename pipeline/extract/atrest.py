"""ChatCLI's at-rest sealing (``CHATCLI_ENC_v1``/``v2``): recognise the header, open the payload.

Format (ChatCLI's ``pkg/atrest``): header + 12-byte nonce + AES-256-GCM ciphertext and tag.  The
key is HKDF-SHA256(master, no salt, info ``chatcli-session-encryption``); v1's master is
SHA-256(secret); v2's is SHA-256(secret) for a secret of 32 bytes or more, else Argon2id with
ChatCLI's fixed salt.  v2 binds a file to its place with additional data, trying none after.
Keys are held only in memory: never written, printed, or put in an error.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from vaultsync.core.settings import Sources
from vaultsync.extract.sources import source_files

__all__ = [
    "HEADER",
    "KNOWN_VERSIONS",
    "SealKeys",
    "first_sealed",
    "open_sealed",
    "place_data",
    "seal_version",
]

HEADER = re.compile(rb"CHATCLI_ENC_v(\d+)\n")
"""Every at-rest header ChatCLI writes; a version this reader does not know is still "sealed"."""
KNOWN_VERSIONS = (1, 2)
_INFO = b"chatcli-session-encryption"
_PASSPHRASE_SALT = b"chatcli-atrest-v2-passphrase"
_NONCE = 12
_LONG_SECRET = 32


@dataclass(frozen=True, slots=True)
class SealKeys:
    """The secrets to try, current first then retired; ``repr`` shows only how many."""

    secrets: tuple[str, ...] = field(repr=False, default=())

    def __repr__(self) -> str:
        return f"SealKeys(<{len(self.secrets)} secret(s)>)"

    def __bool__(self) -> bool:
        return bool(self.secrets)


def seal_version(data: bytes) -> int | None:
    """The at-rest version of ``data`` when it starts with a ``CHATCLI_ENC_v*`` header."""
    found = HEADER.match(data)
    return int(found.group(1)) if found else None


def first_sealed(state_dir: Path, sources: Sources | None = None) -> Path | None:
    """The first store file (in listing order) whose bytes start with an at-rest header."""
    for path in source_files(state_dir, sources):
        if _starts_sealed(path):
            return path
    return None


def _starts_sealed(path: Path) -> bool:
    """Whether a regular file starts with ``CHATCLI_ENC_v*`` (a FIFO is never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and seal_version(os.read(fd, 32)) is not None
    except OSError:
        return False
    finally:
        os.close(fd)


def place_data(relative: str, tenant: str = "") -> bytes:
    r"""v2's additional data: ``v2\\0<path under the store set>\\0<tenant slug>``."""
    return b"v2\0" + relative.encode() + b"\0" + tenant.encode()


def open_sealed(data: bytes, keys: SealKeys, place: bytes) -> bytes | None:
    """The plaintext of a sealed payload, or ``None`` when no key (or no place) opens it."""
    found = HEADER.match(data)
    if found is None or int(found.group(1)) not in KNOWN_VERSIONS:
        return None
    version = int(found.group(1))
    body = data[found.end() :]
    nonce, sealed = body[:_NONCE], body[_NONCE:]
    if len(nonce) < _NONCE:
        return None
    places: tuple[bytes | None, ...] = (place, None) if version == 2 else (None,)
    for secret in keys.secrets:
        aead = AESGCM(_derive(secret, version))
        for extra in places:
            plain = _try_open(aead, nonce, sealed, extra)
            if plain is not None:
                return plain
    return None


def _try_open(aead: AESGCM, nonce: bytes, sealed: bytes, extra: bytes | None) -> bytes | None:
    try:
        return aead.decrypt(nonce, sealed, extra)
    except InvalidTag:
        return None


@functools.lru_cache(maxsize=16)
def _derive(secret: str, version: int) -> bytes:
    """The AES key for ``secret`` under ``version``'s rule; once per secret, as ChatCLI caches it.

    Argon2id costs 64 MiB and a noticeable fraction of a second: a hub's thousand sealed files
    stretch a passphrase once, not a thousand times.  Held in this process's memory only.
    """
    raw = secret.encode()
    if version >= 2 and len(raw) < _LONG_SECRET:
        master = _stretch(raw)
    else:
        master = hashlib.sha256(raw).digest()
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(master)


def _stretch(passphrase: bytes) -> bytes:
    # ChatCLI's parameters: 3 passes, 64 MiB, 4 lanes, 32 bytes.
    kdf = Argon2id(salt=_PASSPHRASE_SALT, length=32, iterations=3, lanes=4, memory_cost=64 * 1024)
    return kdf.derive(passphrase)

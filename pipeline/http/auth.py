"""The API's credentials: the vault's stored bearer token and a browser's one-time login; edge.

* :func:`vault_token` reads ``<vault>/.vaultsync/api-token``, creating it on first use: 32
  random bytes (URL-safe base64), mode ``0600``, written by the vault's own writer
  (:class:`vaultsync.vault.write.VaultFS`: atomic, no symlink followed) under the vault lock,
  so two servers starting at once agree on one token.  A token file another user could read is
  rewritten ``0600``.  It is never committed: ``.vaultsync/.gitignore`` ignores every file of
  the folder but itself, the manifest and the config, a sync commits only those three, and a
  vault that has no ``.vaultsync/.gitignore`` yet gets vaultsync's with the token, so a larger
  repository's ``git add -A`` skips it too.
* :class:`BrowserLogin`: a browser cannot send ``Authorization: Bearer``, so ``serve`` prints a
  URL holding a one-time nonce.  Its first ``GET /auth?once=<nonce>`` sets a session cookie
  (``HttpOnly; SameSite=Strict``) and redirects to ``/docs``; any later use is refused.  The
  cookie's value is random per server run, never the token, so a cookie seen by someone else
  dies with the server and never reveals the token.  Nonce and cookie are compared in
  constant time (``hmac.compare_digest``).
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
import threading
from pathlib import Path

from vaultsync.core.errors import VaultWriteError
from vaultsync.vault.manifest import CONTROL_DIR, GITIGNORE, GITIGNORE_BYTES
from vaultsync.vault.write import VaultFS

__all__ = ["LOGIN_PATH", "TOKEN_FILE", "BrowserLogin", "cookie_name", "vault_token"]

TOKEN_FILE = f"{CONTROL_DIR}/api-token"
LOGIN_PATH = "/auth"
_LOCK_WAIT = 30.0
"""Seconds to wait for a running sync's vault lock when the token must be created."""


def _read_token(fs: VaultFS) -> str | None:
    found = fs.read_control_file(TOKEN_FILE)
    token = found.data.decode("ascii", "replace").strip() if found is not None else ""
    return token if token and token.isprintable() and " " not in token else None


def _private(vault: Path) -> bool:
    """Whether the token file, as it is now, can be read by its owner only."""
    try:
        mode = os.lstat(vault / TOKEN_FILE).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and not mode & 0o077


def vault_token(vault: Path) -> str:
    """The vault's API token, created (``0600``, git-ignored) when there is none or it is unusable.

    Raises ``VaultWriteError`` when it cannot be read or written (one line, exit 7).
    """
    with VaultFS(vault) as fs:
        token = _read_token(fs)
        if token is not None and _private(vault):
            return token
        with fs.lock(timeout=_LOCK_WAIT):
            token = _read_token(fs) or secrets.token_urlsafe(32)
            if fs.read_control_file(GITIGNORE) is None:
                fs.write_control(GITIGNORE, GITIGNORE_BYTES)
            fs.write_control(TOKEN_FILE, f"{token}\n".encode("ascii"))
    if not _private(vault):
        raise VaultWriteError(f"{vault / TOKEN_FILE}: cannot be made readable by you only")
    return token


def cookie_name(port: int) -> str:
    """The session cookie's name: one per port, since a browser shares a host's cookies by port."""
    return f"vaultsync_session_{port}"


class BrowserLogin:
    """One server run's one-time login nonce and the session value its cookie carries."""

    def __init__(self) -> None:
        self.nonce = secrets.token_urlsafe(32)
        self.session = secrets.token_urlsafe(32)
        self._used = False
        self._lock = threading.Lock()

    def redeem(self, given: str) -> bool:
        """Whether ``given`` is the nonce, not used before; true at most once per run."""
        match = hmac.compare_digest(given.encode(), self.nonce.encode())
        with self._lock:
            if not match or self._used:
                return False
            self._used = True
            return True

    def admits(self, given: str) -> bool:
        """Whether a cookie's value is this run's session."""
        return hmac.compare_digest(given.encode(), self.session.encode())

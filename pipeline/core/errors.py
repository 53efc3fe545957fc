"""The one exception tree of vaultsync; each class carries its process exit code.

Nothing here prints: only the CLI turns an error into one line on stderr and an exit code.
Messages are built from keyword arguments so that every error names *which file, where, and
what is wrong* in the same shape.
"""

from __future__ import annotations

from typing import ClassVar


class VaultsyncError(Exception):
    """Root of every error vaultsync raises on purpose."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(VaultsyncError):
    """The command line asks for something that cannot be done as asked."""

    exit_code = 2


class UnknownKindError(UsageError):
    """A kind filter names a kind no note can have (the kinds that exist are the candidates)."""

    def __init__(
        self, message: str, *, hint: str | None = None, candidates: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, hint=hint)
        self.candidates = candidates


class ConfigError(VaultsyncError):
    """A setting (environment variable, option value, template folder) is invalid."""

    exit_code = 3


class SemanticUnavailable(ConfigError):
    """Semantic search needs the ``semantic`` extra: numpy, ``tokenizers`` and a local model."""


class StoreError(VaultsyncError):
    """A store file cannot be read: bad JSON, wrong types, invalid UTF-8.

    The message is ``<path>:<where>: <what>`` where *where* is ``line:column`` for syntax
    errors and a field path such as ``[3].tags`` for type errors.
    """

    exit_code = 4

    def __init__(self, *, path: str, what: str, where: str = "", hint: str | None = None) -> None:
        location = f"{path}:{where}" if where else path
        super().__init__(f"{location}: {what}", hint=hint)
        self.path = path
        self.where = where
        self.what = what


class SkippedStores(VaultsyncError):
    """``vaultsync check --strict``: some store files could not be read and were skipped."""

    exit_code = 4


class SealedStoreError(StoreError):
    """A store is encrypted at rest (ChatCLI's ``enc:``/magic format): it cannot be read here."""


class TemplateError(VaultsyncError):
    """A Jinja template is missing or fails to render; names both template and note."""

    exit_code = 5


class NoteReferenceError(VaultsyncError):
    """A note reference names no note, or could mean several (the candidates are listed)."""

    exit_code = 6

    def __init__(
        self, message: str, *, hint: str | None = None, candidates: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, hint=hint)
        self.candidates = candidates
        """The node ids an ambiguous reference could mean (empty when it names nothing)."""


class VaultWriteError(VaultsyncError):
    """A write or commit failed, or a path would leave the vault (``..``, absolute, symlink)."""

    exit_code = 7


class UnsafePathError(VaultWriteError):
    """A path from the stores or on disk would place a write outside the vault."""


class LinkStoreError(VaultsyncError):
    """``links.json`` is corrupt (quarantined), full, or a link operation is refused."""

    exit_code = 8


class VaultStale(VaultsyncError):
    """``vaultsync check``: the vault differs from what the stores produce."""

    exit_code = 1


class VaultsFailed(VaultsyncError):
    """``vaultsync sync --each``: one or more vaults failed (each was reported; the rest synced)."""

    exit_code = 9


class RemoteFailed(VaultsyncError):
    """``sync --pull/--push``: the remote could not be reached, or it refused; synced locally."""

    exit_code = 10


class GitBusy(VaultsyncError):
    """A git merge, rebase, cherry-pick or revert is unfinished in the vault: nothing written."""

    exit_code = 11

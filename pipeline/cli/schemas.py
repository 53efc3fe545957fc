"""The JSON Schemas (draft 2020-12) of ``sync``, ``sync --each``, ``status`` and ``check --json``.

The contract for scripts and CI jobs: every output carries ``schema_version``
(:data:`SCHEMA_VERSION`); within one version a key is never removed, renamed or retyped, and
every key listed is always present (``additionalProperties: false``, all keys ``required``).
A change to these schemas is a change of ``SCHEMA_VERSION``, said in the README.
``tests/cli/test_json_schemas.py`` validates real outputs against them and freezes them with a
snapshot.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CHECK", "SCHEMAS", "SCHEMA_VERSION", "STATUS", "SYNC", "SYNC_EACH"]

SCHEMA_VERSION = 3
"""The ``schema_version`` of every ``--json`` output of sync, status and check.

2: ``sync --each`` says a stop by signal (``stopped_by``, ``not_started``).
3: ``sync`` (full and quick) and ``status`` say where the vault stands against its git remote
(``remote``, null when no pull or push was asked for, or no upstream is set); ``status`` says
a git operation left unfinished in the vault (``git_in_progress``)."""

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
_STR = {"type": "string"}
_STR_OR_NULL = {"type": ["string", "null"]}
_BOOL = {"type": "boolean"}
_PATHS = {"type": "array", "items": _STR}


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object with exactly ``properties``, all required."""
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(properties),
        "additionalProperties": False,
        **extra,
    }


_CONFLICTS = {
    "type": "array",
    "items": _object({"path": _STR, "reason": _STR}),
    "description": "Notes waiting on you: the vault path and why, in words.",
}
_SKIPPED = {
    "type": "array",
    "items": _object({"source": _STR, "where": _STR, "what": _STR}),
    "description": "Store files that could not be read; their notes were kept as they were.",
}
_VERSION = {"const": SCHEMA_VERSION}
_COUNT = {"type": "integer", "minimum": 0}
_SYNC_REMOTE = {
    "oneOf": [
        {"type": "null"},
        _object(
            {
                "upstream": _STR,
                "pulled": {**_COUNT, "description": "The remote's commits integrated first."},
                "taken": {
                    **_PATHS,
                    "description": "Notes where the other device's version replaced our render.",
                },
                "pushed": _BOOL,
                "problem": {**_STR_OR_NULL, "description": "Why a pull or push did not happen."},
            }
        ),
    ],
    "description": "The pull before the sync and the push after it (null: neither asked for).",
}
_STATUS_REMOTE = {
    "oneOf": [
        {"type": "null"},
        _object(
            {
                "upstream": _STR,
                "ahead": _COUNT,
                "behind": _COUNT,
                "pull_needed": _BOOL,
            }
        ),
    ],
    "description": "Against the upstream as of the last fetch (null: no upstream).",
}

_SYNC_FULL = _object(
    {
        "schema_version": _VERSION,
        "vault": _STR,
        "changed": _BOOL,
        "dry_run": _BOOL,
        "commit": {**_STR_OR_NULL, "description": "The commit made, or null (none, dry run)."},
        "created": _PATHS,
        "updated": _PATHS,
        "removed": _PATHS,
        "merged": {**_PATHS, "description": "Edited notes the stores' changes were merged into."},
        "unchanged": {"type": "integer", "minimum": 0},
        "kept_edited": _PATHS,
        "kept_deleted": _PATHS,
        "renamed": {
            "type": "array",
            "items": _object({"from": _STR, "to": _STR}),
            "description": "Notes you moved that this sync followed (old path → new path).",
        },
        "merge_waiting": _CONFLICTS,
        "conflicts": _CONFLICTS,
        "recovered": {**_BOOL, "description": "An interrupted sync's work was finished first."},
        "index_synced": {**_BOOL, "description": "false: .git/index was locked."},
        "manifest_problem": _STR_OR_NULL,
        "skipped": _SKIPPED,
        "remote": _SYNC_REMOTE,
    },
    title="full",
)
_SYNC_QUICK = _object(
    {
        "schema_version": _VERSION,
        "vault": _STR,
        "changed": {"const": False},
        "quick": {"const": True},
        "remote": _SYNC_REMOTE,
    },
    title="quick",
    description="Nothing changed since the last sync (answered without rendering).",
)

SYNC: dict[str, Any] = {
    "$schema": _DRAFT,
    "title": "vaultsync sync --json (also with --dry-run)",
    "oneOf": [_SYNC_FULL, _SYNC_QUICK],
}

STATUS: dict[str, Any] = {
    "$schema": _DRAFT,
    "title": "vaultsync status --json",
    **_object(
        {
            "schema_version": _VERSION,
            "vault": _STR,
            "edited": {
                "type": "array",
                "items": _object(
                    {
                        "path": _STR,
                        "commit": _STR_OR_NULL,
                        "when": {**_STR_OR_NULL, "description": "ISO 8601 time of the commit."},
                        "uncommitted": _BOOL,
                        "merged": {**_STR_OR_NULL, "description": "The commit of the merge."},
                    }
                ),
            },
            "deleted": _PATHS,
            "conflicts": _CONFLICTS,
            "pending": {**_PATHS, "description": "What a sync would do, one line each."},
            "manifest_problem": _STR_OR_NULL,
            "skipped": _SKIPPED,
            "hooks_not_run": {
                "oneOf": [{"type": "null"}, _object({"names": _PATHS, "folder": _STR})],
                "description": "Git hooks the vault's commits skip, or null.",
            },
            "history_exposed": {
                "type": "array",
                "items": _STR,
                "description": "Commits of the vault's history holding a secret or private "
                "value of the stores (`vaultsync history`), newest first.",
            },
            "remote": _STATUS_REMOTE,
            "git_in_progress": {
                **_STR_OR_NULL,
                "description": "A git merge, rebase, cherry-pick or revert left unfinished in the "
                "vault, and how to end it; null when none (no command writes until it ends).",
            },
        }
    ),
}

CHECK: dict[str, Any] = {
    "$schema": _DRAFT,
    "title": "vaultsync check --json",
    **_object(
        {
            "schema_version": _VERSION,
            "vault": _STR,
            "in_sync": _BOOL,
            "differences": {**_PATHS, "description": "One line per difference."},
            "skipped": _SKIPPED,
        }
    ),
}

_COUNT = {"type": "integer", "minimum": 0}

SYNC_EACH: dict[str, Any] = {
    "$schema": _DRAFT,
    "title": "vaultsync sync --each ROOT --json (also with --shard, --dry-run)",
    **_object(
        {
            "schema_version": _VERSION,
            "root": _STR,
            "shard": {
                "oneOf": [
                    {"type": "null"},
                    _object({"index": _COUNT, "count": {"type": "integer", "minimum": 1}}),
                ],
                "description": "--shard K/N as {index: K, count: N} (K from 0), or null.",
            },
            "found": {**_COUNT, "description": "State directories under ROOT, every shard's."},
            "dry_run": _BOOL,
            "synced": {**_COUNT, "description": "Vaults of this run synced without error."},
            "changed": {**_COUNT, "description": "Vaults whose notes changed."},
            "failed": {**_COUNT, "description": "Vaults that failed (the exit code is then 9)."},
            "stopped_by": {
                **_STR_OR_NULL,
                "description": "SIGTERM or SIGINT when a signal ended the run early (exit 9).",
            },
            "not_started": {**_COUNT, "description": "This shard's vaults a stop left out."},
            "vaults": {
                "type": "array",
                "description": "This run's vaults, by name.",
                "items": _object(
                    {
                        "name": {**_STR, "description": "The state directory, relative to ROOT."},
                        "state": _STR,
                        "vault": _STR,
                        "ok": _BOOL,
                        "exit_code": {
                            **_COUNT,
                            "description": "0, or the code `sync --state` would exit with.",
                        },
                        "error": _STR_OR_NULL,
                        "changed": _BOOL,
                        "quick": {**_BOOL, "description": "Nothing changed since the last sync."},
                        "commit": _STR_OR_NULL,
                        "conflicts": {**_COUNT, "description": "Notes waiting on the owner."},
                    }
                ),
            },
        }
    ),
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "sync": SYNC,
    "sync --each": SYNC_EACH,
    "status": STATUS,
    "check": CHECK,
}
"""Command → its output's schema."""

"""Settings: the graph's caps and where the state directory and the vault live; edge (reads env).

Every cap has a default and can be raised in the vault's saved config or with
an environment variable (``VAULTSYNC_CAP_<NAME>``; see :mod:`vaultsync.core.config`), so a
user with a larger memory keeps all of it in the graph.  :class:`Caps` also carries the one
time zone of every day boundary and rendered date (``render.timezone``, default UTC), since it
goes wherever the caps go: the graph build, its cache key and the render.  So do the
:class:`Sources`, the store folders read besides the state directory's own (chosen at the
edge from the ``skills.extra_folders`` setting), so the extractor never looks for them.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from datetime import UTC, tzinfo
from pathlib import Path
from typing import Any

from vaultsync.core.environment import read_environment


@dataclass(frozen=True, slots=True, kw_only=True)
class Sources:
    """Store folders read besides the state directory's own; chosen once, at the edge."""

    skills: tuple[Path, ...] = ()
    """Skill folders scanned before ``<state>/skills``, in order (``skills.extra_folders``);
    on a name clash the first folder wins, as ChatCLI's project-local ``.agent/skills``."""

    def outside(self, state: Path) -> tuple[Path, ...]:
        """The folders to read that are not the state directory's own."""
        return tuple(f for f in self.skills if not f.is_relative_to(state))


@dataclass(frozen=True, slots=True, kw_only=True)
class Caps:
    """Size limits of the graph (with their defaults), and the zone its days are counted in."""

    episodes: int = 300
    """The most recent episodes that become notes."""
    sessions: int = 50
    """Sessions that become notes: those the user named first, then the newest autosaves."""
    docs_per_context: int = 2000
    docs_total: int = 6000
    """Documents in the whole graph; the contexts created first keep theirs."""
    links_per_doc: int = 64
    mentions_per_note: int = 8
    same_day_per_daily: int = 20
    """``same_day`` links a daily note draws to the episodes and facts of its day."""
    store_file_mib: int = field(
        default=256,
        metadata={"help": "largest store file read, in MiB (a larger item is skipped)"},
    )
    """The largest store file read (MiB): a larger per-item file is skipped, a larger
    memory store is an error (exit 4)."""
    timezone: str = field(default="UTC", metadata={"setting": "render.timezone"})
    """The IANA zone of every day boundary (``same_day``, an episode's folder and file name)
    and every rendered time; never the zone of the process that runs."""
    sources: Sources = field(default_factory=Sources, metadata={"setting": "sources"})
    """Store folders outside the state directory (not a cap: it goes where the caps go)."""
    open_sealed: bool = field(default=True, metadata={"setting": "stores.open_sealed"})
    """Open ChatCLI's sealed stores with its key (``stores.open_sealed``); false skips them."""
    seal_keys: tuple[str, ...] = field(
        default=(), repr=False, compare=False, metadata={"secret": True}
    )
    """ChatCLI's at-rest keys, read once with the settings (``core.config.resolve``); never in
    :meth:`as_key`, a ``repr``, a cache or a digest."""

    @property
    def zone(self) -> tzinfo:
        """:attr:`timezone` as a zone; ``datetime.UTC`` itself for UTC.

        The stores' ``Z`` times then convert at no cost (``astimezone`` to their own zone).
        """
        return UTC if self.timezone == "UTC" else zoneinfo.ZoneInfo(self.timezone)

    def as_key(self) -> str:
        """A stable text form, part of the graph fingerprint."""
        shown = (f for f in fields(self) if not f.metadata.get("secret"))
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in shown)


def cap_fields() -> tuple[Field[Any], ...]:
    """The size limits of :class:`Caps` (whole numbers; the time zone and sources are not)."""
    return tuple(f for f in fields(Caps) if not f.metadata.keys() & {"setting", "secret"})


def state_dir(option: str | None, environ: Mapping[str, str] | None = None) -> Path:
    """``--state``, else env ``VAULTSYNC_STATE_DIR``, ``CHATCLI_STATE_DIR``, else ``~/.chatcli``.

    ``CHATCLI_STATE_DIR`` is no ChatCLI setting: only a plain, lower-ranked alias of
    ``VAULTSYNC_STATE_DIR``; every store is read under the one folder chosen here.
    """
    env = read_environment(environ)
    chosen = option or env.state_dir or env.chatcli_state_dir or "~/.chatcli"
    return Path(chosen).expanduser()


def vault_dir(option: str | None, state: Path, environ: dict[str, str] | None = None) -> Path:
    """The vault: ``--vault``, else env ``VAULTSYNC_VAULT_DIR``, ``CHATCLI_MEMORY_VAULT_DIR``.

    Args:
        option: the ``--vault`` value, if given.
        state: the state directory (the default vault is ``vault`` inside it).
        environ: the environment to read (``os.environ`` when ``None``).
    """
    env = read_environment(environ)
    chosen = option or env.vault_dir or env.chatcli_vault_dir
    return Path(chosen).expanduser() if chosen else state / "vault"

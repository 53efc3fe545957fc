"""The vault's saved settings (``.vaultsync/config.toml``), and the flags and variables over them.

Settings that change what a sync writes (the templates folder, the caps, the time zone, the
privacy keys…) are saved *with the vault* and committed beside the manifest, so ``sync``,
``check``, ``status``, a pre-commit hook and CI on a fresh clone all render with the same
settings.  Each setting is an :class:`Option` of :data:`OPTIONS` (later features add theirs
there); one value is chosen per option, in this order:

1. a command-line flag;
2. an environment variable;
3. the saved config;
4. the option's default.

When a flag or a variable overrides a *saved* value, :func:`resolve` adds a notice saying so
(a CI job that sets ``VAULTSYNC_CAP_EPISODES`` must not silently render a different vault than
the committed config describes).  Relative paths in the file are relative to the vault.
Nothing in the file may look like a secret: the config is committed.

Reading is pure (bytes in, :class:`Settings` out); the file is read by :func:`read_config` and
written by :func:`edit_config` (bytes in, bytes out: comments and layout of the user's file
are kept, through tomlkit) — the vault stage writes it.
"""

from __future__ import annotations

import os
import tomllib
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vaultsync.core.environment import read_environment
from vaultsync.core.errors import ConfigError
from vaultsync.core.settings import Caps, Sources, cap_fields

CONFIG = ".vaultsync/config.toml"
"""The saved settings, relative to the vault; committed with the manifest."""

Value = str | int | float | bool | tuple[str, ...] | None

WATCH_PREFIX = "watch."
"""The watcher's timings: they decide when a sync runs, not what it writes."""
GIT_PREFIX = "git."
"""The remote's settings: whether a sync pulls and pushes, never what it writes."""
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def _text(key: str, raw: object) -> str:
    if not isinstance(raw, str):
        raise ConfigError(f"{key}: expected text, found {_kind(raw)}")
    return raw


def _positive_int(key: str, raw: object) -> int:
    if isinstance(raw, str):
        try:
            raw = int(raw.strip())
        except ValueError:
            raise ConfigError(f"{key}={raw!r}: not a whole number") from None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ConfigError(f"{key}: expected a whole number, found {_kind(raw)}")
    if raw < 1:
        raise ConfigError(f"{key}={raw}: must be at least 1")
    return raw


def _seconds(key: str, raw: object) -> float:
    if isinstance(raw, str):
        try:
            raw = float(raw.strip())
        except ValueError:
            raise ConfigError(f"{key}={raw!r}: not a number of seconds") from None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ConfigError(f"{key}: expected a number of seconds, found {_kind(raw)}")
    if not 0.05 <= raw <= 86_400:
        raise ConfigError(f"{key}={raw}: must be between 0.05 and 86400 seconds")
    return float(raw)


def _zone(key: str, raw: object) -> str:
    name = _text(key, raw).strip()
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"{key}={name!r}: not a time zone", hint="use an IANA name such as UTC or Europe/Lisbon"
        ) from None
    return name


def _words(key: str, raw: object) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [part.strip() for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfigError(f"{key}: expected a list of text, found {_kind(raw)}")
    return tuple(raw)


def _flag(key: str, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
        return raw.strip().lower() in _TRUE
    raise ConfigError(f"{key}: expected true or false, found {_kind(raw)}")


def _kind(raw: object) -> str:
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "text",
        list: "a list",
    }.get(type(raw), "a table" if isinstance(raw, dict) else type(raw).__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """One setting: its ``section.name`` key, default, variable and validation."""

    key: str
    default: Value
    help: str
    env: str = ""
    """The environment variable that overrides it (``""``: none)."""
    parse: Callable[[str, object], Value] = _text
    """Turns a TOML value (or a variable's text) into the option's value; raises ``ConfigError``."""
    path: bool = False
    """A path: relative values are relative to the vault."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Chosen:
    """The value of one option and where it came from."""

    key: str
    value: Value
    source: str
    """``flag``, ``env VAR``, ``config`` or ``default``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Every option's chosen value, with its source, and the overrides worth a notice."""

    chosen: Mapping[str, Chosen]
    saved: Mapping[str, Value]
    """The values the config file holds, by key."""
    notices: tuple[str, ...] = ()
    outside: str = ""
    """The stat digest of the store files outside the state directory (``Sources``), set by
    the CLI (``extract.outside_fingerprint``); ``""`` when there are none."""
    seal_keys: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """ChatCLI's at-rest keys, read with the variables (``Environment.seal_keys``)."""
    git_environment: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """The variables git and libgit2 read, read with the others (``Environment.git``)."""

    def as_key(self) -> str:
        """A stable text of every chosen value that shapes the vault: the no-op sync's inputs.

        The watcher's timings (``watch.*``) change when a sync runs, never what it writes.  It
        ends with :attr:`outside`, so the no-op sync sees the files in an extra skill folder or
        ChatCLI's home change, not only those of the state directory.
        """
        lines = [
            f"{key}={self.chosen[key].value!r}"
            for key in sorted(self.chosen)
            if not key.startswith((WATCH_PREFIX, GIT_PREFIX))
        ]
        if self.outside:
            lines.append(f"outside={self.outside}")
        return "\n".join(lines)

    def seconds(self, key: str) -> float:
        """The chosen value of a ``watch.*`` timing, in seconds."""
        found = self.value(key)
        assert isinstance(found, float)  # noqa: S101 - the option's parser returns a float
        return found

    def value(self, key: str) -> Value:
        """The chosen value of ``key``."""
        return self.chosen[key].value

    @property
    def caps(self) -> Caps:
        """The graph's caps, with the time zone of its days."""
        limits = {f.name: self._int(f"caps.{f.name}") for f in cap_fields()}
        return Caps(
            **limits,
            timezone=str(self.value("render.timezone")),
            sources=Sources(skills=self.skill_folders),
            open_sealed=bool(self.value("stores.open_sealed")),
            seal_keys=self.seal_keys,
        )

    @property
    def skill_folders(self) -> tuple[Path, ...]:
        """The skill folders scanned before ``<state>/skills``, in order (absolute)."""
        found = self.value("skills.extra_folders")
        return tuple(Path(folder) for folder in found) if isinstance(found, tuple) else ()

    @property
    def timezone(self) -> zoneinfo.ZoneInfo:
        """The zone of every day boundary and every rendered date (default UTC)."""
        return zoneinfo.ZoneInfo(str(self.value("render.timezone")))

    @property
    def templates(self) -> Path | None:
        """The folder of template overrides, or ``None`` for the built-in templates."""
        found = self.value("render.templates")
        return Path(found) if isinstance(found, str) and found else None

    def folder_problems(self) -> dict[str, str]:
        """Each setting that names a folder not there (templates, extra skills), and its line.

        A missing skill folder is a problem, never read as empty: its skills' notes would be
        removed by a sync run where the folder is not (a clone, an unmounted disk).
        """
        problems: dict[str, str] = {}
        found = self.templates
        if found is not None and not found.is_dir():
            source = self.chosen["render.templates"].source
            problems["render.templates"] = f"templates folder {found} (from {source}): not a folder"
        missing = [folder for folder in self.skill_folders if not folder.is_dir()]
        if missing:
            source = self.chosen["skills.extra_folders"].source
            problems["skills.extra_folders"] = (
                f"skills folder {missing[0]} (from {source}): not a folder"
            )
        return problems

    def _int(self, key: str) -> int:
        found = self.value(key)
        assert isinstance(found, int)  # noqa: S101 - the option's parser returns an int
        return found


def _cap_options() -> list[Option]:
    defaults = Caps()
    return [
        Option(
            key=f"caps.{f.name}",
            default=getattr(defaults, f.name),
            env=f"VAULTSYNC_CAP_{f.name.upper()}",
            parse=_positive_int,
            help=(f.metadata.get("help") or f"graph cap: {f.name.replace('_', ' ')}"),
        )
        for f in cap_fields()
    ]


def _watch_options() -> list[Option]:
    timings = (
        ("first_s", 10.0, "seconds after `vaultsync watch` starts before its first sync"),
        ("debounce_s", 5.0, "seconds of quiet in the stores before `vaultsync watch` syncs"),
        ("max_wait_s", 60.0, "at most this many seconds from a change to the sync, however busy"),
        ("poll_s", 1.0, "how often `vaultsync watch` looks at the stores' stat data"),
    )
    return [
        Option(key=f"{WATCH_PREFIX}{name}", default=default, parse=_seconds, help=text)
        for name, default, text in timings
    ]


def _git_options() -> list[Option]:
    return [
        Option(
            key="git.pull",
            default=False,
            env="VAULTSYNC_GIT_PULL",
            parse=_flag,
            help="pull the remote's new commits before every sync (`sync --pull`)",
        ),
        Option(
            key="git.push",
            default=False,
            env="VAULTSYNC_GIT_PUSH",
            parse=_flag,
            help="push after every sync that committed (`sync --push`)",
        ),
        Option(
            key="git.remote",
            default="",
            env="VAULTSYNC_GIT_REMOTE",
            help="the remote to pull from and push to (default: the branch's upstream)",
        ),
    ]


OPTIONS: dict[str, Option] = {
    option.key: option
    for option in (
        Option(
            key="render.templates",
            default=None,
            env="VAULTSYNC_TEMPLATES",
            path=True,
            help="folder of Jinja templates overriding the built-in ones (same file names)",
        ),
        Option(
            key="render.timezone",
            default="UTC",
            env="VAULTSYNC_TIMEZONE",
            parse=_zone,
            help="time zone of every day boundary and rendered date (IANA name)",
        ),
        Option(
            key="skills.extra_folders",
            default=(),
            env="VAULTSYNC_SKILLS_EXTRA_FOLDERS",
            parse=_words,
            path=True,
            help="skill folders scanned before <state>/skills, in order; the first wins on a "
            "name (a project's .agent/skills)",
        ),
        Option(
            key="stores.open_sealed",
            default=True,
            env="VAULTSYNC_STORES_OPEN_SEALED",
            parse=_flag,
            help="open ChatCLI's sealed stores with CHATCLI_ENCRYPTION_KEY (the vault then holds "
            "their text in clear); false skips them",
        ),
        *_cap_options(),
        *_watch_options(),
        *_git_options(),
    )
}
"""Every saved setting, by key; a feature that adds a setting adds its option here."""


def read_config(data: bytes | None, *, where: str = CONFIG) -> dict[str, Value]:
    """The saved values by key (``section.name``), checked; ``{}`` for a missing file.

    Raises:
        ConfigError: the file is not TOML, names an unknown setting or holds a bad value
            (one line: the file, where, what is wrong).
    """
    if data is None:
        return {}
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{where}: {err}") from None
    values: dict[str, Value] = {}
    for section, table in document.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: {section}: expected a [{section}] table")
        for name, raw in table.items():
            key = f"{section}.{name}"
            option = OPTIONS.get(key)
            if option is None:
                raise ConfigError(f"{where}: unknown setting {key}", hint=_known_hint())
            values[key] = option.parse(key, raw)
    return values


def resolve(
    saved: Mapping[str, Value],
    *,
    vault: Path,
    flags: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Choose every option's value: flag, then variable, then saved, then default.

    ``flags`` holds the values given on the command line (by key; ``None`` = not given).

    Raises:
        ConfigError: a variable holds a bad value.
    """
    environment = read_environment(environ)
    env = environment.variables
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    chosen: dict[str, Chosen] = {}
    notices: list[str] = []
    for key, option in OPTIONS.items():
        pick = _choose(option, given, env, saved)
        if pick.source != "config" and key in saved and pick.source != "default":
            notices.append(
                f"{key}: {pick.source} overrides the saved value {_show(saved[key])} "
                f"with {_show(pick.value)}"
            )
        chosen[key] = _anchor(pick, option, vault)
    return Settings(
        chosen=chosen,
        saved=dict(saved),
        notices=tuple(notices),
        seal_keys=environment.seal_keys,
        git_environment=environment.git,
    )


def _choose(
    option: Option, given: Mapping[str, object], env: Mapping[str, str], saved: Mapping[str, Value]
) -> Chosen:
    key = option.key
    if key in given:
        return Chosen(key=key, value=option.parse(f"--{key}", given[key]), source="flag")
    if option.env and env.get(option.env, "") != "":
        raw = env[option.env]
        return Chosen(key=key, value=option.parse(option.env, raw), source=f"env {option.env}")
    if key in saved:
        return Chosen(key=key, value=saved[key], source="config")
    return Chosen(key=key, value=option.default, source="default")


def _anchor(pick: Chosen, option: Option, vault: Path) -> Chosen:
    """A saved relative path is relative to the vault; a flag's or variable's to the cwd."""
    if not option.path or not pick.value:
        return pick
    base = vault if pick.source == "config" else Path.cwd()
    if isinstance(pick.value, tuple):
        return replace(pick, value=tuple(_absolute(folder, base) for folder in pick.value))
    if not isinstance(pick.value, str):
        return pick
    return replace(pick, value=_absolute(pick.value, base))


def _absolute(value: str, base: Path) -> str:
    path = Path(value).expanduser()
    return os.path.normpath(path if path.is_absolute() else base / path)


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return repr(value)


def _known_hint() -> str:
    return "known settings: " + ", ".join(sorted(OPTIONS))


def edit_config(data: bytes | None, key: str, raw: str | None) -> bytes:
    """The config file with ``key`` set to ``raw`` (``None``: removed), the rest kept as written.

    Raises:
        ConfigError: unknown key, bad value, or a value that looks like a secret.
    """
    option = OPTIONS.get(key)
    if option is None:
        raise ConfigError(f"unknown setting {key}", hint=_known_hint())
    import tomlkit  # noqa: PLC0415 - only `vaultsync config set` writes the file
    import tomlkit.exceptions  # noqa: PLC0415

    section, name = key.split(".", 1)
    try:
        document = tomlkit.parse((data or b"").decode("utf-8"))
    except (UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as err:
        raise ConfigError(f"{CONFIG}: {err}") from None
    if raw is None:
        table = document.get(section)
        if isinstance(table, dict) and name in table:
            del table[name]
            if not table:
                del document[section]
    else:
        value = option.parse(key, raw)
        _refuse_secret(key, value)
        if section not in document:
            document[section] = tomlkit.table()
        document[section][name] = list(value) if isinstance(value, tuple) else value
    text = tomlkit.dumps(document)
    read_config(text.encode("utf-8"))  # what we write must read back
    return text.encode("utf-8")


def _refuse_secret(key: str, value: Any) -> None:
    from vaultsync.core.redact import find_secrets  # noqa: PLC0415 - loads rules only when needed

    texts = value if isinstance(value, tuple) else (value,)
    for text in texts:
        if isinstance(text, str) and find_secrets(text):
            raise ConfigError(
                f"{key}: the value looks like a secret, and the config is committed with the vault"
            )

"""``core.config``: the vault's saved settings, and flags and variables over them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core.config import edit_config, read_config, resolve
from vaultsync.core.errors import ConfigError
from vaultsync.core.settings import Caps

VAULT = Path("/vaults/ana")


class TestRead:
    def test_missing_file_means_defaults(self) -> None:
        """No config file: every option has its default, from the default."""
        settings = resolve(read_config(None), vault=VAULT, environ={})
        assert settings.caps == Caps()
        assert settings.templates is None
        assert str(settings.timezone) == "UTC"
        assert {c.source for c in settings.chosen.values()} == {"default"}

    def test_saved_values_are_used(self) -> None:
        """A saved value is chosen, and says it came from the config."""
        saved = read_config(b'[caps]\nepisodes = 500\n[render]\ntimezone = "Europe/Lisbon"\n')
        settings = resolve(saved, vault=VAULT, environ={})
        assert settings.caps.episodes == 500
        assert str(settings.timezone) == "Europe/Lisbon"
        assert settings.chosen["caps.episodes"].source == "config"
        assert settings.notices == ()

    def test_unknown_setting_is_one_line_naming_the_file(self) -> None:
        """A key no option has is refused with the file's name and the known keys as a hint."""
        with pytest.raises(ConfigError) as caught:
            read_config(b"[render]\ncolour = 'blue'\n")
        assert str(caught.value) == ".vaultsync/config.toml: unknown setting render.colour"
        assert "render.timezone" in (caught.value.hint or "")

    def test_bad_toml_names_the_file_and_place(self) -> None:
        """A file that is not TOML is one error line with tomllib's position."""
        with pytest.raises(ConfigError, match=r"config\.toml: .*line 1"):
            read_config(b"[caps\n")

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("[caps]\nepisodes = 0\n", "must be at least 1"),
            ("[caps]\nepisodes = 'many'\n", "not a whole number"),
            ("[caps]\nepisodes = true\n", "expected a whole number"),
            ("[render]\ntimezone = 'Mars/Olympus'\n", "not a time zone"),
            ("caps = 3\n", "expected a [caps] table"),
        ],
    )
    def test_bad_values_are_refused(self, text: str, message: str) -> None:
        """Each malformed value is a ``ConfigError`` saying what is wrong."""
        with pytest.raises(ConfigError) as caught:
            read_config(text.encode())
        assert message in str(caught.value)


class TestPrecedence:
    def test_variable_over_saved_says_so(self) -> None:
        """An environment variable wins over the saved value, with a notice naming both."""
        saved = read_config(b"[caps]\nepisodes = 500\n")
        settings = resolve(saved, vault=VAULT, environ={"VAULTSYNC_CAP_EPISODES": "700"})
        assert settings.caps.episodes == 700
        assert settings.notices == (
            "caps.episodes: env VAULTSYNC_CAP_EPISODES overrides the saved value 500 with 700",
        )

    def test_flag_over_variable(self) -> None:
        """A flag wins over the variable and the saved value."""
        saved = read_config(b"[render]\ntimezone = 'UTC'\n")
        settings = resolve(
            saved,
            vault=VAULT,
            flags={"render.timezone": "Asia/Tokyo"},
            environ={"VAULTSYNC_TIMEZONE": "Europe/Paris"},
        )
        assert str(settings.timezone) == "Asia/Tokyo"
        assert settings.chosen["render.timezone"].source == "flag"

    def test_variable_without_saved_value_is_no_notice(self) -> None:
        """Overriding a default is not worth a notice: nothing saved was set aside."""
        settings = resolve({}, vault=VAULT, environ={"VAULTSYNC_CAP_SESSIONS": "9"})
        assert settings.caps.sessions == 9
        assert settings.notices == ()

    def test_empty_variable_is_unset(self) -> None:
        """``VAR=`` does not override anything (cron lines often export empty values)."""
        saved = read_config(b"[caps]\nsessions = 12\n")
        settings = resolve(saved, vault=VAULT, environ={"VAULTSYNC_CAP_SESSIONS": ""})
        assert settings.caps.sessions == 12

    def test_bad_variable_is_refused(self) -> None:
        """A variable with a bad value names the variable."""
        with pytest.raises(ConfigError, match="VAULTSYNC_CAP_EPISODES"):
            resolve({}, vault=VAULT, environ={"VAULTSYNC_CAP_EPISODES": "-3"})


class TestPaths:
    def test_saved_relative_path_is_relative_to_the_vault(self) -> None:
        """``templates = "../t"`` in the config means the folder beside the vault, on any clone."""
        saved = read_config(b"[render]\ntemplates = '../my-templates'\n")
        settings = resolve(saved, vault=VAULT, environ={})
        assert settings.templates == Path("/vaults/my-templates")

    def test_flag_relative_path_is_relative_to_the_working_directory(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A path typed on the command line means what the shell means by it."""
        monkeypatch.chdir(tmp_path)
        settings = resolve({}, vault=VAULT, flags={"render.templates": "t"}, environ={})
        assert settings.templates == tmp_path / "t"


class TestEdit:
    def test_set_keeps_the_users_comments(self) -> None:
        """Setting one value keeps the rest of the file as the user wrote it."""
        before = b"# my settings\n[caps]\n# more history\nepisodes = 500 # yes\n"
        after = edit_config(before, "render.timezone", "Europe/Lisbon")
        assert after.startswith(before)
        assert read_config(after) == {"caps.episodes": 500, "render.timezone": "Europe/Lisbon"}

    def test_unset_removes_the_key_and_an_empty_table(self) -> None:
        """Unsetting the last key of a table leaves no empty table behind."""
        data = edit_config(None, "caps.episodes", "500")
        assert read_config(edit_config(data, "caps.episodes", None)) == {}

    def test_secret_is_never_saved(self) -> None:
        """A value that looks like a secret is refused: the config is committed."""
        token = "ghp_" + "1234567890abcdefghij" + "ABCDEFGHIJ123456"
        with pytest.raises(ConfigError, match="looks like a secret"):
            edit_config(None, "render.templates", f"templates/{token}")

    def test_unknown_key_is_refused(self) -> None:
        """Only known settings can be set."""
        with pytest.raises(ConfigError, match=r"unknown setting caps\.everything"):
            edit_config(None, "caps.everything", "1")

    @given(st.integers(min_value=1, max_value=2**40), st.integers(min_value=1, max_value=2**40))
    def test_set_then_read_is_the_value(self, first: int, second: int) -> None:
        """What ``edit_config`` sets, ``read_config`` reads, and earlier values stay."""
        data = edit_config(None, "caps.episodes", str(first))
        data = edit_config(data, "caps.sessions", str(second))
        assert read_config(data) == {"caps.episodes": first, "caps.sessions": second}


def test_the_at_rest_keys_are_read_with_the_settings_and_never_shown() -> None:
    """ChatCLI's keys come with the caps the stores are read with, absent from their key and
    repr (what digests and caches take)."""
    key = "0123456789abcdef0123456789abcdef-long-key"
    environ = {"CHATCLI_ENCRYPTION_KEY": key, "CHATCLI_ENCRYPTION_KEY_PREVIOUS": "older-key-1"}
    settings = resolve({}, vault=VAULT, environ=environ)
    assert settings.caps.seal_keys == (key, "older-key-1")
    shown = settings.caps.as_key() + repr(settings.caps) + settings.as_key() + repr(settings)
    assert key not in shown and "older-key-1" not in shown

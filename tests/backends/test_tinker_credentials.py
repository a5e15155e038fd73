"""The ``tinker`` backend takes its credential the way the SDK does, and says in one line which
ways exist when there is none; no message advises a ``base_url`` the SDK would then reject."""

from __future__ import annotations

from pathlib import Path

import pytest
from tinker.lib.credentials import JsonCredentialStore, ManualKey

from debate_core.backends.tinker_backend import TinkerOptions, connect
from debate_core.errors import PluginError

SDK_VARIABLES = ("TINKER_API_KEY", "TINKER_CREDENTIAL_CMD", "TINKER_BASE_URL", "MY_TINKER_KEY")


@pytest.fixture(autouse=True)
def bare_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No Tinker variable set and a home without stored credentials."""
    for name in SDK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def passed_key(options: TinkerOptions) -> str | None:
    """The key ``connect`` handed to the SDK client (``None``: the SDK resolves its own)."""
    service = connect(options)
    key: str | None = service.client._api_key
    return key


def test_no_credential_names_every_way_in_one_line() -> None:
    with pytest.raises(PluginError) as raised:
        connect(TinkerOptions())
    message = str(raised.value)
    assert "\n" not in message
    for way in ("TINKER_API_KEY", "TINKER_CREDENTIAL_CMD", "tinker auth login"):
        assert way in message
    assert "base_url" not in message


def test_a_custom_variable_is_named_when_nothing_is_found() -> None:
    with pytest.raises(PluginError, match=r"set MY_TINKER_KEY or TINKER_API_KEY"):
        connect(TinkerOptions(api_key_env="MY_TINKER_KEY"))


def test_the_configured_variable_is_passed_as_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TINKER_KEY", "tml-from-my-variable")
    assert passed_key(TinkerOptions(api_key_env="MY_TINKER_KEY")) == "tml-from-my-variable"


def test_an_unset_variable_lets_the_sdk_use_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINKER_API_KEY", "tml-the-sdk-reads-this")
    assert passed_key(TinkerOptions(api_key_env="MY_TINKER_KEY")) is None


def test_a_credential_command_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINKER_CREDENTIAL_CMD", "echo tml-from-a-command")
    assert passed_key(TinkerOptions()) is None


def test_a_key_stored_by_tinker_auth_login_is_enough(bare_environment: Path) -> None:
    store = JsonCredentialStore(bare_environment / ".tinker" / "credentials.json")
    store.add_key("laptop", ManualKey(key="tml-stored", name="laptop"))
    store.set_default("laptop")
    assert passed_key(TinkerOptions()) is None


def test_a_jwt_credential_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "eyJhbGciOiJub25lIn0.eyJleHAiOjQxMDI0NDQ4MDB9."
    monkeypatch.setenv("TINKER_API_KEY", token)
    assert passed_key(TinkerOptions()) == token


@pytest.mark.parametrize("variable", ["TINKER_API_KEY", "MY_TINKER_KEY"])
def test_a_key_that_is_not_a_tinker_key_is_named(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "sk-not-tinker")
    with pytest.raises(PluginError) as raised:
        connect(TinkerOptions(api_key_env=variable, base_url="http://127.0.0.1:9"))
    message = str(raised.value)
    assert variable in message and "tml-" in message
    assert "base_url" not in message and "sk-not-tinker" not in message


def test_a_credential_command_overrides_a_malformed_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK falls back to the command when the key it was given is not a Tinker key."""
    monkeypatch.setenv("TINKER_API_KEY", "sk-not-tinker")
    monkeypatch.setenv("TINKER_CREDENTIAL_CMD", "echo tml-from-a-command")
    assert passed_key(TinkerOptions(api_key_env="MY_TINKER_KEY")) is None


def test_an_unreadable_credentials_file_is_one_line(bare_environment: Path) -> None:
    path = bare_environment / ".tinker" / "credentials.json"
    path.parent.mkdir()
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(PluginError, match=r"Tinker credentials could not be read") as raised:
        connect(TinkerOptions())
    assert "\n" not in str(raised.value)


def test_the_key_is_not_in_the_service_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINKER_API_KEY", "tml-secret-value")
    service = connect(TinkerOptions())
    assert "tml-secret-value" not in repr(service)

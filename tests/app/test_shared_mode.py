"""Shared mode is the operator's choice (EXPLORER_SHARED=1 or `shared = true` in explorer.toml), whatever the
bind address: a tunnel or a proxy in front of 127.0.0.1 is invisible to the app. Not declared shared, the app
must listen on loopback only (decided on the address, not its spelling: 127.1 and ::ffff:127.0.0.1 are loopback,
localhost.example.org is not); listening beyond without the declaration serves only the message saying how to
choose."""
from __future__ import annotations

import pytest
from streamlit import config

from explorer.errors import ExplorerError
from explorer.files.access import REFUSED, NotShared, access_for, is_loopback, is_shared
from explorer.ui import state
from tests.support.apptest import start
from tests.support.markdown_text import shown


@pytest.mark.parametrize("address", ["localhost", "LocalHost", "127.0.0.1", "127.1", "127.0.0.2", "127.255.255.254",
                                     "::1", "[::1]", "::ffff:127.0.0.1", " 127.0.0.1 "])
def test_loopback_addresses(address):
    assert is_loopback(address)
    assert not is_shared(address, {})


@pytest.mark.parametrize("address", ["0.0.0.0", "", None, "::", "[::]", "192.0.2.7", "128.0.0.1", "10.127.0.1",
                                     "localhost.example.org", "127.0.0.1.nip.io", "::ffff:192.0.2.7", "0"])
def test_beyond_this_machine_needs_the_operators_word(address):
    assert not is_loopback(address)
    with pytest.raises(NotShared) as refused:
        is_shared(address, {})
    message = str(refused.value)
    assert "EXPLORER_SHARED=1" in message and "--server.address 127.0.0.1" in message
    assert is_shared(address, {"EXPLORER_SHARED": "1"})


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_declared_shared_on_loopback_too(value, tmp_path):
    """Behind a reverse proxy or a tunnel the app listens on 127.0.0.1 and is reached from anywhere."""
    environ = {"EXPLORER_SHARED": value, "EXPLORER_SETTINGS": str(tmp_path / "none.toml")}
    assert is_shared("127.0.0.1", environ)
    assert access_for("127.0.0.1", environ).shared


def test_declared_shared_in_the_settings_file_and_the_environment_wins(tmp_path):
    settings = tmp_path / "explorer.toml"
    settings.write_text("[shared]\nshared = true\n")
    assert is_shared("localhost", {"EXPLORER_SETTINGS": str(settings)})
    assert not is_shared("localhost", {"EXPLORER_SETTINGS": str(settings), "EXPLORER_SHARED": "0"})
    settings.write_text('[shared]\nshared = "maybe"\n')
    with pytest.raises(ExplorerError, match="must be 1"):
        is_shared("localhost", {"EXPLORER_SETTINGS": str(settings)})


@pytest.fixture
def bound(monkeypatch, tmp_path):
    before = config.get_option("server.address")
    for name in ("EXPLORER_SHARED", "EXPLORER_ALLOWED_DIRS", "EXPLORER_SCHEDULERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EXPLORER_SETTINGS", str(tmp_path / "none.toml"))
    yield lambda address: config.set_option("server.address", address)
    config.set_option("server.address", before)


def test_the_app_listening_beyond_without_being_declared_shared_serves_only_how_to_choose(bound):
    bound("0.0.0.0")
    at = start()
    assert not at.exception
    [error] = [shown(e.value) for e in at.error]
    assert "EXPLORER_SHARED=1" in error and "--server.address 127.0.0.1" in error
    assert not at.sidebar.radio and not at.sidebar.caption  # no model picker, nothing of the machine
    assert state.ACTIVE not in at.session_state  # nothing ran past the refusal


def test_the_app_declared_shared_on_loopback_opens_no_local_path(bound, monkeypatch):
    bound("127.0.0.1")
    monkeypatch.setenv("EXPLORER_SHARED", "1")
    at = start()
    assert "shared: no local paths (samples and uploads only)" in "\n".join(shown(c.value) for c in at.sidebar.caption)
    at.radio(key=state.W_SOURCE).set_value("Local path").run()
    at.text_input(key=state.W_PATH).input("/etc/passwd").run()
    assert [REFUSED in shown(e.value) for e in at.error] == [True]


def test_the_app_on_127_1_is_local(bound):
    bound("127.1")
    at = start()
    assert "served on this machine only" in "\n".join(shown(c.value) for c in at.sidebar.caption)

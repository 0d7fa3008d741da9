"""explorer/files/access.py without Streamlit: which addresses serve beyond this machine, the operator's settings from
the environment and from explorer.toml, and the one refusal for every path outside the allowed folders (`..`
escapes, symlinks out, missing files, folders where a file is asked for) and every scheduler not listed."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from explorer.files.access import (
    NO_SAVES,
    REFUSED,
    SAVE_NAMES,
    SAVE_REFUSED,
    Access,
    AccessRefused,
    access_for,
    is_shared,
    settings,
)


@pytest.mark.parametrize("address", ["localhost", "127.0.0.1", "::1", "LOCALHOST"])
def test_this_machine_only(address):
    assert not is_shared(address, {}) and access_for(address, {"EXPLORER_ALLOWED_DIRS": "/x"}) == Access()


@pytest.mark.parametrize("address", ["0.0.0.0", "192.0.2.7", "", None, "::"])
def test_served_beyond_this_machine_when_declared_shared(address):
    assert is_shared(address, {"EXPLORER_SHARED": "1"})


def test_settings_come_from_the_environment_over_the_settings_file(tmp_path):
    (tmp_path / "explorer.toml").write_text('[shared]\nallowed_dirs = ["/srv/a"]\nschedulers = ["tcp://h:1"]\n'
                                            'save_dir = "/srv/out"\n')
    environ = {"EXPLORER_SETTINGS": str(tmp_path / "explorer.toml")}
    assert settings(environ) == {"allowed_dirs": ["/srv/a"], "schedulers": ["tcp://h:1"], "save_dir": ["/srv/out"]}
    environ["EXPLORER_ALLOWED_DIRS"] = os.pathsep.join(["/srv/b", "/srv/c"])
    environ["EXPLORER_SCHEDULERS"] = "tcp://a:1,tcp://b:2"
    environ["EXPLORER_SAVE_DIR"] = "/srv/saved"
    assert settings(environ) == {"allowed_dirs": ["/srv/b", "/srv/c"], "schedulers": ["tcp://a:1", "tcp://b:2"],
                                 "save_dir": ["/srv/saved"]}
    shared = access_for("0.0.0.0", {**environ, "EXPLORER_SHARED": "1"})
    assert shared.folders == (Path("/srv/b").resolve(), Path("/srv/c").resolve())
    assert shared.save_folder == Path("/srv/saved").resolve()
    assert shared.describe() == f"shared: models from {os.path.realpath('/srv/b')}, {os.path.realpath('/srv/c')} only"


def test_a_path_opens_only_inside_an_allowed_folder(tmp_path):
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (allowed / "sub").mkdir(parents=True)
    outside.mkdir()
    (allowed / "sub" / "m.onnx").write_bytes(b"x")
    (outside / "m.onnx").write_bytes(b"x")
    (allowed / "out.onnx").symlink_to(outside / "m.onnx")
    (allowed / "in.onnx").symlink_to(allowed / "sub" / "m.onnx")
    access = Access(True, (allowed.resolve(),))
    assert access.path(str(allowed / "sub" / "m.onnx")) == (allowed / "sub" / "m.onnx").resolve()
    assert access.path(str(allowed / "in.onnx")) == (allowed / "sub" / "m.onnx").resolve()
    assert access.path(str(allowed / "sub"), folder=True) == (allowed / "sub").resolve()
    refused = [str(allowed / ".." / "outside" / "m.onnx"), str(allowed / "out.onnx"), str(allowed / "missing.onnx"),
               str(outside / "m.onnx"), str(allowed / "sub"), "/etc/passwd", str(allowed / "sub" / ".." / ".." / "outside")]
    for text in refused:
        with pytest.raises(AccessRefused) as raised:
            access.path(text, folder=text.endswith("outside"))
        assert str(raised.value) == REFUSED
    with pytest.raises(AccessRefused):
        Access(True).path(str(allowed / "sub" / "m.onnx"))  # no folder allowed: nothing opens
    assert Access().path(str(outside / "m.onnx")) == outside / "m.onnx"  # this machine only: as given


def test_a_shared_app_reaches_only_the_listed_schedulers():
    access = Access(True, (), ("tcp://10.0.0.5:8786",))
    assert access.scheduler(" tcp://10.0.0.5:8786 ") == "tcp://10.0.0.5:8786"
    with pytest.raises(AccessRefused, match="reaches only the schedulers its operator listed"):
        access.scheduler("tcp://127.0.0.1:8786")
    assert Access().scheduler("tcp://anywhere:1") == "tcp://anywhere:1"


def test_a_shared_app_writes_only_into_its_save_folder(tmp_path):
    """Saves go only into the folder the operator named for them (none named: nothing is saved), only as .onnx,
    .data, .npz or .html files; every path refusal is one message, whatever the path names."""
    saves, outside = tmp_path / "saves", tmp_path / "outside"
    (saves / "sub").mkdir(parents=True)
    outside.mkdir()
    (saves / "link.onnx").symlink_to(outside / "victim.onnx")
    (saves / "settings.onnx").symlink_to(tmp_path / "explorer.toml")
    (saves / "folder.onnx").mkdir()
    access = Access(True, (outside.resolve(),), save_folder=saves.resolve())
    assert access.target(str(saves / "new.onnx")) == (saves / "new.onnx").resolve()
    assert access.target(str(saves / "sub" / "new.onnx.data")) == (saves / "sub" / "new.onnx.data").resolve()
    for name in ("trace.NPZ", "report.html"):
        assert access.target(str(saves / name)) == (saves / name).resolve()
    for text in (str(outside / "new.onnx"), str(saves / ".." / "outside" / "new.onnx"), str(saves / "link.onnx"),
                 str(saves / "missing_folder" / "new.onnx"), str(saves / "settings.onnx"), str(saves / "folder.onnx"),
                 "/etc/cron.d/x.onnx"):
        with pytest.raises(AccessRefused) as raised:
            access.target(text)
        assert str(raised.value) == SAVE_REFUSED, text
    for name in ("explorer.toml", "EXPLORER.TOML", "x.py", ".bashrc", ".onnx", "x.onnx.txt", "", "sub"):
        with pytest.raises(AccessRefused) as raised:
            access.target(str(saves / name))
        assert str(raised.value) == SAVE_NAMES, name
    assert not (saves / "explorer.toml").exists()
    with pytest.raises(AccessRefused) as raised:
        Access(True, (saves.resolve(),)).target(str(saves / "new.onnx"))  # no save folder named: no saves
    assert str(raised.value) == NO_SAVES
    assert Access().target(str(outside / "new.onnx")) == outside / "new.onnx"

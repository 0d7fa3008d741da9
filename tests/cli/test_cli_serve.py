"""`explorer serve`: the app started with the C library's allocator (PYTHONMALLOC=malloc), shared only when
asked, refused beyond this machine when not shared, the upload cap told to Streamlit."""
from __future__ import annotations

import os
import subprocess
import sys

from explorer.cli import build_parser
from explorer.cli.serving import serve_command

BASE = {"PATH": "/usr/bin", "EXPLORER_SETTINGS": "/nonexistent/explorer.toml"}
OWN = {**{k: v for k, v in os.environ.items() if not k.startswith("EXPLORER_")}, **BASE}


def command(*argv: str, **environ: str) -> tuple[list[str], dict[str, str]]:
    return serve_command(build_parser().parse_args(["serve", *argv]), {**BASE, **environ})


def option(argv: list[str], name: str) -> str | None:
    found = [a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")]
    return found[-1] if found else None


def test_serves_the_app_beside_the_package_on_loopback_with_the_c_allocator():
    argv, env = command()
    assert argv[1:4] == ["-m", "explorer.ui.server_process", "run"] and argv[4].endswith("app.py")
    assert env["PYTHONMALLOC"] == "malloc" and "EXPLORER_SHARED" not in env
    assert option(argv, "server.address") == "127.0.0.1" and option(argv, "server.port") == "8501"
    assert option(argv, "server.headless") == "false"  # on this machine the browser opens
    assert option(argv, "server.maxUploadSize") is None  # no cap set: Streamlit's own


def test_shared_sets_the_setting_and_tells_streamlit_the_upload_cap():
    argv, env = command("--shared", "--address", "0.0.0.0", "--port", "9000", EXPLORER_MAX_UPLOAD_MB="7")
    assert env["EXPLORER_SHARED"] == "1" and option(argv, "server.headless") == "true"
    assert option(argv, "server.address") == "0.0.0.0" and option(argv, "server.maxUploadSize") == "7"
    argv, _ = command("--shared")
    assert option(argv, "server.maxUploadSize") == "200"  # the shared default cap


def test_streamlit_options_after_the_separator_pass_as_given_and_win():
    argv, _ = command("--shared", "--", "--server.maxUploadSize=3", "--theme.base=dark")
    assert argv[-2:] == ["--server.maxUploadSize=3", "--theme.base=dark"]
    assert option(argv, "server.maxUploadSize") == "3"


def test_an_allocator_the_operator_chose_is_kept():
    _, env = command(PYTHONMALLOC="pymalloc_debug")
    assert env["PYTHONMALLOC"] == "pymalloc_debug"


def test_beyond_this_machine_without_shared_is_refused_saying_how_to_choose():
    done = subprocess.run([sys.executable, "-m", "explorer", "serve", "--address", "0.0.0.0", "--print"],
                          capture_output=True, text=True, env=OWN)
    assert done.returncode == 2 and "explorer serve --shared" in done.stderr and "0.0.0.0" in done.stderr
    assert done.stdout == ""


def test_a_missing_app_file_is_named():
    done = subprocess.run([sys.executable, "-m", "explorer", "serve", "--app", "/nonexistent/app.py", "--print"],
                          capture_output=True, text=True, env=OWN)
    assert done.returncode == 2 and "/nonexistent/app.py" in done.stderr


def test_the_server_process_preloads_only_modules_that_import_and_none_of_the_apps_own():
    from explorer.ui.server_process import PRELOAD, preload

    assert not [name for name in PRELOAD if name.startswith(("streamlit", "explorer.ui"))]
    done = subprocess.run([sys.executable, "-c", "import sys; from explorer.ui.server_process import preload; "
                           "print(preload(), 'explorer.ui.cache' in sys.modules)"],
                          capture_output=True, text=True, env=OWN)
    assert done.stdout.split() == ["[]", "False"], done.stderr
    assert preload(("no_such_module_anywhere",)) == ["no_such_module_anywhere"]

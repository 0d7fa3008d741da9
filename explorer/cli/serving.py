"""`serve`: start the app the way it should be served, shared or on this machine. It starts Streamlit in a new
process whose Python allocator is the C library's (PYTHONMALLOC=malloc), which hands every freed page back:
on Python's own allocator a megabyte stays taken while one object of it lives, and a shared server keeps
a third more memory after its visitors left. That process imports what the pages need while it waits for its
first visitor (ui/server_process.py)."""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from ..errors import ExplorerError
from .registry import command

LOOPBACK = "127.0.0.1"


def default_app() -> Path:
    """The app.py beside the explorer package (a clone or an editable install)."""
    return Path(__file__).resolve().parents[2] / "app.py"


def serve_command(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that start the app as `args` ask: Streamlit on the app file (through
    ui/server_process, which imports the pages' modules ahead of the first visitor), on the address and port
    given (headless when shared: no browser opened on the server), with PYTHONMALLOC=malloc (unless the
    environment chose another allocator) and EXPLORER_SHARED=1 with --shared. A shared app's upload cap is told
    to Streamlit too, so that a bigger request stops before it reaches the app."""
    from ..files.access import is_shared
    from ..hosting.caps import caps_for

    app = Path(args.app) if args.app else default_app()
    if not app.is_file():
        raise ExplorerError(f"no app file at {str(app)!r}: give the path of explorer's app.py with --app")
    env = dict(environ)
    env.setdefault("PYTHONMALLOC", "malloc")
    if args.shared:
        env["EXPLORER_SHARED"] = "1"
    shared = is_shared(args.address, env)  # refuses an address beyond this machine for an app not shared
    extra = list(args.streamlit_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    argv = [sys.executable, "-m", "explorer.ui.server_process", "run", str(app), f"--server.headless={str(shared).lower()}",
            f"--server.address={args.address}", f"--server.port={args.port}", "--browser.gatherUsageStats=false"]
    upload = caps_for(shared, env).upload_mb
    if upload is not None and not any(a.startswith("--server.maxUploadSize") for a in extra):
        argv.append(f"--server.maxUploadSize={upload}")
    return argv + extra, env


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shared", action="store_true",
                   help="serve others: local paths open only inside the allowed folders, the operator's caps hold "
                        "(the same as EXPLORER_SHARED=1)")
    p.add_argument("--address", default=LOOPBACK,
                   help=f"the address to listen on (default {LOOPBACK}, this machine only; another needs --shared)")
    p.add_argument("--port", type=int, default=8501, help="the port to listen on (default 8501)")
    p.add_argument("--app", help="the app file (default: the app.py beside the explorer package)")
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="print the command and the settings it would start with, and start nothing")
    p.add_argument("streamlit_args", nargs=argparse.REMAINDER,
                   help="after --, options passed to `streamlit run` as they are")


@command("serve", "start the app (Streamlit) with the allocator that gives freed memory back; --shared to serve "
                  "others", {0: "--print printed the command (otherwise serve becomes the server)"})(_configure)
def _serve(args: argparse.Namespace) -> int:
    argv, env = serve_command(args, os.environ)
    chosen = {k: env[k] for k in ("PYTHONMALLOC", "EXPLORER_SHARED") if k in env}
    if args.print_only:
        print(" ".join(f"{k}={v}" for k, v in chosen.items()), " ".join(shlex.quote(a) for a in argv))
        return 0
    sys.stdout.flush()
    os.execve(sys.executable, argv, env)  # the server replaces this process: signals reach it directly


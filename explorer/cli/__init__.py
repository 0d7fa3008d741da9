"""explorer's command line: run an ONNX model and record every node, draw its graph, optimize it, report on its
recurrent nodes. MODEL is a path to an .onnx file or the name of a bundled sample (see `samples`)."""
from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from ..errors import ExplorerError, failure_text
from . import bridging, generating, optimizing, reports, running, serving, sharing, sweeping  # noqa: F401 - each registers its commands
from .registry import COMMANDS

ORDER = ("run", "compare", "fix", "sweep", "samples", "optimize", "render", "rnn")


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line (`--help` still shows the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}\n")


def exit_codes_text(exits: dict[int, str]) -> str:
    """A command's exit codes as its --help shows them."""
    return "exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in exits.items())


def build_parser(prog: str = "python -m explorer") -> argparse.ArgumentParser:
    """The command line's parser: every registered subcommand with its arguments, `--lenient` and its exit codes
    (docs/cli.md is generated from it by tools/cli_reference.py)."""
    parser = _Parser(prog=prog, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in sorted(COMMANDS, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER)):
        entry = COMMANDS[name]
        command_parser = sub.add_parser(name, help=entry.help, description=entry.help,
                                        epilog=exit_codes_text(dict(entry.exits)))
        entry.configure(command_parser)
        command_parser.add_argument("--lenient", action="store_true",
                                    help="load a model that breaks the spec's typing rules anyway (each broken "
                                         "rule printed as a warning)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parses `argv` (default: sys.argv) and runs the command; 0 on success, 1 when a check differs, 2 on an
    error (printed as one line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command].handler(args)
    except ExplorerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that cannot be read or written
        print(f"error: {exc.strerror or exc}" + (f": {exc.filename!r}" if exc.filename else ""), file=sys.stderr)
        return 2
    except (KeyError, ValueError, IndexError) as exc:  # e.g. no such node, pattern or event
        print(f"error: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a defect still ends in one line, never a traceback
        print(f"error: {failure_text(exc)}", file=sys.stderr)
        return 2

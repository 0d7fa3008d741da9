"""The table of subcommands: each registers its name, help, arguments and handler with `command`."""
from __future__ import annotations

import argparse
from collections.abc import Callable

Command = Callable[[argparse.Namespace], int]
Configure = Callable[[argparse.ArgumentParser], None]
COMMANDS: dict[str, tuple[Configure, Command, str]] = {}


def command(name: str, help: str) -> Callable[[Configure], Callable[[Command], Command]]:
    """Registers a subcommand: decorate `handler(args) -> exit code`; `configure(parser)` adds its arguments."""

    def wrap(configure: Configure) -> Callable[[Command], Command]:
        def register(handler: Command) -> Command:
            COMMANDS[name] = (configure, handler, help)
            return handler

        return register

    return wrap

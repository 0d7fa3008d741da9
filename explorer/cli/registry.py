"""The table of subcommands: each registers its name, help, arguments, handler and exit codes with `command`."""
from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Handler = Callable[[argparse.Namespace], int]
Configure = Callable[[argparse.ArgumentParser], None]

EXIT_CODES = {0: "success",
              2: "an error: bad arguments, or a model, inputs or file explorer cannot use (one line on stderr)"}
"""What every command's exit code means; a command adds its own (1: a check found a difference)."""


@dataclass(frozen=True)
class Command:
    """One subcommand: `configure(parser)` adds its arguments, `handler(args)` runs it and returns its exit code."""

    configure: Configure
    handler: Handler
    help: str
    exits: Mapping[int, str]


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, exits: Mapping[int, str] | None = None
            ) -> Callable[[Configure], Callable[[Handler], Handler]]:
    """Registers a subcommand: decorate `handler(args) -> exit code`; `configure(parser)` adds its arguments;
    `exits` gives the meaning of the exit codes it adds to (or says more precisely than) `EXIT_CODES`."""

    def wrap(configure: Configure) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            COMMANDS[name] = Command(configure, handler, help, dict(sorted({**EXIT_CODES, **(exits or {})}.items())))
            return handler

        return register

    return wrap

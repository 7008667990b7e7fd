"""The command line: parse, call, report. No logic lives here.

Every :class:`~digitise.errors.DigitiseError` becomes one line on stderr and
the exit code it carries; anything else is a bug, reported as such (with the
traceback under ``-v``).
"""

from __future__ import annotations

import click

# Commands are added below, one function each. Keep them thin: parse options,
# call into the package, report.
from digitise.cli import folder, match, tools  # noqa: F401 - importing them adds their commands to the group
from digitise.cli.frame import cli, main, one_line
from digitise.cli.shown import shell_quoted

__all__ = ["cli", "main", "one_line", "shell_quoted"]


def _verbose_here(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        # imported here: keeps `digitise --help` light (logging loads string, traceback, atexit: 5 modules)
        import logging

        ctx.meta["digitise.verbose"] = True
        logging.getLogger().setLevel(logging.DEBUG)


# The errors say "rerun with -v", and a user adds it at the end: every command takes it too.
for _command in cli.commands.values():
    _command.params.append(click.Option(["-v", "--verbose"], is_flag=True, hidden=True, expose_value=False,
                                        callback=_verbose_here, is_eager=True))

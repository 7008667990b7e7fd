"""The command line: parse, call, report. No logic lives here.

Every :class:`~digitise.errors.DigitiseError` becomes one line on stderr and
the exit code it carries; anything else is a bug, reported as such (with the
traceback under ``-v``).
"""

from __future__ import annotations

import functools
import logging
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import click

from digitise import __version__
from digitise.errors import DigitiseError, ExitCode

F = TypeVar("F", bound=Callable[..., Any])


def _reports_errors(func: F) -> F:
    """Turn DigitiseError into a one-line message and its exit code: the one handler."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        verbose = bool(ctx.find_root().params.get("verbose"))
        try:
            return func(*args, **kwargs)
        except DigitiseError as exc:
            if verbose:
                traceback.print_exc()
            click.echo(f"digitise: error: {exc.message}", err=True)
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt:
            click.echo("digitise: interrupted", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.exceptions.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if verbose:
                traceback.print_exc()
            click.echo(f"digitise: internal error: {type(exc).__name__}: {exc} (rerun with -v)", err=True)
            ctx.exit(int(ExitCode.INTERNAL))

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="digitise")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks and debug logging.")
def cli(verbose: bool) -> None:
    """Read handwritten backgammon recording notes into .mat match files."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s: %(message)s")


# Commands are added below, one function each. Keep them thin: parse options,
# call into the package, report.


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="digitise")


if __name__ == "__main__":
    sys.exit(main())

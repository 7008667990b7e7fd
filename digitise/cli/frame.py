"""The frame every command runs in: the group, its path types, errors as one line, the console entry point."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from digitise import __version__
from digitise.errors import DigitiseError, ExitCode

F = TypeVar("F", bound=Callable[..., Any])


class _OutputFile(click.Path):
    """An output file's path: one written with a trailing slash names a folder, and pathlib would drop the slash
    (``-o out/sub/`` wrote a file named ``out/sub``)."""

    name = "file"

    def __init__(self) -> None:
        super().__init__(path_type=Path, readable=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.endswith(("/", os.sep)) and value.strip("/" + os.sep):
            self.fail(f"{value!r} names a folder (it ends with {value[-1]}): give a file name", param, ctx)
        return super().convert(value, param, ctx)


OUTPUT_FILE = _OutputFile()
#: Any other path. Not checked for reading here: click would call an unreadable input a usage error (exit 2),
#: where the command's own reading names the file and exits as for any bad input.
PATH = click.Path(path_type=Path, readable=False)


#: Characters that would break a message's one line (or hide part of it): C0 and C1 controls, DEL and
#: Unicode's line and paragraph separators. A file may be named with any of them.
NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    r"""``text`` on one line: a newline or other control character in it (a file name's) shown as ``\n``, ``\x1b``."""
    return NOT_ONE_LINE.sub(lambda found: repr(found.group())[1:-1], text)


def say(text: str) -> None:
    """One line on stderr, whatever names it quotes: a line each is what scripts and logs read."""
    click.echo(one_line(text), err=True)


def reports_errors(func: F) -> F:
    """Turn DigitiseError into a one-line message and its exit code: the one handler."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        verbose = bool(ctx.find_root().params.get("verbose") or ctx.meta.get("digitise.verbose"))
        try:
            return func(*args, **kwargs)
        except DigitiseError as exc:
            if verbose:
                # imported here: keeps `digitise --help` light (traceback)
                import traceback

                traceback.print_exc()
            say(f"digitise: error: {exc.message}")
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt:
            say("digitise: interrupted")
            ctx.exit(130)
        except (click.exceptions.Exit, click.exceptions.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            if verbose:
                # imported here: keeps `digitise --help` light (traceback)
                import traceback

                traceback.print_exc()
            say(f"digitise: internal error: {type(exc).__name__}: {exc} (rerun with -v)")
            ctx.exit(int(ExitCode.INTERNAL))

    return wrapper  # type: ignore[return-value]


class _Workflow(click.Group):
    """Lists the commands in the order of the work (print, scan, review), then the separate steps."""

    ORDER = ("template", "layout", "scan", "batch", "review", "read", "solve", "synth", "train")

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: (self.ORDER.index(name) if name in self.ORDER else len(self.ORDER), name))


@click.group(cls=_Workflow, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="digitise")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks and debug logging.")
def cli(verbose: bool) -> None:
    """Read handwritten backgammon recording notes into .mat match files."""
    # imported here: keeps `digitise --help` light (logging loads string, traceback, atexit: 5 modules)
    import logging

    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import LOG_FORMAT

    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format=LOG_FORMAT)


NO_ADAPT_HELP = ("Read with the shipped reader alone: do not learn the recorder's hand from the match's sure turns "
                 "to read its other boards again.")
EXIT_ZERO_HELP = ("Exit 0 when the output is written though turns are flagged for review (the flags are still "
                  "reported): for scripts run with `set -e`. A failure still exits non-zero.")
ROSTER_HELP = ("The tournament's entrants, one name a line: a name read from a header is taken as the entrant "
               "it spells (OCR's slips forgiven), and one that spells none is noted.")


def roster_names(path: Path | None) -> tuple[str, ...]:
    """The entrants listed in the ``--roster`` file, none without one."""
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import load_roster

    return load_roster(path) if path else ()


def player_names(value: str | None) -> tuple[str, str] | None:
    """The players given by ``--players "BOTTOM,TOP"``, checked as a .mat file can hold them; None when not given."""
    if value is None:
        return None
    # imported here: keeps `digitise --help` light (notation, ~15 ms)
    from digitise.notation.mat import players_problem

    parts = [p.strip() for p in value.split(",")]
    problem = players_problem(parts)
    if problem:
        raise click.BadParameter(problem, param_hint="--players")
    return (parts[0], parts[1])


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, plural unless one: "1 page", "3 pages", "2 matches" (``plural`` given)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def say_problems(page_errors: Sequence[str], notes: Sequence[str], match: str = "") -> None:
    """A match's skipped pages and notes on stderr, one line each (``match`` names it in a batch)."""
    for problem in page_errors:
        say(f"digitise: page skipped: {problem}")
    for note in notes:
        say(f"digitise: note: {match}{note}")


class _PipeGuard:
    """A text stream that drops what is written once its reader has gone (``digitise batch ... | head``).

    A closed pipe must not stop a batch half way, nor turn a finished one
    into an internal error: the work goes on and exits as it would have, and
    only its messages are lost, as the reader chose.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._lose()

    def _lose(self) -> None:
        self._gone = True
        # Python flushes the stream once more at exit: its descriptor now leads to /dev/null, so that cannot fail.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main() -> None:
    """Console-script entry point: usage errors as one line too, like every other error."""
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not UTF-8 (an old disk, a Windows share) comes back as the bytes it was given:
        # printed strictly, it made a finished scan an internal error in a UTF-8 locale.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="surrogateescape")
    sys.stdout, sys.stderr = _PipeGuard(sys.stdout), _PipeGuard(sys.stderr)  # type: ignore[assignment]
    try:
        code = cli.main(prog_name="digitise", standalone_mode=False)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx is not None else "digitise"
        say(f"digitise: usage error: {exc.format_message()} (see `{command} -h`)")
        sys.exit(int(ExitCode.USAGE))
    except click.ClickException as exc:
        say(f"digitise: error: {exc.format_message()}")
        sys.exit(exc.exit_code)
    except click.Abort:
        say("digitise: aborted")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)

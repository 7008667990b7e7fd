"""The command line: parse, call, report. No logic lives here.

Every :class:`~digitise.errors.DigitiseError` becomes one line on stderr and
the exit code it carries; anything else is a bug, reported as such (with the
traceback under ``-v``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import os
import re
import shlex
import shutil
import signal
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from digitise import __version__
from digitise.errors import DigitiseError, ExitCode
from digitise.game.match import MAX_MATCH_LENGTH

if TYPE_CHECKING:
    from digitise.pipeline import JobResult, ScanSummary

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
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import LOG_FORMAT

    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format=LOG_FORMAT)


# Commands are added below, one function each. Keep them thin: parse options,
# call into the package, report.


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


@cli.command(short_help="Read one match's pages into a .mat (and a report).")
@click.argument("pages", nargs=-1, required=True, type=PATH)
@click.option("-o", "--output", required=True, type=OUTPUT_FILE, help="The .mat file to write.")
@click.option("--report", type=OUTPUT_FILE, help="The report JSON (for the review page).")
@click.option("--players", help='Player names "BOTTOM,TOP" (else from the header).')
@click.option("--length", type=click.IntRange(0, MAX_MATCH_LENGTH), help="Match length, 0 for unlimited (else from the header).")
@click.option("--template", help="Template name or JSON file (default: found from the page).")
@click.option("--order", type=click.Choice(["given", "header"]), default="given", show_default=True,
              help="Page order: as given, or by the page number written in the header.")
@click.option("--corrections", type=PATH,
              help="Corrections saved by the review page, re-applied as hard constraints.")
@click.option("--roster", type=PATH, help=ROSTER_HELP)
@click.option("--no-adapt", "no_adapt", is_flag=True, help=NO_ADAPT_HELP)
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@click.option("--exit-zero", "exit_zero", is_flag=True, help=EXIT_ZERO_HELP)
@reports_errors
def scan(pages: tuple[Path, ...], output: Path, report: Path | None, players: str | None, length: int | None,
         template: str | None, order: str, corrections: Path | None, roster: Path | None, no_adapt: bool,
         force: bool, exit_zero: bool) -> None:
    """Read PAGES (one match) and write its .mat, flagging unsure turns."""
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import ScanOptions
    from digitise.pipeline import scan as run_scan

    options = ScanOptions(player_names(players), length, template, order, corrections, force,
                          roster=roster_names(roster), roster_file=roster, adapt=not no_adapt)
    with pages_shown(pages) as on_page:
        summary = run_scan(list(pages), output, report, options, on_page=on_page)
    _tell(summary, exit_zero)


def _tell(summary: ScanSummary, exit_zero: bool = False) -> None:
    """The summary of a scan or solve, its problems on stderr, and its exit code."""
    say_problems(summary.page_errors, summary.notes)
    aside = f", {counted(summary.set_aside, 'board')} set aside" if summary.set_aside else ""
    # Not a doubt (the note holds no dice for them), but a line of the .mat no board says: worth a word.
    closed = ""
    if summary.closed_out:
        dances = "a dance" if summary.closed_out == 1 else "dances"
        closed = f", {counted(summary.closed_out, 'closed-out turn')} written as {dances} of 21"
    click.echo(one_line(f"{summary.output}: {counted(summary.pages, 'page')}, {counted(summary.games, 'game')}, "
                        f"{counted(summary.turns, 'turn')}, {summary.flagged - summary.set_aside} flagged for review"
                        f"{aside}{closed}"))
    if summary.flagged and summary.report:
        click.echo(f"review them with: {as_typed()} review {shell_quoted(summary.report)}")
    elif summary.flagged:
        click.echo(f"to review them, run this again with --report FILE.json, then: {as_typed()} review FILE.json")
    raise SystemExit(int(summary.exit_code.flags_passed() if exit_zero else summary.exit_code))


def _flags_said(flagged: int, set_aside: int, turns: int) -> str:
    """A match's flags in words: "3 of 40 turns flagged", with the boards set aside apart ("" for none)."""
    flagged_turns = flagged - set_aside
    if not 0 <= flagged_turns <= turns:
        # A report from before boards set aside were counted apart: its count holds both.
        return f"{flagged} flagged ({counted(turns, 'turn')})" if flagged else ""
    said = [f"{flagged_turns} of {counted(turns, 'turn')} flagged"] if flagged_turns else []
    if set_aside:
        said.append(f"{counted(set_aside, 'board')} set aside" + ("" if flagged_turns else f" ({counted(turns, 'turn')})"))
    return ", ".join(said)


def as_typed() -> str:
    """digitise as the user can type it again: ``digitise`` when that is on the PATH, else the path this run
    was started by (``.venv/bin/digitise`` before the environment is activated, as ``scripts/demo`` runs it)."""
    started = sys.argv[0] if sys.argv else ""
    if Path(started).name != "digitise":
        return "digitise"  # run as a module or from a test: the installed command's name
    found = shutil.which("digitise")
    if found is not None and os.path.realpath(found) == os.path.realpath(started):
        return "digitise"
    return shell_quoted(started)


def shell_quoted(path: str) -> str:
    r"""``path`` quoted for a POSIX shell, to copy into a command.

    A name that is not UTF-8 (read from disk as it is, its odd bytes kept as
    surrogates) is written in bash's ``$'...'`` form with those bytes as
    ``\xHH``: printed as it is, it would show as ``\udcff`` and name no file.
    So is a name with a newline or another control character in it, which
    would break the command's line.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        if not NOT_ONE_LINE.search(path):
            return shlex.quote(path)
    raw = os.fsencode(path)
    return "$'" + "".join(chr(b) if 32 <= b < 127 and chr(b) not in "'\\" else f"\\x{b:02x}" for b in raw) + "'"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, plural unless one: "1 page", "3 pages", "2 matches" (``plural`` given)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def page_bar(total: int | None, *, leave: bool = True) -> Any:
    """A progress bar on stderr (a terminal), a step a page read; ``leave=False``: gone once closed."""
    # imported here: keeps `digitise --help` light (tqdm)
    from tqdm import tqdm

    # A terminal that says it is 0 x 0 (a console never told its size: `docker exec -t`, a serial line)
    # had tqdm draw nothing at all, and a long run looked hung.
    columns, lines = _terminal_size()
    return tqdm(total=total, unit="page", file=sys.stderr, ncols=None if columns else 80,
                nrows=None if lines else 24, leave=leave)


@contextlib.contextmanager
def pages_shown(pages: Sequence[Path]) -> Iterator[Callable[[], None] | None]:
    """What to call as each page is read: a bar's step on a terminal, nothing elsewhere (a log stays quiet).

    The bar is gone once the pages are read, so the summary or the one-line error stands alone.
    """
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import is_terminal, pages_held

    if not is_terminal():
        yield None
        return
    bar = page_bar(pages_held(pages), leave=False)
    try:
        yield lambda: bar.update(1)
    finally:
        bar.close()


def _terminal_size() -> tuple[int, int]:
    """The columns and lines of the terminal on stderr, 0 where it does not say."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):
        return 0, 0
    return size.columns, size.lines


def say_problems(page_errors: Sequence[str], notes: Sequence[str], match: str = "") -> None:
    """A match's skipped pages and notes on stderr, one line each (``match`` names it in a batch)."""
    for problem in page_errors:
        say(f"digitise: page skipped: {problem}")
    for note in notes:
        say(f"digitise: note: {match}{note}")


@cli.command(short_help="Convert every match in a folder, on all cores.")
@click.argument("input_dir", type=PATH)
@click.option("-o", "--output", "output_dir", required=True, type=PATH,
              help="Folder for each match's .mat, report and readings, and summary.json.")
@click.option("--jobs", "-j", type=click.IntRange(1), help="Worker processes (default and most: one per core).")
@click.option("--template", help="Template name or JSON file.")
@click.option("--length", type=click.IntRange(0, MAX_MATCH_LENGTH),
              help="Match length of every match, 0 for unlimited (else from each match's headers).")
@click.option("--order", type=click.Choice(["given", "header"]), default="given", show_default=True,
              help="Page order in each match: by file name (folder by folder), or by the page number written "
                   "in the header.")
@click.option("--roster", type=PATH, help=ROSTER_HELP)
@click.option("--no-adapt", "no_adapt", is_flag=True, help=NO_ADAPT_HELP)
@click.option("--force", is_flag=True,
              help="Convert again matches already done (each keeps its review's corrections file); replace a "
                   "summary.json or summary.csv that a batch did not write.")
@click.option("--exit-zero", "exit_zero", is_flag=True, help=EXIT_ZERO_HELP)
@click.option("--scheduler", metavar="tcp://HOST:PORT",
              help="Convert the matches on the workers of this running Dask scheduler, one match a task, instead "
                   "of local processes (the dask extra; folders on a file system all workers share: "
                   "docs/distributed.md).")
@reports_errors
def batch(input_dir: Path, output_dir: Path, jobs: int | None, template: str | None, length: int | None,
          order: str, roster: Path | None, no_adapt: bool, force: bool, exit_zero: bool,
          scheduler: str | None) -> None:
    """Convert every match in INPUT_DIR (a sub-folder of pages or a PDF each) into OUTPUT_DIR."""
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import (
        NAMES_SHOWN,
        BatchInterrupted,
        BatchProgress,
        ScanOptions,
        is_terminal,
        listed_names,
        summary_csv_path,
        summary_path,
    )
    from digitise.pipeline import batch as run_batch

    entrants = roster_names(roster)
    view = _BatchShown(is_terminal())
    told = BatchProgress(view)
    try:
        with _stopped_by_sigterm():
            summary = run_batch(input_dir, output_dir, ScanOptions(length=length, template=template, order=order,
                                                                   overwrite=force, roster=entrants,
                                                                   roster_file=roster, adapt=not no_adapt),
                                jobs=jobs, scheduler=scheduler, progress=told.match_ended,
                                page_progress=told.page_read, started=told.started)
    except BatchInterrupted as stop:
        view.close()
        left = stop.summary.counts.get("interrupted", 0)
        say(f"digitise: interrupted: {counted(left, 'match', 'matches')} not converted (listed in "
            f"{summary_path(output_dir)}); the same command again converts them and skips the rest")
        raise SystemExit(130) from None
    view.close()
    written = "" if summary.summary_error else \
        f"; summary in {summary_path(output_dir)} and {summary_csv_path(output_dir)}"
    # Counted in matches: "2 flagged" alone read as two turns.
    total = sum(summary.counts.values())
    click.echo(one_line(f"{counted(total, 'match', 'matches')}: "
                        + ", ".join(f"{n} {s}" for s, n in summary.counts.items())
                        + f" in {summary.seconds:.1f} s{written}"))
    for r in summary.results:
        if r.status != "failed":
            click.echo(one_line(_match_said(r)))
    to_review = 0
    for r in summary.results:
        if r.status == "failed":
            say(f"digitise: failed: {r.reason}")
        elif r.needs_review:
            turns = _flags_said(r.flagged, r.set_aside, r.turns)
            turns = f"{turns}; " if turns else ""
            before = " (converted before)" if r.status == "skipped" else ""
            say(f"digitise: flagged: {r.name}{before}: {turns}review with: {as_typed()} review "
                f"{shell_quoted(str(r.report))}")
            to_review += 1
        say_problems(r.page_errors, r.notes, f"{r.name}: ")
    if to_review > 1:
        say(f"digitise: review all {to_review} flagged matches from one page: {as_typed()} review "
            f"{shell_quoted(str(output_dir))}")
    if summary.loose_pages > 1:
        say(f"digitise: note: {summary.loose_pages} one-page pictures at the top of {input_dir} were each "
            "converted as a match of its own; put the pages of one match in a sub-folder of their own")
    elif summary.loose_pages == 1 and total > 1:
        # Beside other matches, one loose page is more likely one of theirs than a match of one page.
        say(f"digitise: note: a one-page picture at the top of {input_dir} was converted as a match of its own; "
            "if it is a page of another match, put it in that match's folder")
    if summary.left_out:
        shown = listed_names(summary.left_out)
        shown += " (all in summary.json)" if len(summary.left_out) > NAMES_SHOWN else ""
        say(f"digitise: note: left out {counted(len(summary.left_out), 'file', 'files')} at the top of "
            f"{input_dir} that {'is' if len(summary.left_out) == 1 else 'are'} no picture or PDF: {shown}")
    if summary.summary_error is not None:
        say(f"digitise: error: {summary.summary_error.message}")
    raise SystemExit(int(summary.exit_code.flags_passed() if exit_zero else summary.exit_code))


class _BatchShown:
    """A batch's progress on stderr: a bar on a terminal; elsewhere (a log: cron, a service) a plain line a page,
    so a long PDF is seen to go on, and a line a match."""

    def __init__(self, terminal: bool) -> None:
        self.terminal = terminal
        self.bar: Any = None

    def found(self, pages: int) -> None:
        if self.terminal:
            self.bar = page_bar(pages)

    def page_read(self, step: int, read: int, found: int, match: str) -> None:
        # A reader gone (`batch ... 2>&1 | head`) costs only these lines: main() guards the streams.
        if self.bar is not None:
            self.bar.update(step)
        else:
            say(f"page {read} of {found} read ({match})")

    def match_ended(self, result: JobResult, step: int) -> None:
        if self.bar is not None:
            self.bar.update(step)
        else:
            say(f"{result.status:8} {result.name} ({counted(result.pages, 'page')})")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _match_said(r: JobResult) -> str:
    """A converted match on one line, for a director: players, length, result, games, turns, flags, dances."""
    said = [f"{r.name}{' (converted before)' if r.status == 'skipped' else ''}:"]
    if r.players is not None and r.score is not None:
        bottom, top = r.players
        length = "unlimited" if not r.length else f"{r.length}-point match"
        if r.winner is not None:
            won, lost = max(r.score), min(r.score)  # the winner reached the length: the higher score
            result = f"{r.winner} won {won}-{lost}"
        else:
            result = f"{bottom} {r.score[0]}, {top} {r.score[1]}" + ("" if not r.length else ", unfinished")
        said.append(f"{bottom} v {top}, {length}, {result};")
    figures = [counted(r.games, "game"), counted(r.turns, "turn"), f"{r.flagged - r.set_aside} flagged"]
    if r.set_aside:
        figures.append(f"{counted(r.set_aside, 'board')} set aside")
    if r.closed_out:
        figures.append(f"{counted(r.closed_out, 'closed-out turn')} written as "
                       f"{'a dance' if r.closed_out == 1 else 'dances'} of 21")
    if r.notes or r.page_errors:
        figures.append(counted(len(r.notes) + len(r.page_errors), "note"))
    return " ".join(said) + " " + ", ".join(figures)


@contextlib.contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM (a service manager, `kill`) stops like Ctrl-C: the batch ends its workers and says what is left.

    Only the first of them stops it: a second (Ctrl-C pressed twice, or `timeout` signalling the process and
    then its group) would cut short the stopping itself, and the summary of what is left would be lost.
    """
    stopping = False

    def interrupt(signum: int, frame: object) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            raise KeyboardInterrupt

    try:
        previous = {signum: signal.signal(signum, interrupt) for signum in (signal.SIGTERM, signal.SIGINT)}
    except ValueError:  # not the main thread (a test runner's): nothing to install
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            # Once stopping, the process is on its way out: a late second signal must not end it mid-message.
            signal.signal(signum, signal.SIG_IGN if stopping else handler)


@cli.command(short_help="Print the blank recording note.")
@click.option("--paper", default="a4", show_default=True, help="Paper: a4 or letter (landscape), or a geometry JSON.")
@click.option("-o", "--output", type=OUTPUT_FILE,
              help="FILE.pdf (vector, print at 100 %), FILE.png (raster at --dpi) or FILE.json (the geometry).")
@click.option("--dpi", type=click.IntRange(50, 1200), default=300, show_default=True, help="Resolution of a PNG.")
@click.option("--json", "as_json", is_flag=True,
              help="The geometry JSON instead (for --paper FILE.json): printed, or written to -o FILE.json.")
@click.option("--force", is_flag=True, help="Replace an existing output.")
@reports_errors
def template(paper: str, output: Path | None, dpi: int, as_json: bool, force: bool) -> None:
    """Print the blank recording note (PDF or PNG), or its geometry (--json)."""
    # imported here: keeps `digitise --help` light (NumPy, OpenCV)
    from digitise.notation.template import load_template
    from digitise.sheet.printing import write_template

    geometry = load_template(paper)
    if as_json:
        if output is None:
            click.echo(geometry.to_json(), nl=False)
            return
        if output.suffix.lower() != ".json":
            raise click.UsageError(f"--json writes the geometry as JSON: name the file FILE.json, not {output.name}")
    if output is None:
        raise click.UsageError("give -o FILE.pdf or -o FILE.png (or --json)")
    written = write_template(geometry, output, dpi=dpi, overwrite=force)
    what = "geometry" if written.suffix.lower() == ".json" else "note"
    say(f"{written}: {geometry.name} {what}, {geometry.page_mm[0]:g} x {geometry.page_mm[1]:g} mm")


@cli.command(short_help="Fit another print's boards from a page into a template JSON.")
@click.argument("page", type=PATH)
@click.option("-o", "--output", required=True, type=OUTPUT_FILE,
              help="The template JSON to write (then: scan/batch/read --template FILE.json).")
@click.option("--overlay", type=OUTPUT_FILE, help="A PNG of the page with the fitted squares drawn over it, to check.")
@click.option("--name", help="The template's name (default: the output's file name).")
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@reports_errors
def layout(page: Path, output: Path, overlay: Path | None, name: str | None, force: bool) -> None:
    """Fit the boards of a note of another print (no markers, other sizes and spacing) from the ruled lines of
    PAGE (its first page: blank or filled) and write them as a template for --template."""
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import layout_to_file

    summary = layout_to_file(page, output, overlay=overlay, name=name, overwrite=force)
    placed = summary.boards - summary.seen
    extra = f" ({placed} placed from the grid: check the overlay)" if placed else ""
    say(one_line(f"{summary.output}: {summary.boards} boards fitted{extra}, page turned {round(summary.turn, 1) + 0.0:+.1f} degrees"
                 + (f"; overlay {summary.overlay}" if summary.overlay else "")))


@cli.command(short_help="Open the review page to fix flagged turns.")
@click.argument("report", type=PATH)
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Keep 127.0.0.1 unless you mean to share the page.")
@click.option("--readings", type=PATH,
              help="The readings JSON, when the report does not name it.")
@click.option("--learn", "learn_dir", type=PATH,
              help="Save corrected cells as labelled crops here, for `digitise train`.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the address.")
@reports_errors
def review(report: Path, port: int, host: str, readings: Path | None, learn_dir: Path | None,
           no_browser: bool) -> None:
    """Serve the review page for REPORT.json: fix flagged turns; each fix is written into the match's .mat.

    REPORT may be a folder (a batch's output): one page lists its matches.
    """
    # imported here: keeps `digitise --help` light (the review server, NumPy)
    from digitise.review.server import make_server

    server = make_server(report, host=host, port=port, readings=readings, learn_dir=learn_dir)
    if server.session is not None:
        mat = server.session.mat_path()
        written = f" and written into {mat}" if mat is not None else ""
        say(f"Review page: {server.url}  (corrections saved to {server.session.corrections_file}{written}; "
            "Ctrl-C to stop)")
    elif server.folder is not None:
        count = len(server.folder.reports)
        say(f"Review page: {server.url}  ({counted(count, 'match', 'matches')} in "
            f"{server.folder.folder}; each one's corrections saved beside its report and written into "
            "its .mat; Ctrl-C to stop)")
    if host in ("0.0.0.0", "::", ""):
        # imported here: keeps `digitise --help` light (socket and its modules)
        import socket

        say(f"listening on every address of this machine: from another one, open "
            f"http://{socket.gethostname()}:{server.server_address[1]}/")
    for message in server.session.messages if server.session is not None else ():
        say(f"note: {message}")
    if not no_browser:
        # imported here: keeps `digitise --help` light (webbrowser, ~5 ms)
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    finally:
        server.server_close()


@cli.command(short_help="Retrain the handwriting models (needs PyTorch).")
@click.option("-o", "--output", required=True, type=PATH,
              help="Folder for glyphs.onnx and glyphs.json (the shipped ones: digitise/vision/models/).")
@click.option("--glyphs", type=PATH,
              help="digits.png sheet or folder of labelled digits (default: ../shared/data/digits.png); TRAIN part only.")
@click.option("--synth", type=PATH,
              help="Extra labelled glyph images, <class>/<name>.png (e.g. corrected cells saved by review --learn).")
@click.option("--epochs", type=click.IntRange(1),
              help="Training epochs (default: 10; with --cellnet the point model's, 14 as shipped).")
@click.option("--cells", type=click.IntRange(100), default=14000, show_default=True, help="Synthetic cells to draw.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="Seed of every random choice.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=2, show_default=True, help="Processes drawing cells.")
@click.option("--cellnet", is_flag=True,
              help="Train the whole-cell models instead (cellnet_point/centre.onnx): renders and reads synthetic pages.")
@click.option("--matches", type=click.IntRange(1), default=140, show_default=True,
              help="--cellnet: whole matches rendered for training.")
@click.option("--centre-matches", type=click.IntRange(1), default=500, show_default=True,
              help="--cellnet: matches of which only the boards with a written centre are rendered.")
@click.option("--multi-matches", type=click.IntRange(0), default=0, show_default=True,
              help="--cellnet: matches of which only the boards with a square of two or more digits are rendered "
                   "(point model; none as shipped).")
@click.option("--centre-epochs", type=click.IntRange(1), default=36, show_default=True,
              help="--cellnet: epochs of the centre model (--epochs is the point model's).")
@click.option("--only", type=click.Choice(["point", "centre"]), help="--cellnet: train this model only.")
@click.option("--cache", type=PATH,
              help="--cellnet: keep the generated cells here and reuse them.")
@click.option("--augment", is_flag=True,
              help="--cellnet: distort training cells (scale, slant, ink level, stroke width); off as shipped.")
@click.option("--elastic", type=click.FloatRange(0.0, 8.0), default=0.0, show_default=True,
              help="--cellnet: bend training cells' strokes by a smooth random field of about this many pixels.")
@click.option("--second", is_flag=True,
              help="--cellnet: write the models as the second of their kind (cellnet_point_b.onnx...), "
                   "averaged with the first by the reader.")
@click.option("--font-hand", is_flag=True,
              help="--cellnet: write the training pages with digits drawn from fonts too, a hand unlike MNIST's "
                   "(tried as a second point model; see benchmarks/README.md).")
@click.option("--mnist", type=PATH,
              help="Folder of MNIST's idx files (scripts/fetch-mnist): its digits unlike any of --glyphs' "
                   "are trained on too.")
@click.option("--hands", multiple=True,
              help="--cellnet: a hand source (.npz of x and y, as in ../shared/data/hands; files read as one joined "
                   "by commas) whose digits are written into the training pages too; give it once a source.")
@click.option("--force", is_flag=True, help="Replace an existing model.")
@reports_errors
def train(output: Path, glyphs: Path | None, synth: Path | None, epochs: int | None, cells: int, seed: int, jobs: int,
          cellnet: bool, matches: int, centre_matches: int, multi_matches: int, centre_epochs: int, only: str | None,
          cache: Path | None, augment: bool, elastic: float, second: bool, font_hand: bool, mnist: Path | None,
          hands: tuple[str, ...], force: bool) -> None:
    """Train the handwriting classifier (needs the `train` extra: PyTorch) and export it to ONNX."""
    if cellnet:
        # imported here: an optional package (PyTorch, the `train` extra)
        from digitise.training.cellnet import POINT_EPOCHS, CellNetOptions, train_cellnets

        net_report = train_cellnets(CellNetOptions(output=output, glyphs=glyphs, matches=matches,
                                                   centre_matches=centre_matches, multi_matches=multi_matches,
                                                   epochs=epochs or POINT_EPOCHS,
                                                   centre_epochs=centre_epochs, seed=seed, jobs=jobs, cache=cache,
                                                   kinds=(only,) if only else ("point", "centre"),
                                                   augment=augment, elastic=elastic, second=second,
                                                   font_hand=font_hand, mnist=mnist, overwrite=force,
                                                   hands=tuple(tuple(Path(p) for p in h.split(",")) for h in hands)),
                                    progress=say)
        for kind, figures in net_report.figures.items():
            val = figures["validation"]
            click.echo(f"{kind}: validation cells top-1 {val['top1']:.2%}, top-3 {val['top3']:.2%}, "
                       f"ECE {val['ece_top1']:.3f}")
        click.echo(one_line("wrote " + ", ".join(str(p) for p in net_report.models)))
        return
    # imported here: an optional package (PyTorch, the `train` extra)
    from digitise.training.train import GLYPH_EPOCHS, TrainOptions, train_classifier

    report = train_classifier(TrainOptions(output=output, glyphs=glyphs, synth=synth, epochs=epochs or GLYPH_EPOCHS,
                                           seed=seed,
                                           cells=cells, jobs=jobs, mnist=mnist, overwrite=force))
    test = report.figures["test_clean_glyphs"]
    click.echo(one_line(f"wrote {report.model} and {report.metadata}"))
    click.echo(f"held-out TEST glyphs: digits 1-6 {test['digits_1_6']['accuracy']:.2%}, "
               f"0-9 {test['digits_0_9']['accuracy']:.2%}, ECE {test['digits_0_9']['ece']:.3f}")


@cli.command(short_help="Read pages into readings JSON (no solving).")
@click.argument("pages", nargs=-1, required=True, type=PATH)
@click.option("-o", "--output", required=True, type=OUTPUT_FILE,
              help="The readings JSON to write.")
@click.option("--template", help="Template name (a4, letter) or geometry JSON (default: found from each page).")
@click.option("--debug-dir", type=PATH,
              help="Write an overlay per page: markers, grid, cells and each cell's top reading.")
@click.option("--no-header", is_flag=True, help="Skip the header (tesseract is the slowest step).")
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@reports_errors
def read(pages: tuple[Path, ...], output: Path, template: str | None, debug_dir: Path | None, no_header: bool,
         force: bool) -> None:
    """Read PAGES (images or PDFs) into READINGS.json; exit 1 if a page could not be read (it is left out)."""
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import read_to_file

    with pages_shown(pages) as on_page:
        summary = read_to_file(list(pages), output, template=template, header=not no_header, debug_dir=debug_dir,
                               overwrite=force, on_page=on_page)
    say_problems(summary.skipped, summary.notes)
    click.echo(one_line(f"{summary.output}: {counted(summary.pages, 'page')} read, {len(summary.skipped)} skipped"))
    raise SystemExit(int(summary.exit_code))


@cli.command(short_help="Render synthetic filled notes from a .mat.")
@click.argument("match_file", metavar="MATCH.mat", type=PATH)
@click.option("-o", "--output", "output_dir", required=True, type=PATH,
              help="Folder for page-001.png, page-001.truth.json, ... and match.mat.")
@click.option("--paper", default="a4", show_default=True, help="Paper: a4 or letter, or a geometry JSON.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed: the same seed gives the same files.")
@click.option("--degrade", type=click.Choice(["none", "light", "medium", "heavy", "photocopy"]), default="light",
              show_default=True, help="Scan damage level (see digitise/sheet/damage.py).")
@click.option("--glyphs", type=PATH,
              help="digits.png or a folder of labelled digit images (default: ../shared/data/digits.png).")
@click.option("--format", "fmt", type=click.Choice(["png", "jpg", "pdf"]), default="png", show_default=True,
              help="Page images, or one multi-page PDF (pages.pdf) as a scanner makes.")
@click.option("--dpi", type=click.IntRange(50, 600), help="Resolution (default: drawn from the damage level).")
@click.option("--names", "names_boards", is_flag=True, help="Open every game with a board of the players' names.")
@click.option("--force", is_flag=True, help="Replace an existing output folder.")
@reports_errors
def synth(match_file: Path, output_dir: Path, paper: str, seed: int, degrade: str, glyphs: Path | None, fmt: str,
          dpi: int | None, names_boards: bool, force: bool) -> None:
    """Render MATCH.mat as handwritten, scan-damaged note pages with truth files."""
    # imported here: keeps `digitise --help` light (OpenCV, NumPy)
    from digitise.sheet.synth import write_synth

    written = write_synth(match_file, output_dir, paper=paper, seed=seed, degrade=degrade, glyphs=glyphs,
                          fmt=fmt, overwrite=force, dpi=dpi, names_boards=names_boards)
    pages = sum(1 for p in written if p.name.endswith(".truth.json"))
    say(f"{output_dir}: {pages} pages ({degrade}, seed {seed})")


@cli.command("solve", short_help="Solve readings JSON into a .mat.")
@click.argument("readings", type=PATH)
@click.option("-o", "--output", required=True, type=OUTPUT_FILE,
              help="The .mat file to write.")
@click.option("--report", type=OUTPUT_FILE, help="The report JSON to write.")
@click.option("--players", help='Player names "BOTTOM,TOP" (else from the header).')
@click.option("--length", type=click.IntRange(0, MAX_MATCH_LENGTH), help="Match length, 0 for unlimited (else from the header).")
@click.option("--corrections", type=PATH,
              help="Corrections saved by the review page, applied as hard constraints.")
@click.option("--roster", type=PATH, help=ROSTER_HELP)
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@click.option("--exit-zero", "exit_zero", is_flag=True, help=EXIT_ZERO_HELP)
@reports_errors
def solve_command(readings: Path, output: Path, report: Path | None, players: str | None, length: int | None,
                  corrections: Path | None, roster: Path | None, force: bool, exit_zero: bool) -> None:
    """Solve READINGS.json (from `digitise read`) into a .mat match; exit 1 if turns are flagged."""
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import ScanOptions, solve_readings

    options = ScanOptions(player_names(players), length, corrections=corrections, overwrite=force,
                          roster=roster_names(roster), roster_file=roster)
    _tell(solve_readings(readings, output, report, options), exit_zero)


def _verbose_here(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta["digitise.verbose"] = True
        logging.getLogger().setLevel(logging.DEBUG)


# The errors say "rerun with -v", and a user adds it at the end: every command takes it too.
for _command in cli.commands.values():
    _command.params.append(click.Option(["-v", "--verbose"], is_flag=True, hidden=True, expose_value=False,
                                        callback=_verbose_here, is_eager=True))


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


if __name__ == "__main__":
    main()

"""The batch command: every match in a folder converted, its progress shown, its results said a line each."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from digitise.cli.frame import (
    EXIT_ZERO_HELP,
    NO_ADAPT_HELP,
    PATH,
    ROSTER_HELP,
    cli,
    counted,
    one_line,
    reports_errors,
    roster_names,
    say,
    say_problems,
)
from digitise.cli.shown import as_typed, page_bar, shell_quoted
from digitise.game.match import MAX_MATCH_LENGTH

if TYPE_CHECKING:
    from digitise.pipeline import JobResult


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

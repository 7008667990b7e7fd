"""The commands of one match: scan (pages to a .mat), read (pages to readings), solve (readings to a .mat)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from digitise.cli.frame import (
    EXIT_ZERO_HELP,
    NO_ADAPT_HELP,
    OUTPUT_FILE,
    PATH,
    ROSTER_HELP,
    cli,
    counted,
    one_line,
    player_names,
    reports_errors,
    roster_names,
    say_problems,
)
from digitise.cli.shown import as_typed, pages_shown, shell_quoted
from digitise.game.match import MAX_MATCH_LENGTH

if TYPE_CHECKING:
    from digitise.pipeline import ScanSummary


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

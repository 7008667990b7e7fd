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
from pathlib import Path
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


def _players(value: str | None) -> tuple[str, str] | None:
    if value is None:
        return None
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 2 or not all(parts):
        raise click.BadParameter('give two names: "BOTTOM,TOP"', param_hint="--players")
    return (parts[0], parts[1])


@cli.command()
@click.argument("pages", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), help="The .mat file to write.")
@click.option("--report", type=click.Path(path_type=Path), help="The report JSON (for the review page).")
@click.option("--players", help='Player names "BOTTOM,TOP" (else from the header).')
@click.option("--length", type=click.IntRange(0), help="Match length (else from the header).")
@click.option("--template", help="Template name or JSON file (default: found from the page).")
@click.option("--order", type=click.Choice(["given", "header"]), default="given", show_default=True,
              help="Page order: as given, or by the page number written in the header.")
@click.option("--corrections", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="Corrections saved by the review page, re-applied as hard constraints.")
@click.option("--force", is_flag=True, help="Replace existing outputs.")
@_reports_errors
def scan(pages: tuple[Path, ...], output: Path, report: Path | None, players: str | None, length: int | None,
         template: str | None, order: str, corrections: Path | None, force: bool) -> None:
    """Read PAGES (one match) and write its .mat, flagging unsure turns."""
    from digitise.pipeline import ScanOptions
    from digitise.pipeline import scan as run_scan

    options = ScanOptions(_players(players), length, template, order, corrections, force)
    summary = run_scan(list(pages), output, report, options)
    for problem in summary.page_errors:
        click.echo(f"digitise: page skipped: {problem}", err=True)
    click.echo(f"{summary.output}: {summary.pages} pages, {summary.games} games, {summary.turns} turns, "
               f"{summary.flagged} flagged for review")
    if summary.flagged and summary.report:
        click.echo(f"review them with: digitise review {summary.report}")
    raise SystemExit(int(summary.exit_code))


@cli.command()
@click.argument("input_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("-o", "--output", "output_dir", required=True, type=click.Path(path_type=Path, file_okay=False))
@click.option("--jobs", "-j", type=click.IntRange(1), help="Worker processes (default: all cores).")
@click.option("--template", help="Template name or JSON file.")
@click.option("--force", is_flag=True, help="Convert again matches already done.")
@_reports_errors
def batch(input_dir: Path, output_dir: Path, jobs: int | None, template: str | None, force: bool) -> None:
    """Convert every match in INPUT_DIR (a sub-folder of pages or a PDF each) into OUTPUT_DIR."""
    from digitise.pipeline import ScanOptions, find_jobs, is_terminal
    from digitise.pipeline import batch as run_batch

    found, _ = find_jobs(input_dir, output_dir)
    total = sum(len(j.pages) for j in found)
    bar = None
    if is_terminal():
        from tqdm import tqdm

        bar = tqdm(total=total, unit="page", file=sys.stderr)

    def progress(result: Any) -> None:
        if bar is not None:
            bar.update(result.pages)
        else:
            click.echo(f"{result.status:8} {result.name} ({result.pages} pages)", err=True)

    summary = run_batch(input_dir, output_dir, ScanOptions(template=template, overwrite=force), jobs=jobs,
                        progress=progress)
    if bar is not None:
        bar.close()
    counts: dict[str, int] = {}
    for r in summary.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    click.echo(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f" in {summary.seconds:.1f} s; "
               f"summary in {output_dir / 'summary.json'}")
    for r in summary.results:
        if r.status == "failed":
            click.echo(f"digitise: failed: {r.reason}", err=True)
    raise SystemExit(int(summary.exit_code))


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="digitise")


if __name__ == "__main__":
    sys.exit(main())

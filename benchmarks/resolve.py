"""Solve again the readings a ``bench_end_to_end.py`` run saved, and compare with the truth.

The reader's output is kept by ``digitise scan`` next to each report
(``NAME.report.readings.json``), so solver changes can be measured on real
reader output in seconds, without reading the pages again.

    .venv/bin/python benchmarks/resolve.py /tmp/e2e/medium
    .venv/bin/python benchmarks/resolve.py /tmp/e2e/heavy --set prior.WEIGHT=7
    .venv/bin/python benchmarks/resolve.py /tmp/e2e/heavy /tmp/e2e-9100/heavy   # each, then pooled

Each figure comes with its 95 % interval over matches (``benchmarks/intervals.py``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.intervals import describe
from digitise.game.record import MatchRecord
from digitise.notation.mat import format_mat, parse_mat, read_mat_strict
from digitise.notation.readings import Readings, load_readings
from digitise.solve import REVIEW_BELOW, solve
from digitise.solve.compare import compare
from digitise.solve.report_types import Report
from tests.test_end_to_end import aligned_report


def apply_settings(settings: Sequence[str]) -> None:
    """``module.NAME=VALUE`` for modules of ``digitise.solve`` (``search.BEAM=64``, ``prior.WEIGHT=7``);
    a bare ``NAME=VALUE`` for ``digitise.solve`` itself (``REVIEW_EXPECTED_WRONG=0``; ``report.FOLLOW_WITHIN=0``)."""
    import importlib

    for setting in settings:
        target, _, value = setting.partition("=")
        module_name, _, name = target.rpartition(".")
        full_name = f"digitise.solve.{module_name}" if module_name else "digitise.solve"
        module = importlib.import_module(full_name)
        if not hasattr(module, name):
            raise SystemExit(f"resolve.py: {full_name} has no {name}")
        old = getattr(module, name)
        new = type(old)(value)
        # Modules that imported the constant by name hold their own copy: set those too.
        for loaded in [m for key, m in sys.modules.items() if key == "digitise.solve" or key.startswith("digitise.solve.")]:
            if getattr(loaded, name, None) is old and type(old) is not bool:
                setattr(loaded, name, new)
        setattr(module, name, new)


#: One match re-solved: its name, then turns, right, lines right, silent, flagged, flagged or following,
#: games' results wrong.
Row = tuple[str, int, int, int, int, int, int, int]


def solved_as_written(readings: Readings, truth: MatchRecord, review_below: float = REVIEW_BELOW,
                      corrections: Mapping[tuple[int, int], str] | None = None) -> tuple[MatchRecord, Report]:
    """``readings`` solved (with the truth's players and length), as written to ``.mat`` and read back,
    and its report aligned with it."""
    result = solve(readings, players=truth.players, length=truth.length, corrections=corrections,
                   review_below=review_below)
    solved = parse_mat(format_mat(result.match, fill_gaps=True)).match
    return solved, aligned_report(solved, result.solved)


def solved_again(readings_path: str, truth_path: str, review_below: float,
                 settings: Sequence[str]) -> tuple[MatchRecord, MatchRecord, Report]:
    """(truth, the saved readings solved again as written to ``.mat`` and read back, its aligned report)."""
    apply_settings(settings)
    truth = read_mat_strict(truth_path)
    return (truth, *solved_as_written(load_readings(readings_path), truth, review_below))


def one(args: tuple[str, str, float, tuple[str, ...]]) -> Row:
    readings_path, truth_path, review_below, settings = args
    truth, solved, report = solved_again(readings_path, truth_path, review_below, settings)
    got = compare(truth, solved, report)
    own = sum(1 for g in report.games for t in g.turns if t.flagged)
    return (Path(readings_path).name, got.turns, got.right, got.lines_right, got.silent, own, got.flagged,
            got.results_wrong)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level_dirs", type=Path, nargs="+", metavar="level_dir",
                        help="a level folder of a bench_end_to_end.py run (pages/, out/); several are also pooled")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--review-below", type=float, default=REVIEW_BELOW, help="flag turns less sure than this")
    parser.add_argument("--set", action="append", default=[], metavar="[MODULE.]NAME=VALUE",
                        help="set a constant of digitise.solve.MODULE, or of digitise.solve itself, first "
                             "(e.g. prior.WEIGHT=7, search.BEAM=64, report.FOLLOW_WITHIN=0)")
    args = parser.parse_args(argv)
    apply_settings(args.set)  # a bad name fails here, once, not in every worker
    pooled: list[Row] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for level_dir in args.level_dirs:
            truth = level_dir.parent / "truth"
            if not truth.is_dir():
                truth = level_dir / "truth"
            jobs = [(str(p), str(truth / p.name.replace(".report.readings.json", ".mat")), args.review_below,
                     tuple(args.set))
                    for p in sorted((level_dir / "out").glob("*.report.readings.json"))]
            rows = list(pool.map(one, jobs))
            if args.verbose:
                for r in rows:
                    print(*r)
            _print_figures(rows, f"{level_dir}: " if len(args.level_dirs) > 1 else "")
            pooled += rows
    if len(args.level_dirs) > 1:
        _print_figures(pooled, "all pooled: ")
    return 0


def _print_figures(rows: Sequence[Row], label: str) -> None:
    """The figures of some matches' rows (see :func:`one`), with their intervals over matches."""
    if not rows:
        print(f"{label}no saved readings (NAME.report.readings.json) under out/")
        return
    turns, right, lines, silent, own, covered, results = (sum(r[i] for r in rows) for i in range(1, 8))
    print(f"{label}matches {len(rows)} turns {turns}: right {right / turns:.2%}, lines right {lines / turns:.2%}, "
          f"silent {silent / turns:.2%} ({silent}), flagged {own / turns:.2%}, flagged or following "
          f"{covered / turns:.2%}, results wrong {results}")
    counts = [r[1] for r in rows]
    print(f"  over the {len(rows)} matches: right {describe([r[2] for r in rows], counts)}; "
          f"flagged {describe([r[5] for r in rows], counts)}; silent {describe([r[4] for r in rows], counts)}")


if __name__ == "__main__":
    raise SystemExit(main())

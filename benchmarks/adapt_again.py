"""Learning the recorder's hand, measured on a benchmark run's pages: first pass against adapted, settings tried.

``digitise scan`` adapts the reader to each match's hand (``digitise.adaptation``).
This reads the pages of a ``bench_end_to_end.py`` or ``bench_hands.py`` level
folder once (what the reader saw of each square is kept in ``.adapt-cache/``
beside them), then for every match solves the first reading and the adapted
one, as ``scan`` does, and compares both with the truth. Constants of
``digitise.adaptation`` and ``digitise.vision.adapt`` can be set to try others.

    .venv/bin/python benchmarks/adapt_again.py /tmp/hands/work/optdigits/medium
    .venv/bin/python benchmarks/adapt_again.py DIR --set adapt.PULL=0.1 --set LEARN_SURE=0.995

Per match and pooled: turns, right, silent, flagged, for the first pass and
adapted, the squares learned from, and the seconds adapting took (the reading
is not timed here: ``bench_end_to_end.py`` times whole runs).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.intervals import describe
from digitise.notation.mat import format_mat, parse_mat, read_mat_strict
from digitise.notation.readings import renumbered
from digitise.pipeline import IMAGE_SUFFIXES
from digitise.solve import SolveResult, solve
from digitise.solve.compare import compare
from tests.test_end_to_end import aligned_report


def apply_settings(settings: Sequence[str]) -> None:
    """``NAME=VALUE`` for ``digitise.adaptation``, ``adapt.NAME=VALUE`` for ``digitise.vision.adapt``."""
    from digitise import adaptation
    from digitise.vision import adapt

    for setting in settings:
        target, _, value = setting.partition("=")
        module = adapt if target.startswith("adapt.") else adaptation
        name = target.removeprefix("adapt.")
        if not hasattr(module, name):
            raise SystemExit(f"adapt_again.py: {module.__name__} has no {name}")
        old = getattr(module, name)
        if hasattr(old, "__dataclass_fields__"):
            from dataclasses import replace

            # COMBINATION=0.7 sets the first field (a Combination's weight).
            first = next(iter(old.__dataclass_fields__))
            setattr(module, name, replace(old, **{first: type(getattr(old, first))(value)}))
        elif isinstance(old, bool):
            setattr(module, name, value.lower() in ("1", "true", "yes"))
        else:
            setattr(module, name, type(old)(value))


def read_once(folder: Path) -> object:
    """The pages of one match folder as read (readings and hand), from the cache when there."""
    from digitise.vision.read import read_pages

    cache = folder.parent.parent / ".adapt-cache" / f"{folder.name}.pickle"
    if cache.is_file():
        return pickle.loads(cache.read_bytes())
    pages = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    outcome = read_pages(pages)
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(pickle.dumps(outcome))
    return outcome


Row = tuple[str, int, int, int, int, int, int, int, int, int, float]


def one(args: tuple[str, str, tuple[str, ...]]) -> Row:
    """One match: (name, turns, right, silent, flagged, results wrong; adapted: right, silent, flagged, learned
    from, seconds adapting)."""
    folder, truth_path, settings = args
    apply_settings(settings)
    from digitise.adaptation import adapt_to_hand, hand_by_place
    from digitise.vision.cellnet import point_heads

    truth = read_mat_strict(Path(truth_path))
    outcome = read_once(Path(folder))
    hand = hand_by_place(outcome.readings.pages, outcome.hand)  # type: ignore[attr-defined]
    readings = renumbered(outcome.readings)  # type: ignore[attr-defined]

    def solve_readings(some: object) -> SolveResult:
        return solve(some, players=truth.players, length=truth.length)  # type: ignore[arg-type]

    def scored(result: SolveResult) -> tuple[int, int, int, int, int]:
        solved = parse_mat(format_mat(result.match, fill_gaps=True)).match
        report = aligned_report(solved, result.solved)
        got = compare(truth, solved, report)
        own = sum(1 for g in report.games for t in g.turns if t.flagged)
        return got.turns, got.right, got.silent, own, got.results_wrong

    first = solve_readings(readings)
    start = time.process_time()
    adapted, _, adaptation = adapt_to_hand(readings, hand, first, solve_readings, point_heads())
    seconds = time.process_time() - start
    turns, right, silent, flagged, results = scored(first)
    _, a_right, a_silent, a_flagged, _ = scored(adapted)
    return (Path(folder).name, turns, right, silent, flagged, results, a_right, a_silent, a_flagged,
            adaptation.learned_from, seconds)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level_dirs", type=Path, nargs="+", metavar="level_dir",
                        help="a level folder of a benchmark run (pages/, truth/ beside or above)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--set", action="append", default=[], metavar="[adapt.]NAME=VALUE")
    args = parser.parse_args(argv)
    apply_settings(args.set)
    pooled: list[Row] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for level_dir in args.level_dirs:
            truth = level_dir / "truth" if (level_dir / "truth").is_dir() else level_dir.parent / "truth"
            jobs = [(str(p), str(truth / f"{p.name}.mat"), tuple(args.set))
                    for p in sorted((level_dir / "pages").iterdir()) if p.is_dir() and not p.name.startswith(".")]
            rows = list(pool.map(one, jobs))
            if args.verbose:
                for r in rows:
                    print(*r)
            _print(rows, f"{level_dir}: ")
            pooled += rows
    if len(args.level_dirs) > 1:
        _print(pooled, "all pooled: ")
    return 0


def _print(rows: Sequence[Row], label: str) -> None:
    turns = sum(r[1] for r in rows)
    wholes = [r[1] for r in rows]
    for name, right, silent, flagged in (("first pass", 2, 3, 4), ("adapted", 6, 7, 8)):
        print(f"{label}{name}: {len(rows)} matches, {turns} turns: right {describe([r[right] for r in rows], wholes)}, "
              f"silent {sum(r[silent] for r in rows)}, flagged {describe([r[flagged] for r in rows], wholes)}")
    print(f"{label}learned from {sum(r[9] for r in rows)} squares, adapting took {sum(r[10] for r in rows):.1f} s CPU")


if __name__ == "__main__":
    sys.exit(main())

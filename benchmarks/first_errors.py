"""Whose is each first error, the search's or the model's? The board's truth imposed, scored as read.

For every turn solved wrong from a right position (the first errors of
``bench_end_to_end.py``; the turns carried on from them are left out), the
saved readings are solved again with the true play of that board imposed.
A reviewer's correction scores 0 on its board; here the imposed play keeps
the score the readings and the play prior give it, so the two explanations
of the whole match can be compared. If the imposed one scores higher, the
beam lost the truth: a *search* error, which a wider search would find. If
lower, the solver's own model (readings, prior) prefers the error: no
search finds it, only better readings or a better prior. Each row also says
how many more turns are right with the truth imposed (the error's cost).

    .venv/bin/python benchmarks/first_errors.py /tmp/e2e-9000/medium /tmp/e2e-9100/medium
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import digitise.solve.fitting as fitting_module
import digitise.solve.length as length_module
import digitise.solve.solver as solve_module
import digitise.solve.strangers as strangers_module
from benchmarks.bench_end_to_end import _action_key, board_record, board_truths, misread_kinds, saved_boards
from benchmarks.resolve import solved_as_written
from digitise.game.record import ActionKind, MatchRecord
from digitise.notation.mat import read_mat_strict
from digitise.notation.readings import Readings, load_readings
from digitise.solve import nodes, search
from digitise.solve.compare import compare
from digitise.solve.report_types import Report
from tests.test_end_to_end import inserted


def _scored_as_read(options: list[Any], forced: nodes.Forced) -> list[Any]:
    """``search.impose_as_sure`` keeping the imposed option's own score."""
    fitting = [o for o in options if fitting_module.fits_forced(o, forced)]
    if fitting and forced.response is not None:
        fitting = [fitting_module.with_answer(o, forced.response) for o in fitting]
    return fitting or [replace(o, local=o.local - 30.0) for o in options]


@contextmanager
def _scores(found: list[float]) -> Iterator[None]:
    """Impose corrections at their own score, and note the score of each whole-match search."""
    plain = solve_module.best_explanation

    def noted(*args: Any, **kwargs: Any) -> nodes.Node:
        final = plain(*args, **kwargs)
        found.append(final.score)
        return final

    with mock.patch.object(search, "METHOD", search.SearchMethod(impose=_scored_as_read)), \
            mock.patch.object(solve_module, "best_explanation", noted), \
            mock.patch.object(length_module, "best_explanation", noted), \
            mock.patch.object(strangers_module, "best_explanation", noted):
        yield


def _solved(readings: Readings, truth: MatchRecord,
            corrections: dict[tuple[int, int], str] | None = None) -> tuple[float, MatchRecord, Report, int]:
    """(score of the best explanation, solved match, aligned report, turns right)."""
    found: list[float] = []
    with _scores(found):
        solved, report = solved_as_written(readings, truth, corrections=corrections)
    return found[0], solved, report, compare(truth, solved, report).right


Row = tuple[str, int, int, str, str, float, float, int]


def one(args: tuple[str, str]) -> list[Row]:
    """(match, page, board, what the reader misread, the truth imposed, score found, score imposed, turns
    gained) for each first error of one match."""
    readings_path, level_dir = args
    name = Path(readings_path).name.replace(".report.readings.json", "")
    folder = Path(level_dir)
    truth = read_mat_strict(folder / "truth" / f"{name}.mat")
    readings = load_readings(readings_path)
    truths = board_truths(folder / "pages", name)
    read_boards = saved_boards(folder / "out", name)
    score, solved, report, right = _solved(readings, truth)
    rows: list[Row] = []
    for g, game in enumerate(solved.games):
        for i, action in enumerate(game.actions):
            turn = report.games[g].turns[i]
            if inserted(turn):
                continue  # a turn the solver put in for a missing board: no board to impose on
            written = truths.get(turn.page, {}).get(turn.board)
            actions, before = board_record(written, truth)
            if not actions or _action_key(action) in {_action_key(a) for a in actions} \
                    or (turn.position_before and turn.position_before not in before):
                continue  # records nothing, right, or carried on from an earlier error (as bench_end_to_end)
            moves = [a for a in actions if a.kind is ActionKind.MOVE]
            if len(moves) != 1 or moves[0].roll is None:
                continue  # a double or a result: not imposed here
            move = moves[0]
            play = move.play if move.play is not None and move.play.steps else "cannot move"
            text = f"{move.player.value} {move.roll}: {play}"
            imposed, _, _, right_imposed = _solved(readings, truth, {(turn.page, turn.board): text})
            rows.append((name, turn.page, turn.board,
                         misread_kinds(read_boards.get((turn.page, turn.board)), written) or "solver",
                         text, score, imposed, right_imposed - right))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level_dirs", type=Path, nargs="+", metavar="level_dir",
                        help="a level folder of a bench_end_to_end.py run (pages/, out/, truth/)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    jobs = [(str(p), str(d)) for d in args.level_dirs for p in sorted((d / "out").glob("*.report.readings.json"))]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = [row for match in pool.map(one, jobs) for row in match]
    print("| match | page:board | misread | truth imposed | score found | imposed | turns gained | whose |")
    print("|---|---|---|---|---|---|---|---|")
    for name, page, board, kind, text, found, imposed, gained in rows:
        whose = "search" if imposed > found + 1e-9 else "model"
        print(f"| {name} | {page}:{board} | {kind} | {text} | {found:.2f} | {imposed:.2f} | {gained} | {whose} |")
    searches = [r for r in rows if r[6] > r[5] + 1e-9]
    print(f"\n{len(rows)} first errors, {sum(r[7] for r in rows)} turns right with each truth imposed; "
          f"search errors {len(searches)} ({sum(r[7] for r in searches)} turns), "
          f"the model's {len(rows) - len(searches)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

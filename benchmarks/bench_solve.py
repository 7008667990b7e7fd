"""Solver benchmark: noisy-readings accuracy over every real match, and solve time per board.

Every match in ../shared/data/matches is encoded to its note's boards, read by
the simulated reader of :mod:`digitise.notation.noise` (seed = the match's
index), solved, and compared turn by turn with the truth
(:mod:`digitise.solve.compare`). Run from the repository root:

    taskset -c 0 .venv/bin/python benchmarks/bench_solve.py            # timing on one core
    .venv/bin/python benchmarks/bench_solve.py --jobs 2 --no-timing      # accuracy only, faster

Figures: turns right; wrong turns; silent errors (wrong, not flagged and not
following a flagged board); turns flagged; turns following a flagged board;
runs of wrong turns (a misread and the turns that follow from it); median
solve time per board (per match: solve time / boards, median over matches),
in wall time and in process CPU time (steadier on a shared machine).

``--long 100,400,1600`` times instead one long readings file of each size (in
pages): the games of the real matches, in file order, joined into one
unlimited match until it fills the pages, read by the simulated reader
(medium, seed 7), solved in a fresh process each; it prints the wall and CPU
time, per page too, and the process's peak memory (resident set, less what
it held before the solve), so that growth faster than the pages shows:

    .venv/bin/python benchmarks/bench_solve.py --long 100,400,1600
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# A sibling script, not a package: its folder is on sys.path when it runs.
from machine import describe as describe_host

from digitise.game.match import Score
from digitise.game.record import GameRecord, MatchRecord
from digitise.notation.encode import encode_game, encode_match
from digitise.notation.marks import BOARDS_PER_PAGE
from digitise.notation.mat import read_mat
from digitise.notation.noise import (
    HEAVY,
    MEDIUM,
    NoiseProfile,
    noisy_readings,
)
from digitise.notation.readings import Readings, paginate
from digitise.solve import solve
from digitise.solve.compare import compare

MATCHES = Path(os.environ.get("DIGITISE_SHARED", ROOT.parent / "shared")) / "data" / "matches"
PROFILES = {"medium": MEDIUM, "heavy": HEAVY}


def run_one(job: tuple[int, str, str]) -> dict[str, float]:
    """Solve one match's noisy readings; its figures."""
    seed, path, profile_name = job
    profile: NoiseProfile = PROFILES[profile_name]
    match = read_mat(path).match
    marks = [b.marks for b in encode_match(match)]
    readings = paginate(noisy_readings(marks, seed, profile), "noisy")
    start, cpu = time.perf_counter(), time.process_time()
    result = solve(readings, players=match.players, length=match.length)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    found = compare(match, result.match, result.solved)
    turns = [t for g in result.solved.games for t in g.turns]
    return {
        "boards": len(marks), "seconds": elapsed, "cpu": cpu, "turns": found.turns, "right": found.right,
        "lines_right": found.lines_right,
        "wrong": found.wrong, "silent": found.silent, "results_wrong": found.results_wrong,
        "flagged": sum(1 for t in turns if t.flagged),
        "following": sum(1 for t in turns if t.follows is not None and not t.flagged),
        "roots": found.runs,
    }


def joined_match(pages: int, paths: list[Path]) -> MatchRecord:
    """The finished games of ``paths``' matches, in order and again, as one unlimited match of ``pages`` pages or just over."""
    games: list[GameRecord] = []
    score, boards = Score(), 0
    files = iter(paths * (1 + pages * BOARDS_PER_PAGE // 2000))
    while boards < pages * BOARDS_PER_PAGE:
        for game in read_mat(next(files)).match.games:
            if game.winner is None or game.points is None or boards >= pages * BOARDS_PER_PAGE:
                continue
            games.append(GameRecord(len(games) + 1, score, game.actions, game.winner, game.points))
            score = score.add(game.winner, game.points)
            boards += len(encode_game(games[-1]))
    return MatchRecord(0, ("Bottom", "Top"), tuple(games))


def long_readings(pages: int) -> Readings:
    """A long readings file: :func:`joined_match` read by the simulated reader (medium, seed 7)."""
    paths = sorted(MATCHES.glob("*.mat"))
    if not paths:
        raise SystemExit(f"bench_solve.py: no matches in {MATCHES} (set DIGITISE_SHARED)")
    match = joined_match(pages, paths)
    return paginate(noisy_readings([b.marks for b in encode_match(match)], 7, MEDIUM), "noisy")


def _resident_mb() -> float:
    """This process's peak resident set so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_long(pages: int) -> dict[str, float]:
    """Solve one long readings file in this process; its size, times and peak memory."""
    readings = long_readings(pages)
    from digitise.solve.prior import default_prior

    default_prior()  # the net loaded before the solve: its memory is no part of the solve's
    before = _resident_mb()
    start, cpu = time.perf_counter(), time.process_time()
    result = solve(readings)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"pages": len(readings.pages), "boards": sum(len(p.boards) for p in readings.pages),
            "turns": result.solved.summary.turns, "seconds": elapsed, "cpu": cpu,
            "before_mb": before, "peak_mb": _resident_mb()}


def long_figures(sizes: list[int], timeout: float) -> None:
    """Time each long readings file in a fresh process and print the figures."""
    print(describe_host())
    print("pages  boards  turns   wall s  CPU s  CPU ms/page  peak MB (solve's own)")
    for pages in sizes:
        try:
            done = subprocess.run([sys.executable, __file__, "--long-one", str(pages)], capture_output=True,
                                  text=True, timeout=timeout, check=True)
        except subprocess.TimeoutExpired:
            print(f"{pages:5d}  did not finish in {timeout:.0f} s")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{row['pages']:5.0f}  {row['boards']:6.0f}  {row['turns']:5.0f}  {row['seconds']:7.1f}  "
              f"{row['cpu']:5.1f}  {1000 * row['cpu'] / row['pages']:11.0f}  "
              f"{row['peak_mb']:.0f} ({row['peak_mb'] - row['before_mb']:.0f})", flush=True)


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", help="Time long readings files of these sizes in pages (e.g. 100,400,1600).")
    parser.add_argument("--long-one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=1800.0, help="Seconds a long file may take (--long).")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="Only the first N matches.")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="medium")
    parser.add_argument("--no-timing", action="store_true", help="Skip the timing figures (when --jobs > 1).")
    args = parser.parse_args()
    if args.long_one:
        print(json.dumps(run_long(args.long_one)))
        return
    if args.long:
        long_figures([int(n) for n in args.long.split(",")], args.timeout)
        return
    paths = sorted(MATCHES.glob("*.mat"))
    if args.limit:
        paths = paths[: args.limit]
    jobs = [(i, str(p), args.profile) for i, p in enumerate(paths)]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(run_one, jobs))
    else:
        rows = [run_one(job) for job in jobs]
    total = {k: sum(r[k] for r in rows) for k in rows[0]}
    turns = total["turns"]
    print(f"matches: {len(rows)}  boards: {int(total['boards'])}  turns: {int(turns)}  noise: {args.profile}")
    print(f"turns right:      {100 * total['right'] / turns:6.2f} %  ({int(total['right'])})")
    print(f".mat lines right: {100 * total['lines_right'] / turns:6.2f} %  ({int(total['lines_right'])}: "
          "player, dice and play as written, whatever the position)")
    print(f"wrong turns:      {100 * total['wrong'] / turns:6.2f} %  ({int(total['wrong'])}, "
          f"in {int(total['roots'])} runs)")
    print(f"silent errors:    {100 * total['silent'] / turns:6.2f} %  ({int(total['silent'])}: wrong, not flagged, "
          "not following a flagged board)")
    print(f"flagged:          {100 * total['flagged'] / turns:6.2f} %  ({int(total['flagged'])})")
    print(f"following a flag: {100 * total['following'] / turns:6.2f} %  ({int(total['following'])})")
    print(f"games with a wrong result: {int(total['results_wrong'])}")
    if not args.no_timing:
        print(describe_host())
        for key, name in (("seconds", "wall"), ("cpu", "CPU")):
            per_board = [1000 * r[key] / r["boards"] for r in rows if r["boards"]]
            print(f"solve time per board ({name}): median {statistics.median(per_board):.2f} ms, "
                  f"mean {1000 * total[key] / total['boards']:.2f} ms (jobs={args.jobs})")


if __name__ == "__main__":
    main()

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
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# A sibling script, not a package: its folder is on sys.path when it runs.
from machine import describe as describe_host

from digitise.notation.encode import encode_match
from digitise.notation.mat import read_mat
from digitise.notation.noise import (
    HEAVY,
    MEDIUM,
    NoiseProfile,
    noisy_readings,
)
from digitise.notation.readings import paginate
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
    found = compare(match, result.match, result.report)
    turns = [t for g in result.report["games"] for t in g["turns"]]
    return {
        "boards": len(marks), "seconds": elapsed, "cpu": cpu, "turns": found.turns, "right": found.right,
        "lines_right": found.lines_right,
        "wrong": found.wrong, "silent": found.silent, "results_wrong": found.results_wrong,
        "flagged": sum(1 for t in turns if t["flagged"]),
        "following": sum(1 for t in turns if t.get("follows") and not t["flagged"]),
        "roots": found.runs,
    }


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="Only the first N matches.")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="medium")
    parser.add_argument("--no-timing", action="store_true", help="Skip the timing figures (when --jobs > 1).")
    args = parser.parse_args()
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

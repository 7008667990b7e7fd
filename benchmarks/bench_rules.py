"""Benchmark of the rules engine: all legal plays for all 21 rolls of a middle-game position.

    taskset -c 0 .venv/bin/python benchmarks/bench_rules.py [--repeat 101] [--position ID] [--json out.json]

One repetition is ``legal_plays(position, roll)`` for each of the 21 rolls.
The default position is a real contact middle game: game 1, move 10 of
``bgstudio_Llabba_Kabrus_7pt_2023_08_03_08_26_12.mat`` (../shared/data/matches),
GNU Backgammon position ID ``jOfgAyDMncEgGA``, 145 v 143 pips, both sides with
back checkers, 892 distinct plays over the 21 rolls. The target is a median
of at most 10 ms on one core. Wall time and process CPU time are both
reported: on a shared machine the CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

# A sibling script, not a package: its folder is on sys.path when it runs.
from machine import describe as describe_host

from digitise.fileio import write_atomic
from digitise.game.position import Position
from digitise.game.rules import ALL_ROLLS, legal_plays

MIDDLE_GAME = "jOfgAyDMncEgGA"
TARGET_MS = 10.0


def all_rolls(position: Position) -> int:
    """Legal plays of every roll; returns how many there are in all."""
    return sum(len(legal_plays(position, roll)) for roll in ALL_ROLLS)


def measure(position: Position, repeat: int) -> dict[str, float]:
    plays = all_rolls(position)  # warm up (and the count to report)
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        all_rolls(position)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    ms = sorted(1000 * t for t in wall)
    return {
        "plays_all_rolls": plays,
        "repeat": repeat,
        "median_ms": statistics.median(ms),
        "min_ms": ms[0],
        "p90_ms": ms[int(0.9 * (len(ms) - 1))],
        "median_cpu_ms": statistics.median(1000 * t for t in cpu),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=101, help="repetitions (>= 50)")
    parser.add_argument("--position", default=MIDDLE_GAME, help="GNU Backgammon position ID")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    position = Position.from_position_id(args.position)
    result = measure(position, args.repeat)
    print(describe_host())
    print(f"position {position.position_id()}  {position!r}  pips {position.pip_count}")
    print(f"{result['plays_all_rolls']} legal plays over the 21 rolls, {result['repeat']} repetitions")
    print(
        f"all 21 rolls: median {result['median_ms']:.2f} ms (min {result['min_ms']:.2f}, "
        f"p90 {result['p90_ms']:.2f}; CPU median {result['median_cpu_ms']:.2f} ms); "
        f"target <= {TARGET_MS:.0f} ms: {'met' if result['median_ms'] <= TARGET_MS else 'NOT met'}"
    )
    if args.json:
        figures = {"position_id": position.position_id(), **result}
        write_atomic(args.json, json.dumps(figures, indent=2) + "\n", overwrite=True)


if __name__ == "__main__":
    main()

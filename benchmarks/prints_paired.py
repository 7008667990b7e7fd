"""Saved readings of a ``bench_prints.py --hand`` run solved again, pooled over the hands a print, with the
turns right paired against our own print (a4) by match.

    nice .venv/bin/python benchmarks/prints_paired.py /tmp/bph-held36 [--set [MODULE.]NAME=VALUE ...]

One line a print: matches, turns, turns right, silent (count), the report's own flags, and for the other
prints the turns right minus ours in points with a 95 % interval from 2,000 resamples of the matches.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

PRINTS = ("a4", "club-small", "club-large", "photocopy-club")
RESOLVE = Path(__file__).resolve().parent / "resolve.py"
#: (hand, readings file) -> (turns, right, silent, own flags)
Rows = dict[tuple[str, str], tuple[int, int, int, int]]


def solved_rows(level_dir: Path, hand: str, settings: Sequence[str]) -> Rows:
    """``resolve.py -v``'s row of every match of ``level_dir``."""
    command = [sys.executable, str(RESOLVE), "-v", "--jobs", "2", *(x for s in settings for x in ("--set", s)),
               str(level_dir)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rows: Rows = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 8 and fields[0].endswith(".readings.json"):
            turns, right, _lines, silent, own, _flagged, _results = map(int, fields[1:])
            rows[(hand, fields[0])] = (turns, right, silent, own)
    return rows


def right_minus(rows: Rows, ours: Rows, keys: Sequence[tuple[str, str]]) -> float:
    """Turns right of ``rows`` minus ours over ``keys``, in points."""
    def share(table: Rows) -> float:
        return sum(table[k][1] for k in keys) / max(1, sum(table[k][0] for k in keys))
    return 100.0 * (share(rows) - share(ours))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="a bench_prints.py --work folder (one folder a hand)")
    parser.add_argument("--set", action="append", default=[], metavar="[MODULE.]NAME=VALUE")
    args = parser.parse_args(argv)
    hands = sorted(p.name for p in args.root.iterdir() if p.is_dir())
    by_print: dict[str, Rows] = {}
    for name in PRINTS:
        rows: Rows = {}
        for hand in hands:
            level_dir = args.root / hand / f"{name}-medium"
            if level_dir.is_dir():
                rows.update(solved_rows(level_dir, hand, args.set))
        if rows:
            by_print[name] = rows
    ours = by_print.get("a4", {})
    rng = random.Random(0)
    for name, rows in by_print.items():
        turns = sum(v[0] for v in rows.values())
        right, silent, own = (sum(v[i] for v in rows.values()) for i in (1, 2, 3))
        line = (f"{name:15s} matches {len(rows)} turns {turns} right {100 * right / turns:.2f} % "
                f"silent {100 * silent / turns:.2f} % ({silent}) flagged {100 * own / turns:.2f} %")
        keys = sorted(set(rows) & set(ours))
        if name != "a4" and keys:
            boots = sorted(right_minus(rows, ours, [rng.choice(keys) for _ in keys]) for _ in range(2000))
            line += f" | minus ours {right_minus(rows, ours, keys):+.2f} ({boots[50]:+.2f} to {boots[1949]:+.2f})"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

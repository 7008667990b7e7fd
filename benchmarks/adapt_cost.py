"""What learning the recorder's hand costs: CPU seconds of ``scan`` with and without it, on one core.

Each match folder of a benchmark level (``bench_hands.py`` or ``bench_end_to_end.py``
pages) is scanned in this process, as ``digitise scan`` does it, once with
``--no-adapt`` and once adapting; the process is held to one core and its CPU
time (``time.process_time``, every thread of it) is counted around each scan.
The two orders alternate from match to match so a slower stretch of a shared
host weighs on both alike.

    .venv/bin/python benchmarks/adapt_cost.py /tmp/adev/optdigits/medium /tmp/adev/mnist/medium
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe
from digitise.pipeline import IMAGE_SUFFIXES, ScanOptions, scan


def scan_seconds(pages: Sequence[Path], adapt: bool) -> float:
    """CPU seconds of one scan of ``pages`` (outputs to a folder thrown away)."""
    with tempfile.TemporaryDirectory() as work:
        out = Path(work)
        options = replace(ScanOptions(), adapt=adapt)
        start = time.process_time()
        scan(pages, out / "match.mat", out / "match.json", options)
        return time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level_dirs", type=Path, nargs="+", metavar="level_dir",
                        help="a level folder of a benchmark run (its pages/ holds a folder a match)")
    parser.add_argument("--core", type=int, default=None, help="the core to hold the process to (default: the last)")
    args = parser.parse_args(argv)
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[-1] if args.core is None else args.core})
    print(describe())
    totals = {False: 0.0, True: 0.0}
    pages_in_all = 0
    for level_dir in args.level_dirs:
        level = {False: 0.0, True: 0.0}
        folders = sorted(p for p in (level_dir / "pages").iterdir() if p.is_dir() and not p.name.startswith("."))
        count = 0
        for i, folder in enumerate(folders):
            pages = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            count += len(pages)
            for adapt in ((False, True) if i % 2 == 0 else (True, False)):
                level[adapt] += scan_seconds(pages, adapt)
        print(f"{level_dir}: {len(folders)} matches, {count} pages: one pass {level[False]:.1f} s CPU "
              f"({level[False] / count:.3f} s a page), adapting {level[True]:.1f} s "
              f"(+{100 * (level[True] / level[False] - 1):.1f} %)")
        pages_in_all += count
        for adapt in totals:
            totals[adapt] += level[adapt]
    if len(args.level_dirs) > 1:
        print(f"all: {pages_in_all} pages: one pass {totals[False]:.1f} s CPU, adapting {totals[True]:.1f} s "
              f"(+{100 * (totals[True] / totals[False] - 1):.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

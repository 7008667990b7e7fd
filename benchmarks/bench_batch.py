"""``digitise batch`` on 2 cores against 1: the speed-up (target >= 1.8x).

A folder of self-played matches (seeds 9800 up, lengths cycling 1, 3, 5
points, held-out TEST glyphs, medium damage, 300 dpi PNG pages: see
``bench_end_to_end.py``) is converted by the real CLI, first with
``--jobs 1`` pinned to core 0 (``taskset -c 0``), then with ``--jobs 2`` on
cores 0-1. Wall time includes process start-up and the model loading in each
worker, as a user sees it. The CPU time of the child processes is reported
too: on a shared machine the wall-time ratio also measures the neighbours.

    .venv/bin/python benchmarks/bench_batch.py --matches 10
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# A sibling script, not a package: found through sys.path above.
from bench_end_to_end import adopt_orphans, reap_orphans, render, run_batch
from machine import describe as describe_host


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--seed-start", type=int, default=9800)
    parser.add_argument("--work", type=Path, default=Path("/tmp/digitise-bench-batch"))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each setting (the best is kept)")
    args = parser.parse_args(argv)
    folder = args.work / "pages"
    pages = render(list(range(args.matches)), args.seed_start, "medium", folder, 300, "png", os.cpu_count() or 1)
    total = sum(pages.values())
    print(f"{len(pages)} matches, {total} pages (300-dpi PNG, medium damage) in {folder}", file=sys.stderr)
    rows = []
    # The forkserver of --jobs 2 outlives the batch process: adopted and waited for, its workers' CPU counts.
    adopt_orphans()
    for jobs, cpus in ((1, "0"), (2, "0,1")):
        best: tuple[float, float] | None = None
        for _ in range(args.repeat):
            reap_orphans()
            cpu0 = children_cpu()
            seconds, code, stderr = run_batch(folder, args.work / f"out-{jobs}", jobs, cpus)
            reap_orphans()
            cpu = children_cpu() - cpu0
            if code not in (0, 1):
                print(f"batch --jobs {jobs}: exit {code}\n{stderr[-2000:]}", file=sys.stderr)
            if best is None or seconds < best[0]:
                best = (seconds, cpu)
        assert best is not None
        rows.append((jobs, cpus, best[0], best[1]))
    print(f"\n{describe_host()}")
    print("\n| run | pages | wall s | pages/s | CPU s (all processes) |\n|---|---|---|---|---|")
    for jobs, cpus, seconds, cpu in rows:
        print(f"| `taskset -c {cpus}` batch --jobs {jobs} | {total} | {seconds:.1f} | {total / seconds:.2f} | {cpu:.1f} |")
    speedup = rows[0][2] / rows[1][2]
    print(f"\nspeed-up, 2 jobs on 2 cores v 1 job on 1 core: {speedup:.2f}x (target >= 1.8x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How well a page missing from a pile is seen by its written page numbers (``digitise.solve.page_gaps``).

Works on the readings an end-to-end run kept (``bench_end_to_end.py``: one
``*.report.readings.json`` per match, its pages in order, each header's page
number as read with its confidence). For every match it counts the false
gaps in the pile as it is (every page present), then takes out one page at
a time, every page but the first and the last, and counts the gaps found
where the page was taken out: beside the pile's first or last page
("edge") and elsewhere.

    .venv/bin/python benchmarks/bench_end_to_end.py --matches 24 --skip-speed   # writes the readings
    .venv/bin/python benchmarks/bench_page_gaps.py /tmp/digitise-bench-e2e/medium/out /tmp/digitise-bench-e2e/heavy/out
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digitise.notation.readings import Readings, load_readings
from digitise.solve import page_gaps


def without(readings: Readings, k: int) -> Readings:
    """``readings`` with its ``k``-th page (from 0) taken out."""
    return Readings(readings.pages[:k] + readings.pages[k + 1:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="batch output folders holding *.report.readings.json")
    args = parser.parse_args(argv)
    print("| readings | matches | pages | false gaps | gaps found (inside) | gaps found (edge) |")
    print("|---|---|---|---|---|---|")
    for folder in args.folders:
        paths = sorted(folder.glob("*.report.readings.json"))
        pages = false = 0
        found = {"inside": 0, "edge": 0}
        made = {"inside": 0, "edge": 0}
        for path in paths:
            readings = load_readings(path)
            count = len(readings.pages)
            pages += count
            false += len(page_gaps(readings))
            for k in range(1, count - 1):
                where = "edge" if k in (1, count - 2) else "inside"
                made[where] += 1
                # The page after the gap is the k-th of the shorter pile: place k + 1 from 1.
                found[where] += (k + 1) in page_gaps(without(readings, k))
        print(f"| {folder} | {len(paths)} | {pages} | {false} | {found['inside']} of {made['inside']} "
              f"| {found['edge']} of {made['edge']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

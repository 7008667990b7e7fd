"""How the written page numbers catch a pile out of order, on readings a ``bench_end_to_end.py`` run saved.

Every saved pile is in order, so any pile taken for one out of order is a
false alarm; then, in each pile of three pages or more, two neighbouring
pages (chosen with a fixed seed) are swapped, and the swap is seen when the
solver flags a page for its place (``solve._page_sequence``), as a gap or as
the order broken.

    .venv/bin/python benchmarks/pile_order.py /tmp/e2e-norm/medium /tmp/e2e-norm/heavy ...
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from digitise.notation.readings import load_readings
from digitise.solve import _page_sequence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="bench_end_to_end.py output folders (with out/)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    piles = [load_readings(path) for folder in args.folders
             for path in sorted((folder / "out").glob("*.readings.json"))]
    alarms = sum(1 for pile in piles if _page_sequence(pile)[3])
    swapped = seen = 0
    for pile in piles:
        if len(pile.pages) < 3:
            continue
        k = rng.randrange(len(pile.pages) - 1)
        pages = list(pile.pages)
        pages[k], pages[k + 1] = pages[k + 1], pages[k]
        swapped += 1
        seen += bool(_page_sequence(replace(pile, pages=tuple(pages)))[3])
    print(f"{len(piles)} piles in order: {alarms} taken for out of order; "
          f"{swapped} with two neighbouring pages swapped: {seen} seen")


if __name__ == "__main__":
    main()

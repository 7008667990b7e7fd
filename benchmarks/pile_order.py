"""How the written page numbers catch a pile out of order, on readings a ``bench_end_to_end.py`` run saved.

Every saved pile is in order, so any pile taken for one out of order is a
false alarm; then, in each pile of three pages or more, two neighbouring
pages (chosen with a fixed seed) are swapped, and the swap is seen when the
solver flags a page for its place (``solve.page_order.page_sequence``), as a gap or as
the order broken. Last, into each such pile a page of another saved pile
(the seventh after it, a page chosen with the seed) is put at a random
place, and the page is seen when :func:`digitise.solve.extra_pages` names
it (its neighbours' numbers leave no room for it); a saved pile with such a
page is a false alarm.

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
from digitise.solve.page_order import extra_pages, page_sequence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="bench_end_to_end.py output folders (with out/)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    piles = [load_readings(path) for folder in args.folders
             for path in sorted((folder / "out").glob("*.readings.json"))]
    alarms = sum(1 for pile in piles if page_sequence(pile)[3])
    swapped = seen = 0
    for pile in piles:
        if len(pile.pages) < 3:
            continue
        k = rng.randrange(len(pile.pages) - 1)
        pages = list(pile.pages)
        pages[k], pages[k + 1] = pages[k + 1], pages[k]
        swapped += 1
        seen += bool(page_sequence(replace(pile, pages=tuple(pages)))[3])
    print(f"{len(piles)} piles in order: {alarms} taken for out of order; "
          f"{swapped} with two neighbouring pages swapped: {seen} seen")
    extra_alarms = sum(len(extra_pages(pile)) for pile in piles)
    put_in = found = 0
    for index, pile in enumerate(piles):
        if len(pile.pages) < 3:
            continue
        other = piles[(index + 7) % len(piles)]
        at = rng.randrange(1, len(pile.pages))
        pages = list(pile.pages)
        pages.insert(at, other.pages[rng.randrange(len(other.pages))])
        put_in += 1
        found += (at + 1) in extra_pages(replace(pile, pages=tuple(pages)))
    print(f"{len(piles)} piles as saved: {extra_alarms} pages taken for one too many; "
          f"{put_in} with a page of another pile put in: {found} found")


if __name__ == "__main__":
    main()

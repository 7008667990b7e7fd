"""What the reader takes each written digit for: one-digit point and off squares of saved benchmark sets.

For every point or off square in which the page's truth holds exactly one
digit, the reader's top reading (``WORK/LEVEL/out/*.report.readings.json``)
is set against it: per digit written, how many squares, how many read as
something else and as what; and for the squares whose top reading is a
lone "1" (the digit the silent errors of the benchmark are made of), how
often that reading is right by its confidence. Centre and result squares,
and squares of two or more digits, are left out (their order and count are
the solver's to weigh).

    .venv/bin/python benchmarks/confusions.py /tmp/e2e-9000/heavy /tmp/e2e-9100/heavy
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_end_to_end import board_truths, saved_boards

#: Width of the confidence bins of the "1" readings.
BIN = 0.05


def one_digit_squares(folder: Path) -> list[tuple[int, tuple[int, ...], float]]:
    """(digit written, top reading's digits sorted, its probability) for each one-digit square of ``folder``."""
    found: list[tuple[int, tuple[int, ...], float]] = []
    for mat in sorted((folder / "out").glob("*.mat")):
        read = saved_boards(folder / "out", mat.stem)
        for page, boards in board_truths(folder / "pages", mat.stem).items():
            for index, truth in boards.items():
                reading = read.get((page, index))
                if reading is None:
                    continue
                for name, written in truth["cells"].items():
                    if name == "centre" or name.endswith("res") or len(written) != 1:
                        continue
                    candidates = reading["cells"].get(name, [])
                    digits, probability = candidates[0] if candidates else ([], 1.0)
                    found.append((int(written[0]), tuple(sorted(digits)), float(probability)))
    return found


def main(argv: list[str] | None = None) -> int:
    """Print the confusions and the "1" readings' reliability over the folders given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="saved level folders (WORK/medium, WORK/heavy)")
    args = parser.parse_args(argv)
    squares = [s for folder in args.folders for s in one_digit_squares(folder)]
    if not squares:
        print("no saved readings with their truth in " + ", ".join(map(str, args.folders)), file=sys.stderr)
        return 1
    print("| written | squares | read otherwise | as (most often first) |")
    print("|---|---|---|---|")
    for digit in range(1, 7):
        mine = [got for written, got, _ in squares if written == digit]
        wrong = Counter("".join(map(str, got)) or "empty" for got in mine if got != (digit,))
        shown = ", ".join(f"{k} {n}" for k, n in sorted(wrong.items(), key=lambda kv: (-kv[1], kv[0])))
        print(f"| {digit} | {len(mine)} | {sum(wrong.values())} | {shown} |")
    print()
    print('| top reading a lone "1" at | squares | right |')
    print("|---|---|---|")
    bins: dict[int, list[int]] = {}
    for written, got, probability in squares:
        if got == (1,):
            tally = bins.setdefault(min(int(probability / BIN), int(1 / BIN) - 1), [0, 0])
            tally[0] += 1
            tally[1] += written == 1
    for b, (count, right) in sorted(bins.items()):
        print(f"| {b * BIN:.2f}-{(b + 1) * BIN:.2f} | {count} | {right} ({right / count:.0%}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

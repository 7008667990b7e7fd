"""The end-to-end benchmark on other prints of the note: found from their own lines, no markers.

Old records are on Kato notes of other prints (:mod:`digitise.sheet.prints`:
boards 15 % smaller and larger, other spacing and line weights, point
numbers and row labels beside the squares, the header elsewhere or missing,
no markers, one photocopied). This renders ``bench_end_to_end.py``'s
matches (same seeds, glyphs, damage and writers) on each print and on
digitise's own A4 note at the same damage, converts each with ``digitise
batch`` and compares the turns, as that benchmark does. The figures the
issue asks for: every page found, turns right within 0.5 points of our own
print at the same damage, silent errors at most 0.1 %.

    .venv/bin/python benchmarks/bench_prints.py --matches 4 --work /tmp/bench-prints

``--prints`` picks prints (``name:level`` each, comma-separated; ``a4`` is
our own note; ``club-four``, ``club-six`` and ``club-six-unequal`` are the
prints of four and six boards a page, :data:`~digitise.sheet.prints.FEW_BOARDS`). Every match is of ``--length`` points (3), given to the batch
with ``--length`` as a user of a print without a readable header gives it
(the other prints' headers are not read): the same matches on every print.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_end_to_end as e2e

#: Each print at its damage level; our own note at the same levels, for the comparison.
DEFAULT_PRINTS = "a4:medium,club-small:medium,club-large:medium,a4:photocopy,photocopy-club:photocopy"


def print_of(name: str) -> tuple[Any, Any]:
    """The template and other-print text of ``name`` (``a4``: digitise's own note)."""
    from digitise.notation.template import load_template
    from digitise.sheet.prints import FEW_BOARDS, PRINTS, mirrored

    if name in ("a4", "letter"):
        return load_template(name), None
    prints = {**PRINTS, **FEW_BOARDS}
    other = mirrored(prints[name.removesuffix("-mirrored")]) if name.endswith("-mirrored") else prints[name]
    return other.template(), other.extras()


def pages_found(out_dir: Path, pages: dict[str, int]) -> tuple[int, int]:
    """(pages read, pages given): a page refused, or a match failed whole, is a page not found."""
    read = 0
    for name, count in pages.items():
        report_path = out_dir / f"{name}.report.json"
        if report_path.exists():
            report = json.loads(report_path.read_text(encoding="utf-8"))
            read += count - len(report.get("page_errors", []))
    return read, sum(pages.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=4, help="matches per print")
    parser.add_argument("--prints", default=DEFAULT_PRINTS, help="name:level, comma-separated")
    parser.add_argument("--seed-start", type=int, default=e2e.SEED_START)
    parser.add_argument("--work", type=Path, default=Path("/tmp/digitise-bench-prints"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-gnubg", action="store_true")
    parser.add_argument("--length", type=int, default=3, help="every match's length, given to the batch")
    parser.add_argument("--batch-args", default="", metavar="ARGS", help="more options for every digitise batch")
    args = parser.parse_args(argv)
    extra = ["--length", str(args.length), *shlex.split(args.batch_args)]
    e2e.LENGTHS = (args.length,)  # read when each match is played, in the forked render workers too
    indices = list(range(args.matches))
    figures = []
    found_rows = []
    for entry in args.prints.split(","):
        name, level = entry.split(":")
        e2e.match_print = lambda name=name: print_of(name)  # the render's workers are forked: they inherit it
        folder = args.work / f"{name}-{level}"
        render_dir = folder / "pages"
        t0 = time.perf_counter()
        pages = e2e.render(indices, args.seed_start, level, render_dir, None, "jpg", args.jobs)
        print(f"{name} {level}: rendered {len(pages)} matches, {sum(pages.values())} pages in "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
        out_dir = folder / "out"
        seconds, code, _ = e2e.run_batch(render_dir, out_dir, args.jobs, None, extra)
        print(f"{name} {level}: batch exit {code} in {seconds:.0f} s", file=sys.stderr)
        result = e2e.analyse_level(f"{name} ({level})", render_dir, out_dir, seconds, pages, not args.no_gnubg)
        figures.append(result)
        found_rows.append((f"{name} ({level})", *pages_found(out_dir, pages)))
    e2e.print_accuracy(figures)
    print("\n| print | pages found |")
    print("|---|---|")
    for label, read, given in found_rows:
        print(f"| {label} | {read} of {given} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

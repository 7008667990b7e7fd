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

With ``--real``, what a missing page costs once found: every real match of
``../shared/data/matches`` encoded into its note's boards (read for certain,
each page's number read at 0.97), its middle page taken out, solved, and
compared with the match: whether the first turn after the gap is flagged,
whether a page was left out as another match's, and the turns wrong and
neither flagged nor resting on a flagged board (silent).

    .venv/bin/python benchmarks/bench_page_gaps.py --real --jobs 2
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


def one_real_match(path: Path) -> tuple[str, int, int, bool, int, int]:
    """(name, pages, turns, gap flagged, pages left out, silent turns) for ``path`` without its middle page."""
    from digitise.notation.encode import encode_match
    from digitise.notation.mat import read_mat
    from digitise.notation.readings import PageReading, certain_reading, paginate
    from digitise.solve import STRANGER_REASON, solve
    from digitise.solve.compare import compare

    match = read_mat(path).match
    boards = [certain_reading(k % 8 + 1, b.marks) for k, b in enumerate(encode_match(match))]
    pages = [PageReading(p.source, p.page, p.boards, {"page": {"value": str(p.page), "confidence": 0.97}})
             for p in paginate(boards, "synthetic").pages]
    lost = (len(pages) + 1) // 2
    pile = [p for p in pages if p.page != lost]
    result = solve(Readings(tuple(pile)), players=match.players, length=match.length)
    turns = [t for g in result.solved.games for t in g.turns]
    first = next((t for t in turns if t.page > lost and t.action in ("move", "double")), None)
    flagged = first is not None and any("a page missing?" in r.text for r in first.reasons)
    left_out = len({s.page for s in result.solved.skipped if any(r.text == STRANGER_REASON for r in s.reasons)})
    return path.name, len(pages), len(turns), flagged, left_out, compare(match, result.match, result.solved).silent


def real(jobs: int) -> int:
    """The ``--real`` measure (see the module's docstring)."""
    from concurrent.futures import ProcessPoolExecutor

    from tests.conftest import real_matches

    paths = [p for p in real_matches()]
    if not paths:
        print("no real matches in ../shared/data/matches", file=sys.stderr)
        return 2
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        rows = [row for row in pool.map(one_real_match, paths) if row[1] >= 3]
    print("| matches (middle page out) | turns solved | gap flagged | pages left out | silent turns |")
    print("|---|---|---|---|---|")
    print(f"| {len(rows)} | {sum(r[2] for r in rows)} | {sum(r[3] for r in rows)} of {len(rows)} "
          f"| {sum(r[4] for r in rows)} | {sum(r[5] for r in rows)} |")
    for row in rows:
        if not row[3] or row[4] or row[5]:
            print(f"  {row[0]}: {row[1]} pages, gap flagged {row[3]}, pages left out {row[4]}, silent {row[5]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, help="batch output folders holding *.report.readings.json")
    parser.add_argument("--real", action="store_true", help="solve the real matches with their middle page out")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.real:
        return real(args.jobs)
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

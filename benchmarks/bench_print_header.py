"""How many matches of other prints come out with the right players' names and match length, read from their header.

Takes the rendered matches ``bench_prints.py`` leaves in its work folder
(``WORK/[<hand>/]<print>-<level>/pages/<match>/`` with the truth in
``truth/<match>.mat``), converts the first ``--matches`` of each named print
with ``digitise batch`` as a user would, without ``--players`` or
``--length``, and compares the written .mat's names and length with the
truth's. Names are compared as written (case and spaces as the truth has
them); a match whose names came out as the Bottom and Top stand-ins counts
as not read. The pages whose header's page number was read as the page's
own number (from its file name) tell on how many pages the header was found.

    nice .venv/bin/python benchmarks/bench_print_header.py --work /tmp/bench-print-hands/usps \\
        --prints club-small-medium,photocopy-club-medium --matches 10 --out /tmp/bench-print-header
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_LENGTH = re.compile(r"^\s*(\d+) point match", re.MULTILINE)
_PLAYERS = re.compile(r"^\s*(\S.*?)\s*:\s*\d+\s{2,}(\S.*?)\s*:\s*\d+\s*$", re.MULTILINE)


def header_of(mat: str) -> tuple[tuple[str, str] | None, int | None]:
    """A .mat's first game's players (bottom, top) and its match length, as JellyFish writes them."""
    length = _LENGTH.search(mat)
    players = _PLAYERS.search(mat)
    return ((players.group(1), players.group(2)) if players else None, int(length.group(1)) if length else None)


def page_numbers(out: Path, matches: list[str]) -> tuple[int, int]:
    """(pages whose header's page number was read as the page's number, pages read) over ``matches``' readings: a
    page number read is a header found and read on that page."""
    right = pages = 0
    for match in matches:
        readings = out / f"{match}.report.readings.json"
        if not readings.exists():
            continue
        for page in json.loads(readings.read_text(encoding="utf-8"))["pages"]:
            number = re.search(r"(\d+)\.\w+$", page["source"])
            pages += 1
            right += number is not None and page["header"].get("page", {}).get("value") == str(int(number.group(1)))
    return right, pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="bench_prints.py's work folder (of one hand)")
    parser.add_argument("--prints", required=True, help="<print>-<level> folders, comma-separated")
    parser.add_argument("--matches", type=int, default=10, help="the first this many matches of each print")
    parser.add_argument("--out", type=Path, required=True, help="where the batches write")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--reuse", action="store_true", help="analyse the last batch's output again, do not rerun it")
    args = parser.parse_args(argv)
    print(f"{'print':<24} {'matches':>7} {'names right':>11} {'length right':>12} {'names not read':>14} "
          f"{'page numbers read right':>23} {'seconds':>7}")
    for name in args.prints.split(","):
        folder = args.work / name
        matches = sorted(p.name for p in (folder / "pages").iterdir() if p.is_dir() and not p.name.startswith("."))[:args.matches]
        given = args.out / name / "in"
        given.mkdir(parents=True, exist_ok=True)
        for match in matches:
            link = given / match
            if not link.exists():
                link.symlink_to((folder / "pages" / match).resolve())
        out = args.out / name / "out"
        start = time.perf_counter()
        done = subprocess.CompletedProcess([], 0) if args.reuse else subprocess.run([sys.executable, "-m", "digitise.cli", "batch", str(given), "-o", str(out), "--jobs",
                        str(args.jobs), "--force"], cwd=ROOT, capture_output=True, text=True, check=False,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        seconds = time.perf_counter() - start
        if done.returncode not in (0, 1):
            print(f"{name}: digitise batch exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        names = length = stand_ins = 0
        for match in matches:
            truth_players, truth_length = header_of((folder / "truth" / f"{match}.mat").read_text(encoding="utf-8"))
            written = out / f"{match}.mat"
            players, got_length = header_of(written.read_text(encoding="utf-8")) if written.exists() else (None, None)
            names += players is not None and players == truth_players
            length += got_length is not None and got_length == truth_length
            stand_ins += players == ("Bottom", "Top")
        right, pages = page_numbers(out, matches)
        print(f"{name:<24} {len(matches):>7} {names:>11} {length:>12} {stand_ins:>14} {f'{right} of {pages}':>23} "
              f"{seconds:>7.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

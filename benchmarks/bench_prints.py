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
our own note, added at every level named if missing; ``club-four``,
``club-six`` and ``club-six-unequal`` are the prints of four and six boards
a page, :data:`~digitise.sheet.prints.FEW_BOARDS`). Every match is of
``--length`` points (3), given to the batch with ``--length`` as a user of a
print without a readable header gives it (the other prints' headers are not
read): the same matches on every print.

``--hand usps,semeion,optdigits`` writes the matches instead in hands no
reader trained on, exactly as ``bench_hands.py`` does (its
:func:`~bench_hands.write_with`: one writer a match, drawn with the match's
seed, ``--per-digit`` exemplars of each digit): every print of a hand, our own
included, is written by the same writers with the same damage. Renders go to
``WORK/<hand>/<print>-<level>``. A table per hand and one pooled over the
hands give each print's pages found, turns right, flagged and silent with
their 95 % intervals over matches, and the difference in turns right to our
own print on the same matches (paired).

    nice .venv/bin/python benchmarks/bench_prints.py --hand usps,semeion,optdigits --matches 2 --jobs 1 \
        --prints a4:medium,club-small:medium,club-large:medium,photocopy-club:medium --no-gnubg --work /tmp/bench-print-hands
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
import bench_hands

from benchmarks.intervals import difference_interval, match_interval

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


def with_own_print(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``entries`` with our own note (``a4``) first at every damage level named, for the comparison."""
    levels = list(dict.fromkeys(level for _, level in entries))
    return [("a4", level) for level in levels if ("a4", level) not in entries] + entries


#: One print's run: (hand or None, print name, level, its figures, pages read, pages given).
Run = tuple[str | None, str, str, e2e.LevelFigures, int, int]


def _figure(parts: list[int], wholes: list[int]) -> str:
    """``"98.37 % (423; 97.10-99.40)"``: the figure, its count and its 95 % interval over matches."""
    low, high = match_interval(parts, wholes)
    return f"{100.0 * sum(parts) / sum(wholes):.2f} % ({sum(parts)}; {100.0 * low:.2f}-{100.0 * high:.2f})"


def _difference(parts: list[int], wholes: list[int], base_parts: list[int], base_wholes: list[int]) -> str:
    """``"-0.41 (-1.20 to +0.30)"``: the difference in percentage points and its paired 95 % interval."""
    low, high = difference_interval(parts, wholes, base_parts, base_wholes)
    diff = sum(parts) / sum(wholes) - sum(base_parts) / sum(base_wholes)
    return f"{100.0 * diff:+.2f} ({100.0 * low:+.2f} to {100.0 * high:+.2f})"


def print_table(title: str, runs: list[Run]) -> None:
    """Each print's figures with their intervals over matches, and turns and boards right against our own print's.

    ``runs`` may hold several hands: a match is then one hand's match, and is paired with our own print's
    same match in the same hand. Boards read right (the reader's top reading is what was written) do not
    carry one misread on to the rest of a game as turns do: the print's own cost, with less spread.
    """
    def counts(hand_runs: list[Run]) -> dict[tuple[str | None, str], e2e.MatchFigures]:
        return {(hand, name): got for hand, *_, f, _r, _g in hand_runs for name, got in f.by_match.items()}

    print(f"\n{title} (95 % intervals over matches; the differences paired by match):\n")
    print("| print (damage) | matches | pages found | turns | right, no human | flagged | silent "
          "| right, minus ours (points) | boards read right | boards, minus ours (points) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    keys = list(dict.fromkeys((name, level) for _, name, level, *_ in runs))
    for name, level in keys:
        mine = [r for r in runs if (r[1], r[2]) == (name, level)]
        got = counts(mine)
        ours = counts([r for r in runs if (r[1], r[2]) == ("a4", level)])
        paired = sorted(k for k in got if k in ours)
        if not paired:
            continue
        turns, right, flagged, silent, boards, boards_right = (
            [getattr(got[k], field) for k in paired]
            for field in ("turns", "right", "flagged", "silent", "boards", "boards_right"))
        our_turns, our_right, our_boards, our_boards_right = (
            [getattr(ours[k], field) for k in paired] for field in ("turns", "right", "boards", "boards_right"))
        ours_too = name != "a4" and sum(boards) > 0 and sum(our_boards) > 0
        diff = _difference(right, turns, our_right, our_turns) if name != "a4" else "-"
        board_diff = _difference(boards_right, boards, our_boards_right, our_boards) if ours_too else "-"
        read, given = sum(r[4] for r in mine), sum(r[5] for r in mine)
        print(f"| {name} ({level}) | {len(paired)} | {read} of {given} | {sum(turns)} | {_figure(right, turns)} "
              f"| {_figure(flagged, turns)} | {_figure(silent, turns)} | {diff} "
              f"| {_figure(boards_right, boards) if sum(boards) else '-'} | {board_diff} |")


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
    parser.add_argument("--hand", default="", help="unseen hands, comma-separated (bench_hands.py's: "
                        f"{', '.join(sorted(bench_hands.HANDS))}); none: the held-out MNIST glyphs for every match")
    parser.add_argument("--per-digit", type=int, default=bench_hands.PER_DIGIT, help="exemplars of each digit a writer has")
    parser.add_argument("--hands-dir", type=Path, default=bench_hands.HANDS_DIR, help="the hand sources")
    parser.add_argument("--reuse", action="store_true",
                        help="analyse a print's last batch output again where there is one, do not rerun it")
    args = parser.parse_args(argv)
    hands: list[str | None] = [h for h in args.hand.split(",") if h] or [None]
    for hand in hands:
        if hand is not None and hand not in bench_hands.HANDS:
            parser.error(f"--hand: {hand} is not one of {', '.join(sorted(bench_hands.HANDS))}")
        missing = None if hand is None else bench_hands.missing_files(hand, args.hands_dir)
        if missing is not None:
            parser.error(f"--hand: {missing}")
    extra = ["--length", str(args.length), *shlex.split(args.batch_args)]
    e2e.LENGTHS = (args.length,)  # read when each match is played, in the forked render workers too
    indices = list(range(args.matches))
    entries = with_own_print([(entry.split(":")[0], entry.split(":")[1]) for entry in args.prints.split(",")])
    figures = []
    runs: list[Run] = []
    for hand in hands:
        base = args.work
        if hand is not None:
            bench_hands.write_with(bench_hands.hand_source(hand, args.hands_dir), args.per_digit)
            base = args.work / (hand if args.per_digit == bench_hands.PER_DIGIT else f"{hand}-{args.per_digit}")
        for name, level in entries:
            label = f"{name} ({level})" if hand is None else f"{hand}: {name} ({level})"
            e2e.match_print = lambda name=name: print_of(name)  # the render's workers are forked: they inherit it
            folder = base / f"{name}-{level}"
            render_dir = folder / "pages"
            t0 = time.perf_counter()
            pages = e2e.render(indices, args.seed_start, level, render_dir, None, "jpg", args.jobs)
            print(f"{label}: rendered {len(pages)} matches, {sum(pages.values())} pages in "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
            out_dir = folder / "out"
            timing = folder / "batch-seconds.txt"
            if args.reuse and (out_dir / "summary.json").exists() and timing.exists():
                seconds, code = float(timing.read_text(encoding="utf-8")), -1
            else:
                seconds, code, _ = e2e.run_batch(render_dir, out_dir, args.jobs, None, extra)
                timing.write_text(f"{seconds:.3f}\n", encoding="utf-8")
            print(f"{label}: batch exit {code} in {seconds:.0f} s", file=sys.stderr)
            result = e2e.analyse_level(label, render_dir, out_dir, seconds, pages, not args.no_gnubg)
            figures.append(result)
            runs.append((hand, name, level, result, *pages_found(out_dir, pages)))
    e2e.print_accuracy(figures)
    for hand in hands:
        print_table(f"In the {hand} hand, one writer a match" if hand else "In MNIST's held-out glyphs",
                    [r for r in runs if r[0] == hand])
    if len(hands) > 1:
        print_table(f"Pooled over the hands ({', '.join(h for h in hands if h)})", runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

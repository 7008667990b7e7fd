"""The silent turns of ``bench_end_to_end.py``-style runs, each with what its board was read as and what was written.

Solves each match's saved readings again (as ``flags.py`` does) and, for every
turn that is wrong and neither flagged nor following a flagged board, prints
the board's cells as read (every candidate with its probability) against the
truth the renderer wrote, the turn's confidence and candidates, and whether it
is the first wrong turn of its run (its position before was right) or carried on.

    .venv/bin/python benchmarks/silent_turns.py /tmp/bph-medium36/*/club-large-medium
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_end_to_end as e2e

from benchmarks.resolve import apply_settings, solved_again
from digitise.solve import REVIEW_BELOW
from digitise.solve.compare import solved_turns_right


def describe_cells(cells: dict[str, list[list[object]]], truth: dict[str, list[int]]) -> list[str]:
    """One line a cell whose top reading differs from the truth or is below 0.99, with its candidates."""
    out = []
    for name in sorted(set(cells) | set(truth)):
        cands = cells.get(name, [])
        top = list(cands[0][0]) if cands else []  # type: ignore[call-overload]
        want = list(truth.get(name, []))
        wrong = (top != want) if name.endswith("res") else (sorted(top) != sorted(want))
        if wrong or (cands and float(cands[0][1]) < 0.99):  # type: ignore[arg-type]
            shown = ", ".join(f"{''.join(map(str, c))}:{float(p):.3f}" for c, p in cands[:4])  # type: ignore[call-overload, arg-type]
            out.append(f"      {'WRONG' if wrong else 'ok   '} {name:7s} written {''.join(map(str, want)) or '-':4s} read {shown}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level_dirs", type=Path, nargs="+")
    parser.add_argument("--review-below", type=float, default=REVIEW_BELOW)
    parser.add_argument("--set", action="append", default=[], metavar="[MODULE.]NAME=VALUE")
    parser.add_argument("--roots", action="store_true", help="only the first silent turn of each run")
    args = parser.parse_args(argv)
    apply_settings(args.set)
    total = silent_count = 0
    for level_dir in args.level_dirs:
        for readings_path in sorted((level_dir / "out").glob("*.report.readings.json")):
            name = readings_path.name.replace(".report.readings.json", "")
            truth_path = level_dir / "truth" / f"{name}.mat"
            truth, solved, report = solved_again(str(readings_path), str(truth_path), args.review_below, tuple(args.set))
            truths = e2e.board_truths(level_dir / "pages", name)
            read = e2e.saved_boards(level_dir / "out", name)
            previous_wrong = False
            for g, i, right in solved_turns_right(truth, solved):
                total += 1
                turn = report.games[g].turns[i]
                silent = not right and not turn.flagged and not turn.follows
                root = not previous_wrong
                previous_wrong = not right
                if not silent:
                    continue
                silent_count += 1
                if args.roots and not root:
                    continue
                if turn.page == 0:  # a turn aligned_report put in
                    print(f"{level_dir.parent.name}/{level_dir.name} {name}: a dance no board records")
                    continue
                key = (turn.page, turn.board)
                written = truths.get(key[0], {}).get(key[1])
                reading = read.get(key, {})
                actions, _ = e2e.board_record(written, truth)
                want = "; ".join(f"{a.roll} {a.play}" if a.play is not None else f"{a.kind.value} {a.roll}" for a in actions)
                print(f"{level_dir.parent.name}/{level_dir.name} {name} page {key[0]} board {key[1]} "
                      f"{'ROOT' if root else 'carried'}: solved {turn.dice} {turn.move!r} at {turn.confidence:.4f}, "
                      f"written {want!r}; reasons {[flag.text for flag in turn.reasons]}; misread {e2e.misread_kinds(reading, written) if written else '?'}")
                cands = "; ".join(f"{c.dice} {c.move!r} {c.probability:.4f} {list(c.reasons[:1])}" for c in turn.candidates[:3])
                print(f"      candidates: {cands}")
                print("\n".join(describe_cells(reading.get("cells", {}), written["cells"] if written else {})))
    print(f"\n{silent_count} silent of {total} turns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

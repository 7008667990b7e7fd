"""Where the flags go: the turns flagged for review by how sure and why, and how many were wrong.

Solves again the readings a ``bench_end_to_end.py`` run saved (as
``resolve.py`` does, with the same ``--set`` and ``--review-below``) and
sorts every turn flagged for review by its confidence band (below 0.9, from
0.9 up to the review bar, at or above it: flagged for another reason) and by
its reasons, counting those the solver got wrong. A band or reason whose
flags are seldom wrong is one a lower bar or a dropped rule could leave
unflagged, and its wrong ones are the silent errors that would cost. Then it
lists the silent turns (wrong, neither flagged nor following a flagged board).

    .venv/bin/python benchmarks/flags.py /tmp/e2e-9000/heavy /tmp/e2e-9100/heavy
    .venv/bin/python benchmarks/flags.py /tmp/e2e-real/medium /tmp/e2e-real/heavy --review-below 0.9
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.resolve import apply_settings, solved_again
from digitise.solve import REVIEW_BELOW
from digitise.solve.compare import solved_turns_right

#: Below this a flagged turn is in the lowest band, whatever the review bar.
LOW = 0.9
#: The reason given to a dance filled in for a board the solver found missing.
INSERTED_FOR_MISSING = "a dance filled in for a missing board"


@dataclass(frozen=True)
class Turn:
    """One solved turn as the report gives it, and whether the truth agrees."""

    level: str
    match: str
    #: None for a dance the .mat holds and no board records (then ``confidence`` is 1: the solver gave none).
    page: int | None
    board: int | None
    confidence: float
    flagged: bool
    follows: bool
    reasons: tuple[str, ...]
    right: bool
    move: str


def reason_kind(reason: str) -> str:
    """A report's reason without its particulars (numbers, what follows a colon)."""
    if "later turns rest on this board" in reason:
        return "later turns rest on it"
    return re.sub(r"\d+", "N", reason.split(":")[0]).strip()


def band(confidence: float, review_below: float) -> str:
    """The confidence band a flagged turn falls in."""
    if confidence < min(LOW, review_below):
        return f"< {min(LOW, review_below):g}"
    if confidence < review_below:
        return f"{LOW:g} - {review_below:g}"
    return f">= {review_below:g}"


def tally(turns: Iterable[Turn], review_below: float) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(level, band, reasons) -> (turns flagged, of them wrong)."""
    flagged: Counter[tuple[str, str, str]] = Counter()
    wrong: Counter[tuple[str, str, str]] = Counter()
    for turn in turns:
        if not turn.flagged:
            continue
        reasons = " + ".join(sorted({reason_kind(r) for r in turn.reasons})) or "(none)"
        key = (turn.level, band(turn.confidence, review_below), reasons)
        flagged[key] += 1
        wrong[key] += not turn.right
    order = sorted(flagged, key=lambda key: (key[0], _rank(key[1]), key[2]))
    return {key: (flagged[key], wrong[key]) for key in order}


def _rank(name: str) -> int:
    """Bands from least to most sure."""
    return 0 if name.startswith("<") else 2 if name.startswith(">=") else 1


def one(args: tuple[str, str, str, float, tuple[str, ...]]) -> list[Turn]:
    """Every solved turn of one match."""
    readings_path, truth_path, level, review_below, settings = args
    truth, solved, report = solved_again(readings_path, truth_path, review_below, settings)
    name = Path(readings_path).name.replace(".report.readings.json", "")
    return report_turns(level, name, solved_turns_right(truth, solved), report)


def report_turns(level: str, name: str, judged: Iterable[tuple[int, int, bool]], report: dict[str, Any]) -> list[Turn]:
    """The turns of an aligned ``report`` at ``judged``'s (game index, turn index, right)."""
    out = []
    for g, i, right in judged:
        turn = report["games"][g]["turns"][i]
        if turn.get("inserted"):
            # A dance the .mat holds and no board records (a closed-out player's, or one filled in for a
            # missing board, whose flag is the next board's): counted, as bench_end_to_end.py counts it.
            reasons = (INSERTED_FOR_MISSING,) if turn["flagged"] else ()
            out.append(Turn(level, name, None, None, 1.0, bool(turn["flagged"]), False, reasons, right, "(no board)"))
            continue
        out.append(Turn(level, name, turn["page"], turn["board"], float(turn["confidence"]), bool(turn["flagged"]),
                        bool(turn.get("follows")), tuple(turn["reasons"]), right, str(turn.get("move", ""))))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level_dirs", type=Path, nargs="+", metavar="level_dir",
                        help="a level folder of a bench_end_to_end.py run (out/, truth/); pooled by folder name")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--review-below", type=float, default=REVIEW_BELOW, help="flag turns less sure than this")
    parser.add_argument("--set", action="append", default=[], metavar="[MODULE.]NAME=VALUE",
                        help="set a constant of digitise.solve (as resolve.py does)")
    args = parser.parse_args(argv)
    apply_settings(args.set)
    jobs = []
    for level_dir in args.level_dirs:
        truth = level_dir / "truth"
        jobs += [(str(p), str(truth / p.name.replace(".report.readings.json", ".mat")), level_dir.name,
                  args.review_below, tuple(args.set))
                 for p in sorted((level_dir / "out").glob("*.report.readings.json"))]
    with ProcessPoolExecutor(args.jobs) as pool:
        turns = [turn for match in pool.map(one, jobs) for turn in match]
    totals = Counter(turn.level for turn in turns)
    print("| level | confidence | reasons | flagged | of them wrong | flagged, % of the level's turns |")
    print("|---|---|---|---|---|---|")
    for (level, where, reasons), (count, wrong) in tally(turns, args.review_below).items():
        print(f"| {level} | {where} | {reasons} | {count} | {wrong} | {100 * count / totals[level]:.2f} |")
    for level in sorted(totals):
        mine = [t for t in turns if t.level == level]
        flagged = sum(t.flagged for t in mine)
        silent = [t for t in mine if not t.right and not t.flagged and not t.follows]
        print(f"\n{level}: {len(mine)} turns, {flagged} flagged ({100 * flagged / len(mine):.2f} %), "
              f"{len(silent)} silent ({100 * len(silent) / len(mine):.3f} %)")
        for t in silent:
            if t.page is None:
                print(f"  silent: {t.match}: a dance no board records")
            else:
                print(f"  silent: {t.match} page {t.page} board {t.board} at {t.confidence:.4f}: {t.move!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

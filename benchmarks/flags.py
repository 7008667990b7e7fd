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
    .venv/bin/python benchmarks/flags.py /tmp/e2e-9000/heavy --by-kind   # and how sure against how often wrong

``--by-kind`` adds how often a turn whose position before was right is
wrong (a first error), by kind of turn (move, bear-off, dance, double, ...)
and confidence band: whether the solver's confidence says what it should.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.resolve import apply_settings, solved_again
from digitise.solve import REVIEW_BELOW
from digitise.solve.compare import solved_turns_right
from digitise.solve.report_types import Report
from tests.test_end_to_end import inserted

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
    #: The game's index in the match, and what the turn did ("move", "double", "take", "drop", ...).
    game: int = 0
    action: str = "move"


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


#: Where ``--by-kind`` cuts the confidence.
KIND_BANDS = (0.9, 0.95, 0.98, 0.995)


def turn_kind(turn: Turn) -> str:
    """A dance (a move of no step), a bear-off (a move with a step off), another move, or the action."""
    if turn.action != "move":
        return turn.action
    if not turn.move:
        return "dance"
    return "bear-off" if "/0" in turn.move or "off" in turn.move else "move"


def kind_band(confidence: float) -> str:
    """The ``--by-kind`` band of a confidence."""
    low = 0.0
    for edge in KIND_BANDS:
        if confidence < edge:
            return f"< {edge:g}" if low == 0.0 else f"{low:g} - {edge:g}"
        low = edge
    return f">= {low:g}"


def first_errors_by_kind(turns: Iterable[Turn]) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(level, kind, band) -> (turns, of them wrong), over turns whose position before was right.

    A turn after a wrong one in its game may be wrong only because its
    position was, whatever its own confidence: left out, so that what is
    counted is how often a turn the solver says it is this sure of starts
    an error. So are turns flagged for a reason besides low confidence, and
    dances no board records. ``turns`` in the order of their matches.
    """
    seen: Counter[tuple[str, str, str]] = Counter()
    wrong: Counter[tuple[str, str, str]] = Counter()
    last_right: dict[tuple[str, str, int], bool] = {}
    for turn in turns:
        game = (turn.level, turn.match, turn.game)
        fresh = last_right.get(game, True)
        last_right[game] = turn.right
        if not fresh or turn.page is None or any(r != "low confidence" for r in turn.reasons):
            continue
        key = (turn.level, turn_kind(turn), kind_band(turn.confidence))
        seen[key] += 1
        wrong[key] += not turn.right
    order = sorted(seen, key=lambda key: (key[0], key[1], KIND_BANDS.index(float(key[2].split()[-1]))
                                          if not key[2].startswith(">=") else len(KIND_BANDS)))
    return {key: (seen[key], wrong[key]) for key in order}


def _rank(name: str) -> int:
    """Bands from least to most sure."""
    return 0 if name.startswith("<") else 2 if name.startswith(">=") else 1


def one(args: tuple[str, str, str, float, tuple[str, ...]]) -> list[Turn]:
    """Every solved turn of one match."""
    readings_path, truth_path, level, review_below, settings = args
    truth, solved, report = solved_again(readings_path, truth_path, review_below, settings)
    name = Path(readings_path).name.replace(".report.readings.json", "")
    return report_turns(level, name, solved_turns_right(truth, solved), report)


def report_turns(level: str, name: str, judged: Iterable[tuple[int, int, bool]], report: Report) -> list[Turn]:
    """The turns of an aligned ``report`` at ``judged``'s (game index, turn index, right)."""
    out = []
    for g, i, right in judged:
        turn = report.games[g].turns[i]
        if inserted(turn):
            # A dance the .mat holds and no board records (a closed-out player's, or one filled in for a
            # missing board, whose flag is the next board's): counted, as bench_end_to_end.py counts it.
            reasons = (INSERTED_FOR_MISSING,) if turn.flagged else ()
            out.append(Turn(level, name, None, None, 1.0, turn.flagged, False, reasons, right, "(no board)", g))
            continue
        out.append(Turn(level, name, turn.page, turn.board, turn.confidence, turn.flagged, turn.follows is not None,
                        tuple(reason.text for reason in turn.reasons), right, turn.move, g, turn.action))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level_dirs", type=Path, nargs="+", metavar="level_dir",
                        help="a level folder of a bench_end_to_end.py run (out/, truth/); pooled by folder name")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--review-below", type=float, default=REVIEW_BELOW, help="flag turns less sure than this")
    parser.add_argument("--set", action="append", default=[], metavar="[MODULE.]NAME=VALUE",
                        help="set a constant of digitise.solve (as resolve.py does)")
    parser.add_argument("--by-kind", action="store_true",
                        help="also: how often a turn starts an error, by kind of turn and by how sure the solver was")
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
    if args.by_kind:
        print("\n| level | kind | confidence | turns (position before right) | of them wrong | wrong, % |")
        print("|---|---|---|---|---|---|")
        for (level, kind, where), (count, wrong) in first_errors_by_kind(turns).items():
            print(f"| {level} | {kind} | {where} | {count} | {wrong} | {100 * wrong / count:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Write legal_play_counts.txt with an engine independent of digitise's.

The counts come from ``legal_results`` in ``../shared/tools/gnubg_check``
(a separate, deliberately simple legal-move generator that tries every die
order and every checker, written apart from ``digitise.game.rules``). Nothing
from ``digitise`` is imported here: the position IDs are encoded by the small
function below, which follows GNU Backgammon's definition (and
position_ids.txt checks digitise's encoder against gnubg itself).

Run from the repository root::

    .venv/bin/python tests/game/data/make_legal_play_counts.py [path/to/gnubg_check]
"""

from __future__ import annotations

import base64
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
DEFAULT_TOOL = HERE.parents[2].parent / "shared" / "tools" / "gnubg_check"
ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]

Side = dict[int | str, int]

# Each position: a name, the checkers of the player on roll and of the opponent,
# each in that player's own point numbers (1..24, "bar"); the rest are borne off.
START: Side = {24: 2, 13: 5, 8: 3, 6: 5}
POSITIONS: list[tuple[str, Side, Side]] = [
    ("opening", START, START),
    # Entering from the bar against 1..5 made points of the opponent's home board.
    ("bar vs 1 point", {"bar": 1, 24: 1, 13: 5, 8: 3, 6: 5}, {6: 5, 8: 3, 13: 5, 24: 2}),
    ("bar vs 2 points", {"bar": 1, 24: 1, 13: 5, 8: 3, 6: 5}, {6: 4, 5: 2, 8: 2, 13: 5, 24: 2}),
    ("bar vs 3 points", {"bar": 1, 24: 1, 13: 5, 8: 3, 6: 5}, {6: 4, 5: 2, 4: 2, 13: 5, 24: 2}),
    ("bar vs 4 points", {"bar": 1, 13: 5, 8: 4, 6: 5}, {6: 3, 5: 2, 4: 2, 3: 2, 13: 4, 24: 2}),
    ("bar vs 5 points", {"bar": 1, 13: 5, 8: 4, 6: 5}, {6: 3, 5: 2, 4: 2, 3: 2, 2: 2, 13: 2, 24: 2}),
    ("two on the bar vs 3 points, blot to hit",
     {"bar": 2, 13: 5, 8: 3, 6: 5}, {6: 4, 4: 2, 2: 2, 22: 1, 13: 4, 8: 2}),
    ("bar vs closed board", {"bar": 1, 13: 5, 8: 4, 6: 5},
     {6: 3, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2, 24: 2}),
    # Races: bearing off.
    ("race, all home, evenly spread", {6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 5, 5: 5, 4: 5}),
    ("race, two checkers left low", {2: 1, 1: 1}, {6: 2, 5: 2}),
    ("race, gaps above (higher die from highest point)", {4: 3, 2: 2, 1: 1}, {6: 3, 3: 3}),
    ("race, one checker outside", {9: 1, 6: 4, 5: 4, 4: 3, 3: 2, 2: 1}, {6: 5, 5: 5, 4: 5}),
    ("race, heavy six point", {6: 9, 5: 1, 1: 2}, {6: 5, 4: 5, 2: 3}),
    ("race, one checker on the six point", {6: 1}, {1: 1}),
    # Bearing off against contact: the opponent holds points or a blot in my home.
    ("contact bear-off vs an anchor on my 2 point", {6: 4, 5: 4, 4: 3, 3: 2, 1: 2},
     {23: 2, 6: 5, 5: 4, 4: 4}),
    ("contact bear-off vs a blot on my 3 point", {6: 3, 5: 3, 4: 3, 2: 2, 1: 1},
     {22: 1, 6: 5, 5: 5, 4: 4}),
    ("contact bear-off vs a checker on the bar", {6: 4, 5: 3, 4: 3, 3: 2, 2: 1},
     {"bar": 1, 6: 5, 5: 5, 4: 4}),
    # Only one die can be played (which one depends on the roll).
    ("one checker trapped behind a prime", {24: 1, 6: 4, 5: 4, 4: 3, 3: 3},
     {18: 2, 17: 2, 16: 2, 15: 2, 14: 2, 12: 2, 6: 3}),
    ("last checker coming home past a block", {10: 1, 6: 4, 5: 4, 4: 3, 3: 3},
     {16: 3, 17: 3, 18: 3, 23: 3, 24: 3}),
    ("bar entry then stuck", {"bar": 1, 6: 5, 5: 5, 4: 4},
     {6: 2, 5: 2, 4: 2, 3: 2, 13: 2, 18: 2, 17: 3}),
    # Doublets blocked after a few steps.
    ("doubles blocked by a prime", {24: 2, 13: 5, 8: 3, 6: 5},
     {6: 2, 7: 2, 8: 2, 9: 2, 10: 2, 11: 2, 13: 3}),
    ("doubles blocked, two back checkers", {24: 2, 6: 5, 5: 4, 4: 4},
     {18: 2, 16: 2, 15: 2, 14: 2, 12: 2, 10: 2, 8: 3}),
    ("doubles stopped after two or three steps", {24: 1, 22: 1, 2: 7, 1: 6},
     {7: 3, 6: 3, 9: 2, 8: 2, 13: 5}),
    ("doubles stopped after one or two steps", {24: 1, 23: 1, 2: 7, 1: 6},
     {7: 2, 6: 3, 5: 2, 9: 2, 8: 2, 13: 4}),
    # Middle games from real matches (gnubg's position IDs of ../shared/data/matches).
    ("middle game: Kabrus 7pt game 1 move 10 (benchmark)",
     {3: 2, 5: 3, 6: 3, 8: 2, 13: 2, 18: 1, 23: 2}, {3: 2, 6: 4, 8: 3, 13: 5, 24: 1}),
    ("middle game: Daisy 13pt game 2 move 15",
     {5: 2, 6: 4, 7: 1, 8: 3, 11: 2, 13: 2, 24: 1}, {3: 2, 5: 2, 6: 3, 8: 4, 13: 2, 21: 2}),
    ("middle game: Lucky_Lux 13pt game 3 move 12",
     {2: 2, 3: 2, 5: 2, 6: 3, 7: 2, 13: 2, 23: 1, 24: 1}, {4: 3, 6: 3, 8: 2, 10: 2, 13: 3, 17: 2}),
    ("middle game: gorkipelin 7pt game 5 move 8",
     {1: 2, 3: 2, 6: 3, 8: 1, 13: 4, 18: 2, 24: 1}, {6: 5, 8: 3, 9: 2, 13: 4, 20: 1}),
    ("blitz: opponent on the bar, blots to hit", {6: 3, 5: 2, 4: 2, 8: 3, 13: 3, 10: 1, 3: 1},
     {"bar": 2, 24: 1, 23: 1, 13: 4, 8: 3, 6: 4}),
    ("many blots, hits everywhere", {24: 1, 20: 1, 17: 1, 13: 3, 11: 1, 9: 1, 8: 2, 6: 3, 4: 1, 2: 1},
     {24: 1, 22: 1, 20: 1, 18: 1, 15: 1, 13: 3, 11: 1, 7: 1, 6: 3, 4: 2}),
    ("holding game, late", {20: 2, 8: 2, 6: 4, 5: 3, 4: 2, 2: 2}, {18: 2, 11: 2, 6: 4, 4: 3, 3: 2, 2: 2}),
]


def load_tool(path: Path) -> ModuleType:
    """Import the gnubg_check script (it has no .py suffix) as a module."""
    loader = importlib.machinery.SourceFileLoader("gnubg_check", str(path))
    spec = importlib.util.spec_from_loader("gnubg_check", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def slots(side: Side) -> list[int]:
    """26 counts: off, points 1..24, bar."""
    board = [0] * 26
    for point, n in side.items():
        board[25 if point == "bar" else int(point)] += n
    board[0] = 15 - sum(board)
    assert board[0] >= 0, side
    return board


def position_id(mine: list[int], theirs: list[int]) -> str:
    """GNU Backgammon's position ID: opponent first, then the player on roll."""
    bits: list[int] = []
    for side in (theirs, mine):
        for point in range(1, 26):
            bits += [1] * side[point] + [0]
    key = bytearray(10)
    for i, bit in enumerate(bits):
        key[i // 8] |= bit << (i % 8)
    return base64.b64encode(bytes(key)).decode("ascii")[:14]


def main() -> None:
    tool = load_tool(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_TOOL)
    lines = [
        "# Legal-play counts (perft-style), from the independent generator of gnubg_check.",
        "# Made by make_legal_play_counts.py (see README.md); do not edit by hand.",
        "# Columns: GNU Backgammon position ID (player on roll is 'mine'), roll (high die",
        "# first), number of distinct legal plays counted by resulting position (both sides),",
        "# number of dice each play uses (0 = the roll cannot be played, 4 for a full doublet).",
        "# Each position's 21 lines follow a '# position: NAME' line.",
    ]
    for name, mine_spec, theirs_spec in POSITIONS:
        mine, theirs = slots(mine_spec), slots(theirs_spec)
        for p in range(1, 25):
            assert not (mine[p] and theirs[25 - p]), (name, p)
        pid = position_id(mine, theirs)
        lines.append(f"# position: {name}")
        for high, low in ROLLS:
            results, used = tool.legal_results(mine, theirs, high, low)
            count = 0 if used == 0 else len(results)
            lines.append(f"{pid} {high}{low} {count} {used}")
    (HERE / "legal_play_counts.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

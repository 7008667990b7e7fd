"""Perft-style check: legal-play counts of chosen positions, counted by an independent engine.

data/legal_play_counts.txt was made by data/make_legal_play_counts.py from the
legal-move generator of ../shared/tools/gnubg_check (see data/README.md).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from digitise.game.position import Position
from digitise.game.rules import ALL_ROLLS, Roll, legal_plays

COUNTS = Path(__file__).parent / "data" / "legal_play_counts.txt"


def load() -> dict[tuple[str, str], list[tuple[Roll, int, int]]]:
    """(position ID, name) -> [(roll, distinct plays, dice used)] in file order."""
    table: dict[tuple[str, str], list[tuple[Roll, int, int]]] = defaultdict(list)
    name = ""
    for line in COUNTS.read_text().splitlines():
        if line.startswith("# position: "):
            name = line.removeprefix("# position: ")
        if line.startswith("#") or not line.strip():
            continue
        pid, roll, count, used = line.split()
        table[(pid, name)].append((Roll(int(roll[0]), int(roll[1])), int(count), int(used)))
    return table


TABLE = load()


def test_the_file_covers_about_thirty_positions_with_all_21_rolls() -> None:
    assert len(TABLE) >= 30
    for rows in TABLE.values():
        assert sorted(roll for roll, _, _ in rows) == sorted(ALL_ROLLS)
    kinds = {used for rows in TABLE.values() for _, _, used in rows}
    assert kinds == {0, 1, 2, 3, 4}  # dances, one die, both, stopped doublets, full doublets


@pytest.mark.parametrize(("pid", "name"), sorted(TABLE), ids=[name for _, name in sorted(TABLE)])
def test_legal_play_counts_match_the_independent_engine(pid: str, name: str) -> None:
    position = Position.from_position_id(pid)
    got = []
    for roll, _, _ in TABLE[(pid, name)]:
        plays = legal_plays(position, roll)
        used = {len(p.steps) for p in plays} or {0}
        assert len(used) == 1, (roll, used)
        got.append((roll, len(plays), used.pop()))
    assert got == TABLE[(pid, name)]

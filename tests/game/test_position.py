"""Positions: validation, the mover's view, pip counts, text forms (GNU Backgammon position ID)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from digitise.game.position import BAR, OFF, Position
from digitise.game.rules import ALL_ROLLS, legal_plays
from tests.game.boards import START, position, side

DATA = Path(__file__).parent / "data"


def frozen_ids() -> list[tuple[str, Position]]:
    """(ID, position) pairs written by gnubg itself (data/make_position_ids.py)."""
    pairs = []
    for line in (DATA / "position_ids.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        pid, mine, theirs = line.split()
        pairs.append((pid, Position(tuple(map(int, mine.split(","))), tuple(map(int, theirs.split(","))))))
    return pairs


# --- Validation ------------------------------------------------------------------------------


def test_start_position() -> None:
    start = Position.initial()
    assert start.mine == start.theirs == side(START)
    assert start.pip_count == (167, 167)
    assert start.borne_off == (0, 0)


@pytest.mark.parametrize(
    "mine",
    [
        (0,) * 26,  # no checkers at all
        (0, 14) + (0,) * 24,  # 14
        (0, 16) + (0,) * 24,  # 16
        (15,) + (0,) * 24,  # 25 slots
        (-1, 16) + (0,) * 24,  # 15 in total, but a negative count
    ],
)
def test_position_rejects_anything_but_fifteen_checkers_on_26_slots(mine: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="15 checkers"):
        Position(mine, side(START))


def test_fourteen_checkers_are_rejected() -> None:
    fourteen = (0, 14) + (0,) * 24
    with pytest.raises(ValueError, match="mine"):
        Position(fourteen, side(START))
    with pytest.raises(ValueError, match="theirs"):
        Position(side(START), fourteen)


def test_both_sides_on_one_point_is_rejected() -> None:
    # My 6 point is their 19 point.
    with pytest.raises(ValueError, match="point 6"):
        position({6: 15}, {19: 1, 6: 14})


def test_positions_are_frozen_and_hashable() -> None:
    a, b = Position.initial(), Position(side(START), side(START))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    with pytest.raises(AttributeError):
        a.mine = side({6: 15})  # type: ignore[misc]


# --- The mover's view ------------------------------------------------------------------------


def test_swap_exchanges_the_sides_and_is_its_own_inverse() -> None:
    pos = position({BAR: 1, 6: 4, 8: 2}, {24: 2, 13: 5, 3: 3})
    assert pos.swap().mine == pos.theirs and pos.swap().theirs == pos.mine
    assert pos.swap().swap() == pos
    assert pos.swap().pip_count == pos.pip_count[::-1]
    assert pos.swap().borne_off == pos.borne_off[::-1]


def test_pip_count_counts_the_bar_as_25_and_off_as_nothing() -> None:
    pos = position({BAR: 1, 6: 4, 8: 2}, {24: 2, 13: 5, 3: 3})
    assert pos.pip_count == (25 + 24 + 16, 48 + 65 + 9)
    assert pos.borne_off == (8, 5)


def test_repr_shows_the_id_and_the_points() -> None:
    pos = position({BAR: 1, 6: 4, 8: 2}, {24: 2, 13: 5, 3: 3})
    text = repr(pos)
    assert text.startswith(f"Position({pos.position_id()} ")
    assert "mine=[6:4 8:2 bar:1 off:8]" in text
    assert "theirs=[3:3 13:5 24:2 off:5]" in text
    assert repr(Position.initial()) == (
        "Position(4HPwATDgc/ABMA mine=[6:5 8:3 13:5 24:2] theirs=[6:5 8:3 13:5 24:2])"
    )


# --- GNU Backgammon position ID --------------------------------------------------------------


def test_start_position_id() -> None:
    assert Position.initial().position_id() == "4HPwATDgc/ABMA"
    assert Position.from_position_id("4HPwATDgc/ABMA") == Position.initial()


def test_position_ids_match_gnubg() -> None:
    pairs = frozen_ids()
    assert len(pairs) >= 40
    assert any(p.mine[BAR] for _, p in pairs) and any(p.theirs[OFF] for _, p in pairs)
    for pid, pos in pairs:
        assert pos.position_id() == pid, pos
        assert Position.from_position_id(pid) == pos, pid


def test_position_id_lists_the_player_not_on_roll_first() -> None:
    # From gnubg: after the first player plays 24/13, the board it shows the second player is
    # 4HPwAyDgc/ABMA; the same checkers with the other player on roll read differently.
    moved = position(START, {24: 1, 13: 6, 8: 3, 6: 5})
    assert moved.position_id() == "4HPwAyDgc/ABMA"
    assert moved.swap().position_id() == "4HPwATDgc/ADIA"


@pytest.mark.parametrize("pid", ["", "4HPwATDgc/AB", "4HPwATDgc/ABMA!", "####ATDgc/ABMA", "//////////////"])
def test_from_position_id_rejects_bad_ids(pid: str) -> None:
    with pytest.raises(ValueError):
        Position.from_position_id(pid)


def _random_positions(count: int) -> list[Position]:
    """Deterministic positions reached by play (pseudo-random choices, no RNG state shared)."""
    out: list[Position] = []
    pos, k = Position.initial(), 0
    while len(out) < count:
        roll = ALL_ROLLS[(k * 7 + 3) % 21]
        plays = legal_plays(pos, roll)
        pos = (plays[(k * 13) % len(plays)].result if plays else pos).swap()
        k += 1
        if pos.mine[OFF] == 15 or pos.theirs[OFF] == 15 or k % 50 == 0:
            pos = Position.initial()
        out.append(pos)
    return out


_GNUBG_DECODE = r"""
import json, os, gnubg
ids = json.loads(os.environ["IDS"])
out = [[list(side) for side in gnubg.positionfromid(pid)] for pid in ids]
with open(os.environ["OUT"], "w") as fh:
    json.dump(out, fh)
"""


def _count_file_positions() -> list[Position]:
    """The positions of data/legal_play_counts.txt, decoded by digitise."""
    ids = sorted({line.split()[0] for line in (DATA / "legal_play_counts.txt").read_text().splitlines()
                  if line.strip() and not line.startswith("#")})
    return [Position.from_position_id(pid) for pid in ids]


@pytest.mark.gnubg
def test_position_ids_decode_in_live_gnubg(gnubg: str) -> None:
    positions = _random_positions(120) + _count_file_positions()
    with tempfile.TemporaryDirectory() as tmp:
        script, out = Path(tmp) / "decode.py", Path(tmp) / "out.json"
        script.write_text(_GNUBG_DECODE)
        env = dict(os.environ, IDS=json.dumps([p.position_id() for p in positions]), OUT=str(out),
                   HOME=tmp, LC_ALL="C")
        subprocess.run([gnubg, "-t", "-q", "-r", "-p", str(script)], env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=120, check=False)
        boards = json.loads(out.read_text())
    assert len(boards) == len(positions)
    for pos, (theirs, mine) in zip(positions, boards, strict=True):
        # gnubg: (player not on roll, player on roll), 25 slots each: points 1..24 then the bar.
        assert tuple(mine) == pos.mine[1:], pos
        assert tuple(theirs) == pos.theirs[1:], pos

"""Write position_ids.txt: GNU Backgammon position IDs and the boards gnubg says they hold.

Runs inside GNU Backgammon's embedded Python, so every pair is gnubg's own truth::

    cd /work/main   # the repository root
    HOME=/root /usr/games/gnubg -t -q -r -p tests/game/data/make_position_ids.py </dev/null

Boards are drawn with a seeded RNG (deterministic output), asymmetric on
purpose (checkers on the bar, borne off, one side far ahead); gnubg encodes
each with ``gnubg.positionid`` and decodes the ID again with
``gnubg.positionfromid``, and the two must agree.
"""

import os
import random

import gnubg  # only inside gnubg

# gnubg -p defines no __file__: run from the repository root.
OUT = os.environ.get("POSITION_IDS_OUT", "tests/game/data/position_ids.txt")


def random_side(rng, taken, bar_bias, off_bias):
    """15 checkers of one side as gnubg's 25 slots (points 1..24, bar), avoiding ``taken`` points."""
    side = [0] * 25
    free = [i for i in range(24) if i not in taken]
    placed = 0
    while placed < 15:
        r = rng.random()
        if r < off_bias:
            placed += 1  # borne off: not on the board
            continue
        if r < off_bias + bar_bias:
            side[24] += 1
        else:
            side[rng.choice(free[: rng.randint(1, len(free))])] += 1
        placed += 1
    return side


def main():
    rng = random.Random(20261122)
    start = (0, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0)
    boards: list[tuple[tuple[int, ...], tuple[int, ...]]] = [(start, start)]
    # One side unchanged, the other after 24/13: tells which side comes first in the key.
    moved = list(start)
    moved[23], moved[12] = 1, 6
    boards.append((tuple(moved), start))
    boards.append((start, tuple(moved)))
    for k in range(40):
        bar_bias = (0.0, 0.05, 0.3)[k % 3]
        off_bias = (0.0, 0.2, 0.6)[(k // 3) % 3]
        on_roll = random_side(rng, set(), bar_bias, off_bias)
        # The opponent's point i is the roller's point 23 - i (0-based).
        taken = {23 - i for i in range(24) if on_roll[i]}
        other = random_side(rng, taken, (0.3, 0.0)[k % 2], (0.0, 0.4)[k % 2])
        boards.append((tuple(other), tuple(on_roll)))
    boards.append(((0,) * 24 + (15,), (0,) * 24 + (15,)))  # everyone on the bar
    boards.append(((0,) * 25, (1,) + (0,) * 24))  # opponent all off, one checker left on my 1 point
    lines = [
        "# GNU Backgammon position IDs and their boards, from gnubg 1.07 itself.",
        "# Made by make_position_ids.py (see README.md); do not edit by hand.",
        "# Columns: ID, then the player on roll (mine), then the opponent (theirs),",
        "# each as 26 counts: off, points 1..24 (that player's own numbering), bar.",
    ]
    for theirs, mine in boards:
        pid = gnubg.positionid((theirs, mine))
        back = gnubg.positionfromid(pid)
        assert tuple(back[0]) == tuple(theirs) and tuple(back[1]) == tuple(mine), (pid, back)

        def ours(side):
            return [15 - sum(side)] + list(side)

        lines.append(f"{pid}  {','.join(map(str, ours(mine)))}  {','.join(map(str, ours(theirs)))}")
    with open(OUT, "w") as fh:
        fh.write("\n".join(lines) + "\n")


main()

"""Property tests of legal_plays on random reachable positions and random bear-offs.

The invariants, checked for every play of every drawn (position, roll):

* both sides still hold exactly 15 checkers on 26 slots, never on one point together;
* the steps replay one by one from the position, each a legal single step as
  checked here independently (bar first, no landing on 2+, bear-off only with
  all home), to exactly the play's result;
* each step moves ``source - destination == die`` pips, except a bear-off with a
  higher die, which is allowed only from the highest occupied point and moves
  ``source < die`` pips; so the mover's pip count drops by exactly
  ``sum(source - destination)`` over the steps, which is the sum of the dice used
  unless such a bear-off happened; the opponent's grows by the destination of
  each hit (their checker on my point ``d`` is on their ``25 - d``, now 25);
* every play uses the same number of dice, none can be extended by a die left
  over, and a single die played is the higher one unless the higher cannot move;
* results are distinct; no play at all exactly when no die can move.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from digitise.game.position import BAR, CHECKERS, OFF, Position
from digitise.game.rules import ALL_ROLLS, Play, Roll, legal_plays, play_from_moves

Side = list[int]


def step_destination(me: Side, opp: Side, source: int, die: int) -> int | None:
    """Where one checker from ``source`` goes with ``die``, or None if that step is illegal."""
    if me[source] == 0 or (me[BAR] and source != BAR):
        return None
    dest = source - die
    if dest >= 1:
        return dest if opp[25 - dest] < 2 else None
    if any(me[7:26]):
        return None  # bearing off needs all 15 home
    if dest < 0 and any(me[source + 1:7]):
        return None  # a higher die only from the highest occupied point
    return OFF


def can_move(me: Side, opp: Side, die: int) -> bool:
    return any(step_destination(me, opp, p, die) is not None for p in range(1, 26))


def pips(side: Side | tuple[int, ...]) -> int:
    return sum(p * n for p, n in enumerate(side))


def check_plays(position: Position, roll: Roll) -> None:
    plays = legal_plays(position, roll)
    me0, opp0 = list(position.mine), list(position.theirs)
    dice = roll.dice
    if not plays:
        assert not any(can_move(me0, opp0, d) for d in set(dice)), (position, roll)
        return
    assert len({(p.result.mine, p.result.theirs) for p in plays}) == len(plays), "duplicate results"
    lengths = {len(p.steps) for p in plays}
    assert len(lengths) == 1, lengths
    for i, play in enumerate(plays):
        check_play(position, roll, play)
        if i < 3:  # the round trip through play_from_moves costs a legal_plays each
            again = play_from_moves(position, roll, [(s.source, s.destination) for s in play.steps])
            assert again is not None and again.result == play.result
        if len(play.steps) == 1 and not roll.is_double and play.steps[0].die == roll.low:
            assert not can_move(me0, opp0, roll.high), f"{play} plays the lower die"


def check_play(position: Position, roll: Roll, play: Play) -> None:
    me, opp = list(position.mine), list(position.theirs)
    pips_moved, hit_pips = 0, 0
    for step in play.steps:
        dest = step_destination(me, opp, step.source, step.die)
        assert dest == step.destination, f"{position!r} {roll}: illegal step {step} in {play}"
        moved = step.source - step.destination
        if step.destination == OFF and moved < step.die:
            assert not any(me[step.source + 1:26]), "higher die bore off below the highest point"
        else:
            assert moved == step.die
        pips_moved += moved
        me[step.source] -= 1
        me[step.destination] += 1
        hit = step.destination != OFF and opp[25 - step.destination] == 1
        assert step.hit == hit
        if hit:
            opp[25 - step.destination] = 0
            opp[BAR] += 1
            hit_pips += step.destination
    assert (tuple(me), tuple(opp)) == (play.result.mine, play.result.theirs)
    # The result is a valid position (legal_plays builds it without validation).
    Position(play.result.mine, play.result.theirs)
    assert sum(play.result.mine) == sum(play.result.theirs) == CHECKERS
    assert pips(position.mine) - pips(play.result.mine) == pips_moved
    assert pips(play.result.theirs) - pips(position.theirs) == hit_pips
    if all(s.source - s.destination == s.die for s in play.steps):
        assert pips_moved == sum(play.dice_used)
    # Dice used are a sub-multiset of the roll, and no die left over could still move
    # (unless the game is over: all 15 are off).
    left = Counter(roll.dice) - Counter(play.dice_used)
    assert sum(left.values()) == len(roll.dice) - len(play.steps)
    if me[OFF] < CHECKERS:
        for die in left:
            assert not can_move(me, opp, die), f"{play} leaves a playable {die}"


@st.composite
def reachable_positions(draw: st.DrawFn) -> Position:
    """A position reached from the start by random legal plays (the mover alternates)."""
    choices = draw(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 10_000)), max_size=70))
    pos = Position.initial()
    for roll_index, play_index in choices:
        plays = legal_plays(pos, ALL_ROLLS[roll_index])
        nxt = plays[play_index % len(plays)].result if plays else pos
        if nxt.mine[OFF] == CHECKERS:
            break
        pos = nxt.swap()
    return pos


@st.composite
def bear_off_positions(draw: st.DrawFn) -> Position:
    """My checkers home (some off) but for up to two stragglers; the opponent past or in contact."""
    mine = [0] * 26
    for point in draw(st.lists(st.integers(1, 6), min_size=1, max_size=13)):
        mine[point] += 1
    for point in draw(st.lists(st.integers(7, 12), max_size=2)):
        mine[point] += 1
    mine[OFF] = CHECKERS - sum(mine)
    theirs = [0] * 26
    # Their point q is my 25 - q: contact only where I have no checker.
    free = [q for q in range(1, 25) if not mine[25 - q]] + [BAR]
    for point in draw(st.lists(st.sampled_from(free), min_size=15, max_size=15)):
        theirs[point] += 1
    return Position(tuple(mine), tuple(theirs))


@st.composite
def blocked_positions(draw: st.DrawFn) -> Position:
    """A few free checkers of mine among many made opposing points: often only one die plays.

    The rest of my checkers sit on my 1 and 2 points, where they can hardly move
    (only 2/1 with a 1) until everything is home.
    """
    mine = [0] * 26
    for point in draw(st.lists(st.integers(7, 25), min_size=1, max_size=3)):
        mine[point] += 1
    low = draw(st.integers(0, CHECKERS - sum(mine)))
    mine[1], mine[2] = low, CHECKERS - sum(mine) - low
    theirs = [0] * 26
    free = [q for q in range(1, 25) if not mine[25 - q]]
    for point in draw(st.lists(st.sampled_from(free), min_size=7, max_size=7, unique=True)):
        theirs[point] = 2
    theirs[draw(st.sampled_from(free))] += 1
    return Position(tuple(mine), tuple(theirs))


@settings(max_examples=150, deadline=None)
@given(reachable_positions(), st.sampled_from(ALL_ROLLS))
def test_invariants_on_reachable_positions(position: Position, roll: Roll) -> None:
    check_plays(position, roll)


@settings(max_examples=150, deadline=None)
@given(bear_off_positions(), st.sampled_from(ALL_ROLLS))
def test_invariants_on_bear_offs(position: Position, roll: Roll) -> None:
    check_plays(position, roll)


@settings(max_examples=150, deadline=None)
@given(blocked_positions(), st.sampled_from(ALL_ROLLS))
def test_invariants_on_blocked_positions(position: Position, roll: Roll) -> None:
    check_plays(position, roll)


@settings(max_examples=15, deadline=None)
@given(reachable_positions())
def test_invariants_for_all_rolls_and_the_opponent(position: Position) -> None:
    for pos in (position, position.swap()):
        for roll in ALL_ROLLS:
            check_plays(pos, roll)

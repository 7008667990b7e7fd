"""The rules of backgammon: rolls, steps, plays and which plays are legal."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from digitise.game.position import BAR, CHECKERS, OFF, Position


@dataclass(frozen=True, slots=True, order=True)
class Roll:
    """Two dice, kept high die first (the order on the table does not matter)."""

    high: int
    low: int

    def __post_init__(self) -> None:
        if not (1 <= self.low <= 6 and 1 <= self.high <= 6):
            raise ValueError(f"dice must be 1-6, got {self.high} and {self.low}")
        if self.low > self.high:
            hi, lo = self.low, self.high
            object.__setattr__(self, "high", hi)
            object.__setattr__(self, "low", lo)

    @property
    def is_double(self) -> bool:
        """True for a doublet, which is played four times."""
        return self.high == self.low

    @property
    def dice(self) -> tuple[int, ...]:
        """The dice to play: two, or four for a doublet."""
        return (self.high,) * 4 if self.is_double else (self.high, self.low)

    def __str__(self) -> str:
        return f"{self.high}{self.low}"


ALL_ROLLS: tuple[Roll, ...] = tuple(Roll(a, b) for a in range(1, 7) for b in range(1, a + 1))


@dataclass(frozen=True, slots=True)
class Step:
    """One checker moved by one die, in the mover's point numbers (25 bar, 0 off)."""

    source: int
    destination: int
    die: int
    hit: bool = False

    def __str__(self) -> str:
        return f"{self.source}/{self.destination}{'*' if self.hit else ''}"


@dataclass(frozen=True, slots=True)
class Play:
    """The steps of one turn and the position they lead to (mover still on roll)."""

    steps: tuple[Step, ...]
    result: Position = field(compare=False)

    @property
    def dice_used(self) -> tuple[int, ...]:
        """The dice this play uses, in step order."""
        return tuple(s.die for s in self.steps)

    def __str__(self) -> str:
        """GNU Backgammon's layout: one step per die, highest source first.

        As gnubg does, the ``*`` goes on the first step written that lands on
        a point where a blot was hit, whichever checker actually got there first
        (``8/5* 6/5``).
        """
        hit_points = {s.destination for s in self.steps if s.hit}
        words = []
        for s in sorted(self.steps, key=lambda s: (-s.source, -s.destination)):
            hit = s.destination in hit_points
            hit_points.discard(s.destination)
            words.append(f"{s.source}/{s.destination}{'*' if hit else ''}")
        return " ".join(words)


class GameValue(enum.IntEnum):
    """How many times the cube a finished game is worth."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


#: One step while searching: (source, destination, die, hit). Plain tuples are
#: several times cheaper to build than :class:`Step`, which is made only for
#: the plays kept.
_RawStep = tuple[int, int, int, bool]


def _single_steps(me: list[int], opp: list[int], die: int, ceiling: int = BAR) -> list[int]:
    """Source points up to ``ceiling`` from which ``die`` can legally be played, highest first."""
    if me[BAR]:
        return [BAR] if opp[die] < 2 else []
    sources = []
    # Bearing off is allowed once no checker is outside the home board (1..6).
    all_home = sum(me[7:25]) == 0
    for p in range(min(ceiling, 24), die, -1):
        if me[p] and opp[25 - p + die] < 2:
            sources.append(p)
    if all_home:
        if me[die]:
            if die <= ceiling:
                sources.append(die)
        elif not any(me[die + 1:7]):
            # A higher die bears off from the highest occupied point only.
            for p in range(die - 1, 0, -1):
                if me[p]:
                    if p <= ceiling:
                        sources.append(p)
                    break
    return sources


def _apply(me: list[int], opp: list[int], source: int, die: int) -> tuple[list[int], list[int], _RawStep]:
    """The sides after one checker moves from ``source`` by ``die``, and the step taken."""
    me2 = me.copy()
    dest = source - die if source > die else OFF
    me2[source] -= 1
    me2[dest] += 1
    if dest and opp[25 - dest] == 1:
        opp = opp.copy()
        opp[25 - dest] = 0
        opp[BAR] += 1
        return me2, opp, (source, dest, die, True)
    return me2, opp, (source, dest, die, False)


def legal_plays(position: Position, roll: Roll) -> tuple[Play, ...]:
    """Every legal play of ``roll``, one per distinct resulting position.

    The rules: enter from the bar first; never land on two or more opposing
    checkers; doublets give four steps; as many dice as possible must be
    played, and when only one die of two can be played, the higher one if
    it can be. Bearing off needs all checkers home and an exact die, or a
    higher die from the highest occupied point. An empty tuple means the
    roll cannot be played at all (a dance); otherwise every play uses the
    same number of dice.
    """
    me, opp = list(position.mine), list(position.theirs)
    # Resulting position (both sides) -> the first step sequence that reached it.
    found: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[_RawStep, ...]] = {}
    best = 0

    def record(m: list[int], o: list[int], steps: tuple[_RawStep, ...]) -> None:
        nonlocal best
        if len(steps) < best:
            return
        if len(steps) > best:
            best = len(steps)
            found.clear()
        found.setdefault((tuple(m), tuple(o)), steps)

    if roll.is_double:
        die = roll.high

        def walk(m: list[int], o: list[int], steps: tuple[_RawStep, ...], ceiling: int) -> None:
            # Steps of a doublet are taken highest source first: every set of
            # steps can be ordered so, and it avoids exploring permutations.
            moved = False
            if len(steps) < 4:
                for source in _single_steps(m, o, die, ceiling):
                    m2, o2, step = _apply(m, o, source, die)
                    walk(m2, o2, steps + (step,), source)
                    moved = True
            if not moved:
                record(m, o, steps)

        walk(me, opp, (), BAR)
    else:
        for first, second in ((roll.high, roll.low), (roll.low, roll.high)):
            for source in _single_steps(me, opp, first):
                m1, o1, step1 = _apply(me, opp, source, first)
                seconds = _single_steps(m1, o1, second)
                if not seconds:
                    record(m1, o1, (step1,))
                for source2 in seconds:
                    m2, o2, step2 = _apply(m1, o1, source2, second)
                    record(m2, o2, (step1, step2))
        # Only one die can be played: it must be the higher when possible.
        if best == 1 and any(steps[0][2] == roll.high for steps in found.values()):
            for key in [k for k, s in found.items() if s[0][2] != roll.high]:
                del found[key]
    if best == 0:
        return ()
    return tuple(
        Play(tuple([_step(raw) for raw in steps]), Position._unchecked(m, o))
        for (m, o), steps in found.items()
    )


#: Steps are immutable and there are only a few thousand distinct ones, so
#: plays share them instead of building new ones (a third of the run time).
_STEPS: dict[_RawStep, Step] = {}


def _step(raw: _RawStep) -> Step:
    """The shared :class:`Step` for ``raw``."""
    step = _STEPS.get(raw)
    if step is None:
        step = _STEPS[raw] = Step(*raw)
    return step


def is_closed_out(position: Position) -> bool:
    """True when the player on roll is on the bar and every entry point is made."""
    # My entry point 25 - d is the opponent's point d: their home board, 1..6.
    return position.mine[BAR] > 0 and all(position.theirs[p] >= 2 for p in range(1, 7))


def game_value(position: Position) -> GameValue | None:
    """The value of a finished game for the player who bore off all checkers.

    ``position`` is seen by the winner (``mine`` all off); ``None`` when the
    player on roll has not borne off all 15.
    """
    if position.mine[OFF] != CHECKERS:
        return None
    loser = position.theirs
    if loser[OFF]:
        return GameValue.SINGLE
    # The loser's checkers in the winner's home board are on the loser's 19..24.
    if loser[BAR] or any(loser[p] for p in range(19, 25)):
        return GameValue.BACKGAMMON
    return GameValue.GAMMON


def net_checkers(mine: tuple[int, ...], moves: Sequence[tuple[int, int]]) -> tuple[int, ...] | None:
    """The mover's checkers after ``moves`` (source, destination pairs) in any order; None if impossible.

    Any order, because writers differ (``18/14 24/18`` for ``24/18/14``):
    only the checkers at the end must all exist.
    """
    after = list(mine)
    for source, dest in moves:
        if not 0 <= dest < source <= BAR:
            return None
        after[source] -= 1
        after[dest] += 1
    return tuple(after) if min(after) >= 0 else None


def play_from_moves(position: Position, roll: Roll, moves: Sequence[tuple[int, int]],
                    hits: Collection[int] | None = None, legal: Sequence[Play] | None = None) -> Play | None:
    """The legal play whose checker movements are ``moves`` (source, destination pairs), or None.

    Moves may be compressed (``24/14`` for two steps of one checker) and in
    any order: a play is identified by the position it leads to, so the net
    movements suffice. Two plays can move my checkers alike but hit
    differently (``6/5* 5/3`` and ``6/4 4/3``); then the play whose single
    steps are exactly ``moves``, and whose hits are ``hits`` (the points
    written with ``*``, when given), wins. ``legal`` saves working out the
    legal plays again.
    """
    target = net_checkers(position.mine, moves)
    if target is None:
        return None
    plays = legal if legal is not None else legal_plays(position, roll)
    candidates = [play for play in plays if play.result.mine == target]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    written = Counter(moves)
    marked = set(hits) if hits is not None else None

    def fit(play: Play) -> tuple[bool, bool]:
        steps = Counter((s.source, s.destination) for s in play.steps)
        hit_points = {s.destination for s in play.steps if s.hit}
        return steps == written, marked is None or hit_points == marked

    return max(candidates, key=fit)

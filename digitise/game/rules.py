"""The rules of backgammon: rolls, steps, plays and which plays are legal."""

from __future__ import annotations

from dataclasses import dataclass, field
import enum

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
        """GNU Backgammon's layout: one step per die, highest source first."""
        return " ".join(str(s) for s in sorted(self.steps, key=lambda s: (-s.source, -s.destination)))


class GameValue(enum.IntEnum):
    """How many times the cube a finished game is worth."""

    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


def _single_steps(me: list[int], opp: list[int], die: int) -> list[int]:
    """Source points from which ``die`` can legally be played."""
    if me[BAR]:
        return [BAR] if opp[die] < 2 else []
    sources = []
    all_home = sum(me[7:26]) == 0
    highest = 0
    if all_home:
        for p in range(6, 0, -1):
            if me[p]:
                highest = p
                break
    for p in range(24, 0, -1):
        if not me[p]:
            continue
        dest = p - die
        if dest >= 1:
            if opp[25 - dest] < 2:
                sources.append(p)
        elif all_home and (dest == 0 or p == highest):
            sources.append(p)
    return sources


def _apply(me: list[int], opp: list[int], source: int, die: int) -> tuple[list[int], list[int], Step]:
    me2 = me.copy()
    dest = max(source - die, OFF)
    me2[source] -= 1
    me2[dest] += 1
    hit = False
    if dest:
        there = 25 - dest
        if opp[there] == 1:
            opp = opp.copy()
            opp[there] = 0
            opp[BAR] += 1
            hit = True
    return me2, opp, Step(source, dest, die, hit)


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
    found: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[Step, ...]] = {}
    best = 0

    def record(m: list[int], o: list[int], steps: tuple[Step, ...]) -> None:
        nonlocal best
        if len(steps) < best:
            return
        if len(steps) > best:
            best = len(steps)
            found.clear()
        found.setdefault((tuple(m), tuple(o)), steps)

    if roll.is_double:
        die = roll.high

        def walk(m: list[int], o: list[int], steps: tuple[Step, ...], ceiling: int) -> None:
            # Steps of a doublet are taken highest source first: every set of
            # steps can be ordered so, and it avoids exploring permutations.
            moved = False
            if len(steps) < 4:
                for source in _single_steps(m, o, die):
                    if source > ceiling:
                        continue
                    m2, o2, step = _apply(m, o, source, die)
                    walk(m2, o2, steps + (step,), source)
                    moved = True
            if not moved:
                record(m, o, steps)

        walk(me, opp, (), BAR)
    else:
        for first, second in ((roll.high, roll.low), (roll.low, roll.high)):
            sources = _single_steps(me, opp, first)
            for source in sources:
                m1, o1, step1 = _apply(me, opp, source, first)
                seconds = _single_steps(m1, o1, second)
                if not seconds:
                    record(m1, o1, (step1,))
                for source2 in seconds:
                    m2, o2, step2 = _apply(m1, o1, source2, second)
                    record(m2, o2, (step1, step2))
        if best == 1:
            # Only one die can be played: it must be the higher when possible.
            if any(steps[0].die == roll.high for steps in found.values()):
                for key in [k for k, s in found.items() if s[0].die != roll.high]:
                    del found[key]
    if best == 0:
        return ()
    return tuple(Play(steps, Position(tuple(m), tuple(o))) for (m, o), steps in found.items())


def is_closed_out(position: Position) -> bool:
    """True when the player on roll is on the bar and every entry point is made."""
    return position.mine[BAR] > 0 and all(position.theirs[p] >= 2 for p in range(19, 25))


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


def play_from_moves(position: Position, roll: Roll, moves: list[tuple[int, int]]) -> Play | None:
    """The legal play whose checker movements are ``moves`` (source, destination pairs).

    Moves may be compressed (``24/14`` for two steps of one checker): a play
    is identified by the position it leads to, so the net movements suffice.
    """
    me = list(position.mine)
    for source, dest in moves:
        if not (0 <= dest < source <= BAR) or me[source] <= 0:
            return None
        me[source] -= 1
        me[dest] += 1
    target = tuple(me)
    for play in legal_plays(position, roll):
        if play.result.mine == target:
            return play
    return None

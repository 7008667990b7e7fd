"""How a board's marks fit a move or a result: the results a state allows and the values they may carry, which
option a reviewer's forced reading keeps, and the physical play nearest to the squares written."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from digitise.game.position import BAR, Position, Side
from digitise.game.rules import Play, Roll, Step, play_from_moves
from digitise.notation.encode import number_digits
from digitise.notation.marks import point_of_cell
from digitise.solve.evidence import BoardEvidence
from digitise.solve.nodes import Forced, Option, State
from digitise.solve.reasons import Flag, Reason

#: A result square whose number is no legal value (cube x 1, 2 or 3) is read as the nearest one,
#: at this cost (more for values further off).
ILLEGAL_RESULT = -1.0


def with_answer(option: Option, response: str) -> Option:
    """``option`` with the reviewer's ``response`` to its double kept for the next board."""
    def answer(state: State) -> State:
        return replace(state, answer=response) if state.pending is not None else state

    made = option.state
    if callable(made):
        build = made
        return replace(option, state=lambda: answer(build()))
    return replace(option, state=answer(made))


def legal_results(cube: int, needs: int) -> tuple[int, ...]:
    """What a resignation can be worth with the cube at ``cube``: a single game, a gammon or a backgammon.

    Each also capped at what the winner ``needs`` for the match, as some
    programs record a match-winning resignation.
    """
    values = {cube * k for k in (1, 2, 3)} | {min(cube * k, needs) for k in (1, 2, 3)}
    return tuple(sorted(values))


def result_values(ev: BoardEvidence, cell: str, cube: int,
                  legal: Sequence[int]) -> list[tuple[int, float, tuple[Flag, ...]]]:
    """The values ``cell`` may be read as: (points, prior, reasons), every one legal.

    When the reader's best guess is not among ``legal`` (resignations are
    worth ``cube`` x 1, 2 or 3), a legal value it also listed is read as
    usual; the others are the nearest legal values (the nearer, the likelier),
    each flagged with what it replaces.
    """
    values = list(dict.fromkeys(legal))
    read = ev.numbers(cell)
    written = read[0][0] if read else None
    if written is None or written in values:
        return [(points, 0.0, ()) for points in values]
    listed = {points for points, _ in read}
    nearest = min(abs(points - written) for points in values)
    out: list[tuple[int, float, tuple[Flag, ...]]] = []
    for points in values:
        if points in listed:
            out.append((points, 0.0, ()))
            continue
        why = Reason.ILLEGAL_RESULT.flag(written=written, cube=cube, points=points)
        # The square is taken as written (the marks fit), then replaced by a legal value: so
        # reading it so beats leaving it unexplained, and scores stay <= 0.
        extra = (abs(points - written) - nearest) / max(written, 1)
        as_written = ev.cell_score(cell, number_digits(written)) - ev.cell_score(cell, number_digits(points))
        out.append((points, as_written + ILLEGAL_RESULT * (1.0 + 4.0 * extra), (why,)))
    return out


def resign_values(ev: BoardEvidence, cell: str, state: State,
                  winner: Side) -> list[tuple[int, float, tuple[Flag, ...]]]:
    """:func:`result_values` of a resignation at ``state``'s cube, won by ``winner``."""
    return result_values(ev, cell, state.cube.value, legal_results(state.cube.value, state.match.needs(winner)))


def game_over(state: State, winner: Side, points: int) -> Callable[[], State]:
    """The state after ``winner`` takes ``points``, built only when asked (most options die unbuilt)."""
    return lambda: state.after_game(winner, points)


def seen_by(state: State, side: Side) -> Position:
    """``state``'s position seen by ``side``."""
    if state.on_roll is None or state.on_roll is side:
        return state.pos
    return state.pos.swap()


def fits_forced(option: Option, forced: Forced) -> bool:
    """Whether ``option`` records what the reviewer's correction ``forced`` imposes on its board."""
    kinds = [e for e in option.events if e.kind not in ("skip", "end")]
    if forced.blank:
        return option.summary == ("blank",)
    moves = [e for e in kinds if e.kind == "move"]
    doubles = [e for e in kinds if e.kind == "double"]
    resigns = [e for e in kinds if e.kind == "resign"]
    if forced.double != bool(doubles):
        return False
    if forced.roll is not None:
        if len(moves) != 1 or moves[0].roll != forced.roll or moves[0].illegal:
            return False
        move = moves[0]
        if forced.player is not None and move.player is not forced.player:
            return False
        if forced.moves is not None and move.before is not None:
            if move.play is None:
                if forced.moves:
                    return False
            else:
                target = list(move.before.mine)
                for source, dest in forced.moves:
                    target[source] -= 1
                    target[dest] += 1
                if tuple(target) != move.play.result.mine:
                    return False
                if forced.hits is not None:
                    # Hits marked: of the plays that end alike, only the one hitting there fits.
                    chosen = play_from_moves(move.before, forced.roll, forced.moves, forced.hits)
                    if chosen is None or chosen.result != move.play.result:
                        return False
    elif moves:
        return False
    if forced.response is not None:
        answered = [e.kind for e in option.events if e.kind in ("take", "drop")]
        # An answer on this board is to the double before it; the answer to this board's own double
        # shows on the next board, where the state carries it (with_answer).
        if answered and answered[-1] != forced.response:
            return False
    if forced.points is not None or forced.resign:
        if not resigns:
            return False
        if forced.points is not None and resigns[-1].value != forced.points:
            return False
        if forced.winner is not None and resigns[-1].player is not forced.winner.opponent:
            return False
    elif resigns:
        return False
    return not (forced.player is not None and doubles and doubles[0].player is not forced.player)


def physical_play(pos: Position, side: Side, roll: Roll | None,
                  cells: Mapping[str, tuple[int, ...]]) -> tuple[Roll, Play] | None:
    """The play read straight off the marks: a mark ``d`` on point ``p`` came from ``p + d``.

    Returns the roll (``roll`` when given, else the dice the marks show) and
    the steps, if the checkers can physically make them (a checker at each
    source, the bar first, no landing on two opposing checkers, bearing off
    only with all checkers home and by the bear-off rule); whether the play
    is also *legal* (plays as many dice as the rules demand) is for the caller.
    """
    wanted: list[tuple[int, int]] = []  # (destination, die)
    for name, digits in cells.items():
        if name in ("centre", "Wres", "Bres"):
            continue
        try:
            dest = point_of_cell(side, name)
        except ValueError:
            return None
        wanted.extend((dest, d) for d in digits)
    if len(wanted) > 4:
        return None
    if roll is None:
        dice = sorted((d for _, d in wanted), reverse=True) + sorted(set(cells.get("centre", ())), reverse=True)
        if not dice:
            return None
        if len(set(dice)) == 1:
            roll = Roll(dice[0], dice[0])
        elif len(dice) == 2:
            roll = Roll(dice[0], dice[1])
        else:
            return None
    available = list(roll.dice)
    for _, die in wanted:
        if die not in available:
            return None
        available.remove(die)
    me, opp = list(pos.mine), list(pos.theirs)
    steps: list[Step] = []
    pending = sorted(wanted, key=lambda w: -(w[0] + w[1]))
    while pending:
        for i, (dest, die) in enumerate(pending):
            if dest:
                source = dest + die
                if source > BAR or me[source] <= 0 or opp[BAR - dest] >= 2:
                    continue
                if me[BAR] and source != BAR:
                    continue
            else:
                if sum(me[7:26]):
                    continue
                source = die if me[die] else next((p for p in range(min(die, 7) - 1, 0, -1) if me[p]), 0)
                if not source or any(me[p] for p in range(source + 1, 7)) and source != die:
                    continue
            me[source] -= 1
            me[dest] += 1
            hit = bool(dest) and opp[BAR - dest] == 1
            if hit:
                opp[BAR - dest] = 0
                opp[BAR] += 1
            steps.append(Step(source, dest, die, hit))
            pending.pop(i)
            break
        else:
            return None
    try:
        return roll, Play(tuple(steps), Position(tuple(me), tuple(opp)))
    except ValueError:
        return None


def nearest_play(play: Play, legal: Sequence[Play], fit: Callable[[Play], float]) -> Play | None:
    """The legal play whose position is nearest ``play``'s (checkers out of place), best ``fit`` on ties.

    ``None`` when there is no legal play (the roll cannot be played).
    """
    def distance(candidate: Play) -> int:
        a, b = candidate.result, play.result
        return (sum(abs(x - y) for x, y in zip(a.mine, b.mine, strict=True))
                + sum(abs(x - y) for x, y in zip(a.theirs, b.theirs, strict=True)))

    ranked = sorted(legal, key=lambda q: (distance(q), -fit(q), str(q)))
    return ranked[0] if ranked else None

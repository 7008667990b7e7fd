"""Self-play: the engine plays whole matches against itself, for samples and tests.

The policy is deliberately cheap and a little aggressive (so games have hits,
dances and closed boards): each legal play is scored on the position it
leads to (checkers borne off, opposing checkers sent to the bar, points
made, blots left in reach) with a small random tie-break. The cube is
offered when the pip lead is large enough and taken or dropped by the pip
ratio. Everything draws from one seeded :class:`random.Random`, so a seed is
a match.

Events can be asked for (``force``): ``double``, ``take``, ``drop`` and
``resign`` steer the policy (a player doubles at its first good chance, the
first double is taken and a later one dropped, a clearly beaten player
resigns); ``dance`` and ``closed_out`` cannot be steered without loading the
dice, so :func:`play_match_with` tries seeds in order until the match holds
every event asked for.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from digitise.game.match import Cube, MatchState, Score
from digitise.game.position import BAR, CHECKERS, OFF, Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Play, Roll, game_value, is_closed_out, legal_plays

EVENTS: frozenset[str] = frozenset({"double", "take", "drop", "dance", "closed_out", "resign"})


@dataclass(frozen=True, slots=True)
class SelfPlayOptions:
    """How the self-play match is set up and which events to steer towards."""

    length: int = 3
    #: (bottom, top): the left and right columns of the .mat.
    players: tuple[str, str] = ("White", "Black")
    force: frozenset[str] = frozenset()
    #: Offer the cube when the opponent's pip count exceeds ours by this share.
    double_lead: float = 0.12
    #: Take when the opponent's lead is below this share of our pip count.
    take_limit: float = 0.22
    #: Stop a game (as a resignation) after this many turns, to keep games short.
    max_turns: int = 400
    metadata: tuple[tuple[str, str], ...] = field(default=())


def _pips(side: tuple[int, ...]) -> int:
    return sum(p * n for p, n in enumerate(side))


def _score_play(play: Play, rng: random.Random) -> float:
    """How much the mover likes the position ``play`` leads to (higher is better)."""
    mine, theirs = play.result.mine, play.result.theirs
    score = 3.0 * mine[OFF] + 2.5 * theirs[BAR]
    for p in range(1, 25):
        if mine[p] >= 2:
            score += 1.0 if p <= 6 else 0.5
    # Opposing checkers in our numbering (0 for their bar): they move towards our higher points.
    shooters = [0 if q == BAR else 25 - q for q in range(1, 26) if theirs[q]]
    for p in range(1, 25):
        if mine[p] == 1:
            exposed = any(p > q and p - q <= 12 for q in shooters)
            if exposed:
                score -= 1.0 + p / 24
    score -= _pips(mine) / 200.0
    return score + rng.random() * 0.3


def choose_play(plays: Iterable[Play], rng: random.Random) -> Play:
    """The policy's choice among ``plays`` (all legal plays of a roll)."""
    options = sorted(plays, key=lambda p: (str(p), p.result.mine, p.result.theirs))
    return max(options, key=lambda p: _score_play(p, rng))


@dataclass
class _Game:
    """Mutable bookkeeping of the game being played (local to this module)."""

    position: Position  # seen by the player on roll
    on_roll: Side
    cube: Cube
    actions: list[Action]
    events: set[str]


def _first_roll(rng: random.Random) -> tuple[Side, Roll]:
    while True:
        bottom, top = rng.randint(1, 6), rng.randint(1, 6)
        if bottom != top:
            return (Side.BOTTOM if bottom > top else Side.TOP), Roll(bottom, top)


def _play_game(number: int, state: MatchState, options: SelfPlayOptions, rng: random.Random,
               wanted: set[str]) -> tuple[GameRecord, set[str]]:
    side, roll = _first_roll(rng)
    game = _Game(Position.initial(), side, Cube(), [], set())
    winner: Side | None = None
    points = 0
    first = True
    for _turn in range(options.max_turns):
        me = game.on_roll
        pos = game.position
        if not first:
            decided = _cube_action(game, state, options, rng, wanted)
            if decided is not None:
                winner, points = decided
                break
            resign = _maybe_resign(game, options, wanted)
            if resign is not None:
                winner, points = resign
                break
            roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
        first = False
        if is_closed_out(pos):
            game.actions.append(Action(me, ActionKind.MOVE, roll=roll, play=None))
            game.events.add("closed_out")
        else:
            plays = legal_plays(pos, roll)
            if not plays:
                game.actions.append(Action(me, ActionKind.MOVE, roll=roll, play=None))
                game.events.add("dance")
            else:
                play = choose_play(plays, rng)
                game.actions.append(Action(me, ActionKind.MOVE, roll=roll, play=play))
                pos = play.result
                if pos.mine[OFF] == CHECKERS:
                    value = game_value(pos)
                    winner, points = me, game.cube.value * int(value or 1)
                    break
        game.position = pos.swap()
        game.on_roll = me.opponent
    else:
        # Too long: the player behind in the race resigns a single game.
        mine, theirs = game.position.pip_count
        loser = game.on_roll if mine > theirs else game.on_roll.opponent
        game.actions.append(Action(loser, ActionKind.RESIGN, points=game.cube.value))
        game.events.add("resign")
        winner, points = loser.opponent, game.cube.value
    assert winner is not None
    record = GameRecord(number, state.score, tuple(game.actions), winner, points)
    return record, game.events


def _cube_action(game: _Game, state: MatchState, options: SelfPlayOptions, rng: random.Random,
                 wanted: set[str]) -> tuple[Side, int] | None:
    """Maybe double; returns (winner, points) when the double is dropped."""
    me = game.on_roll
    if not state.may_double(me, game.cube) or state.length == 0 and game.cube.value >= 64:
        return None
    if state.length and state.needs(me) <= game.cube.value:
        return None  # the cube is already enough to win the match: doubling gains nothing
    mine, theirs = game.position.pip_count
    lead = (theirs - mine) / max(mine, 1)
    threshold = options.double_lead
    if "double" in wanted and "double" not in game.events:
        threshold = min(threshold, 0.04)
    if lead < threshold or game.position.mine[BAR]:
        return None
    offered = game.cube.value * 2
    game.actions.append(Action(me, ActionKind.DOUBLE, cube=offered))
    game.events.add("double")
    taker = me.opponent
    take = lead < options.take_limit
    if "take" in wanted:
        take = True
    if "drop" in wanted and ("take" not in wanted or "take_done" in wanted):
        take = False
    if take:
        game.actions.append(Action(taker, ActionKind.TAKE))
        game.events.add("take")
        if "take" in wanted:
            wanted.add("take_done")
        game.cube = game.cube.doubled_by(me)
        return None
    game.actions.append(Action(taker, ActionKind.DROP))
    game.events.add("drop")
    return me, game.cube.value


def _maybe_resign(game: _Game, options: SelfPlayOptions, wanted: set[str]) -> tuple[Side, int] | None:
    """A player far behind in the race, with the opponent bearing off, gives up a single game."""
    if "resign" not in wanted:
        return None
    mine, theirs = game.position.pip_count
    opp = game.position.theirs
    bearing_off = sum(opp[7:26]) == 0 and opp[OFF] > 0
    if bearing_off and mine - theirs > 35 and game.position.mine[OFF] > 0:
        me = game.on_roll
        game.actions.append(Action(me, ActionKind.RESIGN, points=game.cube.value))
        game.events.add("resign")
        wanted.discard("resign")
        return me.opponent, game.cube.value
    return None


def play_match_events(seed: int, options: SelfPlayOptions = SelfPlayOptions()) -> tuple[MatchRecord, frozenset[str]]:
    """Play a whole match from ``seed``; returns it and the events that happened in it."""
    rng = random.Random(seed)
    state = MatchState(options.length, Score())
    games: list[GameRecord] = []
    events: set[str] = set()
    wanted = set(options.force)
    number = 0
    while not state.is_over:
        number += 1
        record, happened = _play_game(number, state, options, rng, wanted)
        games.append(record)
        events |= happened
        assert record.winner is not None and record.points is not None
        state = state.after_game(record.winner, record.points)
        if options.length == 0 and number >= 3:
            break
    match = MatchRecord(options.length, options.players, tuple(games), options.metadata)
    return match, frozenset(events)


def play_match(seed: int, options: SelfPlayOptions = SelfPlayOptions()) -> MatchRecord:
    """Play a whole match from ``seed`` (see the module docstring)."""
    return play_match_events(seed, options)[0]


def play_match_with(events: Iterable[str], *, start: int = 0, tries: int = 2000,
                    options: SelfPlayOptions = SelfPlayOptions()) -> tuple[int, MatchRecord]:
    """The first seed from ``start`` whose match holds every one of ``events``, and that match.

    Raises ``ValueError`` for an unknown event or when ``tries`` seeds are not enough.
    """
    wanted = frozenset(events)
    unknown = wanted - EVENTS
    if unknown:
        raise ValueError(f"unknown events: {', '.join(sorted(unknown))}")
    steer = frozenset(e for e in wanted if e in {"double", "take", "drop", "resign"}) | options.force
    steered = SelfPlayOptions(options.length, options.players, steer, options.double_lead, options.take_limit,
                              options.max_turns, options.metadata)
    for seed in range(start, start + tries):
        match, happened = play_match_events(seed, steered)
        if wanted <= happened:
            return seed, match
    raise ValueError(f"no match with {', '.join(sorted(wanted))} in seeds {start}..{start + tries - 1}")

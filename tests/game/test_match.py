"""Match bookkeeping: score, Crawford and post-Crawford, the cube, match end, capped points."""

from __future__ import annotations

import pytest

from digitise.game.match import Cube, MatchState, Score
from digitise.game.position import Side
from digitise.game.record import GameRecord, MatchRecord, outcome

B, T = Side.BOTTOM, Side.TOP


def play_games(state: MatchState, results: list[tuple[Side, int]]) -> MatchState:
    for winner, points in results:
        state = state.after_game(winner, points)
    return state


def test_score_adds_points_to_the_winner_only() -> None:
    score = Score().add(B, 2).add(T, 1).add(B, 1)
    assert (score.bottom, score.top) == (3, 1)
    assert score.of(B) == 3 and score.of(T) == 1
    state = play_games(MatchState(7), [(B, 2), (T, 1), (B, 1)])
    assert state.score == Score(3, 1)
    assert state.needs(B) == 4 and state.needs(T) == 6


def test_sides_are_opponents() -> None:
    assert B.opponent is T and T.opponent is B


def test_crawford_game_follows_the_first_game_a_player_reaches_length_minus_one() -> None:
    state = play_games(MatchState(5), [(B, 2), (T, 1)])
    assert not state.crawford
    state = state.after_game(B, 2)  # 4-1: bottom is one away
    assert state.score == Score(4, 1)
    assert state.crawford and not state.crawford_done


def test_no_doubling_in_the_crawford_game() -> None:
    state = MatchState(5).after_game(B, 4)
    assert state.crawford
    assert not state.may_double(B, Cube())
    assert not state.may_double(T, Cube())


def test_post_crawford_the_trailer_may_double_and_the_leader_may_not() -> None:
    state = MatchState(5).after_game(B, 4).after_game(T, 1)  # Crawford game lost by the leader
    assert not state.crawford and state.crawford_done
    assert state.score == Score(4, 1)
    assert state.may_double(T, Cube())
    # The leader needs 1 point: doubling gains nothing (a dead cube), gnubg does not allow it.
    assert not state.may_double(B, Cube())
    # Post-Crawford games never become Crawford games again, even when the trailer reaches 4.
    state = state.after_game(T, 3)
    assert state.score == Score(4, 4) and not state.crawford and state.crawford_done


def test_winning_the_crawford_game_ends_the_match() -> None:
    state = MatchState(5).after_game(B, 4).after_game(B, 1)
    assert state.is_over and state.winner is B and not state.crawford


def test_no_crawford_game_when_the_winner_jumps_past_length_minus_one() -> None:
    state = MatchState(5).after_game(T, 3).after_game(T, 2)
    assert state.is_over and state.winner is T and not state.crawford


def test_no_crawford_game_when_both_are_one_away() -> None:
    # Reached only through post-Crawford play: 4-3 post-Crawford, the trailer wins 1.
    state = MatchState(5, Score(4, 3), crawford_done=True).after_game(T, 1)
    assert state.score == Score(4, 4) and not state.crawford
    assert not state.may_double(B, Cube()) and not state.may_double(T, Cube())


def test_cube_starts_centred_and_the_taker_owns_it() -> None:
    cube = Cube()
    assert (cube.value, cube.owner) == (1, None)
    cube = cube.doubled_by(B)
    assert (cube.value, cube.owner) == (2, T)
    cube = cube.doubled_by(T)
    assert (cube.value, cube.owner) == (4, B)


def test_only_the_owner_of_a_turned_cube_may_double() -> None:
    state = MatchState(9)
    assert state.may_double(B, Cube()) and state.may_double(T, Cube())
    owned_by_top = Cube().doubled_by(B)
    assert state.may_double(T, owned_by_top)
    assert not state.may_double(B, owned_by_top)


def test_no_double_with_a_dead_cube() -> None:
    # 3-point match at 0-0: cube 2 owned by top is alive (top needs 3 > 2); at 4 it is dead.
    state = MatchState(3)
    assert state.may_double(T, Cube(2, T))
    assert not state.may_double(B, Cube(4, B))


def test_match_end_and_winner() -> None:
    state = MatchState(3)
    assert not state.is_over and state.winner is None
    state = state.after_game(T, 2)
    assert state.crawford and not state.is_over
    state = state.after_game(B, 1).after_game(T, 4)
    assert state.is_over and state.winner is T
    assert state.score == Score(1, 6)  # the score keeps the uncapped points
    assert not state.may_double(B, Cube())


def test_points_are_capped_at_what_the_winner_needed() -> None:
    state = MatchState(5, Score(4, 1), crawford_done=True)
    assert state.capped(B, 4) == 1
    assert state.capped(T, 2) == 2
    assert state.capped(T, 8) == 4


def test_one_point_match() -> None:
    state = MatchState(1)
    # Both players are one away from the start: not a Crawford game (nobody reached 0 by winning),
    # but doubling is pointless and gnubg offers no cube in a 1-point match.
    assert not state.crawford
    assert not state.may_double(B, Cube()) and not state.may_double(T, Cube())
    assert state.needs(B) == state.needs(T) == 1
    done = state.after_game(T, 2)  # a gammon still wins just the match
    assert done.is_over and done.winner is T and state.capped(T, 2) == 1
    assert not done.crawford


@pytest.mark.parametrize("length", [2, 3, 7, 25])
def test_exactly_one_crawford_game_per_match(length: int) -> None:
    state = MatchState(length)
    crawford_games = 0
    while not state.is_over:
        crawford_games += state.crawford
        winner = T if state.score.top <= state.score.bottom else B  # alternate to stretch the match
        state = state.after_game(winner, 1)
    assert crawford_games == 1


def test_unlimited_session_never_has_a_crawford_game_or_an_end() -> None:
    state = play_games(MatchState(0), [(B, 8), (T, 16), (B, 1)])
    assert not state.crawford and not state.is_over and state.winner is None
    assert state.capped(T, 64) == 64
    assert state.may_double(B, Cube(64, B))


def _record(length: int, results: list[tuple[Side | None, int | None]]) -> MatchRecord:
    games, score = [], Score()
    for number, (winner, points) in enumerate(results, 1):
        games.append(GameRecord(number, score, (), winner, points))
        if winner is not None and points is not None:
            score = score.add(winner, points)
    return MatchRecord(length, ("Alice", "Bruno"), tuple(games))


@pytest.mark.parametrize(("length", "results", "score", "winner"), [
    # A gammon with the cube on 2 at 4-3 of a 5-point match: 5-3, not 8-3.
    (5, [(B, 2), (T, 3), (B, 2), (B, 4)], Score(5, 3), "Alice"),
    (3, [(T, 1), (T, 2)], Score(0, 3), "Bruno"),
    # The record stops in the third game: the score so far, nobody has won.
    (7, [(B, 2), (T, 1), (None, None)], Score(2, 1), None),
    # Unlimited: no length to reach.
    (0, [(B, 2), (T, 4)], Score(2, 4), None),
])
def test_a_matchs_outcome_is_its_final_score_and_who_reached_the_length(
        length: int, results: list[tuple[Side | None, int | None]], score: Score, winner: str | None) -> None:
    ended = outcome(_record(length, results))
    assert (ended.score, ended.winner_name, ended.games, ended.length) == (score, winner, len(results), length)
    assert ended.players == ("Alice", "Bruno")

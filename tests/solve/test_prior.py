"""The play prior: GNU Backgammon's judgement of each legal play, and how the solver weighs it."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from digitise.game.position import Position, Side
from digitise.game.rules import ALL_ROLLS, Roll, legal_plays
from digitise.notation.mat import read_mat
from digitise.notation.readings import BoardReading, CellReading, paginate
from digitise.solve import solve
from digitise.solve.prior import FLOOR, PlayPrior, play_key
from tests.conftest import real_matches

MATCHES = real_matches()


def _gnubg_nn() -> None:
    pytest.importorskip("gnubg_nn", reason="gnubg-nn is not installed (pip install 'digitise[prior]')")


def test_opening_three_one_makes_the_five_point() -> None:
    _gnubg_nn()
    prior = PlayPrior()
    pos = Position.initial()
    plays = {str(p): prior.log_prior(pos, Roll(3, 1), p) for p in legal_plays(pos, Roll(3, 1))}
    assert plays["8/5 6/5"] == 0.0
    assert all(v < 0.0 for k, v in plays.items() if k != "8/5 6/5")
    # Breaking the six point to run a back checker off is far worse than making the five point.
    assert plays["6/3 3/2"] < plays["24/23 13/10"] < 0.0


@pytest.mark.skipif(not MATCHES, reason="../shared/data/matches not found")
def test_every_legal_play_of_real_positions_is_known_to_gnubg() -> None:
    """Our positions and GNU Backgammon's boards agree: every legal play gets its own equity."""
    _gnubg_nn()
    import gnubg_nn

    match = read_mat(MATCHES[0]).match
    checked = 0
    # Walk the first game and compare at every position it passes through.
    pos = Position.initial()
    for action in match.games[0].actions:
        if action.roll is None:
            continue
        mover = pos if action.player is Side.BOTTOM else pos.swap()
        board = [list(mover.theirs[1:26]), list(mover.mine[1:26])]
        listed = {key for key, *_ in gnubg_nn.best_move(board, action.roll.high, action.roll.low, list=1)[1]}
        plays = legal_plays(mover, action.roll)
        keys = {gnubg_nn.key_of_board([list(p.result.mine[1:26]), list(p.result.theirs[1:26])]) for p in plays}
        assert keys == listed, f"plays differ at {mover.position_id()} {action.roll}"
        checked += 1
        if action.play is not None:
            after = action.play.result
            pos = after if action.player is Side.BOTTOM else after.swap()
    assert checked > 10


def test_prior_is_floored_and_dances_are_free() -> None:
    _gnubg_nn()  # the plays are keyed as GNU Backgammon keys them
    pos = Position.initial()
    roll = Roll(6, 5)
    plays = legal_plays(pos, roll)
    worst = min(plays, key=str)
    prior = PlayPrior(lambda p, r: {"best": 0.0}, weight=10.0)
    # A play the evaluator does not list gets no prior rather than a guess.
    assert prior.log_prior(pos, roll, worst) == 0.0
    assert prior.log_prior(pos, roll, None) == 0.0

    equities = {play_key(p.result): (0.0 if p is plays[0] else -5.0) for p in plays}
    steep = PlayPrior(lambda p, r: equities, weight=10.0)
    assert steep.log_prior(pos, roll, plays[0]) == 0.0
    assert all(steep.log_prior(pos, roll, p) == FLOOR for p in plays[1:])


def test_a_net_that_fails_is_said_once_and_weighs_plays_alike(caplog: pytest.LogCaptureFixture) -> None:
    def broken(pos: Position, roll: Roll) -> dict[str, float]:
        raise RuntimeError("no weights")

    prior = PlayPrior(broken, weight=10.0)
    pos = Position.initial()
    with caplog.at_level(logging.DEBUG):
        priors = [prior.log_prior(pos, r, p) for r in ALL_ROLLS[:3] for p in legal_plays(pos, r)]
    assert priors and all(v == 0.0 for v in priors)
    assert prior.failures == 3  # one per (position, roll): the cache keeps the failure too
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "no weights" in warnings[0].getMessage()


def test_without_gnubg_nn_the_prior_is_flat(monkeypatch: pytest.MonkeyPatch,
                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "gnubg_nn", None)  # import now raises ImportError
    with caplog.at_level(logging.WARNING):
        prior = PlayPrior()
    assert not prior.active
    pos = Position.initial()
    assert all(prior.log_prior(pos, r, p) == 0.0 for r in ALL_ROLLS[:3] for p in legal_plays(pos, r))
    assert "gnubg-nn" in caplog.text
    # The report says so: the same readings solve otherwise with the net.
    assert prior.described == "none: every legal play weighed alike (gnubg-nn is not installed)"


def test_the_report_names_what_weighed_the_plays() -> None:
    _gnubg_nn()
    from importlib.metadata import version

    readings = paginate([BoardReading(1, {"B7": (CellReading((6,), 1.0),), "B12": (CellReading((5,), 1.0),)},
                                      0.0, 0.0, 0.0)], "synthetic")
    report = solve(readings, players=("W", "B"), length=1).report
    assert report["prior"] == f"gnubg-nn {version('gnubg-nn')}, weight 10 nats per unit of equity, floor -2"
    assert solve(readings, players=("W", "B"), length=1, prior=PlayPrior(weight=0.0)).report["prior"].startswith("none")


def test_prior_picks_between_plays_of_one_roll() -> None:
    """Two plays of the same roll that the marks fit equally: the one the evaluator prefers wins, surer."""
    _gnubg_nn()  # the plays are keyed as GNU Backgammon keys them
    # White opens 6-5, 24/13: "6" where it touches down on its 18 point (B7), "5" on its 13 (B12).
    opening = BoardReading(1, {"B7": (CellReading((6,), 1.0),), "B12": (CellReading((5,), 1.0),)}, 0.0, 0.0, 0.0)
    # Black's 2-1: "2" in B4 is certain; the "1" sits in B5 (6/5) or B7 (8/7): the reader cannot tell.
    board = BoardReading(2, {"B4": (CellReading((2,), 1.0),),
                             "B5": (CellReading((1,), 0.5), CellReading((), 0.5)),
                             "B7": (CellReading((1,), 0.5), CellReading((), 0.5))}, 0.0, 0.0, 0.0)
    readings = paginate([opening, board], "synthetic")
    flat = solve(readings, players=("W", "B"), length=1, prior=PlayPrior(weight=0.0))
    flat_turn = flat.report["games"][0]["turns"][1]
    assert flat_turn["dice"] == [2, 1]

    def likes(move: str) -> object:
        def evaluate(pos: Position, roll: Roll) -> dict[str, float]:
            return {play_key(p.result): (0.0 if set(str(p).split()) == set(move.split()) else -0.2) for p in legal_plays(pos, roll)}
        return evaluate

    for move in ("6/4 6/5", "8/7 6/4"):
        result = solve(readings, players=("W", "B"), length=1, prior=PlayPrior(likes(move), weight=10.0))  # type: ignore[arg-type]
        turn = result.report["games"][0]["turns"][1]
        assert set(turn["move"].split()) == set(move.split())
        assert turn["confidence"] > flat_turn["confidence"]


@pytest.mark.skipif(not MATCHES, reason="../shared/data/matches not found")
def test_solver_output_with_the_prior_is_deterministic() -> None:
    from digitise.notation.encode import encode_match
    from digitise.notation.noise import MEDIUM, noisy_readings

    match = read_mat(Path(MATCHES[1])).match
    marks = [b.marks for b in encode_match(match)][:60]
    readings = paginate(noisy_readings(marks, 5, MEDIUM), "noisy")
    first = solve(readings, players=match.players, length=match.length)
    second = solve(readings, players=match.players, length=match.length, prior=PlayPrior())
    assert first.report == second.report

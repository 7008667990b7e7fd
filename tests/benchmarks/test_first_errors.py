"""benchmarks/first_errors.py imposes a board's play at the score the readings give it."""

from __future__ import annotations

from benchmarks.first_errors import _solved
from digitise.game.selfplay import play_match
from digitise.notation.encode import encode_match
from digitise.notation.noise import HEAVY, noisy_readings
from digitise.notation.readings import paginate


def test_imposing_the_play_the_solver_chose_keeps_the_whole_score() -> None:
    match = play_match(40)
    marks = [b.marks for b in encode_match(match)]
    readings = paginate(noisy_readings(marks, seed=40, profile=HEAVY), "noisy")
    score, solved, report, right = _solved(readings, match)
    turns = report.games[0].turns
    index = next(i for i, t in enumerate(turns) if i >= 5 and t.action == "move" and t.move)
    turn, action = turns[index], solved.games[0].actions[index]
    text = f"{action.player.value} {action.roll}: {action.play}"
    imposed, _, _, right_imposed = _solved(readings, match, {(turn.page, turn.board): text})
    # A reviewer's correction would score 0 on its board, lifting the whole; imposed as read it does not.
    assert abs(imposed - score) < 1e-6
    assert right_imposed == right

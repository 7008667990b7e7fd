"""The search's bookkeeping: settling estimates best first, and letting go of what no report reads."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digitise.game.match import Score
from digitise.game.record import GameRecord, MatchRecord
from digitise.notation.encode import encode_match
from digitise.notation.mat import format_mat, read_mat
from digitise.notation.noise import HEAVY, noisy_readings
from digitise.notation.readings import CellReading, Readings, certain_reading, paginate
from digitise.solve import report_to_json, solve
from digitise.solve import search as search_module
from digitise.solve.compare import compare
from digitise.solve.nodes import Node, State, Summary, first_recorded, record_end
from digitise.solve.search import SearchMethod

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _joined(times: int) -> MatchRecord:
    """The two sample matches' games, ``times`` over, as one unlimited match: a long record of ordinary games."""
    games: list[GameRecord] = []
    score = Score()
    for _ in range(times):
        for name in ("alice-bruno.mat", "chen-dana.mat"):
            for game in read_mat(SAMPLES / name).match.games:
                assert game.winner is not None and game.points is not None
                games.append(GameRecord(len(games) + 1, score, game.actions, game.winner, game.points))
                score = score.add(game.winner, game.points)
    return MatchRecord(0, ("Bottom", "Top"), tuple(games))


def _long_readings(seed: int) -> Readings:
    marks = [board.marks for board in encode_match(_joined(3))]
    return paginate(noisy_readings(marks, seed=seed, profile=HEAVY), "noisy")


def _solved(readings: Readings) -> tuple[str, str]:
    result = solve(readings)
    return format_mat(result.match), report_to_json(result.report)


def _settle_all_in_order(best_final: Node, finals: list[Node], deaths: list[tuple[Node, Summary, float, int]],
                         merges: list[tuple[Node, Summary, float, Node]]) -> None:
    """Every estimate settled in the order it was made, as the search did before it settled the best first."""
    chosen: dict[int, float] = {}
    node: Node | None = best_final.parent
    while node is not None and node.board is not None:
        chosen[node.board] = node.score
        node = node.parent
    for final in finals:
        final.best = final.score
        assert final.parent is not None
        record_end(final.parent, final.summary, final.score)
    total = best_final.score
    for parent, summary, score, board in deaths:
        record_end(parent, summary, score + total - chosen.get(board, score))
    for parent, summary, score, survivor in reversed(merges):
        if survivor.best > -math.inf:
            record_end(parent, summary, score + (survivor.best - survivor.score))


@pytest.mark.parametrize("seed", [3, 11])
def test_a_long_noisy_match_reads_the_same_settled_best_first_and_pruned(seed: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    readings = _long_readings(seed)
    assert len(readings.pages) >= 30
    solved = _solved(readings)
    # The whole tree kept and every estimate settled in turn: the same match, report and ties' order.
    monkeypatch.setattr(search_module, "METHOD", SearchMethod(settle=_settle_all_in_order, prune=False))
    assert _solved(readings) == solved


def _tree(shape: list[int]) -> list[Node]:
    """Nodes of a tree: node ``k + 1`` is a child of node ``shape[k] % (k + 1)``."""
    state = State.start(0)
    nodes = [Node(None, None, ("root",), (), state, 0.0, 0.0, ())]
    for k, up in enumerate(shape):
        parent = nodes[up % (k + 1)]
        board = (parent.board if parent.board is not None else -1) + 1
        node = Node(parent, board, ("decision", k % 3), (), state, 0.0, 0.0, ())
        parent.children.append(node)
        nodes.append(node)
    return nodes


@settings(max_examples=200, deadline=None)
@given(shape=st.lists(st.integers(0, 50), min_size=1, max_size=25),
       ends=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3), st.integers(-20, 5)), min_size=1, max_size=40))
def test_settling_best_first_records_what_settling_in_turn_records(shape: list[int],
                                                                   ends: list[tuple[int, int, int]]) -> None:
    def settled(best_first: bool) -> list[tuple[float, list[tuple[Summary, float]]]]:
        nodes = _tree(shape)
        made = [(float(score), nodes[at % len(nodes)], ("end", which)) for at, which, score in ends]
        heard = first_recorded([(parent, summary) for _, parent, summary in made])
        if best_first:
            made.sort(key=lambda end: -end[0])
        for score, parent, summary in made:
            record_end(parent, summary, score)
        if best_first:
            for node, summaries in heard:
                node.kids = {summary: node.kids[summary] for summary in summaries}
        return [(node.best, list(node.kids.items())) for node in nodes]

    assert settled(best_first=True) == settled(best_first=False)


@pytest.mark.parametrize(("board", "cell", "misread"), [(1, "W5", 3), (17, "W3", 3), (34, "B1", 2)])
def test_a_sure_looking_misread_that_spells_another_play_is_found_or_flagged(board: int, cell: str,
                                                                           misread: int) -> None:
    """One point digit read as another at 97 %, the true one not listed: the play it spells is legal too, and
    the later boards, written from the true position, must undo it or flag it, never carry it on unflagged."""
    match = read_mat(SAMPLES / "alice-bruno.mat").match
    boards = [certain_reading(k % 8 + 1, b.marks) for k, b in enumerate(encode_match(match))]
    (written,) = boards[board].cells[cell][0].digits
    assert misread != written
    cells = dict(boards[board].cells)
    cells[cell] = (CellReading((misread,), 0.97), CellReading(tuple(sorted((written, misread))), 0.012),
                   CellReading((), 0.01))
    boards[board] = replace(boards[board], cells=cells)
    result = solve(paginate(boards, "misread"), players=match.players, length=match.length)
    found = compare(match, result.match, result.solved)
    assert found.silent == 0, found.differences
    assert found.right == found.turns or found.flagged > 0

"""Learning the recorder's hand from the match (digitise.adaptation), through the real reader and solver."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from digitise.adaptation import (
    SURE_AT_ONCE,
    TOO_FEW,
    TURNED_OFF,
    Place,
    adapt_to_hand,
    hand_by_place,
    hand_samples,
    read_again,
    written_on_sure_boards,
)
from digitise.cli import cli
from digitise.game.selfplay import SelfPlayOptions, play_match
from digitise.notation.encode import board_place, encode_match
from digitise.notation.readings import CellReading, Readings, certain_reading, paginate
from digitise.solve import SolveResult, solve
from digitise.vision.adapt import AdaptedHand
from digitise.vision.cellnet import LastLayer
from digitise.vision.cells import WholeCell
from digitise.vision.read import HandCell

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


def _pages(match: str, level: str) -> list[Path]:
    return sorted(p for p in (SAMPLES / match / level).iterdir() if p.suffix in (".jpg", ".pdf"))


def test_a_sure_board_says_what_its_move_writes_in_each_square() -> None:
    """Certain readings of a self-played match: every move board is sure, and what it says is written there is
    what the encoder wrote (point and off squares and the centre)."""
    match = play_match(7, SelfPlayOptions(length=3))
    boards = encode_match(match)
    readings = paginate([certain_reading(k % 8 + 1, b.marks) for k, b in enumerate(boards)])
    result = solve(readings, players=match.players, length=match.length)
    sure = written_on_sure_boards(result.solved)
    assert len(sure) >= 0.8 * len(boards)
    for k, board in enumerate(boards):
        place = board_place(k)
        if place in sure:
            written = {n: tuple(sorted(d)) for n, d in board.marks.cells.items() if not n.endswith("res")}
            assert {n: tuple(sorted(d)) for n, d in sure[place].items()} == written, place


def _whole(value: int) -> WholeCell:
    return WholeCell(np.zeros(33), (np.array([float(value)]),))


def test_only_squares_whose_writing_the_reader_listed_teach() -> None:
    readings = paginate([certain_reading(1, encode_match(play_match(3, SelfPlayOptions(length=1)))[0].marks)])
    board = readings.pages[0].boards[0]
    empty = next(n for n in ("W3", "W4", "W5", "B3") if n not in board.cells)
    name = next(n for n in sorted(board.cells) if n != "centre" and not n.endswith("res"))
    hand = {(1, 1): [HandCell("p", 1, 1, name, _whole(1)), HandCell("p", 1, 1, empty, _whole(2)),
                     HandCell("p", 1, 1, "centre", _whole(3))]}
    written = tuple(sorted(board.cells[name][0].digits))
    samples = hand_samples(readings, hand, {(1, 1): {name: written}})
    # The written square, and the one read surely empty where nothing is written; never the centre.
    assert sorted(s.digits for s in samples) == sorted([written, ()])
    # A square the rules fill with what the reader never listed teaches nothing.
    assert [s.digits for s in hand_samples(readings, hand, {(1, 1): {name: written, empty: (6, 6)}})] == [written]


def test_read_again_replaces_the_squares_of_the_boards_asked_and_drops_those_now_surely_empty() -> None:
    marks = encode_match(play_match(3, SelfPlayOptions(length=1)))[0].marks
    readings = paginate([certain_reading(1, marks), certain_reading(2, marks)])
    name = min(readings.pages[0].boards[0].cells)

    class Empty(AdaptedHand):
        def read_again(self, whole: WholeCell, top: int = 5) -> tuple[CellReading, ...]:
            return (CellReading((), 1.0),)

    hand = {(1, 1): [HandCell("p", 1, 1, name, _whole(1))], (1, 2): [HandCell("p", 1, 2, name, _whole(1))]}
    layer = LastLayer(np.zeros((33, 1)), np.zeros(33), 1.0)
    again = read_again(readings, hand, Empty((layer,), (layer.weight,), (layer.bias,), 1), {(1, 2)})
    assert name in again.pages[0].boards[0].cells
    assert name not in again.pages[0].boards[1].cells


def test_hand_cells_are_found_by_their_pages_file_and_number() -> None:
    from digitise.notation.readings import PageReading

    pages = [PageReading("b.pdf", 2, ()), PageReading("a.png", 1, ()), PageReading("b.pdf", 1, ())]
    cells = [HandCell("b.pdf", 1, 4, "W6", _whole(1)), HandCell("a.png", 1, 2, "B3", _whole(1))]
    assert {k: [c.name for c in v] for k, v in hand_by_place(pages, cells).items()} == {(3, 4): ["W6"], (2, 2): ["B3"]}
    # Two pages with one name: nothing tells them apart, so nothing is adapted.
    assert hand_by_place([*pages, PageReading("a.png", 1, ())], cells) == {}


def test_a_match_read_surely_at_once_is_not_adapted() -> None:
    match = play_match(7, SelfPlayOptions(length=1))
    readings = paginate([certain_reading(k % 8 + 1, b.marks) for k, b in enumerate(encode_match(match))])
    first = solve(readings, players=match.players, length=match.length)
    assert first.flagged == 0
    layer = LastLayer(np.zeros((33, 1)), np.zeros(33), 1.0)
    result, kept, adaptation = adapt_to_hand(readings, {}, first, lambda r: pytest.fail("solved again"), (layer,))
    assert (result, kept, adaptation.skipped) == (first, readings, SURE_AT_ONCE)


# --- through the command line, on the samples' real pictures -----------------------------------------


def _scan(tmp_path: Path, pages: list[Path], *extra: str) -> tuple[int, bytes, dict[str, object]]:
    mat, report = tmp_path / "m.mat", tmp_path / "m.report.json"
    done = CliRunner().invoke(cli, ["scan", *map(str, pages), "-o", str(mat), "--report", str(report), "--force",
                                    *extra])
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, mat.read_bytes(), json.loads(report.read_text(encoding="utf-8"))


def test_scan_learns_the_hand_says_so_and_gives_the_same_bytes_again(tmp_path: Path) -> None:
    pages = _pages("alice-bruno", "light")
    _, mat, report = _scan(tmp_path / "a", pages)
    adaptation = report["adaptation"]
    assert isinstance(adaptation, dict)
    assert adaptation["skipped"] is None and adaptation["learned_from"] >= 40 and adaptation["rounds"] >= 1
    assert adaptation["boards_read_again"] > 0 and adaptation["flagged_before"] >= adaptation["flagged_after"] > 0
    _, mat_again, _ = _scan(tmp_path / "b", pages)
    assert mat_again == mat
    # The readings kept for the review are the adapted ones the match was solved from, the same bytes again.
    kept = [(tmp_path / run / "m.report.readings.json").read_bytes() for run in ("a", "b")]
    assert kept[0] == kept[1]
    _scan(tmp_path / "c", pages, "--no-adapt")
    assert (tmp_path / "c" / "m.report.readings.json").read_bytes() != kept[0]


def test_no_adapt_reads_with_the_shipped_reader_alone(tmp_path: Path) -> None:
    _, _, report = _scan(tmp_path, _pages("alice-bruno", "light"), "--no-adapt")
    assert report["adaptation"] == {"learned_from": 0, "boards_read_again": 0, "turns_changed": 0,
                                    "flagged_before": report["summary"]["flagged"],  # type: ignore[index]
                                    "flagged_after": report["summary"]["flagged"],  # type: ignore[index]
                                    "rounds": 0, "skipped": TURNED_OFF, "boards_kept_first": 0}


def test_a_page_or_two_is_too_little_to_learn_from_and_the_shipped_reader_is_kept(tmp_path: Path) -> None:
    pages = _pages("alice-bruno", "medium")[:1]
    code, mat, report = _scan(tmp_path / "a", pages)
    adaptation = report["adaptation"]
    assert isinstance(adaptation, dict) and adaptation["rounds"] == 0
    assert str(adaptation["skipped"]).startswith(TOO_FEW.split("(")[0]) or adaptation["skipped"] == SURE_AT_ONCE
    assert (code, mat) == _scan(tmp_path / "b", pages, "--no-adapt")[:2]


def _noisy_match_solved() -> tuple[Readings, SolveResult, dict[Place, list[HandCell]], LastLayer]:
    """A self-played match read by the simulated reader, solved (some turns flagged), with a square of made-up
    features for every point square and a last layer to fine-tune on them."""
    from digitise.notation.noise import noisy_readings

    match = play_match(11, SelfPlayOptions(length=3))
    readings = paginate(noisy_readings([b.marks for b in encode_match(match)], 11))
    first = solve(readings, players=match.players, length=match.length)
    assert first.flagged > 0
    rng = np.random.default_rng(0)
    hand = {(p.page, b.index): [HandCell("p", p.page, b.index, name, WholeCell(np.zeros(33), (rng.random(4),)))
                                for name in b.cells if name != "centre" and not name.endswith("res")]
            for p in readings.pages for b in p.boards}
    return readings, first, hand, LastLayer(rng.normal(0, 1, (33, 4)), np.zeros(33), 1.0)


def test_a_hand_that_flags_more_turns_when_learned_keeps_the_first_reading() -> None:
    """A second writer, or writing crossed out and rewritten: what was learned does not fit the rest, and the
    adapted solve flags more. The first solve is kept, and the report says why."""
    from dataclasses import replace

    from digitise.adaptation import FLAGGED_MORE
    readings, first, hand, layer = _noisy_match_solved()

    def worse(again: object) -> SolveResult:
        summary = replace(first.solved.summary, flagged=first.flagged + 3)
        return replace(first, solved=replace(first.solved, summary=summary))

    result, kept, adaptation = adapt_to_hand(readings, hand, first, worse, (layer,))
    assert result is first and kept is readings
    assert adaptation.rounds >= 1 and adaptation.learned_from >= 40
    assert adaptation.skipped == FLAGGED_MORE.format(after=first.flagged + 3, before=first.flagged)
    assert (adaptation.flagged_before, adaptation.flagged_after, adaptation.turns_changed) == (first.flagged,) * 2 + (0,)


def test_a_round_that_decides_a_turn_it_learned_from_otherwise_is_not_kept() -> None:
    """What was learned contradicts its teacher: the solve with it plays a sure turn differently. The first
    solve is kept, and the report says how many sure turns it would have changed."""
    from dataclasses import replace

    from digitise.adaptation import CONTRADICTED
    readings, first, hand, layer = _noisy_match_solved()
    sure = written_on_sure_boards(first.solved)

    def contradicting(again: object) -> SolveResult:
        target = next(t for g in first.solved.games for t in g.turns if (t.page, t.board) in sure)
        # Any other decision of a board it learned from.
        games = tuple(replace(g, turns=tuple(replace(t, move="24/1") if t is target else t for t in g.turns))
                      for g in first.solved.games)
        return replace(first, solved=replace(first.solved, games=games))

    result, kept, adaptation = adapt_to_hand(readings, hand, first, contradicting, (layer,))
    assert result is first and kept is readings and adaptation.rounds == 0
    assert adaptation.skipped == CONTRADICTED.format(turns=1)


def test_a_round_that_decides_a_sure_turn_otherwise_keeps_the_first_reading_of_that_game_only() -> None:
    """The hand learned decides a sure turn of the first game otherwise only while that game's boards are read
    again: that game keeps its first reading, the other games keep what was read with the hand learned."""
    from dataclasses import replace

    readings, first, hand, layer = _noisy_match_solved()
    sure = written_on_sure_boards(first.solved)
    assert len(first.solved.games) >= 2
    opening = [(t.page, t.board) for t in first.solved.games[0].turns]
    low, high = min(opening), max(opening)
    target = next(t for t in first.solved.games[0].turns if (t.page, t.board) in sure)

    def boards(of: Readings) -> dict[Place, object]:
        return {(p.page, b.index): b for p in of.pages for b in p.boards}

    def contradicting_in_the_opening(again: Readings) -> SolveResult:
        now, was = boards(again), boards(readings)
        if any(now[place] != was[place] for place in now if low <= place <= high):
            games = tuple(replace(g, turns=tuple(replace(t, move="24/1") if t is target else t for t in g.turns))
                          for g in first.solved.games)
            return replace(first, solved=replace(first.solved, games=games))
        return replace(first, solved=replace(first.solved))

    result, kept, adaptation = adapt_to_hand(readings, hand, first, contradicting_in_the_opening, (layer,))
    assert adaptation.skipped is None and adaptation.rounds == 1 and result is not first
    now, was = boards(kept), boards(readings)
    assert all(now[place] == was[place] for place in now if low <= place <= high)
    unsure = {place for place in now if place not in sure}
    assert adaptation.boards_kept_first == sum(1 for place in unsure if low <= place <= high) > 0
    assert any(now[place] != was[place] for place in now if not low <= place <= high)

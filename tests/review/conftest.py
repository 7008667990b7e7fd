"""Fixtures for the review page: a small hand-made report, readings and page image.

The report is built with the real rules engine (positions, legal plays) and
the real encoder (the marks each turn writes), so it is consistent with what
the solver produces; only the solving itself is left out.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from digitise.game.position import Position, Side
from digitise.game.rules import Roll, play_from_moves
from digitise.notation.encode import turn_cells
from digitise.notation.marks import BoardMarks
from digitise.notation.readings import PageReading, Readings, certain_reading, readings_to_json
from digitise.review.server import ReviewServer
from digitise.review.session import ReviewSession
from digitise.solve.corrections import parse_moves
from digitise.solve.report_types import Turn
from tests import reports

#: (player, dice, play) of the opening turns of a game.
TURNS = [
    ("bottom", (3, 1), "8/5 6/5"),
    ("top", (4, 2), "8/4 6/4"),
    ("bottom", (6, 4), "24/18 13/9"),
]
BOX_W, BOX_H = 300, 120


def board_box(index: int) -> tuple[int, int, int, int]:
    """Where board ``index`` sits on the fixture page: two columns of four."""
    column, row = (index - 1) % 2, (index - 1) // 2
    return (20 + column * (BOX_W + 40), 20 + row * (BOX_H + 30), BOX_W, BOX_H)


def build_sample(folder: Path) -> Path:
    """Write page1.png, sample.readings.json and sample.json into ``folder``; returns the report."""
    page = np.full((4 * (BOX_H + 30) + 40, 2 * (BOX_W + 40) + 40, 3), 255, np.uint8)
    position = Position.initial()
    turns: list[Turn] = []
    boards = []
    for i, (player, dice, move) in enumerate(TURNS, start=1):
        roll = Roll(*dice)
        play = play_from_moves(position, roll, parse_moves(move))
        assert play is not None, move
        cells = turn_cells(Side(player), roll, play)
        x, y, w, h = board_box(i)
        cv2.rectangle(page, (x, y), (x + w, y + h), (90, 90, 90), 2)
        cv2.putText(page, f"{i}: {dice[0]}{dice[1]}", (x + 10, y + 60), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (160, 40, 0), 2)
        reading = certain_reading(i, BoardMarks(cells))
        boards.append(type(reading)(reading.index, reading.cells, reading.crossed, reading.arrow, reading.letters,
                                    board_box(i)))
        turns.append(reports.turn(1, i, player, "move", dice, str(play), before=position.position_id(),
                                  after=play.result.position_id()))
        position = play.result.swap()
    # The second turn is the doubtful one: a 4 that might be a 5.
    turns[1] = replace(turns[1], flagged=True, confidence=0.4, reasons=reports.flags("low confidence"), candidates=(
        reports.candidate("move", "8/4 6/4", (4, 2), player="top", probability=0.55),
        reports.candidate("move", "8/3 6/4", (5, 2), player="top", probability=0.40),
    ))
    cv2.imwrite(str(folder / "page1.png"), page)
    readings = Readings((PageReading("page1.png", 1, tuple(boards)),))
    (folder / "sample.readings.json").write_text(readings_to_json(readings), encoding="utf-8")
    report = reports.report_json(reports.report([reports.game(1, turns)]), readings="sample.readings.json")
    path = folder / "sample.json"
    path.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return path


@pytest.fixture
def sample_report(tmp_path: Path) -> Path:
    """A report with one flagged turn, its readings and page image, in a folder of its own."""
    folder = tmp_path / "scans"
    folder.mkdir()
    return build_sample(folder)


@contextlib.contextmanager
def served(session: ReviewSession) -> Iterator[ReviewServer]:
    """``session`` served on a free port of 127.0.0.1, in a thread, until the block ends."""
    server = ReviewServer(session, "127.0.0.1", 0)
    server.start_in_thread()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def review_server(sample_report: Path) -> Iterator[ReviewServer]:
    """A review server of the hand-made sample (no solver)."""
    # The hand-made report is not what a solve of its readings gives: test the server alone.
    with served(ReviewSession(sample_report, resolve=False)) as server:
        yield server


@pytest.fixture(scope="session")
def solved_sample_master(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A real solve of a real readings file with one damaged board: (folder, truth .mat text)."""
    from digitise.notation.mat import format_mat
    from digitise.notation.readings import load_readings
    from digitise.solve import report_to_json, solve
    from tests.review.sample_match import write_sample

    folder = tmp_path_factory.mktemp("solved")
    sample = write_sample(folder, damage=2, note_pages=True)
    result = solve(load_readings(sample.readings), players=("Alice", "Bob"), length=5)
    report = dict(result.report)
    report.update(readings=sample.readings.name, players=["Alice", "Bob"], length=5)
    (folder / "match.json").write_text(report_to_json(report), encoding="utf-8")
    return folder, format_mat(sample.truth)


@pytest.fixture
def solved_sample(solved_sample_master: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    """A fresh copy of the solved sample: (report path, truth .mat text)."""
    import shutil

    folder = tmp_path / "solved"
    shutil.copytree(solved_sample_master[0], folder)
    return folder / "match.json", solved_sample_master[1]


@pytest.fixture
def batch_folder(solved_sample_master: tuple[Path, str], tmp_path: Path) -> Path:
    """A batch's output folder: two reports of the solved sample (m2, m10) and their .mat, its readings, and files that are no reports."""
    import shutil

    folder = tmp_path / "converted"
    shutil.copytree(solved_sample_master[0], folder)
    report = folder / "match.json"
    doc = json.loads(report.read_text(encoding="utf-8"))
    for name in ("m10", "m2"):
        # As batch writes them: NAME.mat beside NAME.report.json, which names it.
        (folder / f"{name}.report.json").write_text(json.dumps({**doc, "mat": f"{name}.mat"}), encoding="utf-8")
        (folder / f"{name}.mat").write_text(" 5 point match\n", encoding="utf-8")
    report.unlink()
    (folder / "summary.json").write_text('{"counts": {}, "jobs": []}\n')
    (folder / "notes.json").write_text('{"not": "a report"}\n')
    (folder / "broken.json").write_text("{")
    return folder


@pytest.fixture(scope="session")
def unsure_fit_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page of another print (club-small) with its third board ruled by hand (bent in waves), scanned by ``digitise
    scan``: the report."""
    from click.testing import CliRunner

    from digitise.cli import cli
    from digitise.notation.template import load_template
    from digitise.sheet.damage import Degrade
    from digitise.sheet.prints import PRINTS
    from digitise.vision.images import PageImage
    from digitise.vision.read import analyse_page
    from tests.vision.conftest import wave_board
    from tests.vision.test_layout import written_page

    folder = tmp_path_factory.mktemp("unsure-fit")
    page = written_page(PRINTS["club-small"], Degrade.MEDIUM)
    reading, _ = analyse_page(PageImage("page.png", 1, page.image), [load_template("a4")], header=False)
    box = reading.boards[2].box
    assert box is not None
    cv2.imwrite(str(folder / "page.png"), wave_board(page.image, box, 6.0))
    report = folder / "match.report.json"
    done = CliRunner().invoke(cli, ["scan", str(folder / "page.png"), "-o", str(folder / "match.mat"),
                                    "--report", str(report), "--players", "Alice,Bruno", "--length", "5",
                                    "--exit-zero"])
    assert done.exit_code == 0, done.output
    return report


@pytest.fixture
def unsure_fit_report(unsure_fit_master: Path, tmp_path: Path) -> Path:
    """A fresh copy of the scanned page with a board ruled by hand: its report's path."""
    import shutil

    folder = tmp_path / "unsure-fit"
    shutil.copytree(unsure_fit_master.parent, folder)
    return folder / unsure_fit_master.name

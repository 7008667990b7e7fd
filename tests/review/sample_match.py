"""A small real match for the review tests: self-played, encoded, read with certainty, one board damaged.

Built with the real engine, the real encoder and the real readings writer, so
that the report comes from a real solve of a real readings file.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from digitise.game.match import Score
from digitise.game.position import Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Roll, is_closed_out, legal_plays
from digitise.notation.encode import board_place, encode_match
from digitise.notation.marks import BOARDS_PER_PAGE, BoardMarks
from digitise.notation.readings import (
    BoardReading,
    CellReading,
    PageReading,
    Readings,
    certain_reading,
    readings_to_json,
)

BOX_W, BOX_H = 260, 90


def self_play(seed: int, moves: int) -> MatchRecord:
    """``moves`` random legal turns from the start, then a double by the player on roll and a drop."""
    rng = random.Random(seed)
    pos = Position.initial()  # seen by the player on roll
    side = Side.BOTTOM
    actions: list[Action] = []
    for _ in range(moves):
        assert not is_closed_out(pos)
        while True:
            roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
            if actions or not roll.is_double:
                break
        plays = sorted(legal_plays(pos, roll), key=str)
        play = rng.choice(plays) if plays else None
        actions.append(Action(side, ActionKind.MOVE, roll=roll, play=play))
        pos = (play.result if play else pos).swap()
        side = side.opponent
    actions.append(Action(side, ActionKind.DOUBLE, cube=2))
    actions.append(Action(side.opponent, ActionKind.DROP))
    game = GameRecord(1, Score(), tuple(actions), winner=side, points=1)
    return MatchRecord(5, ("Alice", "Bob"), (game,))


def board_box(index: int) -> tuple[int, int, int, int]:
    """Where board ``index`` is drawn on a fixture page: two columns of four."""
    column, row = (index - 1) % 2, (index - 1) // 2
    return (30 + column * (BOX_W + 40), 30 + row * (BOX_H + 30), BOX_W, BOX_H)


@dataclass(frozen=True)
class Sample:
    """The files of a sample and what its damaged board truly says."""

    readings: Path
    truth: MatchRecord
    damaged: tuple[int, int]


def write_sample(
    folder: Path, *, seed: int = 7, moves: int = 12, damage: int = 4, lose_arrow: bool = False, note_pages: bool = False
) -> Sample:
    """Write page PNGs and ``match.readings.json`` into ``folder``.

    Board number ``damage`` (0-based, a move board) is read wrongly: each of
    its digits ``d`` is taken as ``7 - d``, with certainty, so the solver must
    flag it and a person must correct it. With ``lose_arrow`` the arrow of the
    double is not seen instead (and ``damage`` names that board). With
    ``note_pages`` the pages are the printed note (a4, 150 dpi) with the true
    digits written in their squares, so the reader can fit them; otherwise
    plain pictures of boxes.
    """
    truth = self_play(seed, moves)
    encoded = encode_match(truth)
    pages: dict[int, list] = {}
    for k, board in enumerate(encoded):
        page, index = board_place(k)
        reading = certain_reading(index, board.marks)
        if k == damage and lose_arrow:
            reading = replace(reading, arrow=0.0)
        elif k == damage:
            cells = {name: (CellReading(tuple(7 - d for d in cands[0].digits), 1.0),)
                     for name, cands in reading.cells.items()}
            reading = replace(reading, cells=cells)
        pages.setdefault(page, []).append(replace(reading, box=board_box(index)))
    page_readings = []
    for page, boards in sorted(pages.items()):
        name = f"page{page}.png"
        if note_pages:
            image, boards = _note_page([encoded[k].marks for k in range(len(encoded)) if board_place(k)[0] == page],
                                       boards)
        else:
            image = _plain_page(boards)
        cv2.imwrite(str(folder / name), image)
        page_readings.append(PageReading(name, page, tuple(boards)))
    assert len(encoded) <= len(pages) * BOARDS_PER_PAGE
    path = folder / "match.readings.json"
    path.write_text(readings_to_json(Readings(tuple(page_readings))), encoding="utf-8")
    return Sample(path, truth, board_place(damage))


def _plain_page(boards: list[BoardReading]) -> np.ndarray:
    """A simple picture: each board a box with its digits as text."""
    image = np.full((4 * (BOX_H + 30) + 60, 2 * (BOX_W + 40) + 60, 3), 250, np.uint8)
    for board in boards:
        assert board.box is not None
        x, y, w, h = board.box
        cv2.rectangle(image, (x, y), (x + w, y + h), (120, 120, 120), 1)
        text = " ".join(f"{n}:{''.join(map(str, c[0].digits))}" for n, c in board.cells.items())
        text = text or ("arrow" if board.arrow else "")
        cv2.putText(image, f"{board.index}", (x + 4, y + 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1)
        cv2.putText(image, text[:34], (x + 10, y + 55), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (150, 40, 0), 1)
    return image


NOTE_DPI = 150


def _note_page(marks: list[BoardMarks], boards: list[BoardReading]) -> tuple[np.ndarray, list[BoardReading]]:
    """The printed note with the true digits written in, and the boards' boxes on it."""
    from digitise.notation.template import load_template, px_per_mm
    from digitise.sheet.printing import render_template

    template = load_template("a4")
    image = render_template(template, NOTE_DPI)
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    s = px_per_mm(NOTE_DPI)
    placed = []
    for board_marks, board in zip(marks, boards, strict=True):
        geometry = template.board(board.index)
        for name, digits in board_marks.cells.items():
            cell = geometry.cells[name]
            x, y = round((cell.x + 1.0) * s), round((cell.y + cell.h - 2.5) * s)
            cv2.putText(image, "".join(map(str, digits)), (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (140, 30, 10), 2)
        rect = geometry.rect
        margin = 2.0 * s
        box = (round(rect.x * s - margin), round(rect.y * s - margin), round(rect.w * s + 2 * margin),
               round(rect.h * s + 2 * margin))
        placed.append(replace(board, box=box))
    return image, placed

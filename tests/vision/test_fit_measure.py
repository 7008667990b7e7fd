"""How sure the vision is that a board's squares sit where printed: measured on real pages of another print."""

from __future__ import annotations

import numpy as np
import pytest

from digitise.notation.template import load_template
from digitise.sheet.damage import Degrade
from digitise.sheet.prints import PRINTS
from digitise.vision.images import PageImage
from digitise.vision.read import analyse_page
from tests.vision.conftest import erase_board_lines, skew_board, wave_board
from tests.vision.test_layout import written_page

TEMPLATES = [load_template("a4"), load_template("letter")]


def fits(image: np.ndarray) -> dict[int, float | None]:
    """Each board's ``fit`` as the page's readings say it (None: sure)."""
    reading, _ = analyse_page(PageImage("other.png", 1, image), TEMPLATES, header=False)
    assert reading.header["method"]["value"] == "lines"
    for board in reading.boards:
        # The lines placed go with the measure, to draw over the board's picture.
        assert (board.lines is None) == (board.fit is None)
        if board.lines is not None:
            assert [len(row) for row in board.lines] == [15] * 4
    return {board.index: board.fit for board in reading.boards}


@pytest.mark.parametrize("name", ["club-small", "club-large", "photocopy-club"])
def test_the_boards_of_a_clean_page_of_another_print_are_sure(name: str) -> None:
    page = written_page(PRINTS[name], Degrade.MEDIUM)
    assert set(fits(page.image).values()) == {None}


@pytest.mark.parametrize("damage", ["skewed", "erased", "wavy"])
def test_a_damaged_board_is_unsure_and_the_others_are_not(damage: str) -> None:
    page = written_page(PRINTS["club-small"], Degrade.MEDIUM)
    reading, _ = analyse_page(PageImage("other.png", 1, page.image), TEMPLATES, header=False)
    box = reading.boards[2].box
    assert box is not None
    # Askew by 4 degrees; the right half's lines rubbed out; bent in waves of about 1 mm (6 px at 150 dpi).
    image = (skew_board(page.image, box, 4.0) if damage == "skewed" else erase_board_lines(page.image, box, 0.5)
             if damage == "erased" else wave_board(page.image, box, 6.0))
    found = fits(image)
    damaged = found.pop(3)
    assert damaged is not None and damaged < 0.5
    assert set(found.values()) == {None}

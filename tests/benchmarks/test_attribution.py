"""How the end-to-end benchmark names what started a wrong turn (benchmarks/bench_end_to_end.py)."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.bench_end_to_end import board_read_right, misread_kinds


def _truth(cells: dict[str, list[int]], crossed: bool = False, arrow: bool = False) -> dict[str, Any]:
    return {"cells": cells, "crossed": crossed, "arrow": arrow}


def _reading(cells: dict[str, list[int]], crossed: float = 0.0, arrow: float = 0.0) -> dict[str, Any]:
    return {"cells": {name: [[digits, 0.9], [[], 0.1]] for name, digits in cells.items()},
            "crossed": crossed, "arrow": arrow}


def test_a_board_read_right_names_nothing() -> None:
    truth = _truth({"W3": [5], "W1": [2], "centre": [6]}, crossed=True)
    reading = _reading({"W3": [5], "W1": [2], "centre": [6]}, crossed=0.99)
    assert misread_kinds(reading, truth) == ""
    assert board_read_right(reading, truth)


@pytest.mark.parametrize(("read", "crossed", "kinds"), [
    ({"W3": [5], "W1": [3], "centre": [6]}, 0.99, "point"),
    ({"W3": [5], "centre": [6]}, 0.99, "point"),  # a digit missed is a misread of its square
    ({"W3": [5], "W1": [2], "centre": [5]}, 0.99, "centre"),
    ({"W3": [5], "W1": [2], "centre": [6]}, 0.2, "cross"),
    ({"W3": [5], "W1": [2], "Woff": [4], "centre": [3]}, 0.99, "centre+off"),
])
def test_the_misread_cells_are_named_by_kind(read: dict[str, list[int]], crossed: float, kinds: str) -> None:
    truth = _truth({"W3": [5], "W1": [2], "centre": [6]}, crossed=True)
    reading = _reading(read, crossed=crossed)
    assert misread_kinds(reading, truth) == kinds
    assert not board_read_right(reading, truth)


def test_digits_of_a_square_in_any_order_are_the_same_reading() -> None:
    assert misread_kinds(_reading({"B2": [1, 6]}), _truth({"B2": [6, 1]})) == ""


def test_a_board_the_reader_never_saw_says_so() -> None:
    assert misread_kinds(None, _truth({"B2": [6]})) == "board not read"

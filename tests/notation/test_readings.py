"""The readings JSON contract: writing it deterministically and refusing what breaks it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from digitise.errors import ReadingsError
from digitise.notation.marks import BoardMarks
from digitise.notation.readings import (
    BoardReading,
    CellReading,
    PageReading,
    Readings,
    certain_reading,
    load_readings,
    paginate,
    parse_readings,
    readings_to_json,
)


def _sample() -> Readings:
    board = BoardReading(
        index=3,
        cells={"centre": (CellReading((6, 3), 0.9),), "B7": (CellReading((6,), 0.97), CellReading((5,), 0.02)),
               "Wres": (CellReading((1, 2), 0.8), CellReading((), 0.1))},
        crossed=0.95, arrow=0.01, letters=0.0, box=(10, 20, 300, 150), touches={"B7": ("B6", "B8")},
    )
    blank = certain_reading(4, BoardMarks())
    return Readings((PageReading("scan1.png", 1, (board, blank), {"match_length": {"value": "7"}}),))


def test_round_trip_is_exact_and_deterministic() -> None:
    readings = _sample()
    text = readings_to_json(readings)
    assert parse_readings(text) == readings
    assert readings_to_json(parse_readings(text)) == text
    # Cells in the contract's order, whatever order they were given in.
    doc = json.loads(text)
    assert list(doc["pages"][0]["boards"][0]["cells"]) == ["B7", "centre", "Wres"]
    assert doc["pages"][0]["boards"][0]["box"] == [10, 20, 300, 150]
    assert "box" not in doc["pages"][0]["boards"][1]
    # Neighbours in the contract's order too; a board whose writing touches no side says nothing.
    assert doc["pages"][0]["boards"][0]["touches"] == {"B7": ["B6", "B8"]}
    assert "touches" not in doc["pages"][0]["boards"][1]


def test_a_pages_file_size_is_kept_when_recorded() -> None:
    """`read` records each page file's size: `solve` checks a corrections file by it wherever it runs."""
    from dataclasses import replace

    sized = Readings((replace(_sample().pages[0], source_bytes=123456),))
    text = readings_to_json(sized)
    assert text.splitlines()[1].startswith(' {"source": "scan1.png", "page": 1, "bytes": 123456, "header"')
    assert parse_readings(text) == sized
    assert '"bytes"' not in readings_to_json(_sample())  # not recorded: not written
    for bad in ("-1", "1.5", '"12"', "true"):
        with pytest.raises(ReadingsError) as info:
            parse_readings(text.replace("123456", bad), "r.json")
        assert info.value.where == "$.pages[0].bytes" and "size in bytes" in info.value.reason


def test_probabilities_are_rounded_to_four_places() -> None:
    board = BoardReading(1, {"B1": (CellReading((1,), 0.123456789),)}, crossed=1 / 3)
    text = readings_to_json(Readings((PageReading("x", 1, (board,)),)))
    assert "0.1235" in text and "0.3333" in text and "0.123456" not in text


def test_paginate_lays_out_eight_boards_a_page() -> None:
    boards = [certain_reading(k % 8 + 1, BoardMarks()) for k in range(19)]
    readings = paginate(boards, "synthetic")
    assert [p.page for p in readings.pages] == [1, 2, 3]
    assert [len(p.boards) for p in readings.pages] == [8, 8, 3]


def _doc(**board: object) -> str:
    base: dict[str, object] = {"index": 2, "cells": {}}
    base.update(board)
    return json.dumps({"pages": [{"source": "s", "page": 1, "header": {}, "boards": [{"index": 1}, base]}]})


@pytest.mark.parametrize(("text", "where", "reason"), [
    (_doc(cells={"B13": [[[1], 0.5]]}), "$.pages[0].boards[1].cells.B13", "unknown cell"),
    (_doc(cells={"B7": [[[7], 0.5]]}), "$.pages[0].boards[1].cells.B7[0][0][0]", "out of range 1-6"),
    (_doc(cells={"centre": [[[0], 0.5]]}), "$.pages[0].boards[1].cells.centre[0][0][0]", "out of range"),
    (_doc(cells={"Bres": [[[10], 0.5]]}), "$.pages[0].boards[1].cells.Bres[0][0][0]", "out of range 0-9"),
    (_doc(cells={"B7": [[[6], 1.5]]}), "$.pages[0].boards[1].cells.B7[0][1]", "within [0, 1]"),
    (_doc(cells={"B7": [[[6], 0.7], [[5], 0.7]]}), "$.pages[0].boards[1].cells.B7", "more than 1"),
    (_doc(cells={"B7": [[6, 0.7]]}), "$.pages[0].boards[1].cells.B7[0][0]", "digits must be a list"),
    (_doc(index=9), "$.pages[0].boards[1].index", "1..8"),
    (_doc(index=1), "$.pages[0].boards[1].index", "on this page twice"),
    (_doc(arrow=-0.1), "$.pages[0].boards[1].arrow", "within [0, 1]"),
    (_doc(crossed="yes"), "$.pages[0].boards[1].crossed", "must be a number"),
    (_doc(colour=1), "$.pages[0].boards[1]", "unknown key"),
    (_doc(touches=["W5"]), "$.pages[0].boards[1].touches", "must be an object"),
    (_doc(touches={"Woff": ["W1"]}), "$.pages[0].boards[1].touches.Woff", "no point square"),
    (_doc(touches={"W5": ["W7"]}), "$.pages[0].boards[1].touches.W5", "not a point square beside W5"),
    (_doc(touches={"W12": ["B12"]}), "$.pages[0].boards[1].touches.W12", "not a point square beside W12"),
    (_doc(touches={"W5": "W6"}), "$.pages[0].boards[1].touches.W5", "must be a list"),
    (_doc(fit=1.2), "$.pages[0].boards[1].fit", "within [0, 1]"),
    (_doc(lines=[[1, 2]]), "$.pages[0].boards[1].lines[0][0]", "must be [x, y]"),
    (_doc(lines=[]), "$.pages[0].boards[1].lines", "rows of [x, y]"),
    ('{"pages": 3}', "$", "list 'pages'"),
])
def test_contract_violations_name_the_json_path(text: str, where: str, reason: str) -> None:
    with pytest.raises(ReadingsError) as info:
        parse_readings(text, "r.json")
    assert info.value.where == where
    assert reason in info.value.reason
    assert info.value.message.startswith("r.json: ")


def test_result_squares_accept_zero() -> None:
    readings = parse_readings(_doc(cells={"Wres": [[[1, 0], 0.9]]}))
    assert readings.pages[0].boards[1].cells["Wres"][0].digits == (1, 0)


def test_not_json_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ReadingsError, match="not JSON"):
        parse_readings("{pages", "r.json")
    with pytest.raises(ReadingsError, match="no such file"):
        load_readings(tmp_path / "missing.json")
    path = tmp_path / "ok.json"
    path.write_text(readings_to_json(_sample()), encoding="utf-8")
    assert load_readings(path) == _sample()


def test_a_number_too_long_to_read_is_a_readings_error() -> None:
    """Said in digitise's words, where it is: Python's own ("use sys.set_int_max_str_digits()") is no advice
    for a user of digitise."""
    with pytest.raises(ReadingsError) as info:
        parse_readings('{"pages": [\n {"page": ' + "1" * 5000 + "}]}", "r.json")
    assert info.value.message == ("r.json: not a readings file: a number 5,000 digits long at line 2 column 11 "
                                  "(none may be over 4,300)")


def _with_header(header: dict[str, object]) -> str:
    return json.dumps({"pages": [{"source": "s", "page": 1, "header": header, "boards": []}]})


@pytest.mark.parametrize(("header", "where", "reason"), [
    ({"page": {"value": "1", "confidence": 10 ** 400}}, "$.pages[0].header.page.confidence", "within [0, 1]"),
    ({"match_length": {"value": "7", "confidence": -0.5}}, "$.pages[0].header.match_length.confidence",
     "within [0, 1]"),
    ({"player_top": {"value": "x" * 1001, "confidence": 0.9}}, "$.pages[0].header.player_top.value",
     "over 1000 characters"),
    ({"page": {"value": 10 ** 12, "confidence": 0.9}}, "$.pages[0].header.page.value", "is no page number"),
])
def test_a_header_field_the_reader_could_not_have_written_is_named(header: dict[str, object], where: str,
                                                                     reason: str) -> None:
    """A confidence too large for a float, or a page number of thousands of digits, was an internal error."""
    with pytest.raises(ReadingsError) as info:
        parse_readings(_with_header(header), "r.json")
    assert info.value.where == where and reason in info.value.reason
    assert len(info.value.message) < 300


def test_a_page_number_of_many_digits_is_no_page_number() -> None:
    from digitise.notation.readings import written_page_number

    readings = parse_readings(_with_header({"page": {"value": "9" * 1000, "confidence": 0.9}}))
    assert written_page_number(readings.pages[0]) == (None, 0.0)


def test_how_sure_a_boards_squares_sit_is_kept_and_left_out_when_not_said() -> None:
    """The vision says ``fit`` (and the lines placed) only for a board it was unsure of: readings written before
    it, and boards it was sure of, say nothing, and their text is as it was."""
    from dataclasses import replace

    page = _sample().pages[0]
    lines = tuple(tuple((10 + 20 * i, 20 + 40 * row) for i in range(15)) for row in range(4))
    unsure = replace(page.boards[0], fit=0.31234, lines=lines)
    readings = Readings((replace(page, boards=(unsure, page.boards[1])),))
    text = readings_to_json(readings)
    doc = json.loads(text)
    assert doc["pages"][0]["boards"][0]["fit"] == 0.3123
    assert doc["pages"][0]["boards"][0]["lines"][3][14] == [290, 140]
    back = parse_readings(text)
    assert back.pages[0].boards[0].fit == 0.3123 and back.pages[0].boards[0].lines == lines
    assert readings_to_json(back) == text
    plain = readings_to_json(_sample())
    assert '"fit"' not in plain and '"lines"' not in plain
    assert parse_readings(plain).pages[0].boards[0].fit is None

"""benchmarks/confusions.py: one-digit squares set against what was written, from a saved set's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.confusions import main, one_digit_squares


def _saved_set(folder: Path) -> Path:
    """A level folder as bench_end_to_end.py leaves it: one match, one page, two boards."""
    truth = folder / "pages" / ".m1.truth"
    truth.mkdir(parents=True)
    (truth / "page-001.truth.json").write_text(json.dumps({"page": 1, "boards": [
        {"index": 1, "cells": {"B3": [2], "B1": [1], "centre": [6]}},
        {"index": 2, "cells": {"W5": [5, 2], "Woff": [6]}},
    ]}), encoding="utf-8")
    out = folder / "out"
    out.mkdir()
    (out / "m1.mat").write_text("", encoding="utf-8")
    (out / "m1.report.readings.json").write_text(json.dumps({"pages": [{"page": 1, "boards": [
        {"index": 1, "cells": {"B3": [[[1], 0.92], [[2], 0.07]], "B1": [[[1], 0.99]], "centre": [[[5], 0.6]]}},
        {"index": 2, "cells": {"W5": [[[2, 5], 0.9]]}},
    ]}]}), encoding="utf-8")
    return folder


def test_each_one_digit_square_is_set_against_its_top_reading(tmp_path: Path) -> None:
    squares = one_digit_squares(_saved_set(tmp_path / "heavy"))
    # The centre and the two-digit square are left out; the unread off square reads as empty.
    assert sorted(squares) == [(1, (1,), 0.99), (2, (1,), 0.92), (6, (), 1.0)]


def test_the_table_counts_the_confusions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(_saved_set(tmp_path / "heavy"))]) == 0
    printed = capsys.readouterr().out
    assert "| 2 | 1 | 1 | 1 1 |" in printed
    assert "| 6 | 1 | 1 | empty 1 |" in printed
    assert "| 0.90-0.95 | 1 | 0 (0%) |" in printed and "| 0.95-1.00 | 1 | 1 (100%) |" in printed


def test_a_folder_without_saved_readings_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "out").mkdir()
    assert main([str(tmp_path)]) == 1
    assert "no saved readings" in capsys.readouterr().err

"""Reviewing a folder of reports (a batch's output): finding them, one session each, their figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from digitise.errors import InputError
from digitise.review.corrections import corrections_path, load_corrections
from digitise.review.folder import ReviewFolder, find_reports
from tests.review.test_session import TRUE_PLAY


def test_finds_only_reports_in_natural_order(batch_folder: Path) -> None:
    assert [p.name for p in find_reports(batch_folder)] == ["m2.report.json", "m10.report.json"]


def test_a_folder_without_reports_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "x.readings.json").write_text("{}")
    with pytest.raises(InputError, match="no digitise report in this folder"):
        ReviewFolder(tmp_path)
    with pytest.raises(InputError, match="no such folder"):
        ReviewFolder(tmp_path / "absent")


def test_each_match_has_its_own_session_and_corrections(batch_folder: Path) -> None:
    folder = ReviewFolder(batch_folder)
    listed = folder.matches()
    assert [(m["number"], m["name"], m["opened"]) for m in listed] == [(1, "m2", False), (2, "m10", False)]
    assert listed[0]["flagged"] >= 1 and listed[0]["corrected"] == 0 and listed[0]["turns"] > 10
    with pytest.raises(KeyError):
        folder.session(3)
    second = folder.session(2)
    assert folder.session(2) is second
    second.correct(TRUE_PLAY)
    assert load_corrections(corrections_path(batch_folder / "m10.report.json")) == {(1, 3): "51: 22/21 8/3"}
    assert not corrections_path(batch_folder / "m2.report.json").exists()
    after = folder.matches()
    assert after[1]["opened"] and after[1]["corrected"] == 1
    assert after[1]["flagged"] < listed[1]["flagged"]
    # A closed match's figures come from its files: the saved correction is counted.
    again = ReviewFolder(batch_folder).matches()
    assert again[1]["corrected"] == 1 and not again[1]["opened"]


def test_a_bad_corrections_file_is_shown_against_its_match(batch_folder: Path) -> None:
    corrections_path(batch_folder / "m2.report.json").write_text('{"1:2": "jump"}')
    listed = ReviewFolder(batch_folder).matches()
    assert "cannot read 'jump'" in listed[0]["problem"]
    assert "problem" not in listed[1]


def test_only_a_few_sessions_stay_open_and_a_reopened_one_keeps_its_corrections(
        batch_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import digitise.review.folder as folder_module

    monkeypatch.setattr(folder_module, "OPEN_SESSIONS", 1)
    folder = ReviewFolder(batch_folder)
    first = folder.session(1)
    first.correct(TRUE_PLAY)
    second = folder.session(2)
    assert [m["opened"] for m in folder.matches()] == [False, True]
    reopened = folder.session(1)
    assert reopened is not first and reopened is not second
    assert reopened.state()["corrections"] == [{"page": 1, "board": 3, "text": "51: 22/21 8/3"}]
    assert reopened.export_mat() == first.export_mat()

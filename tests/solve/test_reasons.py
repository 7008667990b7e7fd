"""Reasons as data: every flag reason and note has one stable code, and the report carries it beside its text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from digitise.notation.readings import load_readings
from digitise.solve import solve
from digitise.solve.reasons import CODES_KEY, Reason, codes_of, reason_of, reference_markdown

DATA = Path(__file__).resolve().parents[1] / "data"


def _filled(template: str) -> str:
    """A reason's template with every field filled in."""
    return re.sub(r"\{[^{}]*\}", "7", template)


def test_every_code_is_unique_and_stable_in_form() -> None:
    codes = [member.code for member in Reason.__members__.values()]
    # An Enum takes a repeated value as an alias of the first member silently: the names would hide it.
    assert len(codes) == len(set(codes)) == len(Reason)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", code) for code in codes), codes
    assert all(member.action.strip() and member.text.strip() for member in Reason)


def test_every_reason_is_told_back_from_its_own_text() -> None:
    for member in Reason:
        assert reason_of(_filled(member.text)) is member, member
    assert reason_of("no such reason") is None


def test_a_flag_fills_in_its_template() -> None:
    flag = Reason.PAGE_GAP.flag(before=2, after=4)
    assert flag.code == "page-gap"
    assert flag.text == "the page numbers jump from 2 to 4 before this page: a page missing?"
    assert Reason.LOW_CONFIDENCE.flag().text == "low confidence"


def _said(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every list of reasons in ``report``: each turn's, each skipped board's, and the notes."""
    return ([turn for game in report["games"] for turn in game["turns"]] + list(report["skipped"]) + [report])


@pytest.mark.parametrize("name", ["heavy_bearoff_misread", "medium_bearoff_game_left_unfinished",
                                  "heavy_misread_far_from_its_trouble"])
def test_the_report_carries_each_reasons_code_beside_its_text(name: str) -> None:
    report = solve(load_readings(DATA / f"{name}.readings.json")).report
    seen = 0
    for entry in _said(report):
        key = "notes" if entry is report else "reasons"
        texts = entry[key]
        assert len(entry[CODES_KEY[key]]) == len(texts)
        # Every reason produced has a member, and the code given is that member's.
        told = [reason_of(text) for text in texts]
        assert None not in told, texts
        assert entry[CODES_KEY[key]] == [reason.code for reason in told if reason is not None]
        assert codes_of(entry, key) == entry[CODES_KEY[key]]
        seen += len(texts)
    assert seen, "these readings are flagged somewhere"


def test_a_report_without_codes_has_them_told_from_its_texts() -> None:
    turn = {"reasons": ["low confidence", "game does not end", "something else"]}
    assert codes_of(turn) == ["low-confidence", "game-does-not-end", ""]


def test_the_reasons_page_lists_every_reason_as_the_code_says() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "reasons.md").read_text(encoding="utf-8")
    assert page == reference_markdown(), "docs/reasons.md is out of date: write reference_markdown() to it"
    assert all(f"| `{member.code}` |" in page for member in Reason)

"""A tournament's entry list: names read off headers taken as the entrant they spell."""

from __future__ import annotations

import pytest

from digitise.solve.roster import roster_name

ROSTER = ("Ines", "Omar", "Karl", "Mei", "Lena", "Ravi", "Sofia", "Tomas")


@pytest.mark.parametrize(("read", "entrant"), [
    ("Mei", "Mei"), ("Mel", "Mei"), ("Me;", "Mei"), ("Me!", "Mei"),  # OCR's slips on a short name
    ("ines", "Ines"), ("/nes", "Ines"), ("Inés", "Ines"),  # case, a stroke for a letter, an accent
    ("Kar!", "Karl"), ("Omer", "Omar"), ("Rav;", "Ravi"), ("Sotia", "Sofia"), ("TOmas", "Tomas"),
    ("Forngs", None), ("Lucky Lux", None), ("", None), ("!!", None),  # nobody on the list
])
def test_a_name_read_is_the_entrant_it_spells(read: str, entrant: str | None) -> None:
    assert roster_name(read, ROSTER) == entrant


def test_a_name_between_two_entrants_is_neither() -> None:
    assert roster_name("Mer", ("Mei", "Mel")) is None
    assert roster_name("Mer", ("Mei", "Omar")) == "Mei"


def test_a_longer_name_may_differ_by_more_letters() -> None:
    assert roster_name("DiablogelDgdos", ("DiablodelDados", "Kabrus")) == "DiablodelDados"
    assert roster_name("Liabpa", ("Llabba",)) == "Llabba"
    assert roster_name("Lo", ("Lena",)) is None


def test_entrants_told_apart_by_case_alone_take_the_name_as_written() -> None:
    assert roster_name("lasse", ("Lasse", "lasse")) == "lasse"
    assert roster_name("Lasse", ("Lasse", "lasse")) == "Lasse"
    assert roster_name("LASSE", ("Lasse", "lasse")) is None

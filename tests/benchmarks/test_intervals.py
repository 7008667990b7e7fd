"""The benchmarks' interval over matches (benchmarks/intervals.py): what the README's figures are quoted with."""

from __future__ import annotations

import pytest

from benchmarks.intervals import describe, difference_interval, match_interval


def test_the_interval_holds_the_figure_and_is_the_same_every_run() -> None:
    turns = [100, 80, 120, 90, 110, 95]
    right = [100, 70, 118, 90, 105, 95]
    low, high = match_interval(right, turns)
    assert low < sum(right) / sum(turns) < high
    assert (low, high) == match_interval(right, turns)


def test_more_matches_alike_narrow_it() -> None:
    turns, right = [100, 100, 100, 100], [100, 90, 100, 95]
    low, high = match_interval(right, turns)
    low4, high4 = match_interval(right * 4, turns * 4)
    assert high4 - low4 < high - low


def test_matches_all_right_give_no_spread() -> None:
    assert match_interval([50, 60], [50, 60]) == (1.0, 1.0)
    assert describe([50, 60], [50, 60]) == "100.00 % (95 % of resamples: 100.00-100.00 %)"


@pytest.mark.parametrize(("parts", "wholes"), [([], []), ([1, 2], [3]), ([1], [0])])
def test_counts_that_are_not_one_per_match_are_refused(parts: list[int], wholes: list[int]) -> None:
    with pytest.raises(ValueError, match="one part and one positive whole per match"):
        match_interval(parts, wholes)


def test_a_paired_difference_holds_the_figure_and_is_zero_for_the_same_counts() -> None:
    turns = [100, 80, 120, 90, 110, 95]
    right = [100, 70, 118, 90, 105, 95]
    base = [99, 75, 118, 88, 108, 95]
    low, high = difference_interval(right, turns, base, turns)
    diff = sum(right) / sum(turns) - sum(base) / sum(turns)
    assert low <= diff <= high
    assert difference_interval(right, turns, right, turns) == (0.0, 0.0)


def test_pairing_narrows_a_difference_that_follows_the_matches() -> None:
    # The print costs one turn in every match; the matches themselves differ a lot.
    turns = [100, 100, 100, 100, 100, 100]
    base = [100, 60, 95, 70, 99, 80]
    right = [b - 1 for b in base]
    low, high = difference_interval(right, turns, base, turns)
    assert (low, high) == pytest.approx((-0.01, -0.01))


def test_a_difference_of_unpaired_counts_is_refused() -> None:
    with pytest.raises(ValueError, match="one part and one positive whole per match on each side"):
        difference_interval([1, 2], [3, 3], [1], [3])

"""How far a benchmark's per-turn figure could move on other matches: a bootstrap over matches.

Turns are not independent: one misread board can make every later turn of
its game wrong, and a writer or a page's damage affects all of a match. So
the figures are resampled by match (the unit that was drawn), not by turn:
the 95 % interval is that of the figure over 2,000 resamples of the
matches with replacement, drawn from a fixed seed so that the same run
prints the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Resamples of the matches, and the seed they are drawn from.
RESAMPLES = 2000
SEED = 0


def match_interval(parts: Sequence[int], wholes: Sequence[int], level: float = 0.95) -> tuple[float, float]:
    """The ``level`` bootstrap interval (as fractions) of ``sum(parts) / sum(wholes)``, resampling matches.

    ``parts[i]`` / ``wholes[i]`` are match i's count (turns right, say) and its turns.
    """
    part = np.asarray(parts, np.float64)
    whole = np.asarray(wholes, np.float64)
    if part.shape != whole.shape or part.ndim != 1 or not part.size or whole.sum() <= 0:
        raise ValueError("one part and one positive whole per match, at least one match")
    picks = np.random.default_rng(SEED).integers(0, part.size, size=(RESAMPLES, part.size))
    totals = whole[picks].sum(axis=1)
    ratios = part[picks].sum(axis=1) / np.where(totals > 0, totals, 1.0)
    low, high = np.quantile(ratios, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(low), float(high)


def describe(parts: Sequence[int], wholes: Sequence[int]) -> str:
    """``"97.48 % (95 % of resamples: 96.51-98.30 %)"`` for a per-match count and its turns."""
    low, high = match_interval(parts, wholes)
    return f"{100.0 * sum(parts) / sum(wholes):.2f} % (95 % of resamples: {100.0 * low:.2f}-{100.0 * high:.2f} %)"


def difference_interval(parts: Sequence[int], wholes: Sequence[int], base_parts: Sequence[int],
                        base_wholes: Sequence[int], level: float = 0.95) -> tuple[float, float]:
    """The ``level`` bootstrap interval (fractions) of ``parts``' ratio minus ``base_parts``' ratio.

    Both are counts of the same matches (match i is the same game in both, on another print, say), so
    each resample draws the same matches for both: the interval is that of the paired difference.
    """
    part, whole = np.asarray(parts, np.float64), np.asarray(wholes, np.float64)
    base, base_whole = np.asarray(base_parts, np.float64), np.asarray(base_wholes, np.float64)
    shapes = {part.shape, whole.shape, base.shape, base_whole.shape}
    if len(shapes) != 1 or part.ndim != 1 or not part.size or whole.sum() <= 0 or base_whole.sum() <= 0:
        raise ValueError("one part and one positive whole per match on each side, at least one match")
    picks = np.random.default_rng(SEED).integers(0, part.size, size=(RESAMPLES, part.size))

    def ratios(p: np.ndarray, w: np.ndarray) -> np.ndarray:
        totals = w[picks].sum(axis=1)
        return np.asarray(p[picks].sum(axis=1) / np.where(totals > 0, totals, 1.0))

    low, high = np.quantile(ratios(part, whole) - ratios(base, base_whole), [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return float(low), float(high)


"""A simulated handwriting reader: the marks of a note as an imperfect reader reports them.

The solver is built and measured on symbols before any image exists, so it
needs readings that fail the way a real reader fails: a digit read as a
similar one (the true reading kept as a lower candidate), a digit missed, a
stray stroke read as a digit, a digit written in the neighbouring square, an
arrow or an X missed or imagined, and candidate lists whose probabilities say
how sure the reader was. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from digitise.notation.marks import NUMBER_CELLS, BoardMarks
from digitise.notation.readings import BoardReading, CellReading

#: Handwritten digits that are mistaken for each other, most likely first.
CONFUSIONS: dict[int, tuple[int, ...]] = {
    0: (6, 8, 9),
    1: (7, 4, 2),
    2: (3, 7, 1),
    3: (5, 2, 8),
    4: (1, 9, 6),
    5: (6, 3, 8),
    6: (5, 0, 4),
    7: (1, 2, 9),
    8: (3, 0, 6),
    9: (4, 7, 0),
}


@dataclass(frozen=True, slots=True)
class NoiseProfile:
    """Rates of each kind of reading error (per digit, or per board for arrows and crosses)."""

    substitute: float = 0.03
    drop: float = 0.01
    spurious: float = 0.01
    neighbour: float = 0.005
    #: Of the substituted digits, the share whose true value the reader still lists.
    keeps_truth: float = 0.97
    #: Of the dropped digits, the share the reader still lists as a faint candidate.
    faint_drop: float = 0.5
    arrow_missed: float = 0.05
    arrow_phantom: float = 0.005
    cross_missed: float = 0.03
    cross_phantom: float = 0.005


MEDIUM = NoiseProfile()
CLEAN = NoiseProfile(0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
HEAVY = NoiseProfile(0.06, 0.02, 0.02, 0.01, 0.95, 0.5, 0.1, 0.01, 0.06, 0.01)


def _neighbours(cell: str) -> tuple[str, ...]:
    """Squares beside ``cell`` in its row (a digit written a little off lands there)."""
    if cell in ("Boff", "Woff"):
        return (cell[0] + "1",)
    if cell[0] in "BW" and cell[1:].isdecimal():
        n = int(cell[1:])
        out = [f"{cell[0]}{m}" for m in (n - 1, n + 1) if 1 <= m <= 12]
        if n == 1:
            out.append(cell[0] + "off")
        return tuple(out)
    return ()


def _confuse(rng: random.Random, digit: int, number_cell: bool) -> int:
    allowed = range(10) if number_cell else range(1, 7)
    options = [d for d in CONFUSIONS[digit] if d in allowed]
    if not options:
        options = [d for d in allowed if d != digit]
    # The first confusion is the usual one.
    return options[0] if rng.random() < 0.6 else rng.choice(options)


def noisy_reading(index: int, marks: BoardMarks, rng: random.Random, profile: NoiseProfile = MEDIUM) -> BoardReading:
    """How a fallible reader reports one board's ``marks``."""
    truth = {name: list(digits) for name, digits in marks.cells.items()}
    seen: dict[str, list[int]] = {name: [] for name in truth}
    # Lower candidates the reader keeps for a cell: digits sequences it also considered.
    faint: dict[str, list[list[int]]] = {}
    substituted: set[str] = set()
    for name, digits in truth.items():
        number_cell = name in NUMBER_CELLS
        for digit in digits:
            r = rng.random()
            if r < profile.drop:
                if rng.random() < profile.faint_drop:
                    faint.setdefault(name, []).append(list(digits))
                continue
            r -= profile.drop
            if r < profile.neighbour and not number_cell and _neighbours(name):
                target = rng.choice(_neighbours(name))
                seen.setdefault(target, []).append(digit)
                continue
            r -= profile.neighbour
            if r < profile.substitute:
                seen[name].append(_confuse(rng, digit, number_cell))
                substituted.add(name)
                continue
            seen[name].append(digit)
    total = sum(len(d) for name, d in truth.items() if name not in NUMBER_CELLS)
    for _ in range(total):
        if rng.random() < profile.spurious:
            pool = [n for n in truth if n not in NUMBER_CELLS and n != "centre"] or ["W6"]
            base = rng.choice(pool)
            target = rng.choice((base,) + _neighbours(base))
            seen.setdefault(target, []).append(rng.randint(1, 6))
    cells: dict[str, tuple[CellReading, ...]] = {}
    for name in sorted(set(seen) | set(faint)):
        observed = seen.get(name, [])[:4]
        true_digits = truth.get(name, [])
        exact = observed == true_digits or (sorted(observed) == sorted(true_digits) and name not in NUMBER_CELLS)
        top = rng.uniform(0.88, 0.995) if exact else rng.uniform(0.55, 0.95)
        candidates: list[tuple[list[int], float]] = [(observed, top)]
        rest = 1.0 - top
        if not exact and (name not in substituted or rng.random() < profile.keeps_truth):
            share = rng.uniform(0.4, 0.9) * rest
            candidates.append((list(true_digits), share))
            rest -= share
        elif observed:
            # A plausible misreading the reader also considered, with a little probability.
            i = rng.randrange(len(observed))
            other = observed.copy()
            other[i] = _confuse(rng, other[i], name in NUMBER_CELLS)
            share = rng.uniform(0.2, 0.8) * rest
            candidates.append((other, share))
            rest -= share
        for extra in faint.get(name, []):
            if extra != observed and all(extra != c for c, _ in candidates):
                share = rng.uniform(0.3, 0.8) * rest
                candidates.append((extra[:4], share))
                rest -= share
        if not observed and len(candidates) == 1:
            continue  # nothing seen, nothing suspected: the cell is simply empty
        cells[name] = tuple(CellReading(tuple(d), round(p, 4)) for d, p in candidates)
    crossed = _flag(rng, marks.crossed, profile.cross_missed, profile.cross_phantom)
    arrow = _flag(rng, marks.arrow, profile.arrow_missed, profile.arrow_phantom)
    letters = _flag(rng, bool(marks.letters), 0.02, 0.002)
    return BoardReading(index, cells, crossed, arrow, letters)


def _flag(rng: random.Random, present: bool, missed: float, phantom: float) -> float:
    """A board-level mark's probability as the reader reports it."""
    if present:
        return round(rng.uniform(0.05, 0.45) if rng.random() < missed else rng.uniform(0.8, 0.995), 4)
    return round(rng.uniform(0.55, 0.9) if rng.random() < phantom else rng.uniform(0.0, 0.08), 4)


def noisy_readings(boards: list[BoardMarks], seed: int, profile: NoiseProfile = MEDIUM) -> list[BoardReading]:
    """Readings of a note's ``boards`` (in order) by a fallible reader; board ``k`` gets index ``k % 8 + 1``."""
    rng = random.Random(seed)
    return [noisy_reading(k % 8 + 1, marks, rng, profile) for k, marks in enumerate(boards)]


__all__ = ["CLEAN", "CONFUSIONS", "HEAVY", "MEDIUM", "NoiseProfile", "noisy_reading", "noisy_readings"]

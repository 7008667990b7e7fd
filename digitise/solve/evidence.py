"""How well an expected set of marks agrees with what the reader saw on a board.

Scores are natural logarithms relative to the reader's own best guess: an
explanation that writes exactly the top candidate of every cell scores 0 (a
doublet's unplayed dice in the centre also carry how likely their way of
being written is, :func:`centre_forms`), and every departure costs what the
reader said it was worth (the log-ratio of the candidate used to the best
one) or, for digits the reader did not offer at all, :data:`EDIT` per digit
(a digit it read in the neighbouring point square instead,
:data:`DISPLACED`). Every board score is therefore <= 0, which lets the
search treat a partial score as an upper bound of the final one.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping, Sequence

from digitise.game.rules import ALL_ROLLS, Roll
from digitise.notation.marks import NUMBER_CELLS
from digitise.notation.readings import POINT_NEIGHBOURS, BoardReading

#: One digit the reader did not offer: dropped, spurious, or an unlisted misreading.
EDIT = math.log(0.01)
#: Something unreadable in a cell matches any digits at this cost.
UNREADABLE = math.log(0.2)
_FLOOR = 1e-4
#: A cell whose unlisted share is at least this likely against its best reading (log) could hold anything.
UNREADABLE_CELL = math.log(0.5)
#: A cell whose best reading is less likely than this is one the reader was unsure of.
SHAKY = 0.8
#: A cell whose best reading is less likely than this may hold a digit the reader did not list: the rolls
#: its digits changed one at a time spell are weighed (:attr:`BoardEvidence.doubt_rolls`).
DOUBTFUL = 0.98
_FLAG_FLOOR = 1e-3
#: Most candidates of one cell whose readings make rolls of their own.
WEIGHED = 5
#: A digit read in the point square beside the one it was written in: one slip, not two edits (a digit
#: dropped from one square and another invented in the next), so the true play is not lost to the slip.
DISPLACED = math.log(0.0025)
#: The same slip where the reader saw the writing lie on the side the two squares share
#: (``BoardReading.touches``): likelier, as a "1" down that side goes to the square holding more of it.
DISPLACED_ON_SIDE = math.log(0.01)

Cells = Mapping[str, tuple[int, ...]]


def _slipped(cells: Cells, name: str, digit: int, other: str) -> dict[str, tuple[int, ...]]:
    """``cells`` with one ``digit`` of square ``name`` written in square ``other`` instead."""
    moved = dict(cells)
    rest = list(cells[name])
    rest.remove(digit)
    if rest:
        moved[name] = tuple(rest)
    else:
        del moved[name]
    moved[other] = tuple(cells.get(other, ())) + (digit,)
    return moved


def _unmatched(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[list[int], int]:
    """The digits of ``a`` that ``b`` lacks, and how many digits of ``b`` are not in ``a`` (as multisets)."""
    rest = list(a)
    extra = 0
    for digit in b:
        if digit in rest:
            rest.remove(digit)
        else:
            extra += 1
    return rest, extra


def _multiset_distance(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Digits to change, add or remove to turn one multiset of digits into the other."""
    rest, extra = _unmatched(a, b)
    return max(len(rest), extra)


def edit_distance(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Items to change, add or remove to turn sequence ``a`` into ``b`` (Levenshtein): a result
    square's digits, a name's letters (:mod:`digitise.solve.roster`)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _distance(cell: str, a: tuple[int, ...], b: tuple[int, ...]) -> int:
    # Point squares and the centre: digits in any order. Result squares: a number, so order counts.
    if cell in NUMBER_CELLS:
        return edit_distance(a, b)
    return _multiset_distance(a, b)


#: One copy of a digit the reader did read, missing from a stack of that digit in an off square
#: ("44" read for the "4444" of a doublet borne off: four digits crammed into one square, which the
#: reader undercounts). Off squares only: elsewhere a missed digit would pass for a dropped copy.
REPEAT_DROP = math.log(0.1)
#: The cells where it applies.
REPEAT_CELLS = frozenset({"Woff", "Boff"})


def edit_cost(cell: str, expected: tuple[int, ...], read: tuple[int, ...]) -> float:
    """What turning ``read`` into ``expected`` costs (log, <= 0): :data:`EDIT` a digit, a dropped repeat less."""
    if cell not in REPEAT_CELLS:
        return EDIT * _distance(cell, expected, read)
    rest, extra = _unmatched(expected, read)
    # Unread digits pair off with misread ones (changes); the rest were dropped, some of them repeats.
    dropped = len(rest) - min(len(rest), extra)
    repeats = min(dropped, sum(1 for digit in rest if digit in read))
    return EDIT * (extra + dropped - repeats) + REPEAT_DROP * repeats


def centre_forms(expected: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The ways a recorder may write ``expected`` unplayed dice in the centre, with log-priors.

    NOTATION.md lets a doublet's unplayed dice be written one digit per die,
    or the number just once or twice; nothing says which a recorder prefers,
    so each form is a third. Counting a doublet as fitting whichever form
    the reader saw, free, made a crossed "53" read as "5" a 5-5 dance as
    likely as the 5-3 the reader also offered.
    """
    if len(expected) < 2 or len(set(expected)) != 1:
        return ((expected, 0.0),)
    counts: dict[int, float] = {}
    for count in (len(expected), 1, 2):
        counts[count] = counts.get(count, 0.0) + 1.0 / 3.0
    value = expected[0]
    return tuple(((value,) * count, math.log(share)) for count, share in sorted(counts.items()))


def _flag_scores(p: float) -> tuple[float, float]:
    """(score if the mark is there, score if it is not), relative to the likelier."""
    p = min(max(p, _FLAG_FLOOR), 1.0 - _FLAG_FLOOR)
    yes, no = math.log(p), math.log(1.0 - p)
    top = max(yes, no)
    return yes - top, no - top


class BoardEvidence:
    """The readings of one board, ready to score explanations against."""

    def __init__(self, reading: BoardReading) -> None:
        self.reading = reading
        self._candidates: dict[str, list[tuple[tuple[int, ...], float]]] = {}
        self._residual: dict[str, float] = {}
        for name, candidates in reading.cells.items():
            usable = [(tuple(c.digits), c.probability) for c in candidates]
            total = sum(p for _, p in usable)
            top = max([p for _, p in usable] + [max(1.0 - total, 0.0), _FLOOR])
            self._candidates[name] = [
                (digits, math.log(max(p, _FLOOR) / top)) for digits, p in sorted(usable, key=lambda c: -c[1])
            ]
            rest = 1.0 - total
            if name == "centre" and reading.crossed >= 0.5:
                # Under an X something is written: the reader's "nothing here" says it could not make the
                # digit out, not that there is none, so that share fits any digit (not only the top one,
                # which a renormalised reading would make look surer than the reader was).
                rest += sum(p for digits, p in usable if not digits)
            if rest > 0.02:
                self._residual[name] = math.log(rest / top)
        self._memo: dict[tuple[str, tuple[int, ...]], float] = {}
        self._writing: dict[tuple[str, tuple[int, ...]], float] = {}
        self.empty_total = sum(self.cell_score(name, ()) for name in self._candidates)
        self.crossed_yes, self.crossed_no = _flag_scores(reading.crossed)
        self.arrow_yes, self.arrow_no = _flag_scores(reading.arrow)
        self.letters_yes, self.letters_no = _flag_scores(reading.letters)
        self.rolls, self.near_rolls = self._roll_candidates()
        self.doubt_rolls = self._doubt_rolls()
        #: The reader was unsure of some cell: the truth may be a digit it did not list.
        self.shaky = any(
            max((c.probability for c in candidates), default=1.0) < SHAKY for candidates in reading.cells.values()
        )

    @property
    def listed(self) -> tuple[str, ...]:
        """Cells the reader saw something in (possibly only an empty candidate)."""
        return tuple(self._candidates)

    def top(self, cell: str) -> tuple[int, ...]:
        """The reader's best guess for ``cell`` (empty when unlisted)."""
        candidates = self._candidates.get(cell)
        return candidates[0][0] if candidates else ()

    def numbers(self, cell: str) -> list[tuple[int, float]]:
        """Candidate numbers in a result square, with their cell scores, best first."""
        out: dict[int, float] = {}
        for digits, _ in self._candidates.get(cell, []):
            if digits:
                value = int("".join(map(str, digits)))
                if value > 0:
                    out.setdefault(value, self.cell_score(cell, tuple(digits)))
        return sorted(out.items(), key=lambda kv: -kv[1])

    def cell_score(self, cell: str, expected: tuple[int, ...]) -> float:
        """Log-likelihood ratio of ``expected`` in ``cell`` against the reader's best guess.

        For a doublet's unplayed dice in the centre it is the best of the ways
        they may be written (:func:`centre_forms`) with how likely that way is:
        :meth:`writing_prior` says how much of the score that is.
        """
        key = (cell, expected)
        cached = self._memo.get(key)
        if cached is not None:
            return cached
        candidates = self._candidates.get(cell)
        forms = centre_forms(expected) if cell == "centre" else ((expected, 0.0),)
        fits = [(prior, self._fit(cell, form, candidates)) for form, prior in forms]
        # The best form, as the best candidate is taken within a cell.
        score = max(prior + fit for prior, fit in fits)
        best = max(fit for _, fit in fits)
        self._memo[key] = score
        self._writing[key] = score - best
        return score

    def _fit(self, cell: str, form: tuple[int, ...],
             candidates: list[tuple[tuple[int, ...], float]] | None) -> float:
        """How well the reader's candidates for ``cell`` fit ``form`` written there (log, <= 0).

        A cell the reader did not list, or listed with no candidate, fits at :data:`EDIT` a digit,
        or at what its unreadable share allows.
        """
        fit = max((lp + edit_cost(cell, form, digits) for digits, lp in candidates or ()),
                  default=EDIT * len(form))
        residual = self._residual.get(cell)
        if residual is not None:
            fit = max(fit, residual + (UNREADABLE if form else EDIT))
        return fit

    def writing_prior(self, cells: Cells) -> float:
        """The part of :meth:`score` of ``cells`` that is how likely their form of writing is, not how
        well the marks fit it (a doublet's unplayed dice: one of three forms)."""
        total = 0.0
        for name, digits in cells.items():
            self.cell_score(name, digits)
            total += self._writing.get((name, digits), 0.0)
        return total

    def score(self, cells: Cells, *, arrow: bool = False) -> float:
        """The score of a board on which exactly ``cells`` are written (the X follows the centre)."""
        total = self._plain(cells)
        if DISPLACED < 0.0:
            # One digit the reader saw in the neighbouring square instead, when that fits better.
            for name, digits in cells.items():
                for digit in sorted(set(digits)):
                    # Counted, not just present: a doublet's "55" read "5" here and "5" next door
                    # is one slip too.
                    if digits.count(digit) <= self.top(name).count(digit):
                        continue
                    for other in POINT_NEIGHBOURS.get(name, ()):
                        if self.top(other).count(digit) <= cells.get(other, ()).count(digit):
                            continue
                        slip = DISPLACED_ON_SIDE if name in self.reading.touches.get(other, ()) else DISPLACED
                        total = max(total, self._plain(_slipped(cells, name, digit, other)) + slip)
        total += self.crossed_yes if "centre" in cells else self.crossed_no
        total += self.arrow_yes if arrow else self.arrow_no
        return total + self.letters_no

    def _plain(self, cells: Cells) -> float:
        """The cells' part of :meth:`score`, every digit read in its own square."""
        total = self.empty_total
        for name, digits in cells.items():
            total += self.cell_score(name, digits) - self.cell_score(name, ())
        return total

    @property
    def letters_score(self) -> float:
        """The score of reading the board as a game-start board with names on it."""
        return self.letters_yes + self.arrow_no

    @property
    def centre_unreadable(self) -> bool:
        """True when the reader could not make out the centre."""
        candidates = self.reading.cells.get("centre")
        if not candidates:
            return False
        return max(c.probability for c in candidates) < 0.5

    def _best_digits(self) -> dict[str, tuple[int, ...]]:
        """The reader's best guess of every digit cell; a cell listed with no candidate at all (all of it
        unreadable) points to no digits."""
        return {name: c[0][0] for name, c in self._candidates.items() if name not in NUMBER_CELLS and c}

    def _roll_candidates(self) -> tuple[list[Roll], list[Roll]]:
        """Rolls the written digits point to, with a rough digit-level score, best first.

        The written digits are the dice: played ones in point and off squares,
        unplayed ones in the centre. The reader's best guess and each single
        cell swapped for one of its other candidates give exact rolls; rolls one
        digit away from the best guess are kept as repairs for a dropped,
        spurious or unlisted digit.
        """
        base = self._best_digits()
        variants = _variants(
            {name: _worth_weighing(c) for name, c in self._candidates.items() if name not in NUMBER_CELLS and c},
            limit=16)
        exact: dict[Roll, float] = {}
        for cost, variant in variants:
            for roll in _spelt_rolls(variant):
                if cost > exact.get(roll, -math.inf):
                    exact[roll] = cost
        # Rolls a digit away from the likeliest readings: repairs for a digit the reader
        # dropped, invented, or misread without listing the truth.
        distances: dict[Roll, int] = {}
        for _, variant in [(0.0, base)] + variants[1:4]:
            played, unplayed = _dice(variant)
            for roll in ALL_ROLLS:
                distance = _roll_distance(roll, played, unplayed)
                if distance < distances.get(roll, 99):
                    distances[roll] = distance
            if len(played) >= 2 and len(set(played)) == 1 and not unplayed:
                # Two or three of one digit and nothing else: a doublet with a square of its moves
                # missed (13/8(2) 8/3(2) read as the "55" on B8 alone) is a digit away, not two.
                doublet = Roll(played[0], played[0])
                distances[doublet] = min(distances[doublet], 1)
        closest = min(distances.values())
        near = [roll for roll in ALL_ROLLS if roll not in exact and distances[roll] <= max(closest, 1)]
        # Each variant with the rolls its digits make exactly: plays are read off these marks.
        self.variants: list[tuple[dict[str, tuple[int, ...]], list[Roll]]] = []
        for _cost, variant in variants:
            rolls = _spelt_rolls(variant)
            if rolls:
                self.variants.append(({k: v for k, v in variant.items() if v}, rolls))
        # The best guess with one digit moved to the point square beside it: the play such a slip
        # hides is spelt by no reading (:data:`DISPLACED`), so it is tried on its own.
        self.displaced: list[tuple[dict[str, tuple[int, ...]], list[Roll]]] = []
        base_rolls = _spelt_rolls(base)
        if DISPLACED < 0.0 and base_rolls:
            for name, digits in base.items():
                for digit in sorted(set(digits)):
                    for other in POINT_NEIGHBOURS.get(name, ()):
                        moved = _slipped(base, name, digit, other)
                        self.displaced.append(({k: v for k, v in moved.items() if v}, base_rolls))
        ranked = sorted(exact, key=lambda r: (-exact[r], r.high, r.low))
        near = sorted(near, key=lambda r: (distances[r], r.high, r.low))[:14]
        if any(score > UNREADABLE_CELL for score in self._residual.values()):
            # A cell the reader could mostly not make out fits any digits about as well as its
            # listed ones: every roll is a candidate, or the one the truth needs is never weighed
            # and the board looks certain (a bear-off of 5-5 read as "6666 or nothing").
            near += [roll for roll in ALL_ROLLS if roll not in exact and roll not in near]
        return ranked[:6], near

    def _doubt_rolls(self) -> list[Roll]:
        """Rolls spelt by the best reading with one digit of a cell read less surely than :data:`DOUBTFUL`
        changed to another: every legal play of them is weighed, for a sure-looking misread ("4" read "6"
        at 97 %) spells another legal play, and the true one, spelt by no reading, never shows as a rival."""
        base = self._best_digits()
        out: set[Roll] = set()
        for name, candidates in self.reading.cells.items():
            if name not in base or not base[name]:
                continue
            if max((c.probability for c in candidates), default=1.0) >= DOUBTFUL:
                continue
            for i, digit in enumerate(base[name]):
                for other in range(1, 7):
                    if other == digit:
                        continue
                    changed = dict(base)
                    changed[name] = base[name][:i] + (other,) + base[name][i + 1:]
                    out.update(_spelt_rolls(changed))
        return sorted(out, key=lambda r: (r.high, r.low))


def _worth_weighing(candidates: list[tuple[tuple[int, ...], float]]) -> list[tuple[tuple[int, ...], float]]:
    """A cell's candidates that make rolls of their own: the first three, and up to five that the reader
    rates above an unlisted digit (:data:`EDIT`).

    With three only, a "2" read "1" at 83 % with the "2" fourth at 1.7 % never had its roll weighed:
    the board looked certain and a checker a point off went on unflagged for 42 turns.
    """
    return [c for i, c in enumerate(candidates[:WEIGHED]) if i < 3 or c[1] > EDIT]


def _variants(candidates: dict[str, list[tuple[tuple[int, ...], float]]],
              limit: int) -> list[tuple[float, dict[str, tuple[int, ...]]]]:
    """The ``limit`` likeliest readings of the whole board (one candidate per cell), best first.

    A board with two misread cells needs both repaired at once, so cells are
    combined, not swapped one at a time. Candidate scores are <= 0 with the
    best at 0, so a best-first expansion finds them in order.
    """
    names = sorted(candidates)
    lists = [candidates[n] for n in names]
    start = tuple(0 for _ in names)
    heap: list[tuple[float, tuple[int, ...]]] = [(0.0, start)]
    seen = {start}
    out: list[tuple[float, dict[str, tuple[int, ...]]]] = []
    while heap and len(out) < limit:
        negative, choice = heapq.heappop(heap)
        cost = -negative
        if cost < 3 * EDIT:
            break
        out.append((cost, {n: lists[i][j][0] for i, (n, j) in enumerate(zip(names, choice, strict=True))}))
        for i in range(len(names)):
            if choice[i] + 1 < len(lists[i]):
                nxt = choice[:i] + (choice[i] + 1,) + choice[i + 1:]
                if nxt not in seen:
                    seen.add(nxt)
                    score = sum(lists[k][nxt[k]][1] for k in range(len(names)))
                    heapq.heappush(heap, (-score, nxt))
    return out


def _dice(cells: Mapping[str, tuple[int, ...]]) -> tuple[list[int], list[int]]:
    """The dice a board's digits say: played ones in point and off squares, unplayed ones (each once) in the centre."""
    return ([d for name, ds in cells.items() if name != "centre" for d in ds],
            sorted(set(cells.get("centre", ()))))


def _spelt_rolls(cells: Mapping[str, tuple[int, ...]]) -> list[Roll]:
    """The rolls ``cells``' digits spell exactly."""
    return _exact_rolls(*_dice(cells))


def _exact_rolls(played: list[int], unplayed: list[int]) -> list[Roll]:
    values = set(played) | set(unplayed)
    if any(not 1 <= v <= 6 for v in values):
        return []
    if len(values) == 1:
        v = next(iter(values))
        if len(played) == 4 or (unplayed and len(played) < 4):
            return [Roll(v, v)]
        return []
    dice = played + unplayed
    if len(dice) == 2 and len(values) == 2:
        return [Roll(dice[0], dice[1])]
    return []


def _roll_distance(roll: Roll, played: list[int], unplayed: list[int]) -> int:
    if roll.is_double:
        v = roll.high
        wrong = sum(1 for d in played if d != v) + sum(1 for d in unplayed if d != v)
        right = sum(1 for d in played if d == v)
        missing = 0 if (v in unplayed or right >= 4) else 4 - right
        return wrong + missing
    return _multiset_distance(roll.dice, tuple(played + unplayed))

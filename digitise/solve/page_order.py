"""The page numbers written: gaps, pages out of order and pages between two that follow each other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from digitise.notation.readings import Readings, written_page_number
from digitise.solve.nodes import Node
from digitise.solve.reasons import Flag, Reason

#: How surely each page number around a gap must be read: four numbers in step on either side of a jump
#: are seldom all misread.
GAP_SURE = 0.5
#: ... and around a gap beside the pile's first or last page, where one side has no page to confirm it.
GAP_EDGE_SURE = 0.94
#: The reason on the first turn after a gap in the page numbers, and the match's note.
GAP_REASON = Reason.PAGE_GAP.text
#: Page numbers read this surely, each once, within as many as there are pages, but not ascending: the
#: pile is out of order (low enough to see most swapped pages, with no pile in order taken for one).
ORDER_SURE = 0.6
#: How surely a page out of its place must be numbered when every other number read is in step with its place
#: (then a misread of that one number explains the pile as well as a page out of place does).
ORDER_ALONE_SURE = 0.9
#: The reason on the first turn of the first page out of its place, and the match's note.
ORDER_REASON = Reason.PAGE_OUT_OF_ORDER.text
ORDER_NOTE = Reason.PAGES_OUT_OF_ORDER.text
GAP_NOTE = Reason.PAGES_GAP.text
#: A jump whose missing numbers are read on other pages of the pile: the pages are out of order.
DISORDER_NOTE = Reason.PAGES_DISORDER.text
#: A page between two whose numbers follow each other (each confirmed by its other neighbour): a page too many.
EXTRA_REASON = Reason.PAGE_EXTRA.text
EXTRA_NOTE = Reason.PAGES_EXTRA.text
#: The reason and note for a page the solver left out as another match's.
STRANGER_NOTE = Reason.PAGES_LEFT_OUT.text


def _page_numbers(readings: Readings) -> tuple[list[tuple[int | None, float]], list[int | None]]:
    """Each page's written number as read (number, sureness), and the numbers read at least :data:`GAP_SURE`."""
    read = [written_page_number(page) for page in readings.pages]
    return read, [n if n is not None and sure >= GAP_SURE else None for n, sure in read]


def page_gaps(readings: Readings) -> dict[int, tuple[int, int]]:
    """Pages (their place in the pile, from 1) before which the written page numbers skip: {place: (before, after)}.

    A page missing from the middle of a pile lets the next page's boards be
    read as a new game, or as the game going on from the wrong position,
    without a misfit to flag. Page numbers are misread too often, and
    surely, to be trusted alone (a "2" for a "12"): a jump counts only where
    the pages on either side confirm both numbers (n - 1, n, then m, m + 1),
    so one misread number never makes a gap; beside the pile's first or last
    page, where one side has no page, the other side confirms and both
    numbers of the jump must be read surely (:data:`GAP_EDGE_SURE`). A
    number read less surely than :data:`GAP_SURE` shows nothing.
    """
    read, numbers = _page_numbers(readings)
    gaps: dict[int, tuple[int, int]] = {}
    for k in range(1, len(numbers)):
        before, after = numbers[k - 1], numbers[k]
        if before is None or after is None or after <= before + 1:
            continue
        left = numbers[k - 2] == before - 1 if k >= 2 else None
        right = numbers[k + 1] == after + 1 if k + 1 < len(numbers) else None
        if left is False or right is False or not (left or right):
            continue
        if (left and right) or min(read[k - 1][1], read[k][1]) >= GAP_EDGE_SURE:
            gaps[k + 1] = (before, after)
    return gaps


def extra_pages(readings: Readings) -> dict[int, tuple[int, int]]:
    """Pages (their place in the pile, from 1) with no room for them in the written numbering: {place: (before,
    after)}, the numbers of the pages either side, which follow each other.

    A page of another match put into the pile, when its boards are legal from
    where the pile left off, reads as the game going on: in a short pile the
    search has too few later boards to weigh against it. Its own number says
    little (it may even be the one due), but its neighbours do when they are
    numbered n and n + 1. As for :func:`page_gaps`, one misread number must
    not make such a page: each neighbour's number is confirmed by its other
    neighbour (n - 1 before it, n + 2 after; the pile's first or last page
    has none, but one side must confirm). Of two such pages in a row (one
    page given twice) the first is taken.
    """
    _, numbers = _page_numbers(readings)
    extra: dict[int, tuple[int, int]] = {}
    for k in range(1, len(numbers) - 1):
        before, after = numbers[k - 1], numbers[k + 1]
        if before is None or after is None or after != before + 1:
            continue
        left = numbers[k - 2] == before - 1 if k >= 2 else None
        right = numbers[k + 2] == after + 1 if k + 2 < len(numbers) else None
        # Two pages alike in a row (3, 3) each sit between numbers that follow: the first is flagged, as
        # everything after it rests on it.
        if left is not False and right is not False and (left or right) and k not in extra:
            extra[k + 1] = (before, after)
    return extra


def _pile_names(readings: Readings, left: int, right: int) -> str:
    """Two neighbouring pages (places in the pile, from 1) as messages name them."""
    a, b = readings.pages[left - 1].source, readings.pages[right - 1].source
    files = (f"{Path(a).name}, {Path(b).name}" if a != b else Path(a).name) if a and b else ""
    return f"pages {left} and {right} of the pile" + (f" ({files})" if files else "")


def page_sequence(readings: Readings) -> tuple[dict[int, tuple[int, int]], frozenset[int], list[Flag],
                                                dict[int, Flag]]:
    """What the written page numbers say of the pile: its gaps, its own pages, notes, and the places (in the
    pile, from 1) whose first turn is flagged, with the reason.

    Gaps are :func:`page_gaps` whose missing numbers are read nowhere else in
    the pile (where they are, the pages are out of order: a note, no gap).
    A page is the pile's own (never left out as a page of another match)
    when its number is in step with both neighbours, or with the one away
    from a gap beside it.
    """
    read, numbers = _page_numbers(readings)
    gaps: dict[int, tuple[int, int]] = {}
    notes: list[Flag] = []
    for at, (before, after) in sorted(page_gaps(readings).items()):
        where = _pile_names(readings, at - 1, at)
        elsewhere = sorted({n for n in numbers if n is not None and before < n < after})
        if elsewhere:
            found = ("page " if len(elsewhere) == 1 else "pages ") + ", ".join(map(str, elsewhere)) + (
                " comes" if len(elsewhere) == 1 else " come")
            notes.append(Reason.PAGES_DISORDER.flag(before=before, after=after, where=where, found=found))
            continue
        gaps[at] = (before, after)
        missing = f"page {before + 1}" if after == before + 2 else f"pages {before + 1} to {after - 1}"
        notes.append(Reason.PAGES_GAP.flag(before=before, after=after, where=where, missing=missing))
    own: set[int] = set()
    for k, number in enumerate(numbers):
        if number is None:
            continue
        left = k > 0 and numbers[k - 1] == number - 1
        right = k + 1 < len(numbers) and numbers[k + 1] == number + 1
        if (left and right) or (left and k + 2 in gaps) or (right and k + 1 in gaps):
            own.add(k + 1)
    marks = {at: Reason.PAGE_GAP.flag(before=before, after=after) for at, (before, after) in gaps.items()}
    placed = [(k, n) for k, (n, how) in enumerate(read, 1) if n is not None and how >= ORDER_SURE]
    numbers_read = [n for _, n in placed]
    lowest = min(numbers_read, default=0)
    if (len(placed) >= 2 and len(set(numbers_read)) == len(placed) and numbers_read != sorted(numbers_read)
            and max(numbers_read) - lowest < len(read)):
        # Two neighbouring pages swapped make no jump that pages on both sides confirm (1, 2, 4, 3, 5):
        # the boards then read as the game going on, wrong, with nothing flagged. Numbers each read once,
        # within as many as there are pages, but not ascending: the first page not where its number puts it.
        # The number the pile's first page carries, were the lowest one read in its place.
        start = lowest - next(k for k, n in placed if n == lowest) + 1
        at = next(k for k, n in placed if n - start + 1 != k)
        number = dict(placed)[at]
        # Where every other number read is in step with its place, this one number may be a misread, not a
        # page out of place: it must then be sure.
        steps = {n - k for k, n in placed if k != at}
        misread = len(steps) == 1 and min(steps) + at >= 1
        if not misread or read[at - 1][1] >= ORDER_ALONE_SURE:
            shown = "(" + ", ".join("?" if n is None or how < ORDER_SURE else str(n) for n, how in read) + ")"
            marks.setdefault(at, Reason.PAGE_OUT_OF_ORDER.flag(numbers=shown, number=number))
            if not any(note.reason is Reason.PAGES_DISORDER for note in notes):
                notes.append(Reason.PAGES_OUT_OF_ORDER.flag(numbers=shown[1:-1], number=number,
                                                             where=pile_page_name(readings, at)))
    for at, (before, after) in sorted(extra_pages(readings).items()):
        marks.setdefault(at, Reason.PAGE_EXTRA.flag(before=before, after=after))
        notes.append(Reason.PAGES_EXTRA.flag(where=pile_page_name(readings, at), before=before, after=after))
    return gaps, frozenset(own), notes, marks


def pile_page_name(readings: Readings, at: int) -> str:
    """A page (its place in the pile, from 1) as messages name it."""
    source = readings.pages[at - 1].source
    return f"page {at} of the pile" + (f" ({Path(source).name})" if source else "")


@dataclass(frozen=True, slots=True)
class GapMarks:
    """Where the pile's page numbers show a page missing or out of place, for flagging the first turn there."""

    #: The place in the pile (from 1) whose first turn is flagged, with the reason.
    gaps: Mapping[int, Flag]
    #: The sheet (place in the pile, from 1) of each board solved.
    sheets: Sequence[int]
    #: Boards (page, board) a reviewer corrected.
    corrected: frozenset[tuple[int, int]]

    def flagged(self, path: list[Node], places: list[tuple[int, int]]) -> dict[int, Flag]:
        """The first turn (move or double) at or after each gap, by node id, with its reason.

        None where a reviewer corrected a board from the gap up to that turn:
        they have looked at it.
        """
        out: dict[int, Flag] = {}
        boards = [node for node in path if node.board is not None]
        for gap, reason in sorted(self.gaps.items()):
            seen_correction = False
            for node in boards:
                assert node.board is not None
                if self.sheets[node.board] < gap:
                    continue
                seen_correction = seen_correction or places[node.board] in self.corrected
                if any(e.kind in ("move", "double") for e in node.events):
                    if not seen_correction and id(node) not in out:
                        out[id(node)] = reason
                    break
        return out

"""Notes on a match's pages: the order of their written numbers, pages given twice or of another match,
pages of a mirrored print or read turned back.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from digitise.notation.readings import header_entry, written_page_number
from digitise.solve.reasons import Flag, Reason

if TYPE_CHECKING:
    from digitise.notation.readings import PageReading, Readings


#: The note of ``--order header`` when some page's number could not be read.
ORDER_KEPT = Reason.ORDER_KEPT.text
ORDER_BROKEN = Reason.ORDER_BROKEN.text
#: How sure a page number must be read to sort the pile by it (a guess would move a page for nothing).
ORDER_SURE = 0.9


def order_by_header(readings: Readings) -> tuple[Readings, Flag | None]:
    """Readings with pages sorted by their written page numbers, when every page has one read surely
    (:data:`ORDER_SURE`) and together they run from the first to the last once each.

    Otherwise the order given is kept, with a note the match reports
    (:data:`ORDER_KEPT`, or :data:`ORDER_BROKEN` with the numbers read): the
    user asked for the header's order and did not get it.
    """
    read = [written_page_number(page) for page in readings.pages]
    if any(number is None or number < 1 or sure < ORDER_SURE for number, sure in read):
        shown = ", ".join("?" if number is None else f"{number}?" if sure < ORDER_SURE or number < 1 else str(number)
                          for number, sure in read)
        return readings, Reason.ORDER_KEPT.flag(numbers=shown)
    numbers = [number for number, _ in read if number is not None]
    if numbers and sorted(numbers) != list(range(min(numbers), min(numbers) + len(numbers))):
        return readings, Reason.ORDER_BROKEN.flag(numbers=", ".join(map(str, numbers)), first=min(numbers),
                                                  last=min(numbers) + len(numbers) - 1)
    order = sorted(range(len(numbers)), key=lambda i: numbers[i])
    return replace(readings, pages=tuple(readings.pages[i] for i in order)), None


#: How sure the first page's number must be read to say a match starts on a later page (above what a misread
#: "1" reaches).
FIRST_PAGE_SURE = 0.94
#: Boards that must read alike, cell for cell, for two pages to be taken for one sheet scanned twice
#: (different pages seldom share a board; misreads tell the rest apart).
ALIKE_BOARDS = 4


#: How sure both player names of a page must be read, and how little alike (difflib's ratio, case aside) to
#: the other pages' names, for the page to be noted as naming other players (a page of another match
#: differs in both).
NAMES_SURE = 0.85
NAMES_UNLIKE = 0.5


def _players_read(page: PageReading) -> tuple[str, str] | None:
    """The page's (bottom, top) player names when both were read surely (:data:`NAMES_SURE`), else None."""
    found = []
    for field_name in ("player_bottom", "player_top"):
        value, sure = header_entry(page, field_name)
        if not isinstance(value, str) or not value.strip() or sure is None or sure < NAMES_SURE:
            return None
        found.append(value.strip())
    return found[0], found[1]


def _same_players(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Whether each name of ``a`` is like one of ``b`` (in either seat: a recorder may swap them)."""
    def like(x: str, y: str) -> bool:
        return difflib.SequenceMatcher(None, x.lower(), y.lower()).ratio() >= NAMES_UNLIKE

    return all(any(like(x, y) for y in b) for x in a)


def _page_names(readings: Readings) -> list[str]:
    """How the pages are named in messages: the file (its path from the pages' common folder when two
    files share a name), and the page within it when it holds several."""
    sources = list(dict.fromkeys(page.source for page in readings.pages))
    by_name: dict[str, set[str]] = {}
    for source in sources:
        by_name.setdefault(Path(source).name, set()).add(source)
    clash = any(len(found) > 1 for found in by_name.values())
    try:
        common = os.path.commonpath([os.path.abspath(s) for s in sources]) if clash else ""
    except ValueError:  # paths on different drives
        common = ""
    shown = {s: os.path.relpath(os.path.abspath(s), common) if clash and common else Path(s).name for s in sources}
    frames: dict[str, set[int]] = {}
    for page in readings.pages:
        frames.setdefault(page.source, set()).add(page.page)
    return [shown[page.source] + (f" page {page.page}" if len(frames[page.source]) > 1 else "")
            for page in readings.pages]


def _marks_read(page: PageReading) -> list[tuple[object, ...]]:
    """Each board's best reading of every cell (and its X and arrow), for comparing pages."""
    return [tuple(sorted((name, cands[0].digits) for name, cands in board.cells.items() if cands))
            + (round(board.crossed), round(board.arrow)) for board in page.boards]


#: How a page found from its lines, of a print mirrored (off squares on the left), says so in its readings.
MIRRORED_PRINT_METHOD = "lines, mirrored print"


def _read_by(page: PageReading) -> str:
    """How the page's boards were placed (its readings' ``method``: ``markers``, ``lines, turned 180``, ...)."""
    return str(page.header.get("method", {}).get("value", ""))


def _first_few(names: list[str]) -> str:
    """Page names for a note: the first three, then how many more."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def mirrored_print_note(readings: Readings) -> list[Flag]:
    """A note naming the pages of a mirrored print (off squares on the left, points 1 to 12 left to right),
    read as printed: a person should know the squares were taken the other way round."""
    names = _page_names(readings)
    mirrored = [name for name, page in zip(names, readings.pages, strict=True)
                if _read_by(page).startswith(MIRRORED_PRINT_METHOD)]
    if not mirrored:
        return []
    shown = _first_few(mirrored)
    verb = "is" if len(mirrored) == 1 else "are"
    return [Reason.MIRRORED_PRINT.flag(pages=shown, verb=verb)]


#: How a page found from its lines, lying turned in the image, says so in its readings ("lines, turned 90").
TURNED_METHOD = ", turned "


def turned_page_note(readings: Readings) -> list[Flag]:
    """A note naming the pages of another print found turned (on their side or upside down) and read turned back:
    a person checking a page should know it was not read as it lies."""
    names = _page_names(readings)
    turned = [f"{name} ({method.rsplit(TURNED_METHOD, 1)[1]} degrees)" for name, page in zip(names, readings.pages, strict=True)
              if TURNED_METHOD in (method := _read_by(page))]
    if not turned:
        return []
    shown = _first_few(turned)
    return [Reason.TURNED_PAGE.flag(pages=shown, verb="was" if len(turned) == 1 else "were")]


#: How a page found from its lines names the boards it saw but could not read ("lines, boards not read 3, 5").
UNREAD_METHOD = ", boards not read "


def unread_boards_note(readings: Readings) -> list[Flag]:
    """A note naming the boards of another print seen by their ruled lines but not read (boards of unequal size
    whose squares could not be fitted): their turns are missing, not guessed, and a person should look at them."""
    names = _page_names(readings)
    unread = []
    for name, page in zip(names, readings.pages, strict=True):
        method = _read_by(page)
        if UNREAD_METHOD in method:
            boards = method.split(UNREAD_METHOD, 1)[1].split(TURNED_METHOD, 1)[0]
            unread.append(f"{name} (board{'s' if ',' in boards else ''} {boards})")
    if not unread:
        return []
    return [Reason.UNREAD_BOARDS.flag(boards=_first_few(unread))]


def page_notes(readings: Readings, *, ordered_by_header: bool = False) -> list[Flag]:
    """Pages given twice: notes for the match, none when every page is a sheet of its own.

    A file (or a page of one) named twice, and two pages whose boards read
    alike cell for cell (one sheet scanned twice): replayed again, such a
    page reads as a new game (flagged where it starts, but the match is
    wrong from there). And a first page numbered 2 or more, read very surely
    (:data:`FIRST_PAGE_SURE`): a continuation scanned alone. The other page
    numbers written in the headers are not judged one by one here (the
    reader drops a digit of "12" or "14" too often, and surely): the solver
    looks for a page missing, or pages out of order, where four numbers in a
    row agree (:func:`digitise.solve.page_gaps`). ``ordered_by_header``: the
    pages were to be put in the order of their numbers (``--order header``),
    which could not be done (the order note says why), so that is not the advice.
    """
    names = _page_names(readings)
    notes: list[Flag] = []
    number, sure = written_page_number(readings.pages[0]) if readings.pages else (None, 0.0)
    if number is not None and number > 1 and sure >= FIRST_PAGE_SURE:
        # A later page surely numbered lower: the pile is out of order, not short.
        lower = next((k for k, page in enumerate(readings.pages[1:], 1)
                      if (found := written_page_number(page))[0] is not None and found[0] < number
                      and found[1] >= FIRST_PAGE_SURE), None)
        if lower is not None:
            notes.append(Reason.PAGES_NOT_IN_ORDER.flag(
                first=names[0], number=number, later=names[lower],
                later_number=written_page_number(readings.pages[lower])[0],
                advice="order" if ordered_by_header else "order, or add --order header"))
        else:
            missing = "is page 1" if number == 2 else f"are pages 1 to {number - 1}"
            notes.append(Reason.FIRST_PAGE_NUMBERED.flag(first=names[0], number=number, missing=missing))
    first: dict[tuple[str, int], int] = {}
    for k, page in enumerate(readings.pages):
        key = (page.source, page.page)
        if key in first:
            notes.append(Reason.PAGE_TWICE.flag(page=names[k], first=first[key] + 1, again=k + 1))
        else:
            first[key] = k
    # A page naming other players, read surely: a page of another match in the pile. Its boards may read
    # as new games of this one without a misfit to show it.
    players = [(k, named) for k, page in enumerate(readings.pages) if (named := _players_read(page)) is not None]
    if len(players) >= 2:
        agreeing = [sum(_same_players(a, b) for _, b in players) for _, a in players]
        ref_k, ref = players[agreeing.index(max(agreeing))]
        for k, named in players:
            if not _same_players(named, ref):
                notes.append(Reason.PLAYERS_DIFFER.flag(page=names[k], bottom=named[0], top=named[1], other=names[ref_k],
                                                        other_bottom=ref[0], other_top=ref[1]))
    marks = [_marks_read(page) for page in readings.pages]
    for j, later in enumerate(marks):
        for i in range(j):
            if (readings.pages[i].source, readings.pages[i].page) == (readings.pages[j].source, readings.pages[j].page):
                continue
            alike = sum(1 for a, b in zip(marks[i], later, strict=False) if a == b and len(a) > 2)
            if alike >= ALIKE_BOARDS:
                notes.append(Reason.PAGES_ALIKE.flag(first=names[i], second=names[j]))
                break
    return notes

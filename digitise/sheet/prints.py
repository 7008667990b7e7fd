"""Other prints of Kato's note: the same boards drawn by other hands than digitise's template.

Old records are on notes photocopied, re-typeset by a club or ruled by hand:
the same two rows of twelve point squares with a result and an off square
each and a centre strip between, eight boards a page, but other sizes and
spacing, no markers, point numbers or row labels printed beside the squares,
the header elsewhere or missing. :data:`PRINTS` describes a few such prints;
each gives a :class:`~digitise.notation.template.Template` (its geometry, no
markers) and the extra text it prints, which :func:`digitise.sheet.synth.render_match_pages`
draws as it draws digitise's own note. They exist to test and measure
reading a note from its own lines (:mod:`digitise.vision.layout`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType

from digitise.notation.marks import BOTTOM_ROW, TOP_ROW
from digitise.notation.template import BoardGeometry, Rect, Template
from digitise.sheet.layout import FIELD_LABELS, HEADER_ROWS
from digitise.sheet.printing import Text

#: Text heights (cap height, mm) and grey of what these prints write beside the squares.
NUMBER_MM = 1.8
ROW_LABEL_MM = 2.4
TITLE_MM = 3.2
PRINT_GREY = 0.35


@dataclass(frozen=True, slots=True)
class OtherPrint:
    """One print of the note: its page, its boards' measures (mm) and what it prints beside them."""

    name: str
    page_mm: tuple[float, float]
    cell_w: float
    cell_h: float
    centre_h: float
    res_w: float
    off_w: float
    #: Left edge and top of the first board; the gaps between the two columns and between board rows.
    left: float
    top: float
    column_gap: float
    row_gap: float
    #: Where the header's boxes are: "top", "bottom" or "" (none).
    header: str = ""
    #: The header's fields left to right (else digitise's own note's order, its two rows read as one).
    header_order: tuple[str, ...] = ()
    #: Each header box's label printed above it (digitise's own labels: "Event", "Black (top)", ...).
    header_labels: bool = False
    #: Point numbers printed above the top row ("above"), below the bottom row ("below"), both, or none.
    numbers: tuple[str, ...] = ()
    row_labels: bool = False
    #: The board's number printed left of the board (else in the centre row under the result square).
    label_beside: bool = False
    title: str = ""
    line_mm: float = 0.2
    thick_mm: float = 0.5
    line_grey: float = 0.55
    #: Off squares on the left, points 1 to 12 left to right, result squares on the right.
    mirrored: bool = False
    #: The boards' grid: columns across, rows down (eight boards a page, or four or six).
    columns: int = 2
    rows: int = 4
    #: Each board's point squares' width (mm) where it differs from ``cell_w`` (board number: width): boards of
    #: unequal size on one page.
    cell_w_of: tuple[tuple[int, float], ...] = ()

    @property
    def board_w(self) -> float:
        """A board's width (mm)."""
        return self.res_w + 12 * self.cell_w + self.off_w

    @property
    def boards(self) -> int:
        """How many boards a page holds."""
        return self.columns * self.rows

    @property
    def board_h(self) -> float:
        """A board's height (mm)."""
        return 2 * self.cell_h + self.centre_h

    def board_origin(self, index: int) -> tuple[float, float]:
        """Top-left corner (mm) of board ``index`` (from 1, row by row)."""
        col, row = (index - 1) % self.columns, (index - 1) // self.columns
        return (self.left + col * (self.board_w + self.column_gap), self.top + row * (self.board_h + self.row_gap))

    def template(self) -> Template:
        """The print's geometry: its boards, its header's boxes when it has one, no markers."""
        boards = []
        own = dict(self.cell_w_of)
        for index in range(1, self.boards + 1):
            bx, by = self.board_origin(index)
            cell_w = own.get(index, self.cell_w)
            # A smaller board keeps its squares' proportions, and its place's centre.
            shrink = cell_w / self.cell_w
            res_w, off_w, cell_h, centre_h = self.res_w, self.off_w, self.cell_h, self.centre_h
            if index in own:
                res_w, off_w, cell_h, centre_h = (v * shrink for v in (res_w, off_w, cell_h, centre_h))
                bx += (1.0 - shrink) * self.board_w / 2
                by += (1.0 - shrink) * self.board_h / 2
            cells: dict[str, Rect] = {}
            for row_names, y in ((TOP_ROW, by), (BOTTOM_ROW, by + cell_h + centre_h)):
                widths = [res_w] + [cell_w] * 12 + [off_w]
                names = list(row_names)
                if self.mirrored:
                    names.reverse()
                    widths.reverse()
                x = bx
                for name, w in zip(names, widths, strict=True):
                    cells[name] = Rect(round(x, 3), round(y, 3), w, cell_h)
                    x += w
            first = min(cells["B12"].x, cells["B1"].x)
            cells["centre"] = Rect(first, round(by + cell_h, 3), 12 * cell_w, centre_h)
            label = Rect(bx - 9.0, by + cell_h, 7.0, centre_h) if self.label_beside else None
            boards.append(BoardGeometry(index, MappingProxyType(cells), label))
        return Template(
            name=self.name, page_mm=self.page_mm, markers=(), fields=MappingProxyType(self._fields()),
            boards=tuple(boards),
            style=MappingProxyType({"line_grey": self.line_grey, "line_mm": self.line_mm,
                                    "thick_line_mm": self.thick_mm}),
        )

    def _fields(self) -> dict[str, Rect]:
        if not self.header:
            return {}
        names = list(self.header_order) or [name for row in HEADER_ROWS for name, _ in row]
        width = (self.page_mm[0] - 2 * self.left) / len(names)
        y = 8.0 if self.header == "top" else self.page_mm[1] - 17.0
        return {name: Rect(round(self.left + k * width + 1.0, 3), y, round(width - 2.0, 3), 8.0)
                for k, name in enumerate(names)}

    def extras(self) -> tuple[Text, ...]:
        """The text this print writes beside its squares (and its title)."""
        texts: list[Text] = []
        if self.title:
            texts.append(Text(self.title, self.page_mm[0] / 2, 6.0 if self.header != "top" else self.page_mm[1] - 4.0,
                              TITLE_MM, PRINT_GREY, centred=True))
        geometry = self.template()
        if self.header_labels:
            texts += [Text(FIELD_LABELS[name], rect.x + 0.3, rect.y - 0.8, ROW_LABEL_MM, PRINT_GREY)
                      for name, rect in geometry.fields.items()]
        for board in geometry.boards:
            cells = board.cells
            for place in self.numbers:
                row, gap = ("B", -1.0) if place == "above" else ("W", 1.0 + NUMBER_MM)
                for point in range(1, 13):
                    cell = cells[f"{row}{point}"]
                    y = cell.y + gap if place == "above" else cell.bottom + gap
                    texts.append(Text(str(point), cell.centre[0], y, NUMBER_MM, PRINT_GREY, centred=True))
            if self.row_labels:
                for row in ("B", "W"):
                    res = cells[f"{row}res"]
                    x = res.x - 2.5 if not self.mirrored else res.right + 2.5
                    texts.append(Text(row, x, res.centre[1] + ROW_LABEL_MM / 2, ROW_LABEL_MM, PRINT_GREY, centred=True))
        return tuple(texts)


#: Three prints unlike digitise's own (a4: cells 9.75 x 12 mm, centre strip 8 mm, markers).
PRINTS: dict[str, OtherPrint] = {
    # Boards 15 % smaller, spaced wide, point numbers above and below, the header at the bottom, a title.
    "club-small": OtherPrint(
        "club-small", (297.0, 210.0), cell_w=8.3, cell_h=10.2, centre_h=6.8, res_w=8.3, off_w=8.3,
        left=20.3, top=22.0, column_gap=24.0, row_gap=16.0, header="bottom", numbers=("above", "below"),
        title="BACKGAMMON GAME RECORD", line_mm=0.3, thick_mm=0.7, line_grey=0.45),
    # Boards 15 % larger on legal paper, a narrow result and a wide off square, thin light lines, row
    # labels, numbers below, the board's number beside it, no header.
    "club-large": OtherPrint(
        "club-large", (355.6, 215.9), cell_w=11.2, cell_h=13.8, centre_h=9.0, res_w=9.0, off_w=12.0,
        left=16.0, top=14.0, column_gap=14.0, row_gap=14.5, numbers=("below",), row_labels=True,
        label_beside=True, line_mm=0.15, thick_mm=0.4, line_grey=0.6),
    # About digitise's size but a taller centre strip, a one-row header at the top, numbers above; meant to
    # be rendered photocopied (dark lines, speckle).
    "photocopy-club": OtherPrint(
        "photocopy-club", (297.0, 210.0), cell_w=9.3, cell_h=12.5, centre_h=9.5, res_w=9.3, off_w=9.3,
        left=12.3, top=24.0, column_gap=12.0, row_gap=12.7, header="top", numbers=("above",),
        line_mm=0.25, thick_mm=0.6, line_grey=0.3),
}

#: Prints of fewer boards a page, and one whose boards are not all of a size (:data:`PRINTS` holds eight a page).
FEW_BOARDS: dict[str, OtherPrint] = {
    # Four large boards, two by two, point numbers above and below, a title, no header.
    "club-four": OtherPrint(
        "club-four", (297.0, 210.0), cell_w=9.0, cell_h=14.0, centre_h=9.0, res_w=9.0, off_w=9.0,
        left=17.0, top=38.0, column_gap=20.0, row_gap=36.0, numbers=("above", "below"),
        title="BACKGAMMON", line_mm=0.3, thick_mm=0.7, line_grey=0.45, rows=2),
    # Six boards, two columns of three rows, club-small's squares, numbers below, row labels.
    "club-six": OtherPrint(
        "club-six", (297.0, 210.0), cell_w=8.3, cell_h=11.0, centre_h=7.5, res_w=8.3, off_w=8.3,
        left=20.3, top=24.0, column_gap=24.0, row_gap=26.0, numbers=("above", "below"), row_labels=True,
        line_mm=0.25, thick_mm=0.6, line_grey=0.45, rows=3),
    # club-six with its last two boards drawn 15 % smaller (ruled by another hand): boards of unequal size.
    "club-six-unequal": OtherPrint(
        "club-six-unequal", (297.0, 210.0), cell_w=8.3, cell_h=11.0, centre_h=7.5, res_w=8.3, off_w=8.3,
        left=20.3, top=24.0, column_gap=24.0, row_gap=26.0, numbers=("above", "below"), row_labels=True,
        line_mm=0.25, thick_mm=0.6, line_grey=0.45, rows=3, cell_w_of=((5, 7.05), (6, 7.05))),
}


def mirrored(other: OtherPrint) -> OtherPrint:
    """``other`` printed mirrored: the off squares on the left, the result squares on the right."""
    return replace(other, name=f"{other.name}-mirrored", mirrored=True)

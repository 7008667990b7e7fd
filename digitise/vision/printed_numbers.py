"""What a print's numbers say about a fitted page: which side its high points are on, which way up it stands.

Point numbers printed beside a board's rows and the boards' numbers beyond
its centre strip are the marks of a layout that are not symmetric; read
here from the boards :func:`~digitise.vision.layout.fit_layout` found.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import cv2
import numpy as np

from digitise.vision.fitted import FittedBoard


def _number_bands(image: np.ndarray, boards: Sequence[FittedBoard], inner: tuple[float, float], inset: float = 0.08
                  ) -> Iterator[list[np.ndarray]]:
    """Where point numbers are printed (above each board's top row, below its bottom row, ``inset`` of a row's
    height clear of it): each band as its twelve columns' crops of ``image``, each column the part ``inner``
    (fractions of a point's pitch) of its point's width."""
    lo, hi = inner
    for b in boards:
        h = b.ys[1] - b.ys[0]
        for y0, y1 in ((b.ys[0] - 0.6 * h, b.ys[0] - inset * h), (b.ys[3] + inset * h, b.ys[3] + 0.6 * h)):
            columns = []
            for k in range(12):
                x0, x1 = int(b.first + (k + lo) * b.pitch), int(b.first + (k + hi) * b.pitch)
                columns.append(image[max(int(y0), 0):max(int(y1), 0), max(x0, 0):max(x1, 0)])
            yield columns


def numbers_side(binary: np.ndarray, boards: Sequence[FittedBoard]) -> int:
    """Which side the print's point numbers say the high points are on: -1 left (as digitise's own note), 1 right
    (a mirrored print), 0 when there are no numbers beside the squares to tell.

    Point numbers printed above or below a row are the one mark a layout
    gives that is not symmetric: 10, 11 and 12 take two figures, 1, 2 and 3
    one. Each band of numbers votes for the side whose three outer columns
    hold the wider print.
    """
    votes = bands = 0
    for widths in number_widths(binary, boards):
        bands += 1
        # Two figures are about twice one's width; dots, or no print, are alike at both ends.
        left, right = sum(widths[:3]), sum(widths[9:])
        if left > 1.5 * right:
            votes -= 1
        elif right > 1.5 * left:
            votes += 1
    if bands < 4 or abs(votes) < bands / 2:
        return 0
    return -1 if votes < 0 else 1


def number_widths(binary: np.ndarray, boards: Sequence[FittedBoard]) -> Iterator[list[float]]:
    """The widths (px) of the print in the twelve columns of each band of point numbers (a band where at least ten
    columns hold print: a row of numbers)."""
    for columns in _number_bands(binary, boards, (0.1, 0.9)):
        widths = []
        for band in columns:
            # Columns with print in them: two dark pixels or more (a speck of paper grain is one).
            dark = np.flatnonzero(band.sum(axis=0) >= 2) if band.size else np.zeros(0, int)
            widths.append(float(dark[-1] - dark[0] + 1) if dark.size else 0.0)
        if sum(w > 0 for w in widths) >= 10:
            yield widths


def labels_side(binary: np.ndarray, boards: Sequence[FittedBoard]) -> int:
    """Which end of its centre strip the print puts its boards' numbers: -1 left (as digitise's own note and the
    club prints, beside the result squares or the board), 1 right (a page upside down, or a mirrored print), 0 when
    they do not say.

    Between the rows, beyond each end of the centre strip, a note prints
    nothing but the board's number (a number printed left of a board also
    lies beyond the right end of the board to its left). A board votes for
    each end holding print as tall as a figure; told when the boards voting
    for one end are most of them and at least twice the other's. Takes the
    print to be a normal one: a mirrored print says the opposite.
    """
    ends = [0, 0]
    for b in boards:
        xs, strip = b.xs, b.ys[2] - b.ys[1]
        y0, y1 = int(b.ys[1] + 0.12 * strip), int(np.ceil(b.ys[2] - 0.12 * strip))
        spans = ((b.left - 0.8 * b.pitch, xs[1] - 0.15 * b.pitch), (xs[13] + 0.15 * b.pitch, b.right + 0.8 * b.pitch))
        for side, (x0, x1) in enumerate(spans):
            zone = binary[max(y0, 0):max(y1, 0), max(int(x0), 0):max(int(np.ceil(x1)), 0)].astype(np.uint8)
            if not zone.size:
                continue
            count, _, stats, _ = cv2.connectedComponentsWithStats(zone, connectivity=8)
            tallest = max((int(stats[i, cv2.CC_STAT_HEIGHT]) for i in range(1, count)), default=0)
            ends[side] += tallest >= max(3.0, 0.25 * strip)
    left, right = ends
    if max(left, right) < len(boards) / 2 + 1 or max(left, right) < 2 * min(left, right):
        return 0
    return -1 if left > right else 1


def _print_in(band: np.ndarray) -> np.ndarray | None:
    """The printed number in a column of a band of numbers (see :func:`figures_upright`), cropped to its ink
    (specks dropped) and given as its darkness (a figure a few px wide is more than its thresholded pixels), or
    None."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(band[..., 0].astype(np.uint8), connectivity=8)
    tallest = max((int(stats[i, cv2.CC_STAT_HEIGHT]) for i in range(1, count)), default=0)
    if tallest < 4:
        return None
    keep = [i for i in range(1, count) if stats[i, cv2.CC_STAT_HEIGHT] >= 0.6 * tallest]
    mask = np.isin(labels, keep)
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    near = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    return (band[..., 1] * near)[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].astype(np.float32)


def _square(figure: np.ndarray) -> np.ndarray:
    """A figure centred on a square, 16 px a side (its proportions kept: a 1 is narrow)."""
    h, w = figure.shape
    side = max(h, w)
    square = np.zeros((side, side), np.float32)
    square[(side - h) // 2:(side - h) // 2 + h, (side - w) // 2:(side - w) // 2 + w] = figure
    return cv2.resize(square, (16, 16), interpolation=cv2.INTER_AREA)


def _halves(number: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A two-figure number split where its ink is thinnest in its middle (at a few px per mm the figures touch)."""
    w = number.shape[1]
    lo, hi = int(0.3 * w), max(int(0.7 * w), int(0.3 * w) + 1)
    cut = lo + int(np.argmin(number[:, lo:hi].sum(axis=0)))
    return number[:, :cut], number[:, cut:]


def _alike(a: np.ndarray, b: np.ndarray) -> float:
    """How alike two figures are (their overlap over their union, each on its square)."""
    a, b = _square(a), _square(b)
    return float(np.minimum(a, b).sum() / max(float(np.maximum(a, b).sum()), 1e-9))


def figures_upright(figures: np.ndarray, boards: Sequence[FittedBoard]) -> int:
    """Whether the print's point numbers stand the right way up: 1 yes, -1 upside down (the page turned a half
    turn), 0 when there are no numbers beside the squares to tell.

    A board's lines look the same turned a half turn; its printed figures do
    not. The lone figure at the one-figure end of a band of numbers is the 1,
    and in 10 and 12 the 1 comes first, whichever side the print puts them;
    upside down it comes last. Each such number votes, whatever the font.
    ``figures``: the upright page's print and its darkness (:func:`_figures`).
    """
    votes, tens_seen = figure_votes(figures, boards)
    return figures_verdict(votes, tens_seen)


def figures_verdict(votes: int, tens_seen: int) -> int:
    """Which way up the ten-numbers' net ``votes`` say (see :func:`figures_upright`), 0 when too few agree."""
    # Figures a few px tall vote at random (a tenth of a degree more turn swings them): most must agree.
    if abs(votes) < max(4.0, tens_seen / 2):
        return 0
    return 1 if votes > 0 else -1


def figure_votes(figures: np.ndarray, boards: Sequence[FittedBoard], inset: float = 0.08) -> tuple[int, int]:
    """The ten-numbers' net votes for upright (see :func:`figures_upright`) and how many were seen."""
    votes = tens_seen = 0
    for columns in _number_bands(figures, boards, (0.05, 0.95), inset):
        numbers = [_print_in(band) if band.size else None for band in columns]
        if any(n is None for n in numbers):
            continue  # no band of numbers here
        widths = [n.shape[1] for n in numbers if n is not None]
        single = float(np.median(widths[3:9]))
        if min(widths[:3]) > 1.5 * single >= 1.5 * widths[11]:
            one, tens = numbers[11], (numbers[0], numbers[2])
        elif min(widths[9:]) > 1.5 * single >= 1.5 * widths[0]:
            one, tens = numbers[0], (numbers[11], numbers[9])
        else:
            continue  # not a band of 1 to 12 (or too damaged to tell)
        for number in tens:
            if one is None or number is None:
                continue
            tens_seen += 1
            first, second = _halves(number)
            lead = _alike(first, one) - _alike(second, one)
            votes += 1 if lead > 0.1 else -1 if lead < -0.1 else 0
    return votes, tens_seen

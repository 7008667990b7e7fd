"""Reading whole cells: segmentation, candidates, X and arrow, and a failing classifier.

The cells are composed here from held-out TEST glyphs of digits.png, at the
pipeline's 10 px/mm: a 9 x 11 mm point cell with a 1.5 mm margin.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from digitise.notation.readings import CellReading
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.vision.cells import (
    CellKind,
    CellReader,
    CellReadError,
    erase_cross,
    find_cross,
    segment_cell,
)
from digitise.vision.classifier import CLASSES, GLYPH_SIZE
from digitise.vision.cross import longest_run

POINT_SHAPE = (140, 120)  # (11 + 3) mm x (9 + 3) mm at 10 px/mm
MARGIN = 15


@pytest.fixture(scope="module")
def test_glyphs() -> dict[int, list[np.ndarray]]:
    from tests.conftest import DIGITS_PNG

    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    return load_digit_glyphs(DIGITS_PNG, GlyphSubset.TEST)


@pytest.fixture(scope="module")
def reader() -> CellReader:
    return CellReader()


def _glyph(glyphs: dict[int, list[np.ndarray]], digit: int, index: int, height: int) -> np.ndarray:
    g = glyphs[digit][index % len(glyphs[digit])].astype(np.float32) / 255.0
    rows, cols = np.flatnonzero(g.max(axis=1) > 0.2), np.flatnonzero(g.max(axis=0) > 0.2)
    g = g[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    scale = height / g.shape[0]
    big = cv2.resize(g, (max(2, round(g.shape[1] * scale)), height), interpolation=cv2.INTER_CUBIC)
    return np.clip((big - 0.3) / 0.3, 0.0, 1.0)


def compose(
    glyphs: dict[int, list[np.ndarray]],
    lines: list[list[int]],
    *,
    index: int = 0,
    shape: tuple[int, int] = POINT_SHAPE,
    gap: int = 8,
    height: int | None = None,
    residue: bool = True,
) -> np.ndarray:
    """Digits written in one or two lines, left-aligned after the margin, with border residue."""
    ink = np.zeros(shape, np.float32)
    inner_h = shape[0] - 2 * MARGIN
    height = height or (int(inner_h * 0.7) if len(lines) == 1 else int(inner_h * 0.42))
    y = MARGIN + 4
    for line_no, line in enumerate(lines):
        patches = [_glyph(glyphs, d, index + 7 * k + 31 * line_no, height) for k, d in enumerate(line)]
        room = shape[1] - 2 * MARGIN - 6
        total = sum(p.shape[1] for p in patches) + gap * (len(patches) - 1)
        if total > room:  # narrow the writing to fit, as a writer would
            factor = room / total
            patches = [cv2.resize(p, (max(2, int(p.shape[1] * factor)), p.shape[0])) for p in patches]
        x = MARGIN + 3
        for patch in patches:
            h, w = patch.shape
            np.maximum(ink[y:y + h, x:x + w], patch, out=ink[y:y + h, x:x + w])
            x += w + int(gap * min(1.0, room / total))
        y += height + 6
    if residue:
        # What line removal leaves: a faint piece of the top border, a stub of the right one.
        cv2.line(ink, (20, MARGIN - 1), (shape[1] - 30, MARGIN - 1), 0.5, 2)
        cv2.line(ink, (shape[1] - MARGIN, 40), (shape[1] - MARGIN, 70), 0.6, 1)
    return ink


def _top(readings: tuple[CellReading, ...], n: int = 3) -> list[tuple[int, ...]]:
    return [r.digits for r in readings[:n]]


def _check(readings: tuple[CellReading, ...]) -> None:
    probabilities = [r.probability for r in readings]
    assert 1 <= len(readings) <= 5
    assert probabilities == sorted(probabilities, reverse=True)
    assert all(0.0 < p <= 1.0 for p in probabilities)
    assert sum(probabilities) <= 1.0 + 1e-6


# --- segmentation, no model -----------------------------------------------------------------------


def test_blank_and_residue_only_cells_have_no_blobs() -> None:
    assert segment_cell(np.zeros(POINT_SHAPE, np.float32)).blobs == ()
    ink = np.zeros(POINT_SHAPE, np.float32)
    cv2.line(ink, (5, MARGIN), (110, MARGIN), 0.7, 2)
    cv2.line(ink, (MARGIN, 0), (MARGIN, 139), 0.7, 2)
    cv2.circle(ink, (60, 70), 1, 0.6, -1)
    seg = segment_cell(ink)
    assert seg.blobs == ()
    assert seg.dropped_ink


def test_separate_digits_are_separate_blobs_in_reading_order(test_glyphs: dict[int, list[np.ndarray]]) -> None:
    ink = compose(test_glyphs, [[3, 5]], gap=14, height=50)
    seg = segment_cell(ink)
    assert len(seg.blobs) == 2
    assert seg.blobs[0].alternatives[0][0].box[0] < seg.blobs[1].alternatives[0][0].box[0]
    two = segment_cell(compose(test_glyphs, [[3, 5], [6]], gap=14))
    assert [b.line for b in two.blobs] == [0, 0, 1]


def test_wide_blob_gets_split_alternatives(test_glyphs: dict[int, list[np.ndarray]]) -> None:
    ink = compose(test_glyphs, [[4, 2]], gap=-3, height=60)  # touching
    seg = segment_cell(ink)
    assert any(len(alt) == 2 for b in seg.blobs for alt in b.alternatives)
    for blob in seg.blobs:
        for alternative in blob.alternatives:
            assert all(s.glyph.shape == (GLYPH_SIZE, GLYPH_SIZE) for s in alternative)


# --- reading with the shipped model -----------------------------------------------------------------


CASES = [
    ("single", [[5]], {}),
    ("single one", [[1]], {}),
    ("two digits", [[6, 3]], {}),
    ("three digits", [[2, 4, 1]], {}),
    # Four digits squeezed narrower than written (these read 6/8 in the top 3 before faint stroke
    # ends were kept by the hysteresis threshold).
    ("four digits", [[1, 1, 1, 1]], {"height": 45, "gap": 5}),
    ("four mixed", [[3, 6, 2, 5]], {"height": 40, "gap": 3}),
    ("touching", [[5, 3]], {"gap": -4, "height": 55}),
    ("touching three", [[2, 6, 4]], {"gap": -3, "height": 45}),
    ("two lines", [[6, 4], [2, 3]], {}),
    ("two lines uneven", [[5, 5, 5], [5]], {"height": 40}),
]


@pytest.mark.parametrize(("name", "lines", "options"), CASES)
def test_point_cells_read_truth_in_top_three(
    reader: CellReader, test_glyphs: dict[int, list[np.ndarray]], name: str, lines: list[list[int]], options: dict[str, int]
) -> None:
    truth = tuple(d for line in lines for d in line)
    hits = 0
    for index in range(8):  # eight different writers' glyphs per case
        readings = reader.read_cell(compose(test_glyphs, lines, index=index * 11, **options), CellKind.POINT)
        _check(readings)
        assert all(all(1 <= d <= 6 for d in r.digits) for r in readings)
        hits += truth in _top(readings)
    assert hits >= 7, f"{name}: truth {truth} in the top 3 for only {hits}/8 writers"


def test_empty_cell_with_residue_reads_empty(reader: CellReader) -> None:
    ink = np.zeros(POINT_SHAPE, np.float32)
    cv2.line(ink, (10, MARGIN - 1), (100, MARGIN - 1), 0.6, 2)
    cv2.line(ink, (POINT_SHAPE[1] - MARGIN, 5), (POINT_SHAPE[1] - MARGIN, 130), 0.5, 2)
    readings = reader.read_cell(ink, CellKind.POINT)
    assert readings[0].digits == ()
    assert readings[0].probability > 0.9


def test_result_cell_reads_zero_to_nine(reader: CellReader, test_glyphs: dict[int, list[np.ndarray]]) -> None:
    hits = 0
    for index in range(6):
        ink = compose(test_glyphs, [[1, 0]], index=index * 5)
        hits += (1, 0) in _top(reader.read_cell(ink, CellKind.RESULT))
        hits += (8,) in _top(reader.read_cell(compose(test_glyphs, [[8]], index=index * 5), CellKind.RESULT))
    assert hits >= 11


def _centre(test_glyphs: dict[int, list[np.ndarray]], digits: list[int], index: int, cross: bool) -> np.ndarray:
    ink = compose(test_glyphs, [digits], index=index, shape=(110, 500), height=55, gap=6, residue=False)
    ink = np.roll(ink, 180, axis=1)
    ys, xs = np.nonzero(ink > 0.3)
    if cross:
        x0, y0, x1, y1 = int(xs.min()) - 6, int(ys.min()) - 6, int(xs.max()) + 6, int(ys.max()) + 6
        cv2.line(ink, (x0, y0), (x1, y1), 1.0, 4, cv2.LINE_AA)
        cv2.line(ink, (x1, y0), (x0, y1), 1.0, 4, cv2.LINE_AA)
    return ink


def test_centre_x_over_digits(reader: CellReader, test_glyphs: dict[int, list[np.ndarray]]) -> None:
    crossed_hits = digit_hits = plain_hits = 0
    for index in range(6):
        crossed = reader.read_centre(_centre(test_glyphs, [6, 3], index * 13, cross=True))
        crossed_hits += crossed.crossed > 0.5
        digit_hits += (6, 3) in _top(crossed.candidates)
        plain = reader.read_centre(_centre(test_glyphs, [6, 3], index * 13, cross=False))
        plain_hits += plain.crossed < 0.5 and plain.candidates[0].digits == (6, 3)
    assert crossed_hits >= 5
    assert digit_hits >= 4
    assert plain_hits >= 5


def _arrow_ink() -> np.ndarray:
    ink = np.zeros((110, 600), np.float32)
    cv2.line(ink, (150, 55), (400, 60), 1.0, 4, cv2.LINE_AA)
    cv2.line(ink, (400, 60), (370, 38), 1.0, 4, cv2.LINE_AA)
    cv2.line(ink, (400, 60), (372, 82), 1.0, 4, cv2.LINE_AA)
    return ink


def test_find_cross_finds_the_x_and_nothing_in_digits_arrows_or_loops(test_glyphs: dict[int, list[np.ndarray]]) -> None:
    for index in range(6):
        for digits in ([6, 3], [5], [1, 1, 1, 1]):
            crossed = _centre(test_glyphs, digits, index * 13, cross=True) > 0.3
            cross = find_cross(crossed.astype(np.uint8))
            assert cross is not None, (digits, index)
            assert cross.confidence > 0.5
            # The strokes run corner to corner of the digits: one falls to the right, one rises.
            slopes = [float(np.sign(s.points[-1, 1] - s.points[0, 1])) for s in cross.strokes]
            assert sorted(slopes) == [-1.0, 1.0]
            plain = _centre(test_glyphs, digits, index * 13, cross=False) > 0.3
            assert find_cross(plain.astype(np.uint8)) is None, (digits, index)
    assert find_cross((_arrow_ink() > 0.3).astype(np.uint8)) is None
    loop = np.zeros(POINT_SHAPE, np.uint8)
    cv2.ellipse(loop, (60, 70), (14, 24), 0, 0, 360, 1, 5)
    assert find_cross(loop) is None


def test_erase_cross_takes_the_x_out_and_keeps_the_digits(test_glyphs: dict[int, list[np.ndarray]]) -> None:
    for index in range(4):
        plain = (_centre(test_glyphs, [6, 3], index * 13, cross=False) > 0.3).astype(np.uint8)
        crossed = (_centre(test_glyphs, [6, 3], index * 13, cross=True) > 0.3).astype(np.uint8)
        cross = find_cross(crossed)
        assert cross is not None
        erased = erase_cross(crossed, cross)
        x_only = crossed & (1 - plain)
        # Most of the X goes; what stays is where digit strokes cross it (bridged back) and its tips.
        assert (erased & x_only).sum() < 0.3 * x_only.sum()
        # The digits lose what lay under the X's band (about a third where strokes run along it).
        assert (erased & plain).sum() > 0.6 * plain.sum()
        # The centre's segmentation reports the X it found.
        assert len(segment_cell(crossed.astype(np.float32), kind=CellKind.CENTRE).crosses) == 1
        assert segment_cell(plain.astype(np.float32), kind=CellKind.CENTRE).crosses == ()


def test_the_search_for_more_xs_stops_at_a_sure_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from digitise.vision import segment as cells_module

    # Two long X's side by side ("one each"): both as sure as an X gets.
    two = np.zeros((110, 1200), np.uint8)
    for x0 in (300, 600):
        cv2.line(two, (x0, 15), (x0 + 110, 95), 1, 4)
        cv2.line(two, (x0, 95), (x0 + 110, 15), 1, 4)
    ink = two.astype(np.float32)
    first = segment_cell(ink, kind=CellKind.CENTRE).crosses
    # Another X could not make the strip more surely crossed: it is not looked for.
    assert len(first) == 1 and first[0].confidence == cells_module.CROSS_SURE
    # A segmentation that takes the X's out needs them all.
    monkeypatch.setattr(cells_module, "CROSS_SEGMENTATION", True)
    both = segment_cell(ink, kind=CellKind.CENTRE).crosses
    assert len(both) == 2 and all(c.confidence == cells_module.CROSS_SURE for c in both)


def test_centre_arrow(reader: CellReader) -> None:
    centre = reader.read_centre(_arrow_ink())
    assert centre.arrow > 0.5
    assert centre.candidates[0].digits == ()


# --- fakes: the reader's own logic, and failures ------------------------------------------------------


class _Always:
    """A recorded answer: every glyph is ``label`` with probability ``p``, the rest spread evenly."""

    classes = CLASSES

    def __init__(self, label: str, p: float = 0.9) -> None:
        self.row = np.full(len(CLASSES), (1 - p) / (len(CLASSES) - 1), np.float32)
        self.row[CLASSES.index(label)] = p

    def predict(self, glyphs: np.ndarray) -> np.ndarray:
        return np.tile(self.row, (len(glyphs), 1))


class _Broken:
    classes = CLASSES

    def predict(self, glyphs: np.ndarray) -> np.ndarray:
        raise RuntimeError("model file truncated")


class _WrongShape:
    classes = CLASSES

    def predict(self, glyphs: np.ndarray) -> np.ndarray:
        return np.zeros((len(glyphs), 3), np.float32)


def _blob_cell() -> np.ndarray:
    ink = np.zeros(POINT_SHAPE, np.float32)
    cv2.ellipse(ink, (60, 70), (14, 24), 0, 0, 360, 1.0, 5)
    return ink


def test_fake_classifier_reading_follows_its_answers() -> None:
    readings = CellReader(_Always("4", 0.9)).read_cell(_blob_cell(), CellKind.POINT)
    assert readings[0].digits == (4,)
    assert readings[0].probability == pytest.approx(0.9, abs=0.02)
    # A 7 cannot stand in a point square: its mass is left out, the cell is doubtful.
    doubtful = CellReader(_Always("7", 0.9)).read_cell(_blob_cell(), CellKind.POINT)
    assert sum(r.probability for r in doubtful) < 0.2
    assert CellReader(_Always("7", 0.9)).read_cell(_blob_cell(), CellKind.RESULT)[0].digits == (7,)
    assert CellReader(_Always("other", 0.95)).read_cell(_blob_cell(), CellKind.POINT)[0].digits == ()
    assert CellReader(_Always("arrow", 0.95)).read_centre(_blob_cell()).arrow > 0.9
    assert CellReader(_Always("3x", 0.95)).read_centre(_blob_cell()).crossed > 0.9


def test_failing_classifier_is_a_clear_error_not_a_crash() -> None:
    with pytest.raises(CellReadError, match="glyph classifier failed: RuntimeError: model file truncated"):
        CellReader(_Broken()).read_cell(_blob_cell(), CellKind.POINT)
    with pytest.raises(CellReadError, match="shape"):
        CellReader(_WrongShape()).read_cell(_blob_cell(), CellKind.POINT)
    # A blank cell needs no classifier at all.
    assert CellReader(_Broken()).read_cell(np.zeros(POINT_SHAPE, np.float32), CellKind.POINT)[0].digits == ()


def test_bad_ink_is_rejected() -> None:
    with pytest.raises(ValueError):
        CellReader(_Always("1")).read_cell(np.zeros((3, 4, 5), np.float32), CellKind.POINT)


def test_many_cells_in_one_call_match_one_by_one(reader: CellReader, test_glyphs: dict[int, list[np.ndarray]]) -> None:
    inks = [compose(test_glyphs, [[d]], index=d) for d in (1, 2, 3)] + [np.zeros(POINT_SHAPE, np.float32)]
    together = reader.analyse_many([(ink, CellKind.POINT) for ink in inks])
    alone = [reader.analyse(ink, CellKind.POINT) for ink in inks]
    assert [a.candidates for a in together] == [a.candidates for a in alone]


def _longest_run_by_rows(occupied: np.ndarray) -> tuple[int, int, int]:
    """The X finder's longest run, spelt out row by row: the reference for the fast one."""
    best_len, best_row, best_end = 0, 0, 1
    per_row = []
    for r, line in enumerate(occupied):
        run = longest = 0
        for c, v in enumerate(line):
            run = run + 1 if v else 0
            longest = max(longest, run)
            if run > best_len:
                best_len, best_row, best_end = run, r, c + 1
        per_row.append(longest)
    rows = [best_row]
    for step in (-1, 1):
        r = best_row + step
        while 0 <= r < len(per_row) and per_row[r] >= best_len - 1:
            rows.append(r)
            r += step
    return round(sum(rows) / len(rows)), best_end, best_len


@given(st.integers(1, 12), st.integers(1, 20), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_longest_run_is_the_first_longest_run_and_the_middle_of_its_thick_stroke(
        height: int, width: int, density: float, seed: int) -> None:
    grid = (np.random.default_rng(seed).random((height, width)) < density).astype(np.uint8)
    if grid.any():
        assert longest_run(grid) == _longest_run_by_rows(grid)


def test_an_obscured_cell_keeps_a_tenth_of_its_reading_and_no_letters() -> None:
    from dataclasses import replace as _replace

    from digitise.notation.readings import CellReading as _Reading
    from digitise.vision.cells import CellAnalysis as _Analysis
    from digitise.vision.cells import obscured

    read = _Analysis((_Reading((), 0.9), _Reading((5,), 0.1)), 0.2, 0.3, 1.0)
    blotted = obscured(read)
    assert [(c.digits, c.probability) for c in blotted.candidates] == [((), 0.09), ((5,), 0.01)]
    assert (blotted.crossed, blotted.arrow, blotted.letters) == (0.2, 0.0, 0.0)
    assert obscured(_replace(read, candidates=())).candidates == ()

"""Handwriting for synthetic sheets: real digit glyphs, hand-drawn strokes, written words.

Everything is drawn into an *ink layer*: a uint8 image of the page where 0 is
no ink and 255 full ink; the page's colour is applied later, once, so a page
is one writer with one pen. Digits are real handwritten glyphs (see
:mod:`digitise.sheet.glyphs`), placed with a writer's size, slant and stroke
weight and some disorder: one line or two, touching digits, a digit spilling
a little over a line. Crosses and arrows are polylines with jitter, never
font glyphs. Words (names, event, date) use OpenCV's Hershey script font,
slanted and jittered.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from digitise.errors import InputError
from digitise.notation.template import Rect


class PageWarp:
    """Where the page's ink lands in the final image: a homography, applied locally as an affine map.

    Ink is drawn straight into the damaged image's coordinates, so the page
    never has to warp its ink layer (each glyph is already warped, and a glyph
    is small enough that the homography's local affine map is exact to a
    fraction of a pixel).
    """

    def __init__(self, matrix: np.ndarray | None = None) -> None:
        self.matrix = np.eye(3) if matrix is None else np.asarray(matrix, dtype=np.float64)
        self.identity = bool(np.allclose(self.matrix, np.eye(3), atol=1e-12))

    def points(self, pts: np.ndarray) -> np.ndarray:
        """Map page px points (N x 2) to image px."""
        if self.identity:
            return pts
        mapped = np.hstack([pts, np.ones((len(pts), 1))]) @ self.matrix.T
        return mapped[:, :2] / mapped[:, 2:3]

    def compose(self, lin: np.ndarray, offset: np.ndarray, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The affine map (lin, offset) followed by the homography linearised at ``centre`` (page px)."""
        if self.identity:
            return lin, offset
        m = self.matrix
        x, y = float(centre[0]), float(centre[1])
        w = m[2, 0] * x + m[2, 1] * y + m[2, 2]
        u = (m[0, 0] * x + m[0, 1] * y + m[0, 2]) / w
        v = (m[1, 0] * x + m[1, 1] * y + m[1, 2]) / w
        jac = np.array([[m[0, 0] - u * m[2, 0], m[0, 1] - u * m[2, 1]],
                        [m[1, 0] - v * m[2, 0], m[1, 1] - v * m[2, 1]]]) / w
        return jac @ lin, np.array([u, v]) + jac @ (offset - centre)


IDENTITY = PageWarp()


class InkColour:
    """Ink colours (BGR) and how dark each pen writes at most."""

    BLUE = (150, 60, 25)
    BLACK = (35, 30, 30)
    PENCIL = (95, 95, 98)


@dataclass(frozen=True, slots=True)
class WriterStyle:
    """One writer with one pen: everything that stays the same on a page."""

    #: Pen colour (BGR) and its name (``blue``, ``black``, ``pencil``).
    ink: tuple[int, int, int]
    ink_name: str
    #: Strongest ink coverage (pencil writes fainter).
    opacity: float
    #: Digit height as a share of the cell height (one line of digits).
    size: float
    #: Horizontal shear: positive leans right (x += slant * height above the baseline).
    slant: float
    #: Glyph threshold: lower writes thicker strokes (0-255 on the glyph scale).
    weight: int
    #: Stroke width of crosses and arrows, mm.
    stroke_mm: float
    #: How untidy: scales jitter of size, position and rotation (0 tidy, 1 messy).
    mess: float
    #: Share of cells whose digits are written on two lines when there are 2+.
    two_lines: float


def random_style(rng: np.random.Generator, *, mess: float = 0.5) -> WriterStyle:
    """A random writer; ``mess`` (0-1) bounds how untidy the hand is."""
    pen = rng.choice(3, p=[0.5, 0.35, 0.15])
    ink, name, opacity = [
        (InkColour.BLUE, "blue", 1.0),
        (InkColour.BLACK, "black", 1.0),
        (InkColour.PENCIL, "pencil", 0.8),
    ][int(pen)]
    jitter = tuple(int(np.clip(c + rng.normal(0, 8), 0, 255)) for c in ink)
    return WriterStyle(
        ink=(jitter[0], jitter[1], jitter[2]),
        ink_name=name,
        opacity=opacity * float(rng.uniform(0.85, 1.0)),
        size=float(rng.uniform(0.45, 0.68)),
        slant=float(rng.uniform(-0.1, 0.35)),
        weight=int(rng.integers(50, 150)),
        stroke_mm=float(rng.uniform(0.3, 0.6)),
        mess=float(np.clip(mess * rng.uniform(0.5, 1.3), 0.0, 1.0)),
        two_lines=float(rng.uniform(0.0, 0.6)),
    )


class GlyphBank:
    """Digit glyphs ready to draw: cropped to their ink, per digit."""

    def __init__(self, glyphs: Mapping[int, Sequence[np.ndarray]]) -> None:
        self.glyphs: dict[int, list[np.ndarray]] = {}
        for digit in range(10):
            crops = []
            for image in glyphs.get(digit, ()):
                crop = _crop_ink(image)
                if crop is not None:
                    crops.append(crop)
            self.glyphs[digit] = crops
        missing = [d for d in range(10) if not self.glyphs[d]]
        if len(missing) == 10:
            raise InputError("no usable digit glyph")
        self.missing = tuple(missing)

    def pick(self, digit: int, rng: np.random.Generator) -> np.ndarray:
        """A random glyph of ``digit`` (white ink on black, cropped)."""
        choices = self.glyphs[digit]
        if not choices:
            raise InputError(f"no glyph for the digit {digit}")
        return choices[int(rng.integers(len(choices)))]


#: Which drawing of the writer's glyphs a page has: raised whenever the same seed draws other ink
#: (1: glyphs as stored, a thin MNIST stroke broken into dots by a thin pen; 2: :func:`full_strength`).
#: Caches of rendered cells are keyed by it.
HANDWRITING_VERSION = 2

#: Share of a glyph's ink pixels at full ink once its strokes are brought to a pen's strength.
CORE_SHARE = 0.10
#: A glyph's grey above this is ink (below: the anti-aliased fringe and background).
GLYPH_INK = 40
#: Most a glyph is strengthened: a pale glyph of digits.png needs at most 1.72x; more would turn a
#: glyph source's faint fringe into strokes.
MOST_STRENGTH = 2.0


def full_strength(glyph: np.ndarray) -> np.ndarray:
    """``glyph`` (uint8, white ink on black) scaled so its strongest tenth of ink is full ink.

    A pen lays the same ink all along its stroke. A 20-px MNIST glyph does
    not: a thin stroke came out pale when the digit was shrunk to 20 px,
    and a writer's weight (a threshold on the glyph's grey) then kept only
    the darkest spots of it, a digit drawn as a few dots beside a whole one.
    Scaled to full strength first, a thin pen draws such a glyph thin and whole.
    """
    ink = glyph[glyph > GLYPH_INK]
    if ink.size == 0:
        return glyph
    core = float(np.percentile(ink, 100.0 * (1.0 - CORE_SHARE)))
    if core >= 255.0:
        return glyph
    return cv2.convertScaleAbs(glyph, alpha=min(255.0 / core, MOST_STRENGTH))


def _crop_ink(image: np.ndarray) -> np.ndarray | None:
    if image.ndim == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    ys, xs = np.nonzero(image > GLYPH_INK)
    if ys.size < 4:
        return None
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    # One pixel of black around the ink so the warp's edges fade to nothing.
    return np.pad(full_strength(np.ascontiguousarray(image[y0:y1, x0:x1])), 1)


def _paint(ink: np.ndarray, patch: np.ndarray, x: int, y: int) -> None:
    """Max-composite ``patch`` onto ``ink`` with its top-left at (x, y), clipped to the page."""
    h, w = patch.shape
    H, W = ink.shape
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return
    region = ink[y0:y1, x0:x1]
    np.maximum(region, patch[y0 - y:y1 - y, x0 - x:x1 - x], out=region)


def weight_lut(weight: int, opacity: float) -> np.ndarray:
    """Glyph grey -> ink coverage: a ramp starting at ``weight`` (lower = thicker strokes)."""
    levels = np.arange(256, dtype=np.float32)
    ramp = np.clip((levels - weight) / max(255 - weight, 1) * 2.2, 0.0, 1.0)
    return np.round(ramp * opacity * 255).astype(np.uint8)


def draw_glyph(
    ink: np.ndarray, glyph: np.ndarray, *, x: float, y: float, height: float, slant: float, angle: float,
    aspect: float, lut: np.ndarray, warp: PageWarp = IDENTITY,
) -> tuple[float, float, float, float]:
    """Draw ``glyph`` with its bottom-left at (x, y) page px, ``height`` px tall; returns its page box."""
    gh, gw = glyph.shape
    scale = height / gh
    sx = scale * aspect
    c, s = np.cos(angle), np.sin(angle)
    # glyph (u, v) -> local: x' = sx*u + slant*scale*(gh - v), y' = scale*v - height, then rotate.
    a = np.array([[sx, -slant * scale], [0.0, scale]])
    rot = np.array([[c, -s], [s, c]])
    lin = rot @ a
    offset = rot @ np.array([slant * scale * gh, -height]) + np.array([x, y])
    glyph_corners = np.array([[0, 0], [gw, 0], [gw, gh], [0, gh]], dtype=np.float64)
    corners = glyph_corners @ lin.T + offset
    box = corners.min(axis=0), corners.max(axis=0)
    lin, offset = warp.compose(lin, offset, (box[0] + box[1]) / 2)
    placed = glyph_corners @ lin.T + offset
    x0, y0 = np.floor(placed.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(placed.max(axis=0)).astype(int) + 1
    matrix = np.hstack([lin, (offset - [x0, y0]).reshape(2, 1)])
    patch = cv2.warpAffine(glyph, matrix, (int(x1 - x0), int(y1 - y0)), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    _paint(ink, cv2.LUT(patch, lut), int(x0), int(y0))
    return (float(box[0][0]), float(box[0][1]), float(box[1][0]), float(box[1][1]))


def write_digits(
    ink: np.ndarray, bank: GlyphBank, digits: Sequence[int], cell: Rect, style: WriterStyle,
    rng: np.random.Generator, *, lut: np.ndarray, spill: float = 0.0, warp: PageWarp = IDENTITY,
    one_line: bool = False, digit_h: float | None = None,
) -> tuple[float, float, float, float]:
    """Write ``digits`` (left to right, maybe on two lines) inside ``cell`` (px); returns the ink's box.

    ``spill`` is the chance that the block overflows a cell line a little.
    ``one_line`` keeps the digits on one line (the long centre strip has room
    for them); ``digit_h`` is the writer's digit height in px, when it is not
    the usual share of ``cell``'s height (still shrunk to fit the cell).
    """
    n = len(digits)
    # The draw is made even for one line, so the rest of the page's randomness does not move.
    two = n >= 2 and rng.random() < (style.two_lines if n <= 2 else max(style.two_lines, 0.5 if n == 4 else 0.3))
    two = two and not one_line
    lines = [list(digits[: (n + 1) // 2]), list(digits[(n + 1) // 2:])] if two else [list(digits)]
    mess = style.mess
    base_h = cell.h * style.size if digit_h is None else digit_h
    height = base_h * (0.72 if two else 1.0) * float(rng.uniform(1 - 0.12 * mess, 1 + 0.12 * mess))
    # Choose every glyph first so the block can be measured: a recorder shrinks
    # the digits to fit the square, and the reader's truth is which square they are in.
    picked = [[(bank.pick(d, rng), float(rng.uniform(1 - 0.08 * mess, 1 + 0.08 * mess)),
                float(rng.uniform(0.85, 1.15)), float(rng.normal(0, 0.06 * mess))) for d in line] for line in lines]
    gap_share = float(rng.uniform(-0.12, 0.22)) * 0.6

    def line_width(line: list[tuple[np.ndarray, float, float, float]], h: float) -> float:
        widths = [h * f * g.shape[1] / g.shape[0] * a for g, f, a, _ in line]
        return float(sum(widths) + (len(line) - 1) * gap_share * h + abs(style.slant) * h)

    needed = max(line_width(line, height) for line in picked)
    if needed > cell.w * 0.92:
        height *= cell.w * 0.92 / needed
        needed = cell.w * 0.92
    gap = gap_share * height
    line_gap = height * float(rng.uniform(0.05, 0.25))
    block_h = len(lines) * height + (len(lines) - 1) * line_gap
    if block_h > cell.h * 0.92:
        shrink = cell.h * 0.92 / block_h
        height, gap, line_gap, needed, block_h = (v * shrink for v in (height, gap, line_gap, needed, block_h))
    free_x, free_y = max(cell.w - needed, 0.0), max(cell.h - block_h, 0.0)
    left = cell.x + free_x * float(rng.uniform(0.15, 0.85))
    top = cell.y + free_y * float(rng.uniform(0.2, 0.8))
    if spill and rng.random() < spill:
        # Overflow a random side by up to a fifth of a digit.
        side = int(rng.integers(4))
        amount = height * float(rng.uniform(0.08, 0.22))
        if side == 0:
            left = cell.x - amount
        elif side == 1:
            left = cell.right - needed + amount
        elif side == 2:
            top = cell.y - amount
        else:
            top = cell.bottom - block_h + amount
    box = [np.inf, np.inf, -np.inf, -np.inf]
    baseline = top + height
    for line in picked:
        x = left + float(rng.normal(0, 0.05 * mess * height))
        for glyph, factor, aspect, angle in line:
            h = height * factor
            y = baseline + float(rng.normal(0, 0.04 * mess * height))
            # A leftward slant draws left of x: start it where the ink stays in the block.
            x_draw = x + max(-style.slant, 0.0) * h
            x0, y0, x1, y1 = draw_glyph(ink, glyph, x=x_draw, y=y, height=h, slant=style.slant, angle=angle,
                                        aspect=aspect, lut=lut, warp=warp)
            box = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
            width = h * glyph.shape[1] / glyph.shape[0] * aspect
            x += width + gap
        baseline += height + line_gap
    return (box[0], box[1], box[2], box[3])


def _jittered(points: np.ndarray, rng: np.random.Generator, amount: float, segments: int = 6) -> np.ndarray:
    """A hand-drawn version of the polyline ``points``: subdivided, with a smooth wobble."""
    out = [points[0]]
    for a, b in itertools.pairwise(points):
        for k in range(1, segments + 1):
            out.append(a + (b - a) * k / segments)
    path = np.array(out, dtype=np.float64)
    # A low-frequency wobble: cumulative random steps, pinned near the ends.
    wobble = np.cumsum(rng.normal(0, amount, size=path.shape), axis=0)
    wobble -= np.linspace(0, 1, len(path))[:, None] * wobble[-1]
    return path + wobble


def draw_stroke(ink: np.ndarray, points: Sequence[tuple[float, float]], style: WriterStyle, rng: np.random.Generator,
                *, px_per_mm: float, opacity: float | None = None, warp: PageWarp = IDENTITY) -> None:
    """Draw a hand stroke through ``points`` (page px), with the pen's width and some wobble."""
    path = _jittered(np.asarray(points, dtype=np.float64), rng, amount=0.08 * px_per_mm * (0.5 + style.mess))
    path = warp.points(path)
    thickness = max(1, round(style.stroke_mm * px_per_mm * float(rng.uniform(0.85, 1.15))))
    value = round(255 * (style.opacity if opacity is None else opacity))
    fixed = np.round(path * 16).astype(np.int32).reshape(-1, 1, 2)
    cv2.polylines(ink, [fixed], False, value, thickness, cv2.LINE_AA, 4)


def draw_cross(ink: np.ndarray, box: tuple[float, float, float, float], style: WriterStyle,
               rng: np.random.Generator, *, px_per_mm: float, warp: PageWarp = IDENTITY) -> None:
    """An X over ``box`` (px): two strokes corner to corner, overshooting a little."""
    x0, y0, x1, y1 = box
    pad = 0.8 * px_per_mm
    x0, y0, x1, y1 = x0 - pad, y0 - pad, x1 + pad, y1 + pad
    j = rng.normal(0, 0.5 * px_per_mm, size=8)
    draw_stroke(ink, [(x0 + j[0], y0 + j[1]), (x1 + j[2], y1 + j[3])], style, rng, px_per_mm=px_per_mm, warp=warp)
    draw_stroke(ink, [(x1 + j[4], y0 + j[5]), (x0 + j[6], y1 + j[7])], style, rng, px_per_mm=px_per_mm, warp=warp)


def draw_arrow(ink: np.ndarray, area: Rect, style: WriterStyle, rng: np.random.Generator, *,
               px_per_mm: float, warp: PageWarp = IDENTITY) -> tuple[float, float, float, float]:
    """A doubling arrow inside ``area`` (px): a shaft and a two-stroke head, pointing either way."""
    length = area.w * float(rng.uniform(0.25, 0.6))
    x_start = area.x + (area.w - length) * float(rng.uniform(0.1, 0.9))
    y = area.y + area.h * float(rng.uniform(0.35, 0.65))
    tilt = float(rng.normal(0, 0.04)) * length
    tail, tip = np.array([x_start, y - tilt / 2]), np.array([x_start + length, y + tilt / 2])
    if rng.random() < 0.5:
        tail, tip = tip, tail
    draw_stroke(ink, [tuple(tail), tuple(tip)], style, rng, px_per_mm=px_per_mm, warp=warp)
    direction = (tip - tail) / np.linalg.norm(tip - tail)
    normal = np.array([-direction[1], direction[0]])
    head = min(area.h * 0.45, length * 0.3) * float(rng.uniform(0.8, 1.2))
    for sign in (1, -1):
        end = tip - direction * head + normal * sign * head * float(rng.uniform(0.5, 0.8))
        draw_stroke(ink, [tuple(tip), tuple(end)], style, rng, px_per_mm=px_per_mm, warp=warp)
    xs, ys = [tail[0], tip[0]], [tail[1], tip[1]]
    return (min(xs), min(ys) - head, max(xs), max(ys) + head)


def write_words(ink: np.ndarray, text: str, area: Rect, style: WriterStyle, rng: np.random.Generator, *,
                px_per_mm: float, warp: PageWarp = IDENTITY) -> None:
    """Handwriting-like ``text`` inside ``area`` (px): a light italic font, each letter jittered in size,
    height and spacing, the word slanted and tilted like the writer's digits."""
    if not text:
        return
    font = cv2.FONT_HERSHEY_SCRIPT_SIMPLEX
    target_h = area.h * float(rng.uniform(0.42, 0.62))
    # Cap height is about 21 px at scale 1. OpenCV 5 draws its own outline fonts, where thickness 1
    # is a light weight whose strokes grow with the size (a pen line at header sizes); 2 is bold.
    scale = target_h / 21.0
    thickness = 1
    del px_per_mm  # kept in the signature for pens of other widths
    widths = [cv2.getTextSize(ch, font, scale, thickness)[0][0] for ch in text]
    total = sum(widths)
    if total > area.w * 0.95:
        shrink = area.w * 0.95 / total
        scale *= shrink
        target_h *= shrink
        widths = [cv2.getTextSize(ch, font, scale, thickness)[0][0] for ch in text]
        total = sum(widths)
    pad = round(target_h * 0.6) + 4
    patch = np.zeros((round(target_h * 1.8) + 2 * pad, total + 2 * pad + round(target_h)), dtype=np.uint8)
    value = round(255 * style.opacity)
    x = float(pad)
    baseline = pad + target_h * 1.2
    for ch, w in zip(text, widths, strict=True):
        k = float(rng.uniform(0.92, 1.08))
        dy = float(rng.normal(0, 0.05 * target_h * (0.5 + style.mess)))
        cv2.putText(patch, ch, (round(x), round(baseline + dy)), font, scale * k, value, thickness, cv2.LINE_AA)
        x += w * k * float(rng.uniform(0.9, 1.02))
    h, w = patch.shape
    shear = style.slant * 0.5
    angle = float(rng.normal(0, 0.015 + 0.02 * style.mess))
    c, s = np.cos(angle), np.sin(angle)
    lin = np.array([[c, -s], [s, c]]) @ np.array([[1.0, -shear], [0.0, 1.0]])
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64) @ lin.T
    x_left = area.x + max(area.w - x, 0) * float(rng.uniform(0.0, 0.4)) - pad
    y_top = area.y + (area.h - h) / 2 + float(rng.normal(0, 0.06 * area.h))
    shift = np.array([x_left, y_top]) - corners.min(axis=0)
    lin, shift = warp.compose(lin, shift, shift + corners.mean(axis=0))
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64) @ lin.T
    x0, y0 = int(np.floor(shift[0] + corners[:, 0].min())), int(np.floor(shift[1] + corners[:, 1].min()))
    x1, y1 = int(np.ceil(shift[0] + corners[:, 0].max())), int(np.ceil(shift[1] + corners[:, 1].max()))
    matrix = np.hstack([lin, (shift - [x0, y0]).reshape(2, 1)])
    warped = cv2.warpAffine(patch, matrix, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    _paint(ink, warped, x0, y0)

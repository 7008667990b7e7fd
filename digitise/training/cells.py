"""Synthetic cells for training and measuring the classifier (numpy and OpenCV only, no torch).

A synthetic cell is drawn the way the vision pipeline hands cells over: ink
in [0, 1] at 10 px/mm, the cell plus a margin, with what a filled sheet puts
there (1-4 digits in one or two lines, touching or not, an X over the
centre's digits, a double's arrow, letters of a name, a scribble) and what a
scan leaves (residue of the printed lines, specks, blur, noise, pale ink).
Each cell carries the mask of every object drawn, so the segments that
:func:`digitise.vision.cells.segment_cell` cuts from it can be labelled:
that keeps training and reading on the very same segmentation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from digitise.vision.cells import CellKind, segment_cell

PX_PER_MM = 10.0
#: Hershey fonts for letters; the script ones look the most like handwriting.
FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
    cv2.FONT_HERSHEY_SCRIPT_COMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
)
#: Letters that do not look like a digit in someone's hand (no O, I, l, S, Z, B, b, g, q).
LETTERS = "ACDEFHJKLMNPRTUVWXYacdefhkmnprtuvwxy"


@dataclass(frozen=True, slots=True)
class SyntheticCell:
    """A drawn cell, what is written in it and where each object's ink is."""

    ink: np.ndarray
    kind: CellKind
    digits: tuple[int, ...]
    crossed: bool
    arrow: bool
    letters: bool
    #: One mask per object (digit or letter, in reading order) and its class name.
    objects: tuple[tuple[str, np.ndarray], ...]
    #: Ink of the X strokes (empty when not crossed).
    x_mask: np.ndarray


def cell_shape(kind: CellKind, rng: np.random.Generator) -> tuple[int, int, float]:
    """Height and width in px of a cell crop (with margin) and the margin in px."""
    margin = rng.uniform(0.5, 2.0) * PX_PER_MM
    if kind is CellKind.CENTRE:
        h_mm, w_mm = rng.uniform(7.5, 10.0), rng.uniform(25.0, 120.0)
    elif kind is CellKind.HEADER_NUMBER:
        h_mm, w_mm = rng.uniform(7.5, 10.0), rng.uniform(14.0, 30.0)
    else:
        h_mm, w_mm = rng.uniform(10.0, 13.0), rng.uniform(8.5, 11.0)
    return int(h_mm * PX_PER_MM + 2 * margin), int(w_mm * PX_PER_MM + 2 * margin), margin


def render_glyph(glyph: np.ndarray, height: int, rng: np.random.Generator) -> np.ndarray:
    """A 20x20 digits.png glyph (white on black) drawn ``height`` px tall with a random hand."""
    g = glyph.astype(np.float32) / 255.0
    rows = np.flatnonzero(g.max(axis=1) > 0.2)
    cols = np.flatnonzero(g.max(axis=0) > 0.2)
    g = g[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    h, w = g.shape
    scale = height / h
    sx = scale * rng.uniform(0.8, 1.2)
    shear = rng.uniform(-0.3, 0.3)
    angle = np.deg2rad(rng.uniform(-8, 8))
    ca, sa = np.cos(angle), np.sin(angle)
    # Scale, then slant (x += shear * y), then a small rotation, about the glyph centre.
    m = np.array([[ca, -sa], [sa, ca]]) @ np.array([[1.0, -shear], [0.0, 1.0]]) @ np.diag([sx, scale])
    corners = np.array([[0, 0], [w, 0], [0, h], [w, h]], np.float64) @ m.T
    lo = corners.min(axis=0)
    size = np.ceil(corners.max(axis=0) - lo).astype(int) + 4
    affine = np.hstack([m, (-lo + 2)[:, None]])
    big = cv2.warpAffine(g, affine, (int(size[0]), int(size[1])), flags=cv2.INTER_LINEAR)
    # Stroke weight: where the soft upscaled stroke is cut decides how bold the pen looks.
    cut = rng.uniform(0.2, 0.65)
    big = np.clip((big - cut) / 0.2 + 0.5, 0.0, 1.0)
    if rng.random() < 0.3:
        k = int(rng.integers(2, 4))
        op = cv2.erode if rng.random() < 0.5 else cv2.dilate
        big = op(big, np.ones((k, k), np.uint8))
    return big


def _stroke(canvas: np.ndarray, points: np.ndarray, thickness: int) -> None:
    """A hand stroke through ``points`` (a gently wobbling polyline)."""
    pts = np.round(points * 8).astype(np.int32).reshape(-1, 1, 2)
    cv2.polylines(canvas, [pts], False, 1.0, thickness, cv2.LINE_AA, shift=3)


def _wobbly_line(p0: np.ndarray, p1: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    t = np.linspace(0, 1, 6)[:, None]
    points = p0 + t * (p1 - p0)
    normal = np.array([-(p1 - p0)[1], (p1 - p0)[0]]) / (np.linalg.norm(p1 - p0) + 1e-6)
    bend = rng.normal(0, 0.04) * np.linalg.norm(p1 - p0)
    bent: np.ndarray = points + normal * (np.sin(np.pi * t) * bend)
    return bent


def draw_x(shape: tuple[int, int], box: tuple[float, float, float, float], rng: np.random.Generator, thickness: int) -> np.ndarray:
    """Two crossing strokes over ``box`` (x0, y0, x1, y1), reaching a little past it."""
    layer = np.zeros(shape, np.float32)
    x0, y0, x1, y1 = box
    ex, ey = rng.uniform(-0.05, 0.25) * (x1 - x0), rng.uniform(-0.05, 0.3) * (y1 - y0)
    jitter = rng.normal(0, 0.05, (4, 2)) * [(x1 - x0), (y1 - y0)]
    a = np.array([x0 - ex, y0 - ey]) + jitter[0]
    b = np.array([x1 + ex, y1 + ey]) + jitter[1]
    c = np.array([x1 + ex, y0 - ey]) + jitter[2]
    d = np.array([x0 - ex, y1 + ey]) + jitter[3]
    _stroke(layer, _wobbly_line(a, b, rng), thickness)
    _stroke(layer, _wobbly_line(c, d, rng), thickness)
    return layer


def draw_arrow(shape: tuple[int, int], rng: np.random.Generator, thickness: int) -> np.ndarray:
    """A double's arrow: a shaft and a two-stroke head, mostly horizontal."""
    layer = np.zeros(shape, np.float32)
    h, w = shape
    length = min(w * rng.uniform(0.3, 0.8), rng.uniform(8, 45) * PX_PER_MM)
    if rng.random() < 0.15:
        angle = rng.choice([90.0, -90.0]) + rng.normal(0, 10)
        length = min(length, h * 0.8)
    else:
        angle = rng.choice([0.0, 180.0]) + rng.normal(0, 8)
    direction = np.array([np.cos(np.deg2rad(angle)), np.sin(np.deg2rad(angle))])
    centre = np.array([w / 2 + rng.uniform(-0.2, 0.2) * w, h / 2 + rng.uniform(-0.1, 0.1) * h])
    tail, tip = centre - direction * length / 2, centre + direction * length / 2
    _stroke(layer, _wobbly_line(tail, tip, rng), thickness)
    head = rng.uniform(2.0, 4.5) * PX_PER_MM
    for side in (-1, 1):
        spread = np.deg2rad(180 + side * rng.uniform(25, 45))
        rot = np.array([[np.cos(spread), -np.sin(spread)], [np.sin(spread), np.cos(spread)]])
        _stroke(layer, np.stack([tip, tip + rot @ direction * head]), thickness)
    return layer


def draw_scribble(shape: tuple[int, int], rng: np.random.Generator, thickness: int) -> np.ndarray:
    """Something that is no mark of the notation: a squiggle, a dot, a dash."""
    layer = np.zeros(shape, np.float32)
    h, w = shape
    n = int(rng.integers(2, 7))
    centre = np.array([rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * h])
    spread = rng.uniform(0.5, 4.0) * PX_PER_MM
    points = centre + rng.normal(0, spread, (n, 2))
    _stroke(layer, points, thickness)
    return layer


def add_line_residue(ink: np.ndarray, margin: float, rng: np.random.Generator) -> None:
    """Pieces of the printed cell border that line removal left behind."""
    h, w = ink.shape
    for side in range(4):
        if rng.random() > 0.45:
            continue
        level = rng.uniform(0.2, 0.9)
        thickness = int(rng.integers(1, 4))
        offset = margin + rng.normal(0, 1.5)
        start, stop = sorted(rng.uniform(0, 1, 2))
        if side < 2:
            y = int(offset if side == 0 else h - 1 - offset)
            x0, x1 = int(start * w), int(stop * w)
            cv2.line(ink, (x0, y), (x1, y), level, thickness)
        else:
            x = int(offset if side == 2 else w - 1 - offset)
            y0, y1 = int(start * h), int(stop * h)
            cv2.line(ink, (x, y0), (x, y1), level, thickness)


def _place(canvas: np.ndarray, patch: np.ndarray, x: int, y: int) -> np.ndarray:
    """Draw ``patch`` with its top-left at (x, y), clipped; return its mask in the canvas."""
    mask = np.zeros(canvas.shape, np.float32)
    h, w = patch.shape
    cx0, cy0 = max(x, 0), max(y, 0)
    cx1, cy1 = min(x + w, canvas.shape[1]), min(y + h, canvas.shape[0])
    if cx1 <= cx0 or cy1 <= cy0:
        return mask
    part = patch[cy0 - y:cy1 - y, cx0 - x:cx1 - x]
    mask[cy0:cy1, cx0:cx1] = part
    np.maximum(canvas[cy0:cy1, cx0:cx1], part, out=canvas[cy0:cy1, cx0:cx1])
    return mask


def _letter_patch(letter: str, height: int, rng: np.random.Generator) -> np.ndarray:
    font = int(rng.choice(FONTS))
    if rng.random() < 0.3:
        font |= cv2.FONT_ITALIC
    thickness = int(rng.integers(2, 6))
    (tw, th), base = cv2.getTextSize(letter, font, 1.0, thickness)
    scale = height / max(th, 1)
    thickness = max(1, int(thickness * min(scale, 3) / 1.5))
    (tw, th), base = cv2.getTextSize(letter, font, scale, thickness)
    patch = np.zeros((th + base + 2 * thickness + 4, tw + 2 * thickness + 4), np.uint8)
    cv2.putText(patch, letter, (thickness + 2, th + thickness + 2), font, scale, 255, thickness, cv2.LINE_AA)
    return patch.astype(np.float32) / 255.0


def compose_cell(
    glyphs: Mapping[int, Sequence[np.ndarray]],
    rng: np.random.Generator,
    kind: CellKind,
    digits: tuple[int, ...] = (),
    *,
    crossed: bool = False,
    arrow: bool = False,
    letters: str = "",
    scribble: bool = False,
    damage: float = 1.0,
) -> SyntheticCell:
    """Draw one cell holding ``digits`` (or an arrow, letters, a scribble) with scan damage.

    ``damage`` (0..1) scales blur, noise, residue and pale ink.
    """
    h, w, margin = cell_shape(kind, rng)
    ink = np.zeros((h, w), np.float32)
    objects: list[tuple[str, np.ndarray]] = []
    thickness = int(rng.integers(3, 7))
    inner_h, inner_w = h - 2 * margin, w - 2 * margin
    symbols: list[tuple[str, np.ndarray]] = []
    two_lines = len(digits) >= 2 and kind is not CellKind.CENTRE and rng.random() < 0.35
    line_h = inner_h * (rng.uniform(0.32, 0.46) if two_lines else rng.uniform(0.4, 0.8))
    for d in digits:
        symbols.append((str(d), render_glyph(glyphs[d][int(rng.integers(len(glyphs[d])))], int(line_h), rng)))
    for letter in letters:
        symbols.append(("letter", _letter_patch(letter, int(line_h * rng.uniform(0.6, 1.0)), rng)))
    lines = [symbols]
    if two_lines:
        cut = int(rng.integers(1, len(symbols)))
        lines = [symbols[:cut], symbols[cut:]]
    group_boxes: list[tuple[float, float, float, float]] = []
    y_cursor = margin + rng.uniform(-0.1, 0.15) * inner_h
    for line in lines:
        gaps = [rng.uniform(-0.12, 0.35) * line_h for _ in line[1:]]
        total = sum(p.shape[1] for _, p in line) + sum(gaps)
        shrink = min(1.0, (inner_w * 1.05) / max(total, 1))
        if shrink < 1.0:
            line = [(name, cv2.resize(p, (max(2, int(p.shape[1] * shrink)), max(2, int(p.shape[0] * shrink))))) for name, p in line]
            gaps = [g * shrink for g in gaps]
            total = sum(p.shape[1] for _, p in line) + sum(gaps)
        x = margin + rng.uniform(-0.05 * inner_w, max(-0.05 * inner_w, inner_w - total + 0.05 * inner_w))
        line_top = y_cursor
        tallest = 0
        x_start = x
        for i, (name, patch) in enumerate(line):
            y = line_top + rng.uniform(-0.06, 0.06) * line_h
            objects.append((name, _place(ink, patch, int(x), int(y))))
            tallest = max(tallest, patch.shape[0])
            x += patch.shape[1] + (gaps[i] if i < len(gaps) else 0)
        group_boxes.append((x_start, line_top, x, line_top + tallest))
        y_cursor = line_top + tallest + rng.uniform(0.02, 0.12) * inner_h
    x_mask = np.zeros_like(ink)
    if crossed and objects:
        if rng.random() < 0.7 or len(objects) == 1:
            xs = [group_boxes[0]]
        else:
            xs = []
            for _, m in objects:
                ys, xs_ = np.nonzero(m > 0.3)
                if xs_.size:  # a faint glyph thinned away by the pen leaves nothing to cross
                    xs.append((float(xs_.min()), float(ys.min()), float(xs_.max()), float(ys.max())))
        for box in xs:
            x_mask = np.maximum(x_mask, draw_x(ink.shape, box, rng, thickness))
        np.maximum(ink, x_mask, out=ink)
    if arrow:
        layer = draw_arrow(ink.shape, rng, thickness)
        objects.append(("arrow", layer))
        np.maximum(ink, layer, out=ink)
    if scribble:
        np.maximum(ink, draw_scribble(ink.shape, rng, thickness), out=ink)
    # Scan: blur, pale ink, residue, specks, noise.
    if rng.random() < 0.7 * damage:
        sigma = rng.uniform(0.3, 1.6)
        ink = np.asarray(cv2.GaussianBlur(ink, (0, 0), sigma), np.float32)
    ink *= rng.uniform(1.0 - 0.6 * damage, 1.0)
    if rng.random() < 0.8 * damage:
        add_line_residue(ink, margin, rng)
    for _ in range(int(rng.poisson(2 * damage))):
        cv2.circle(ink, (int(rng.integers(w)), int(rng.integers(h))), int(rng.integers(1, 3)), rng.uniform(0.2, 0.8), -1)
    ink += rng.normal(0, 0.05 * damage, ink.shape).astype(np.float32)
    ink = np.clip(ink, 0.0, 1.0)
    return SyntheticCell(ink, kind, tuple(digits), crossed, arrow, bool(letters), tuple(objects), x_mask)


def random_cell(glyphs: Mapping[int, Sequence[np.ndarray]], rng: np.random.Generator, damage: float = 1.0) -> SyntheticCell:
    """A cell as they come on sheets: mostly dice digits, some centres, numbers, arrows, names, blanks."""
    roll = rng.random()
    if roll < 0.45:
        kind, n = CellKind.POINT, int(rng.choice([1, 1, 1, 2, 2, 3, 4]))
        return compose_cell(glyphs, rng, kind, tuple(int(d) for d in rng.integers(1, 7, n)), damage=damage)
    if roll < 0.62:
        n = int(rng.choice([1, 2, 2, 3, 4]))
        digits = tuple(int(d) for d in rng.integers(1, 7, n))
        return compose_cell(glyphs, rng, CellKind.CENTRE, digits, crossed=rng.random() < 0.6, damage=damage)
    if roll < 0.74:
        kind = CellKind.RESULT if rng.random() < 0.5 else CellKind.HEADER_NUMBER
        n = int(rng.choice([1, 1, 2, 2, 3]))
        return compose_cell(glyphs, rng, kind, tuple(int(d) for d in rng.integers(0, 10, n)), damage=damage)
    if roll < 0.82:
        return compose_cell(glyphs, rng, CellKind.CENTRE, arrow=True, damage=damage)
    if roll < 0.90:
        n = int(rng.integers(1, 5))
        text = "".join(LETTERS[int(i)] for i in rng.integers(len(LETTERS), size=n))
        return compose_cell(glyphs, rng, CellKind.POINT, letters=text, damage=damage)
    return compose_cell(glyphs, rng, CellKind.POINT, scribble=rng.random() < 0.6, damage=damage)


def label_segments(cell: SyntheticCell) -> list[tuple[np.ndarray, str]]:
    """Every segment :func:`segment_cell` cuts from ``cell`` (all alternatives), with its true class.

    A segment is a digit (crossed or not), a letter or the arrow when it holds
    nearly all of that one object and little of any other; strokes of the X
    alone are ``x``; anything else (half a digit, two digits, residue) is ``other``.
    """
    # The reader's own segmentation for this kind of cell (in the centre it looks for an X; with
    # cells.CROSS_SEGMENTATION on it also cuts the digits with the X taken out).
    seg = segment_cell(cell.ink, PX_PER_MM, cell.kind)
    masks = [(name, m > 0.35) for name, m in cell.objects]
    sizes = [max(int(m.sum()), 1) for _, m in masks]
    x_mask = cell.x_mask > 0.35
    out: list[tuple[np.ndarray, str]] = []
    for blob in seg.blobs:
        for alternative in blob.alternatives:
            for s in alternative:
                x0, y0, x1, y1 = s.box
                pixels = s.mask
                n = max(int(pixels.sum()), 1)
                covers = [float((m[y0:y1, x0:x1] & pixels).sum()) / size for (_, m), size in zip(masks, sizes, strict=True)]
                label = "other"
                if covers:
                    best = int(np.argmax(covers))
                    rest = max((c for i, c in enumerate(covers) if i != best), default=0.0)
                    if covers[best] >= 0.8 and rest <= 0.12:
                        name = masks[best][0]
                        label = name
                        crossed_here = float((x_mask[y0:y1, x0:x1] & pixels).sum()) / n
                        if name.isdecimal() and cell.crossed and crossed_here > 0.05:
                            label = f"{name}x" if 1 <= int(name) <= 6 else "other"
                if label == "other" and cell.crossed:
                    x_share = float((x_mask[y0:y1, x0:x1] & pixels).sum()) / n
                    if x_share > 0.8 and max(covers, default=0.0) < 0.15:
                        label = "x"
                out.append((s.glyph, label))
    return out

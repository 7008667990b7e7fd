"""The X drawn over unplayable dice: found in a cell's ink by its shape, and taken out of it.

Two long straight strokes of opposite slant crossing near their middles are
an X (:func:`find_cross`); :func:`erase_cross` clears them and keeps the
digits' strokes that run across them.
"""

from __future__ import annotations

import itertools
import math

import cv2
import numpy as np

from digitise.vision.cell_types import PX_PER_MM, Cross, Stroke

#: Slants (degrees from the horizontal, both ways) an X's stroke may have: an X over one digit is
#: steep, an X over four digits in a line is flat. Arrows (horizontal or vertical) stay outside.
CROSS_ANGLES = np.deg2rad(np.arange(9.0, 82.0, 2.0))
#: Shortest X stroke (mm): the X over one small digit (digits' own straight strokes, measured on
#: synthetic sheets, stay under 7 mm; an X's, over 7).
CROSS_MIN_MM = 6.0
#: Least angle between an X's strokes (a flat X over four digits has about 30 degrees).
CROSS_MIN_ANGLE = np.deg2rad(24.0)
#: Most of a stroke's ink the other stroke may share (more: one curved stroke seen twice).
CROSS_SHARED = 0.35
#: The surest an X found by its shape is (long strokes crossing in their middles).
CROSS_SURE = 0.97
#: Pieces a stroke is followed in (a hand-drawn line bends a little).
STROKE_PIECES = 6


def longest_run(occupied: np.ndarray) -> tuple[int, int, int]:
    """Row, end (exclusive) and length of the longest run of True (non-zero) along the rows of a grid."""
    # Runs found from where a row padded with empties changes (the X finder calls this ~70 times a
    # centre cell: a running maximum over the whole grid cost twice as much).
    height, width = occupied.shape
    stride = width + 2
    padded = np.zeros((height, stride), np.int8)
    padded[:, 1:-1] = occupied != 0
    change = np.diff(padded.ravel())
    starts = np.flatnonzero(change == 1) + 1
    if not starts.size:
        return round((height - 1) / 2), 1, 0
    ends = np.flatnonzero(change == -1) + 1
    lengths = ends - starts
    k = int(np.argmax(lengths))  # the first longest, in reading order
    length = int(lengths[k])
    row = int(starts[k]) // stride
    end = int(ends[k]) - row * stride - 1
    # A thick stroke gives several rows with the same longest run: take the middle one. A row
    # qualifies when its longest run is at least length - 1 (an empty row's is 0).
    near = set(range(height)) if length <= 1 else set((starts[lengths >= length - 1] // stride).tolist())
    rows = [row]
    for step in (-1, 1):
        r = row + step
        while r in near:
            rows.append(r)
            r += step
    return round(sum(rows) / len(rows)), end, length


def _stroke_candidates(xs: np.ndarray, ys: np.ndarray, px_per_mm: float, sign: int) -> list[tuple[float, float, float, float]]:
    """The longest straight ink run at each slant of one direction: (angle, offset, t0, t1)."""
    out = []
    wobble = max(2, round(0.2 * px_per_mm))
    gap = max(2, round(0.4 * px_per_mm))
    for angle in CROSS_ANGLES * sign:
        c, s = math.cos(angle), math.sin(angle)
        t = xs * c + ys * s
        r = ys * c - xs * s
        t_min, r_min = float(t.min()), float(r.min())
        ti = (t - t_min).astype(np.int32)
        ri = (r - r_min).astype(np.int32)
        dots = np.zeros((int(ri.max()) + 1, int(ti.max()) + 1), np.uint8)
        dots[ri, ti] = 1
        # Ink within a few pixels across counts (the stroke wobbles), short gaps along are bridged.
        grid = cv2.dilate(dots, np.ones((2 * wobble + 1, 1), np.uint8))
        grid = cv2.morphologyEx(grid, cv2.MORPH_CLOSE, np.ones((1, gap + 1), np.uint8))
        row, end, length = longest_run(np.asarray(grid))
        out.append((float(angle), row + r_min + 0.5, end - length + t_min, end + t_min))
    return out


def _follow(binary: np.ndarray, xs: np.ndarray, ys: np.ndarray, line: tuple[float, float, float, float],
            px_per_mm: float) -> Stroke | None:
    """The stroke along a straight run: its centre followed piece by piece, and its width."""
    angle, offset, t0, t1 = line
    c, s = math.cos(angle), math.sin(angle)
    direction, normal = np.array([c, s]), np.array([-s, c])
    t = xs * c + ys * s
    r = ys * c - xs * s
    band = 0.6 * px_per_mm
    near = (np.abs(r - offset) <= band) & (t >= t0) & (t <= t1)
    if near.sum() < 5:
        return None
    points = []
    edges = np.linspace(t0, t1, STROKE_PIECES + 1)
    for a, b in itertools.pairwise(edges):
        inside = near & (t >= a) & (t <= b)
        centre = float(np.median(r[inside])) if inside.any() else offset
        points.append(normal * centre + direction * ((a + b) / 2))
    # Ends: the first and last piece's centres, carried out to the run's ends.
    start = normal * float(np.dot(points[0], normal)) + direction * t0
    stop = normal * float(np.dot(points[-1], normal)) + direction * t1
    path = np.array([start, *points, stop], np.float64)
    distance = cv2.distanceTransform(binary, cv2.DIST_L2, 3)
    samples = np.concatenate([np.linspace(p, q, 8, endpoint=False) for p, q in itertools.pairwise(path)])
    sx = np.clip(np.round(samples[:, 0]).astype(int), 0, binary.shape[1] - 1)
    sy = np.clip(np.round(samples[:, 1]).astype(int), 0, binary.shape[0] - 1)
    depth = distance[sy, sx]
    if not (depth > 0).any():
        return None
    return Stroke(path, float(np.median(depth[depth > 0])))


def _peaks(candidates: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """The runs longest at their slant (longer than at the slants beside it), longest first.

    A run longest at the end of the slant range is the edge of something flatter or steeper
    than an X's stroke (an arrow's shaft, a "1"), not a stroke of its own.
    """
    lengths = [c[3] - c[2] for c in candidates]
    out = [c for k, c in enumerate(candidates)
           if 0 < k < len(candidates) - 1 and lengths[k] >= lengths[k - 1] and lengths[k] >= lengths[k + 1]]
    return sorted(out, key=lambda c: c[2] - c[3])


def _crossing(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> tuple[float, float] | None:
    """Where two straight runs cross, as shares of each one's length (None when parallel)."""
    pa = np.array([-math.sin(a[0]), math.cos(a[0])]) * a[1]
    pb = np.array([-math.sin(b[0]), math.cos(b[0])]) * b[1]
    da = np.array([math.cos(a[0]), math.sin(a[0])])
    db = np.array([math.cos(b[0]), math.sin(b[0])])
    matrix = np.column_stack([da, -db])
    if abs(float(np.linalg.det(matrix))) < 1e-3:
        return None
    ta, tb = np.linalg.solve(matrix, pb - pa)
    return (float(ta) - a[2]) / max(a[3] - a[2], 1e-6), (float(tb) - b[2]) / max(b[3] - b[2], 1e-6)


def find_cross(binary: np.ndarray, px_per_mm: float = PX_PER_MM) -> Cross | None:
    """The X in a cell's binary ink: the longest "\\" and "/" straight strokes that cross near their middles.

    Digits have short straight strokes and an arrow's head strokes meet at
    their ends, so two long strokes of opposite slant crossing in their
    middle third or so are an X.
    """
    ys, xs = np.nonzero(binary)
    min_len = CROSS_MIN_MM * px_per_mm
    if xs.size < min_len * 2:
        return None
    xs_f, ys_f = xs.astype(np.float64), ys.astype(np.float64)
    down = _peaks(_stroke_candidates(xs_f, ys_f, px_per_mm, 1))
    up = _peaks(_stroke_candidates(xs_f, ys_f, px_per_mm, -1))
    best: tuple[float, tuple[float, float, float, float], tuple[float, float, float, float]] | None = None
    for a in down[:6]:
        for b in up[:6]:
            la, lb = a[3] - a[2], b[3] - b[2]
            if min(la, lb) < min_len or max(la, lb) > 2.5 * min(la, lb):
                continue
            if abs(a[0] - b[0]) < CROSS_MIN_ANGLE:
                continue
            shares = _crossing(a, b)
            if shares is None or not all(0.2 <= v <= 0.8 for v in shares):
                continue
            score = min(la, lb)
            if best is None or score > best[0]:
                best = (score, a, b)
    if best is None:
        return None
    _, a, b = best
    first, second = (_follow(binary, xs_f, ys_f, line, px_per_mm) for line in (a, b))
    if first is None or second is None:
        return None
    strokes = (first, second)
    # Two separate strokes share ink only where they cross; two tangents of one curved stroke
    # (the side of a "0" or a "6") share most of it.
    bands = []
    for stroke in strokes:
        band = np.zeros_like(binary)
        fixed = np.round(stroke.points * 4).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(band, [fixed], False, 1, max(1, round(2 * stroke.half_width + 2)), cv2.LINE_8, 2)
        bands.append(band & binary)
    shared = float((bands[0] & bands[1]).sum()) / max(1.0, float(min(bands[0].sum(), bands[1].sum())))
    if shared > CROSS_SHARED:
        return None
    # Long strokes crossing in their middles are an X; short ones are less sure (digit strokes):
    # 0.6 at the shortest, 0.97 from 2 mm longer.
    shortest = min(a[3] - a[2], b[3] - b[2]) / px_per_mm
    confidence = float(np.clip(0.6 + 0.185 * (shortest - CROSS_MIN_MM), 0.6, CROSS_SURE))
    return Cross(strokes, confidence)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(start, end exclusive) of every run of True in a 1-D array."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    change = np.diff(padded)
    return list(zip(np.flatnonzero(change == 1).tolist(), np.flatnonzero(change == -1).tolist(), strict=True))


def erase_cross(binary: np.ndarray, cross: Cross, px_per_mm: float = PX_PER_MM) -> np.ndarray:
    """``binary`` without the X's strokes, keeping the digits' strokes that run across them.

    A band a little wider than each stroke is cleared. Then each place where
    ink leaves one edge of the band and ink arrives at the other edge close
    by (a digit's stroke running across the X) is bridged again: the ink of
    the band between the two is put back, so the digit is not cut in two.
    """
    margin = 0.12 * px_per_mm + 1.0
    bands = []
    erased = np.zeros_like(binary)
    for stroke in cross.strokes:
        band = np.zeros_like(binary)
        thickness = max(1, round(2 * (stroke.half_width + margin)))
        fixed = np.round(stroke.points * 4).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(band, [fixed], False, 1, thickness, cv2.LINE_8, 2)
        bands.append((stroke, band, thickness / 2))
        erased |= band
    rest = binary & (1 - erased)
    lenient = cv2.dilate(rest, np.ones((3, 3), np.uint8))
    height, width = binary.shape
    keep = np.zeros_like(binary)
    for stroke, _, half in bands:
        samples, normals = [], []
        for p, q in itertools.pairwise(stroke.points):
            step = q - p
            length = float(np.linalg.norm(step))
            if length < 1e-6:
                continue
            count = max(2, math.ceil(length))
            samples.append(np.linspace(p, q, count, endpoint=False))
            normals.append(np.repeat([[-step[1] / length, step[0] / length]], count, axis=0))
        if not samples:
            continue
        along, normal = np.concatenate(samples), np.concatenate(normals)
        reach = half + 1.0
        edges, hits = [], []
        for sign in (1, -1):
            at = along + sign * reach * normal
            ix, iy = np.round(at[:, 0]).astype(int), np.round(at[:, 1]).astype(int)
            inside = (ix >= 0) & (ix < width) & (iy >= 0) & (iy < height)
            hit = np.zeros(len(along), bool)
            hit[inside] = lenient[iy[inside], ix[inside]] > 0
            edges.append(at)
            hits.append(hit)
        # A digit's stroke crosses at 30 degrees or more: it comes out within this many samples.
        shift = 2 * reach * 1.8
        other = _runs(hits[1])
        for a0, a1 in _runs(hits[0]):
            centre = (a0 + a1) / 2
            near = [(abs((b0 + b1) / 2 - centre), b0, b1) for b0, b1 in other if abs((b0 + b1) / 2 - centre) <= shift]
            if not near:
                continue
            _, b0, b1 = min(near)
            quad = np.array([edges[0][a0], edges[0][a1 - 1], edges[1][b1 - 1], edges[1][b0]])
            cv2.fillConvexPoly(keep, np.round(quad * 4).astype(np.int32), 1, cv2.LINE_8, 2)
    # Not where the two bands overlap: that is the X's own crossing.
    keep = np.asarray(cv2.dilate(keep, np.ones((3, 3), np.uint8))) & (1 - (bands[0][1] & bands[1][1]))
    result: np.ndarray = (rest | (binary & keep & erased)).astype(binary.dtype)
    return result

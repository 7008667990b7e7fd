"""Finding the printed page: ArUco markers, the page homography, and which way up it lies.

The template says where each marker is (millimetres from the page's top-left
corner); the detector says where it is in the image. Pairing them by marker
id gives a homography from template millimetres to image pixels whatever
the page's orientation (a turned page just pairs the ids differently). With
three or four markers the fit is a full homography; with two it falls back
to an affine fit, which the per-board refinement then corrects locally.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

#: Detection runs on a copy whose long side is about this many pixels (speed).
DETECT_LONG_SIDE = 1000
#: A fit whose marker corners miss by more than this (mm) is rejected.
MAX_MARKER_RESIDUAL_MM = 1.5


def xywh(rect: Any) -> tuple[float, float, float, float]:
    """``(x, y, w, h)`` of a template rectangle (a Rect with attributes or a 4-sequence)."""
    if hasattr(rect, "x"):
        return float(rect.x), float(rect.y), float(rect.w), float(rect.h)
    x, y, w, h = rect
    return float(x), float(y), float(w), float(h)


def marker_corners_mm(rect: Any) -> np.ndarray:
    """The four corners of a printed marker in ArUco's order (TL, TR, BR, BL), mm."""
    x, y, w, h = xywh(rect)
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64)


@dataclass(frozen=True, slots=True)
class FoundMarker:
    """A marker seen in the image: its id and its corners in pixels (TL, TR, BR, BL of the marker)."""

    id: int
    corners: np.ndarray


@dataclass(frozen=True, slots=True)
class PageFit:
    """Where the template lies in the image.

    ``homography`` maps template millimetres to image pixels. ``method`` says
    which path found it (``markers``, ``markers-affine`` or ``grid``).
    ``rotation`` is how far the page is turned in the image, clockwise, to the
    nearest 90 degrees.
    """

    homography: np.ndarray
    method: str
    markers: tuple[FoundMarker, ...] = ()
    rotation: int = 0
    #: Mean distance (mm) between the fitted and the found reference points.
    residual_mm: float = 0.0

    def to_pixels(self, points_mm: np.ndarray) -> np.ndarray:
        """Map an (N, 2) array of template mm to image pixels."""
        return project(self.homography, points_mm)

    @property
    def px_per_mm(self) -> float:
        """The mean scale of the fit near the page's centre."""
        return scale_at(self.homography, np.array([100.0, 100.0]))


def project(homography: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Apply a 3x3 homography to (N, 2) points."""
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, np.asarray(homography, np.float64)).reshape(-1, 2)


def scale_at(homography: np.ndarray, point: np.ndarray) -> float:
    """Pixels per mm of ``homography`` around ``point`` (mean of x and y)."""
    p = np.asarray(point, np.float64)
    pts = project(homography, np.array([p, p + [1.0, 0.0], p + [0.0, 1.0]]))
    return float((np.linalg.norm(pts[1] - pts[0]) + np.linalg.norm(pts[2] - pts[0])) / 2.0)


def rotation_of(homography: np.ndarray, page_mm: Sequence[float]) -> int:
    """How the page's "up" points in the image: 0, 90, 180 or 270 degrees clockwise."""
    w, h = float(page_mm[0]), float(page_mm[1])
    centre = np.array([w / 2, h / 2])
    pts = project(homography, np.array([centre, centre + [1.0, 0.0]]))
    dx, dy = pts[1] - pts[0]
    angle = float(np.degrees(np.arctan2(dy, dx)))  # the page's x axis, in image terms
    return round(angle / 90.0) % 4 * 90


_DETECTORS: dict[tuple[str, bool], Any] = {}


def _detector(dictionary: str, thorough: bool) -> Any:
    """An ArUco detector: a quick one (one threshold window) or a thorough one (several)."""
    key = (dictionary, thorough)
    if key not in _DETECTORS:
        aruco = cv2.aruco
        params = aruco.DetectorParameters()
        params.cornerRefinementMethod = aruco.CORNER_REFINE_SUBPIX
        if thorough:
            params.adaptiveThreshWinSizeMin = 5
            params.adaptiveThreshWinSizeMax = 35
            params.adaptiveThreshWinSizeStep = 10
        else:
            # A clean scan thresholds well with one window: four times faster than the default three.
            params.adaptiveThreshWinSizeMin = 11
            params.adaptiveThreshWinSizeMax = 11
        params.minMarkerPerimeterRate = 0.02
        _DETECTORS[key] = aruco.ArucoDetector(aruco.getPredefinedDictionary(getattr(aruco, dictionary)), params)
    return _DETECTORS[key]


def detect_markers(grey: np.ndarray, wanted_ids: Iterable[int], dictionary: str = "DICT_4X4_50", *,
                   repeated: set[int] | None = None) -> tuple[FoundMarker, ...]:
    """The template's markers found in ``grey`` (uint8), corners in ``grey``'s pixels.

    A quick pass on a reduced copy first; when it misses markers, thorough
    passes (more threshold windows, then the full size) for dim photos and
    small or damaged markers. A marker seen twice in one pass (two notes in
    one picture) is added to ``repeated`` when that is given; the larger
    sighting is kept.
    """
    wanted = set(wanted_ids)
    found: dict[int, FoundMarker] = {}
    long_side = max(grey.shape[:2])
    step = max(1, int(np.ceil(long_side / DETECT_LONG_SIDE)))
    reduced = grey if step == 1 else cv2.resize(grey, None, fx=1.0 / step, fy=1.0 / step, interpolation=cv2.INTER_AREA)
    passes = [(reduced, 1.0 / step, False), (reduced, 1.0 / step, True)]
    if step > 1:
        passes.append((grey, 1.0, True))
    for number, (image, scale, thorough) in enumerate(passes):
        if number == 2 and not found:
            # Nothing at all on the reduced copy: a marker-less note, not small markers.
            break
        corners, ids, _ = _detector(dictionary, thorough).detectMarkers(image)
        if ids is not None:
            if repeated is not None:
                seen = [int(i) for i in ids.ravel() if int(i) in wanted]
                repeated.update(i for i in seen if seen.count(i) > 1)
            for quad, marker_id in zip(corners, ids.ravel(), strict=True):
                mid = int(marker_id)
                if mid not in wanted:
                    continue
                pts = quad.reshape(4, 2).astype(np.float64) / scale
                area = abs(cv2.contourArea(pts.astype(np.float32)))
                old = found.get(mid)
                if old is None or area > abs(cv2.contourArea(old.corners.astype(np.float32))):
                    found[mid] = FoundMarker(mid, pts)
        if len(found) >= len(wanted):
            break
    if found and step > 1:
        _refine_corners(grey, found, 1.0 / step)
    return tuple(found[k] for k in sorted(found))


def _refine_corners(grey: np.ndarray, found: dict[int, FoundMarker], scale: float) -> None:
    """Sub-pixel corners at full resolution (the reduced copy loses a pixel or two)."""
    window = max(2, round(1.5 / scale))
    pts = np.concatenate([m.corners for m in found.values()]).astype(np.float32).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.05)
    refined = cv2.cornerSubPix(grey, pts.copy(), (window, window), (-1, -1), criteria).reshape(-1, 2)
    for k, marker_id in enumerate(list(found)):
        new = refined[4 * k:4 * k + 4].astype(np.float64)
        old = found[marker_id].corners
        # Keep the refinement only where it moved a little (a big jump means it slid along an edge).
        moved = np.linalg.norm(new - old, axis=1) <= 2.0 / scale
        found[marker_id] = FoundMarker(marker_id, np.where(moved[:, None], new, old))


def fit_markers(found: Sequence[FoundMarker], template_markers: Sequence[Any], page_mm: Sequence[float]) -> PageFit | None:
    """The page homography from the markers found, or None when they cannot fix it.

    Three or four markers give a homography; two give an affine fit (good
    enough for a flat scan, refined per board afterwards). Fewer, or a fit
    that misses its own markers, gives None: the grid path takes over.
    """
    where = {int(m.id): m.rect for m in template_markers}
    usable = [m for m in found if m.id in where]
    if len(usable) < 2:
        return None
    src = np.concatenate([marker_corners_mm(where[m.id]) for m in usable])
    dst = np.concatenate([m.corners for m in usable])
    method = "markers"
    homography: np.ndarray | None = None
    if len(usable) >= 3:
        homography, _ = cv2.findHomography(src, dst, 0)
    if homography is None or not _plausible(homography, page_mm):
        affine, _ = cv2.estimateAffine2D(src, dst, method=cv2.LMEDS)
        if affine is None:
            return None
        homography = np.vstack([affine, [0.0, 0.0, 1.0]])
        method = "markers-affine"
    if not _plausible(homography, page_mm):
        return None
    residual_px = float(np.linalg.norm(project(homography, src) - dst, axis=1).mean())
    residual_mm = residual_px / max(scale_at(homography, np.asarray(page_mm, np.float64) / 2), 1e-6)
    if residual_mm > MAX_MARKER_RESIDUAL_MM:
        return None
    return PageFit(homography, method, tuple(usable), rotation_of(homography, page_mm), residual_mm)


def _plausible(homography: np.ndarray, page_mm: Sequence[float]) -> bool:
    """The page maps to a convex quadrilateral of sensible size (not a folded or tiny page)."""
    w, h = float(page_mm[0]), float(page_mm[1])
    quad = project(homography, np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64))
    if not np.all(np.isfinite(quad)):
        return False
    if not cv2.isContourConvex(quad.astype(np.float32).reshape(-1, 1, 2)):
        return False
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    return area > (w * h) * 1.0  # at least 1 px per mm^2: ~25 dpi

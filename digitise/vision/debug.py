"""Debug overlays: what was found where on a page, drawn over it for a person to check.

Markers in magenta, each board's measured line crossings in green (those
predicted from the board's fit in orange), the cells read in blue with their
top reading beside them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from digitise.errors import OutputError
from digitise.fileio import write_atomic
from digitise.vision.analyse import PageAnalysis
from digitise.vision.images import PageImage

#: Long side of the overlay image (px).
OVERLAY_LONG_SIDE = 2200


def draw_overlay(page: PageImage, analysis: PageAnalysis) -> np.ndarray:
    """The page with the markers, grid and cells drawn over it (BGR uint8, reduced)."""
    image = page.image if page.image.ndim == 3 else cv2.cvtColor(page.image, cv2.COLOR_GRAY2BGR)
    factor = min(1.0, OVERLAY_LONG_SIDE / max(image.shape[:2]))
    canvas = cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA) if factor < 1.0 else image.copy()
    thick = 2
    for marker in analysis.fit.markers:
        pts = np.round(marker.corners * factor).astype(np.int32)
        cv2.polylines(canvas, [pts], True, (255, 0, 255), thick)
        cv2.putText(canvas, f"id {marker.id}", tuple(int(v) for v in pts[0]), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 0, 255), 2)
    for board in analysis.boards:
        grid = board.crossings * factor
        for i in range(grid.shape[0]):
            cv2.polylines(canvas, [np.round(grid[i]).astype(np.int32)], False, (0, 160, 0), 1)
        for k in range(grid.shape[1]):
            for a, b in ((0, 1), (2, 3)):
                p0, p1 = np.round(grid[a, k]).astype(int), np.round(grid[b, k]).astype(int)
                cv2.line(canvas, (int(p0[0]), int(p0[1])), (int(p1[0]), int(p1[1])), (0, 160, 0), 1)
        for (i, k), ok in np.ndenumerate(board.measured):
            x, y = np.round(grid[i, k]).astype(int)
            cv2.circle(canvas, (int(x), int(y)), 2, (0, 200, 0) if ok else (0, 140, 255), -1)
        x0, y0 = np.round(grid[0, 0]).astype(int)
        cv2.putText(canvas, f"{board.index}", (int(x0) - 18, int(y0) + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 120, 0), 1)
    for cell in analysis.cells:
        quad = np.round(cell.quad * factor).astype(np.int32)
        cv2.polylines(canvas, [quad], True, (255, 80, 0), 1)
        if cell.candidates:
            top = cell.candidates[0]
            label = ("".join(map(str, top.digits)) or "-") + f" {top.probability:.2f}"
        else:
            label = "?"
        x, y = quad[0]
        cv2.putText(canvas, label, (int(x) + 1, int(y) - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (200, 0, 0), 1, cv2.LINE_AA)
    cv2.putText(canvas, f"{analysis.fit.method}, turned {analysis.fit.rotation}", (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7,
                (0, 0, 255), 2)
    return canvas


def overlay_names(paths: Sequence[str | Path]) -> list[str]:
    """The name each input's overlays start with, in order: its stem, or ``<k>-<stem>`` when stems repeat.

    ``a.png`` and ``a.pdf``, ``x/a.png`` and ``y/a.png``, or one file given
    twice must not write over each other's overlays; ``k`` is the input's
    place among ``paths``.
    """
    stems = Counter(Path(p).stem for p in paths)
    names: list[str] = []
    for k, path in enumerate(paths, 1):
        stem = Path(path).stem
        name = stem if stems[stem] == 1 else f"{k}-{stem}"
        while name in names:  # "1-a.png" beside a.png and a.pdf: prefix again until unique
            name = f"{k}-{name}"
        names.append(name)
    return names


def overlay_path(folder: Path, name: str, page_number: int) -> Path:
    """Where the overlay of page ``page_number`` of the input named ``name`` goes."""
    return folder / f"{name}-p{page_number}.png"


def write_overlay(page: PageImage, analysis: PageAnalysis, target: Path, *, overwrite: bool = False) -> Path:
    """Write the overlay of ``page`` to ``target`` (see :func:`overlay_path`)."""
    canvas = draw_overlay(page, analysis)
    ok, encoded = cv2.imencode(".png", canvas)
    if not ok:  # pragma: no cover - encoding a valid array does not fail
        raise OutputError("cannot encode the overlay", target)
    return write_atomic(target, encoded.tobytes(), overwrite=overwrite)

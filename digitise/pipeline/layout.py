"""``digitise layout``: a page's grid of boards fitted from its lines and written as a template."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from digitise.errors import DigitiseError, InputError, LayoutError, OutputError
from digitise.fileio import check_inputs, check_outputs, write_atomic


@dataclass(frozen=True, slots=True)
class LayoutSummary:
    """What ``digitise layout`` wrote: the layout file, its boards (how many seen, the others placed from the
    grid), how far the page was turned, the overlay picture when asked for, and whether the print's header boxes were
    found (the players' names and the match length are then read from them)."""

    output: str
    boards: int
    seen: int
    turn: float
    overlay: str | None = None
    header: bool = False


def layout_to_file(page: Path, output: Path, *, overlay: Path | None = None, name: str | None = None,
                   overwrite: bool = False) -> LayoutSummary:
    """``digitise layout``: the first page of ``page`` fitted from its own lines, written as a template JSON
    (``--template`` reads it), and the fit drawn over the page into ``overlay``.

    Raises :class:`~digitise.errors.LayoutError` with the reason for a page whose grid of boards cannot be
    fitted (nothing is guessed, nothing written).
    """
    # imported here: keeps start-up light (OpenCV, NumPy)
    import cv2
    import numpy as np

    from digitise.vision.images import darkest_channel, iter_pages
    from digitise.vision.layout import draw_layout, fit_layout, reduced, way_up
    from digitise.vision.read import WORK_LONG_SIDE

    check_inputs([page])
    check_outputs([output, *([overlay] if overlay is not None else [])], overwrite, inputs=[page])
    first = next(iter(iter_pages(page)), None)
    if first is None:
        raise InputError("no page in it", page)
    if isinstance(first, DigitiseError):
        raise first
    small, factor = reduced(darkest_channel(first.image), WORK_LONG_SIDE)
    try:
        fit = fit_layout(small, name=name or output.stem, full=first.image)
        way_up(fit, vouched=True)
        if fit.unread:
            # A layout file places every page of a batch: one without a board would lose that board on each.
            raise LayoutError(f"board {', '.join(map(str, fit.unread))} could not be fitted (its ruled lines were found "
                              "but not its squares): fit a page where every board's squares are clear")
    except LayoutError as exc:
        raise LayoutError(exc.reason, page, "page 1") from None
    drawn: bytes | None = None
    if overlay is not None:
        to_image = np.diag([1.0 / factor, 1.0 / factor, 1.0]) @ fit.homography
        ok, encoded = cv2.imencode(".png", draw_layout(first.image, fit.template, to_image))
        if not ok:  # pragma: no cover - encoding a valid array does not fail
            raise OutputError("cannot encode the overlay", overlay)
        drawn = encoded.tobytes()
    write_atomic(output, fit.template.to_json(), overwrite=overwrite)
    if overlay is not None and drawn is not None:
        write_atomic(overlay, drawn, overwrite=overwrite)
    return LayoutSummary(str(output), len(fit.template.boards), fit.seen, fit.turn,
                         str(overlay) if overlay is not None else None, bool(fit.template.fields))

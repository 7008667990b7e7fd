"""Synthetic filled recording notes: a match drawn as handwritten, scan-damaged pages.

``render_match_pages`` encodes the match with
:func:`digitise.notation.encode.encode_match` (one board per turn, exactly
as NOTATION.md says), lays the boards out eight to a page (board ``k`` goes
to page ``k // 8 + 1``, index ``k % 8 + 1``; as many as the template holds on another print), writes every mark with real
handwritten digit glyphs and hand-drawn crosses and arrows in one writer's
style per page, fills the header, and applies one damage level of
:mod:`digitise.sheet.damage`. Each page comes with its truth::

    {"match": name, "page": n, "paper": "a4", "degrade": "medium", "seed": s, "dpi": d,
     "markers": true, "mm_to_px": [[...], [...], [...]], "image_size": [w, h],
     "header": {"player_top": "...", "page": "1", ...},
     "boards": [{"index": 1, "game": 1, "cells": {"W7": [6], ...}, "crossed": false,
                 "arrow": false, "letters": {}, "actions": [0]}, ...],
     "writer": {...}, "damage": {...}}

``mm_to_px`` maps template millimetres to image pixels (continuous
coordinates, (0, 0) the top-left corner of the first pixel). Boards absent
from ``boards`` are blank.

Determinism: page ``n`` draws everything from ``numpy.random.default_rng([seed, n])``;
the same match, seed, level, template and glyphs give byte-identical images.
Speed: everything is drawn directly at the page's resolution, with
single-channel OpenCV operations for the damage.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.errors import InputError, OutputError
from digitise.fileio import folder_problem
from digitise.game.record import MatchRecord
from digitise.notation.encode import EncodedBoard, encode_match
from digitise.notation.marks import BoardMarks
from digitise.notation.mat import read_mat_strict
from digitise.notation.template import Rect, Template, load_template, mm_to_px_matrix, px_per_mm
from digitise.sheet.damage import LEVELS, Degrade, damage_page, page_homography, pick_dpi
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.sheet.handwriting import (
    GlyphBank,
    PageWarp,
    WriterStyle,
    draw_arrow,
    draw_cross,
    random_style,
    weight_lut,
    write_digits,
    write_words,
)
from digitise.sheet.printing import Text, png_with_dpi, render_template

#: Header fields written with digit glyphs; the others are written as words.
DIGIT_FIELDS = ("match_length", "page")
#: Tallest centre digits, as a share of the centre strip's height (the X has to fit over them).
CENTRE_MAX_HEIGHT = 0.8


@dataclass(frozen=True, slots=True)
class SynthPage:
    """One rendered page: the image (BGR uint8) and its truth (JSON-ready)."""

    number: int
    image: np.ndarray
    truth: dict[str, Any]


def header_fields(match: MatchRecord) -> dict[str, str]:
    """What the recorder writes in the header (page excluded), from the match and its metadata."""
    meta = {key.lower(): value for key, value in match.metadata}
    fields = {
        "event": meta.get("event", ""),
        "date": meta.get("eventdate", meta.get("date", "")),
        "round": meta.get("round", ""),
        "match_length": str(match.length) if match.length else "",
        "player_top": match.players[1],
        "player_bottom": match.players[0],
    }
    return {k: v.strip() for k, v in fields.items() if v and v.strip()}


def _bank(glyphs: GlyphBank | Mapping[int, Sequence[np.ndarray]]) -> GlyphBank:
    return glyphs if isinstance(glyphs, GlyphBank) else GlyphBank(glyphs)


def render_match_pages(
    match: MatchRecord,
    *,
    template: Template,
    seed: int,
    degrade: str | Degrade,
    glyphs: GlyphBank | Mapping[int, Sequence[np.ndarray]],
    name: str = "match",
    dpi: int | None = None,
    names_boards: bool = False,
    other_print: tuple[Text, ...] | None = None,
) -> list[SynthPage]:
    """Every page of ``match`` as a filled, damaged note (see the module docstring).

    ``glyphs`` is a :class:`GlyphBank` or what
    :func:`digitise.sheet.glyphs.load_digit_glyphs` returns. ``dpi``
    overrides the level's resolution (tests render small pages).
    ``names_boards``: before each game, a board with the players' names
    where their back checkers stand (NOTATION.md, point 9); such boards
    record no action (``actions`` is empty in the truth). ``other_print``:
    ``template`` is another print than digitise's (:mod:`digitise.sheet.prints`),
    which prints this text beside its squares and none of digitise's labels.
    """
    level = Degrade(degrade) if isinstance(degrade, str) else degrade
    bank = _bank(glyphs)
    boards = encode_match(match)
    if names_boards:
        boards = with_names_boards(boards, match)
    header = header_fields(match)
    per_page = len(template.boards)  # eight on digitise's note, four or six on some other prints
    pages = max(1, -(-len(boards) // per_page))
    out = []
    for page in range(1, pages + 1):
        chunk = boards[(page - 1) * per_page: page * per_page]
        placed = [(k + 1, board) for k, board in enumerate(chunk)]
        out.append(render_page(placed, page=page, header=header, template=template, seed=seed, degrade=level,
                               bank=bank, name=name, dpi=dpi, other_print=other_print))
    return out


def with_names_boards(boards: Sequence[EncodedBoard], match: MatchRecord) -> list[EncodedBoard]:
    """``boards`` with a names board opening every game: White's name on ``B1``, Black's on ``W1``.

    Those are the squares of each side's back checkers (White's 24 point is
    ``B1``, Black's is ``W1``).
    """
    bottom, top = match.players
    out: list[EncodedBoard] = []
    previous: int | None = None
    for board in boards:
        if board.game != previous:
            out.append(EncodedBoard(board.game, BoardMarks(letters={"B1": bottom, "W1": top}), ()))
            previous = board.game
        out.append(board)
    return out


def render_page(
    boards: Sequence[tuple[int, EncodedBoard | BoardMarks]],
    *,
    page: int,
    header: Mapping[str, str],
    template: Template,
    seed: int,
    degrade: Degrade,
    bank: GlyphBank,
    name: str = "match",
    dpi: int | None = None,
    other_print: tuple[Text, ...] | None = None,
) -> SynthPage:
    """One page holding ``boards`` as (index 1-8, board) pairs; ``header`` without the page number.

    ``other_print``: see :func:`render_match_pages`.
    """
    ranges = LEVELS[degrade]
    rng = np.random.default_rng([seed, page])
    page_dpi = dpi if dpi is not None else pick_dpi(ranges, rng)
    s = px_per_mm(page_dpi)
    if other_print is None:
        blank = render_template(template, page_dpi, markers=ranges.markers, line_grey=ranges.line_grey)
    else:
        blank = render_template(template, page_dpi, markers=ranges.markers, line_grey=ranges.line_grey, labels=False,
                                extras=other_print)
    matrix = page_homography(ranges, (blank.shape[1], blank.shape[0]), rng)
    warp = PageWarp(matrix)
    # The ink is drawn straight into the damaged image's coordinates (see PageWarp).
    ink = np.zeros(blank.shape, dtype=np.uint8)
    style = random_style(rng, mess=ranges.mess)
    lut = weight_lut(style.weight, style.opacity)

    written = dict(header)
    written["page"] = str(page)
    for field in sorted(written, key=lambda f: list(template.fields).index(f) if f in template.fields else 99):
        if field not in template.fields:
            continue
        area = template.fields[field].scaled(s)
        if field in DIGIT_FIELDS and written[field].isdecimal():
            digits = [int(c) for c in written[field]]
            write_digits(ink, bank, digits, area.inset(area.h * 0.08), _header_style(style), rng, lut=lut,
                         warp=warp)
        else:
            write_words(ink, written[field], area, style, rng, px_per_mm=s, warp=warp)

    truth_boards = []
    for index, board in sorted(boards, key=lambda ib: ib[0]):
        marks = board.marks if isinstance(board, EncodedBoard) else board
        geometry = template.board(index)
        _write_board(ink, bank, marks, geometry.cells, style, rng, lut=lut, scale=s, spill=ranges.spill, warp=warp)
        entry: dict[str, Any] = {
            "index": index,
            "game": board.game if isinstance(board, EncodedBoard) else None,
            "cells": {cell: list(digits) for cell, digits in marks.cells.items()},
            "crossed": marks.crossed,
            "arrow": marks.arrow,
            "letters": dict(marks.letters),
        }
        if isinstance(board, EncodedBoard):
            entry["actions"] = list(board.actions)
        truth_boards.append(entry)

    damaged = damage_page(blank, ink, style.ink, ranges, rng, matrix=matrix, px_per_mm=s)
    mm_to_px = damaged.homography @ mm_to_px_matrix(page_dpi)
    mm_to_px = mm_to_px / mm_to_px[2, 2]
    height, width = damaged.image.shape[:2]
    truth = {
        "match": name,
        "page": page,
        "paper": template.name,
        "degrade": degrade.value,
        "seed": seed,
        "dpi": page_dpi,
        "markers": ranges.markers,
        "mm_to_px": [[_round(v) for v in row] for row in mm_to_px.tolist()],
        "image_size": [width, height],
        "header": {k: written[k] for k in template.fields if k in written},
        "boards": truth_boards,
        "writer": {"ink": style.ink_name, "size": round(style.size, 3), "slant": round(style.slant, 3),
                   "weight": style.weight},
        "damage": damaged.settings,
    }
    return SynthPage(page, damaged.image, truth)


def _round(value: float) -> float:
    return float(f"{value:.9g}")


def _header_style(style: WriterStyle) -> WriterStyle:
    """Header digits: the same hand, written a little larger in the taller box."""
    return replace(style, size=min(style.size * 1.2, 0.8), two_lines=0.0)


def _write_board(
    ink: np.ndarray, bank: GlyphBank, marks: BoardMarks, cells: Mapping[str, Rect], style: WriterStyle,
    rng: np.random.Generator, *, lut: np.ndarray, scale: float, spill: float, warp: PageWarp,
) -> None:
    point_h = cells["B1"].h * scale
    for cell, digits in marks.cells.items():
        rect = cells[cell].scaled(scale)
        if cell == "centre":
            # Unplayed dice: one line in the long strip, at the writer's usual digit size (as in a
            # point square), at most what the strip's height holds; the X then goes over them.
            digit_h = min(point_h * style.size, rect.h * CENTRE_MAX_HEIGHT)
            box = write_digits(ink, bank, digits, centre_spot(rect, digit_h, len(digits), rng), style, rng,
                               lut=lut, warp=warp, one_line=True, digit_h=digit_h)
            if marks.crossed:
                draw_cross(ink, box, style, rng, px_per_mm=scale, warp=warp)
        else:
            write_digits(ink, bank, digits, rect, style, rng, lut=lut, spill=spill, warp=warp)
    if marks.crossed and "centre" not in marks.cells:
        # A cross with nothing under it (not produced by the encoder, but drawable).
        centre = cells["centre"].scaled(scale)
        spot = centre_spot(centre, min(point_h * style.size, centre.h * CENTRE_MAX_HEIGHT), 2, rng)
        draw_cross(ink, (spot.x, spot.y, spot.right, spot.bottom), style, rng, px_per_mm=scale, warp=warp)
    if marks.arrow:
        draw_arrow(ink, cells["centre"].scaled(scale), style, rng, px_per_mm=scale, warp=warp)
    for cell, text in marks.letters.items():
        rect = cells[cell].scaled(scale)
        # Names run on over the neighbouring squares, staying on the board.
        right = max(r.right for r in cells.values()) * scale
        width = rect.w * 3.2
        left = min(rect.x, right - width)
        write_words(ink, text, Rect(left, rect.y, width, rect.h), style, rng, px_per_mm=scale, warp=warp)


def centre_spot(centre: Rect, digit_h: float, count: int, rng: np.random.Generator) -> Rect:
    """Where in the long centre strip the recorder writes ``count`` digits ``digit_h`` px tall.

    Wide enough for the digits on one line at that height (a digit is at most
    about as wide as tall, plus the slant and the gaps), so they are not shrunk.
    """
    width = min(centre.w, digit_h * (0.6 + 1.15 * count))
    x = centre.x + (centre.w - width) * float(rng.uniform(0.15, 0.85))
    return Rect(x, centre.y, width, centre.h)


# --- files -------------------------------------------------------------------------------


def encode_image(image: np.ndarray, fmt: str, *, dpi: int) -> bytes:
    """PNG (lossless, resolution recorded) or JPEG (quality 92) bytes of a page."""
    if fmt == "png":
        return png_with_dpi(image, dpi, noisy=True)
    if fmt in ("jpg", "jpeg"):
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        if not ok:
            raise OutputError("cannot encode JPEG")
        return data.tobytes()
    raise InputError(f"unknown image format {fmt!r} (png or jpg)")


def pages_pdf(pages: Sequence[SynthPage], page_mm: tuple[float, float]) -> bytes:
    """The pages as one PDF, a JPEG image (quality 92) filling each page: how a scanner's PDF looks.

    Deterministic (reportlab's invariant mode).
    """
    # imported here: reportlab (~40 ms) is loaded only when a PDF is made
    from reportlab import rl_config
    from reportlab.lib.units import mm
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    size = (page_mm[0] * mm, page_mm[1] * mm)
    # Binary streams: ASCII85 would make the embedded JPEGs a quarter bigger.
    saved = rl_config.useA85
    rl_config.useA85 = 0
    try:
        pdf = canvas.Canvas(buffer, pagesize=size, invariant=1)
        pdf.setTitle("digitise synthetic note")
        for page in pages:
            image = ImageReader(io.BytesIO(encode_image(page.image, "jpg", dpi=int(page.truth["dpi"]))))
            pdf.drawImage(image, 0, 0, width=size[0], height=size[1])
            pdf.showPage()
        pdf.save()
    finally:
        rl_config.useA85 = saved
    return buffer.getvalue()


def truth_json(truth: Mapping[str, Any]) -> str:
    """The truth file's text (stable layout)."""
    return json.dumps(truth, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


_OUTPUT_NAME = re.compile(r"page-\d{3,}\.(png|jpg|truth\.json)|pages\.pdf|match\.mat")


def _is_synth_output(name: str) -> bool:
    """True for the names ``write_synth`` writes (so a re-render may replace them)."""
    return _OUTPUT_NAME.fullmatch(name) is not None


def write_synth(
    mat_path: str | Path,
    output_dir: str | Path,
    *,
    paper: str = "a4",
    seed: int = 0,
    degrade: str = "light",
    glyphs: str | Path | None = None,
    fmt: str = "png",
    overwrite: bool = False,
    dpi: int | None = None,
    names_boards: bool = False,
) -> list[Path]:
    """Render the match in ``mat_path`` into ``output_dir``: pages, truth files and a copy of the match.

    Writes ``page-001.png`` (or ``.jpg``), ``page-001.truth.json``, ... and
    ``match.mat``; with ``fmt="pdf"``, one ``pages.pdf`` instead of the
    images. Everything is written into a temporary folder beside
    ``output_dir`` and moved into place at the end, so a failure leaves
    nothing half-written. Refuses to write into an existing non-empty
    ``output_dir`` unless ``overwrite``; then it replaces only the files
    it writes (and stale pages of an earlier render), never anything else.
    Glyphs: the held-out ``TEST`` subset of ``glyphs`` (default:
    ``../shared/data/digits.png``).
    """
    try:
        level = Degrade(degrade)
    except ValueError:
        known = ", ".join(d.value for d in Degrade)
        raise InputError(f"unknown damage level {degrade!r} (known: {known})") from None
    if fmt not in ("png", "jpg", "pdf"):
        raise InputError(f"unknown image format {fmt!r} (png, jpg or pdf)")
    template = load_template(paper)
    source = Path(mat_path)
    match = read_mat_strict(source)
    bank = GlyphBank(load_digit_glyphs(glyphs, GlyphSubset.TEST))
    if bank.missing:
        raise InputError(f"no glyph for the digits {', '.join(map(str, bank.missing))}", glyphs)
    target = Path(output_dir)
    # os.path's tests: Path's raise PermissionError in a folder the user may not enter.
    if os.path.exists(target) and (not os.path.isdir(target) or any(target.iterdir())) and not overwrite:
        raise OutputError("exists already (use --force to replace it)", target)
    pages = render_match_pages(match, template=template, seed=seed, degrade=level, glyphs=bank,
                               name=source.stem, dpi=dpi, names_boards=names_boards)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        staging.chmod(0o755)  # mkdtemp makes it private; the result is an ordinary folder
    except OSError as exc:
        raise OutputError(f"cannot write: {folder_problem(target) or exc.strerror or exc}", target) from exc
    try:
        written: list[Path] = []
        if fmt == "pdf":
            (staging / "pages.pdf").write_bytes(pages_pdf(pages, template.page_mm))
            written.append(target / "pages.pdf")
        for p in pages:
            stem = f"page-{p.number:03d}"
            if fmt != "pdf":
                (staging / f"{stem}.{fmt}").write_bytes(encode_image(p.image, fmt, dpi=p.truth["dpi"]))
                written.append(target / f"{stem}.{fmt}")
            (staging / f"{stem}.truth.json").write_text(truth_json(p.truth), encoding="utf-8")
            written.append(target / f"{stem}.truth.json")
        shutil.copyfile(source, staging / "match.mat")
        written.append(target / "match.mat")
        if os.path.isdir(target):
            # Replace our files one by one (each atomically) and drop stale pages of an earlier
            # render; anything else the user keeps in the folder is left alone.
            fresh = {p.name for p in staging.iterdir()}
            for name in sorted(fresh):
                os.replace(staging / name, target / name)
            for old in target.iterdir():
                if old.name not in fresh and _is_synth_output(old.name):
                    old.unlink()
            staging.rmdir()
        elif os.path.exists(target):
            raise OutputError("exists and is not a folder", target)
        else:
            staging.rename(target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"cannot write: {exc.strerror or exc}", target) from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return written

"""The whole reading pipeline on real images: pages in, readings out, bad pages reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from digitise.cli import cli
from digitise.errors import InputError, PageError
from digitise.notation.readings import load_readings, readings_to_json
from digitise.notation.template import Template, load_template
from digitise.vision import header
from digitise.vision.header import TESSERACT_MISSING, read_header
from digitise.vision.images import PageImage, load_pages
from digitise.vision.ink import ink_amount
from digitise.vision.read import (
    INKED_ALL_OVER,
    ReadOutcome,
    analyse_page,
    header_homographies,
    locate,
    read_page,
    read_pages,
    resolve_templates,
    sides_crossed,
)

from .conftest import WRITTEN, RecordingReader, make_sheet


def _written_cells(reader: RecordingReader) -> int:
    return len(reader.seen)


@pytest.mark.parametrize(("angle", "markers"), [(0, True), (-90, True), (180, False), (6.0, False)])
def test_written_cells_reach_the_reader(a4: Template, angle: float, markers: bool) -> None:
    sheet = make_sheet(a4, written=WRITTEN, crossed=(6,), angle=angle, markers=markers,
                       line_grey=None if markers else 0.3)
    reader = RecordingReader()
    reading, analysis = analyse_page(PageImage("note.png", 1, sheet.image), a4, reader, header=False)
    seen = {(c.board, c.name) for c in analysis.cells}
    assert seen == set(WRITTEN) | {(6, "centre")}
    # Each cell's ink as the reader wants it: float32 0..1, the cell plus 1.5 mm at 10 px/mm.
    for ink, _ in reader.seen:
        assert ink.dtype == np.float32 and 0.0 <= float(ink.min()) and float(ink.max()) <= 1.0
    ink_w3 = next(c.ink for c in analysis.cells if (c.board, c.name) == (2, "W5"))
    cell = a4.board(2).cells["W5"]
    assert ink_w3.shape == (round((cell.h + 3) * 10), round((cell.w + 3) * 10))
    assert [b.index for b in reading.boards] == list(range(1, 9))
    assert reading.header["method"]["value"] == ("markers" if markers else "grid")
    board2 = reading.boards[1]
    assert set(board2.cells) == {"W5"}
    assert board2.cells["W5"][0].digits == (1,)
    assert all(not b.cells for b in reading.boards if b.index == 7)


def test_board_box_is_on_the_original_page(a4: Template) -> None:
    sheet = make_sheet(a4, written=WRITTEN)
    reading = read_page(PageImage("note.png", 1, sheet.image), a4, RecordingReader(), header=False)
    for board in reading.boards:
        assert board.box is not None
        x, y, w, h = board.box
        rect = a4.board(board.index).cells["Bres"].union(a4.board(board.index).cells["Woff"])
        scale = sheet.image.shape[1] / a4.page_mm[0]
        assert abs(x - rect.x * scale) < 4 * scale and abs(y - rect.y * scale) < 4 * scale
        assert w == pytest.approx(rect.w * scale, rel=0.1) and h == pytest.approx(rect.h * scale, rel=0.3)


def test_paper_size_is_found_from_the_page(a4: Template) -> None:
    letter = load_template("letter")
    sheet = make_sheet(letter, written={(1, "B7"): "6"})
    outcome = read_pages([], None)
    assert outcome.readings.pages == ()
    reading, analysis = analyse_page(PageImage("letter.png", 1, sheet.image), [a4, letter], RecordingReader(), header=False)
    assert reading.header["template"]["value"] == "letter"
    assert {(c.board, c.name) for c in analysis.cells} == {(1, "B7")}


def _write(path: Path, image: np.ndarray) -> Path:
    assert cv2.imwrite(str(path), image)
    return path


def test_bad_pages_are_reported_and_good_ones_read(a4: Template, tmp_path: Path) -> None:
    good = _write(tmp_path / "good.png", make_sheet(a4, written=WRITTEN).image)
    text = tmp_path / "notes.png"
    text.write_text("not a picture")
    blank = _write(tmp_path / "blank.png", np.full((1100, 1500), 245, np.uint8))
    rng = np.random.default_rng(7)
    photo = np.full((1100, 1500, 3), 120, np.uint8)
    for _ in range(80):
        colour = tuple(int(v) for v in rng.integers(0, 255, 3))
        cv2.circle(photo, (int(rng.integers(0, 1500)), int(rng.integers(0, 1100))), int(rng.integers(15, 160)), colour, -1)
    other = _write(tmp_path / "holiday.jpg", photo)
    whole = make_sheet(a4, written=WRITTEN).image
    half = _write(tmp_path / "half.png", np.ascontiguousarray(whole[:, : whole.shape[1] // 2]))

    outcome = read_pages([good, text, blank, other, half], a4, RecordingReader(), header=False)
    assert [p.source for p in outcome.readings.pages] == [str(good)]
    by_path = {e.path: e for e in outcome.errors}
    assert set(by_path) == {str(text), str(blank), str(other), str(half)}
    assert isinstance(by_path[str(text)], InputError) and "not an image" in by_path[str(text)].reason
    assert isinstance(by_path[str(blank)], PageError) and "blank" in by_path[str(blank)].reason
    assert isinstance(by_path[str(other)], PageError) and "no recording note" in by_path[str(other)].reason
    assert isinstance(by_path[str(half)], PageError)
    assert all(e.where == "page 1" for e in outcome.errors if isinstance(e, PageError))


def test_damage_is_given_as_the_cause_or_noted(a4: Template, tmp_path: Path) -> None:
    """A page read from damaged data is noted; one that then fails gives the damage as its cause, not only
    "no note found" (a PDF page's picture is looked into only then: PDFium renders it without a word)."""
    sheet = cv2.cvtColor(make_sheet(a4, written=WRITTEN).image, cv2.COLOR_GRAY2RGB)
    Image.fromarray(sheet).save(tmp_path / "scan.pdf", resolution=150.0)
    data = (tmp_path / "scan.pdf").read_bytes()
    start = data.index(b"stream")
    middle = (start + data.index(b"endstream")) // 2
    (tmp_path / "scan.pdf").write_bytes(data[:middle] + b"\xff\xd0" + data[middle + 2:])
    ok, jpeg = cv2.imencode(".jpg", sheet)
    assert ok
    near_end = len(jpeg) - 2000
    (tmp_path / "scan.jpg").write_bytes(jpeg.tobytes()[:near_end] + b"\xff\xd0" + jpeg.tobytes()[near_end + 2:])

    outcome = read_pages([tmp_path / "scan.pdf", tmp_path / "scan.jpg"], a4, RecordingReader(), header=False)
    (error,) = outcome.errors
    assert error.path == str(tmp_path / "scan.pdf") and error.where == "page 1"
    assert error.reason.startswith("the data of the page's JPEG picture is damaged (Corrupt JPEG data: ")
    assert ", and what decodes is not a readable note: " in error.reason
    assert [page.source for page in outcome.readings.pages] == [str(tmp_path / "scan.jpg")]
    notice = (f"{tmp_path / 'scan.jpg'}: page 1: the JPEG's data is damaged (Corrupt JPEG data: premature end of "
              "data segment); read as far as it decodes: check its turns")
    assert outcome.notices == (notice,)


def test_multi_page_tiff_with_a_blank_page(a4: Template, tmp_path: Path) -> None:
    first = Image.fromarray(make_sheet(a4, written=WRITTEN).image)
    blank = Image.fromarray(np.full((1100, 1500), 250, np.uint8))
    third = Image.fromarray(make_sheet(a4, written={(4, "W1"): "5"}, angle=180).image)
    target = tmp_path / "match.tif"
    first.save(target, save_all=True, append_images=[blank, third], compression="tiff_deflate")
    outcome = read_pages([target], a4, RecordingReader(), header=False)
    assert [p.page for p in outcome.readings.pages] == [1, 3]
    (error,) = outcome.errors
    assert error.where == "page 2" and error.path == str(target)
    assert set(outcome.readings.pages[1].boards[3].cells) == {"W1"}


def test_readings_are_deterministic(a4: Template) -> None:
    sheet = make_sheet(a4, written=WRITTEN, angle=2.5)
    page = PageImage("note.png", 1, sheet.image)
    from digitise.notation.readings import Readings

    first = readings_to_json(Readings((read_page(page, a4, RecordingReader(), header=False),)))
    second = readings_to_json(Readings((read_page(page, a4, RecordingReader(), header=False),)))
    assert first == second


def test_header_without_tesseract_warns_and_reads_the_rest(a4: Template, monkeypatch: pytest.MonkeyPatch) -> None:
    pytesseract = pytest.importorskip("pytesseract")
    image = make_sheet(a4).image.copy()
    s = image.shape[1] / a4.page_mm[0]
    event = a4.fields["event"]
    cv2.putText(image, "OPEN", (int((event.x + 3) * s), int((event.bottom - 1.5) * s)), cv2.FONT_HERSHEY_SIMPLEX,
                0.25 * s, 20, max(1, int(0.12 * s)))
    homography = np.diag([s, s, 1.0])
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    # Neither the program nor the library (tesserocr) with tesseract's model.
    monkeypatch.setattr(header, "tesseract_engine", lambda psm: None)
    fields = read_header(image, homography, a4, None)
    assert fields["event"]["value"] == "" and fields["event"]["warning"] == TESSERACT_MISSING
    # Empty fields are simply absent.
    assert "date" not in fields and "player_top" not in fields


def test_cli_read_writes_good_pages_and_exits_3(a4: Template, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from digitise.vision import cells

    monkeypatch.setattr(cells, "default_reader", lambda: RecordingReader())
    good = _write(tmp_path / "good.png", make_sheet(a4, written=WRITTEN).image)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    out = tmp_path / "readings.json"
    debug = tmp_path / "debug"
    runner = CliRunner()
    result = runner.invoke(cli, ["read", str(good), str(bad), "-o", str(out), "--template", "a4", "--no-header",
                                 "--debug-dir", str(debug)])
    # Written without the bad page: "look at this", as scan says it.
    assert result.exit_code == 1, result.output
    assert f"{bad}" in result.output and "truncated" in result.output
    assert f"{out}: 1 page read, 1 skipped" in result.stdout.splitlines()
    readings = load_readings(out)
    assert [p.source for p in readings.pages] == [str(good)]
    assert json.loads(out.read_text())["pages"][0]["header"]["method"]["value"] == "markers"
    overlay = cv2.imread(str(debug / "good-p1.png"))
    assert overlay is not None and overlay.shape[2] == 3
    # An existing output is not replaced without --force.
    again = runner.invoke(cli, ["read", str(good), "-o", str(out), "--no-header"])
    assert again.exit_code == 4
    forced = runner.invoke(cli, ["read", str(good), "-o", str(out), "--no-header", "--force"])
    assert forced.exit_code == 0, forced.output


def test_with_the_shipped_model(a4: Template) -> None:
    """The real cell reader on a real page (skipped until the model is trained and shipped)."""
    from digitise.vision.classifier import DEFAULT_MODEL

    if not DEFAULT_MODEL.is_file():
        pytest.skip("the glyph model is not shipped yet")
    sheet = make_sheet(a4, written={(1, "B7"): "6", (3, "W2"): "4"})
    reading = read_page(PageImage("note.png", 1, sheet.image), a4, header=False)
    assert set(reading.boards[0].cells) == {"B7"}
    assert set(reading.boards[2].cells) == {"W2"}
    assert all(0.0 <= c.probability <= 1.0 for b in reading.boards for cs in b.cells.values() for c in cs)


def test_a_toner_speck_alone_in_a_square_is_not_writing(a4: Template) -> None:
    """A photocopy (grey page): a lone black speck leaves its square empty; the written squares still count."""
    sheet = make_sheet(a4, written=WRITTEN, markers=False, line_grey=0.3)
    image = sheet.image.copy()
    assert image.ndim == 2
    s = image.shape[1] / a4.page_mm[0]
    for index, name in ((6, "B3"), (7, "W9")):
        cell = a4.board(index).cells[name]
        cv2.circle(image, (round((cell.x + cell.w / 2) * s), round((cell.y + cell.h / 2) * s)), round(0.35 * s), 0, -1)
    reader = RecordingReader()
    _, analysis = analyse_page(PageImage("copy.png", 1, image), a4, reader, header=False)
    assert {(c.board, c.name) for c in analysis.cells} == set(WRITTEN)


def test_a_one_written_on_a_squares_side_reaches_the_reader_whole(a4: Template) -> None:
    """A "1" drawn down the line between W2 and W1 (W1's left side): the presence box, inset from the
    lines, does not see it, the pen-dark measure does; the line removal keeps it (it covers most of
    that side, which ends at the centre strip), so W1 goes to the reader with the stroke in it.
    (Not on a photocopy whose lines are nearly as dark as the pen: darkness cannot tell them apart.)"""
    sheet = make_sheet(a4, written={(3, "W3"): "5"})
    image = sheet.image.copy()
    s = image.shape[1] / a4.page_mm[0]
    cell = a4.board(3).cells["W1"]
    x = round((cell.x - 0.1) * s)
    pen = 40 if image.ndim == 2 else (90, 40, 30)
    cv2.line(image, (x + round(0.1 * s), round((cell.y + 0.25 * cell.h) * s)),
             (x, round((cell.y + 0.85 * cell.h) * s)), pen, max(2, round(0.5 * s)))
    reader = RecordingReader()
    _, analysis = analyse_page(PageImage("side.png", 1, image), a4, reader, header=False)
    seen = {(c.board, c.name): c.ink for c in analysis.cells}
    assert (3, "W1") in seen, f"the '1' on W1's side was not seen: {sorted(seen)}"
    # The stroke is ~6 mm long and 0.5 mm wide: most of it stays after the line is taken away.
    assert ink_amount(seen[(3, "W1")]) > 2.0


@pytest.mark.parametrize(("name", "column", "sides"), [
    ("W5", 14, ("W6",)),    # down its left side: W6 is the point to its left
    ("W5", 112, ("W4",)),   # down its right side
    ("W5", 60, ()),         # in the middle
    ("W12", 14, ()),        # the board's edge: no point beyond
    ("B1", 112, ()),        # the off square beyond is no point square
    ("Boff", 14, ()),
])
def test_writing_on_a_side_names_the_square_beyond(name: str, column: int, sides: tuple[str, ...]) -> None:
    ink = np.zeros((150, 128), np.float32)  # a point square's ink: 9.75 x 12 mm at 10 px/mm, 1.5 mm margin
    ink[40:110, column - 3:column + 3] = 1.0
    assert sides_crossed(name, ink) == sides


def test_the_tip_of_a_digit_grazing_a_side_is_not_writing_on_it() -> None:
    ink = np.zeros((150, 128), np.float32)
    ink[60:64, 16:22] = 1.0  # 0.24 mm^2 within 0.3 mm of the left side
    ink[40:110, 40:46] = 1.0
    assert sides_crossed("W5", ink) == ()


def _wash_out_boards(image: np.ndarray, template: Template, boards: tuple[int, ...]) -> np.ndarray:
    """The page with the printed lines of ``boards`` gone (a faded photocopy, a glare): white paint."""
    out = image.copy()
    s = image.shape[1] / template.page_mm[0]
    for board in template.boards:
        if board.index in boards:
            r = board.rect.inset(-1.0)
            cv2.rectangle(out, (int(r.x * s), int(r.y * s)), (int((r.x + r.w) * s), int((r.y + r.h) * s)), 255, -1)
    return out


def test_markers_place_a_page_whose_lines_mostly_faded(a4: Template) -> None:
    """Four markers fix the page, so a few boards' lines confirm the form: five boards washed out, still read."""
    sheet = make_sheet(a4, written={(1, "B7"): "6", (2, "W5"): "31"})
    image = _wash_out_boards(sheet.image, a4, (4, 5, 6, 7, 8))
    reading, analysis = analyse_page(PageImage("faded.png", 1, image), a4, RecordingReader(), header=False)
    assert reading.header["method"]["value"] == "markers"
    assert {(c.board, c.name) for c in analysis.cells} == {(1, "B7"), (2, "W5")}


def test_without_markers_a_page_whose_lines_mostly_faded_is_refused(a4: Template) -> None:
    """With no markers the lines are all there is to find the note by: too few boards, a clear error."""
    sheet = make_sheet(a4, written={(1, "B7"): "6"}, markers=False, line_grey=0.3)
    image = _wash_out_boards(sheet.image, a4, (3, 4, 5, 6, 7, 8))
    with pytest.raises(PageError, match="no recording note found"):
        analyse_page(PageImage("faded.png", 1, image), a4, RecordingReader(), header=False)


def test_debug_overlays_of_inputs_alike_in_name_do_not_clash(a4: Template, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from digitise.vision import cells

    monkeypatch.setattr(cells, "default_reader", lambda: RecordingReader())
    image = make_sheet(a4, written=WRITTEN).image
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    first, second = _write(tmp_path / "x" / "p.png", image), _write(tmp_path / "y" / "p.png", image)
    debug = tmp_path / "debug"
    args = ["read", str(first), str(second), "-o", str(tmp_path / "r.json"), "--template", "a4", "--no-header",
            "--debug-dir", str(debug)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in debug.iterdir()) == ["1-p-p1.png", "2-p-p1.png"]
    # Again without --force: refused before any page is read, naming the overlays that exist.
    (tmp_path / "r.json").unlink()
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 4 and "1-p-p1.png: exists already, as does" in again.output
    assert not (tmp_path / "r.json").exists()


def test_overlay_names_are_unique_whatever_the_inputs_are_called() -> None:
    from digitise.vision.debug import overlay_names

    assert overlay_names(["x/a.png", "b.png"]) == ["a", "b"]
    assert overlay_names(["a.png", "a.pdf", "1-a.png"]) == ["1-a", "2-a", "3-1-a"]
    assert overlay_names(["a.png", "a.png"]) == ["1-a", "2-a"]  # one file given twice


def test_a_blotted_board_is_flagged_not_dropped(tmp_path: Path) -> None:
    """An ink blot over half a board: the reader took it for letters (a names board) and the board
    vanished from the match without a flag. Its blotted squares are unreadable now: it is flagged."""
    from digitise.pipeline import ScanOptions, scan

    sample = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light" / "page-001.jpg"
    image = cv2.imread(str(sample))
    reading = read_page(PageImage(str(sample), 1, image), resolve_templates(None), header=False)
    x, y, w, h = reading.boards[0].box
    cv2.rectangle(image, (x + w // 5, y + h // 10), (x + 3 * w // 5, y + 9 * h // 10), (20, 20, 20), -1)
    blotted = tmp_path / "blotted.png"
    cv2.imwrite(str(blotted), image)
    scan([blotted], tmp_path / "m.mat", tmp_path / "m.report.json", ScanOptions())
    report = json.loads((tmp_path / "m.report.json").read_text())
    entries = [*report["skipped"], *(t for g in report["games"] for t in g["turns"])]
    first = [e for e in entries if (e["page"], e["board"]) == (1, 1)]
    assert first and all(e["flagged"] for e in first), first


@pytest.mark.parametrize("orientation", [2, 7])
def test_a_photo_stored_mirrored_with_its_exif_orientation_is_read(a4: Template, tmp_path: Path,
                                                                   orientation: int) -> None:
    """A camera that records "mirror, then turn" instead of turning the pixels: without the EXIF orientation the
    page would be refused as a mirror image."""
    sheet = make_sheet(a4, written=WRITTEN).image
    stored = cv2.flip(sheet, 1) if orientation == 2 else cv2.rotate(cv2.transpose(sheet), cv2.ROTATE_180)
    ok, jpeg = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok
    tiff = b"MM\x00*\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01" + bytes([0, orientation, 0, 0]) + bytes(4)
    body = b"Exif\x00\x00" + tiff
    data = jpeg.tobytes()
    (tmp_path / "photo.jpg").write_bytes(data[:2] + b"\xff\xe1" + (len(body) + 2).to_bytes(2, "big") + body + data[2:])
    outcome = read_pages([tmp_path / "photo.jpg"], a4, RecordingReader(), header=False)
    assert outcome.errors == ()
    (page,) = outcome.readings.pages
    assert {(board.index, name) for board in page.boards for name in board.cells} == set(WRITTEN)


@pytest.mark.parametrize(("contrast", "pedestal"), [(0.3, 180.0), (0.2, 190.0)])
def test_a_washed_out_page_reads_as_the_good_one(tmp_path: Path, contrast: float, pedestal: float) -> None:
    """A faded photocopy or a glaring photo: the sample page with its contrast cut to a fifth or
    three tenths, lifted towards white. Its printed lines were too faint for the line finder's bar
    and the page was refused ("only 0 of 8 boards show their lines"); levelled on loading, it reads
    as the page itself, board for board."""
    sample = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light" / "page-001.jpg"
    image = cv2.imread(str(sample))
    faded = np.clip(image.astype(np.float32) * contrast + pedestal, 0, 255).astype(np.uint8)
    path = tmp_path / "faded.jpg"
    cv2.imwrite(str(path), faded, [cv2.IMWRITE_JPEG_QUALITY, 95])
    good = read_pages([sample], header=False)
    washed = read_pages([path], header=False)
    assert not washed.errors, washed.errors

    def tops(outcome: ReadOutcome) -> list[dict[str, tuple[int, ...]]]:
        return [{name: cands[0].digits for name, cands in board.cells.items() if cands}
                for page in outcome.readings.pages for board in page.boards]

    assert tops(washed) == tops(good)


def test_a_page_scanned_too_coarsely_is_refused_with_the_resolution_to_use(a4: Template) -> None:
    sheet = make_sheet(a4, dpi=90)
    with pytest.raises(PageError, match=r"too small to read \(3\.[0-9] px per mm, about 9[0-9] dpi\): scan it at 150 dpi"):
        read_page(PageImage("coarse.png", 1, sheet.image), [a4], header=False)


def _bowed(image: np.ndarray, amplitude: float) -> np.ndarray:
    """``image`` as a page not lying flat: rows bowed by ``amplitude`` of its height in the middle."""
    h, w = image.shape[:2]
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    map_y = ys + np.float32(amplitude * h) * np.sin(np.float32(np.pi) * xs / w)
    map_x = xs + np.float32(amplitude * 0.5 * w) * np.sin(np.float32(np.pi) * ys / h)
    return cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderValue=(255, 255, 255))


def test_a_bowed_pages_header_is_read_where_the_top_boards_show_it_lies() -> None:
    """A curled page in a photo: the markers in its corners place the header 2-3 mm from where it
    lies, and the match length was read off the field's edge ("3" as "2" at 0.08), written without a
    word. The header fields now follow the top boards' measured lines; a flat page's are cut as fitted."""
    sample = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light" / "page-001.jpg"
    flat = cv2.imread(str(sample))
    templates = resolve_templates(None)
    for image, moved in ((flat, False), (_bowed(flat, 0.015), True)):
        page = PageImage(str(sample), 1, image)
        fit, boards, _, _, template = locate(page, templates)
        assert bool(header_homographies(fit, boards, template)) is moved
        reading, _ = analyse_page(page, templates, defer_text=True)
        assert reading.header["match_length"]["value"] == "3", reading.header
        assert reading.header["match_length"]["confidence"] > 0.8, reading.header


@pytest.mark.parametrize("stack", [np.hstack, np.vstack])
def test_two_notes_in_one_picture_are_refused_not_half_read(stack: Any) -> None:
    """Two pages on one scanner bed (or in one photo): read as one page, one note was read and the
    other lost without a word. Their markers are there twice: the picture is refused, saying why."""
    folder = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light"
    first, second = (cv2.imread(str(folder / f"page-00{n}.jpg")) for n in (1, 2))
    both = stack([first, second])
    with pytest.raises(PageError, match="two notes in one picture .*: scan or photograph each page on its own"):
        read_page(PageImage("two-up.jpg", 1, both), resolve_templates(None), header=False)
    # Each alone reads.
    assert len(read_page(PageImage("one.jpg", 1, first), resolve_templates(None), header=False).boards) == 8


def _shaken(image: np.ndarray, mm: float, degrees: float, px_per_mm: float) -> np.ndarray:
    """``image`` as a photo taken while the camera moved ``mm`` on the page, ``degrees`` from sideways."""
    length = max(1, round(mm * px_per_mm))
    size = length | 1
    kernel = np.zeros((size, size), np.float32)
    middle, half = size // 2, (length - 1) / 2.0
    c, s = np.cos(np.deg2rad(degrees)), np.sin(np.deg2rad(degrees))
    cv2.line(kernel, (round(middle - c * half), round(middle - s * half)),
             (round(middle + c * half), round(middle + s * half)), 1.0, 1, cv2.LINE_8)
    return cv2.filter2D(image, -1, kernel / kernel.sum())


SAMPLE_PAGE = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light" / "page-001.jpg"
SAMPLE_PX_PER_MM = 150 / 25.4


def _top_readings(outcome: ReadOutcome) -> set[tuple[int, str, tuple[int, ...]]]:
    return {(board.index, name, cands[0].digits) for page in outcome.readings.pages for board in page.boards
            for name, cands in board.cells.items() if cands}


@pytest.mark.parametrize("degrees", [0.0, 90.0])
def test_a_page_smeared_by_a_moving_camera_is_read_up_to_1_mm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               degrees: float) -> None:
    """A photo taken while the camera moved 1 mm (sideways or up the page): the lines across the motion are
    spread too thin for the line finder's bar, and the page was refused. Its lines look 1 mm wide
    (grid.smear_mm), so they are looked for again with a lower bar: the page reads as the sharp one."""
    from digitise.vision import locate as read_module
    from digitise.vision.grid import smear_mm

    path = tmp_path / "shaken.jpg"
    cv2.imwrite(str(path), _shaken(cv2.imread(str(SAMPLE_PAGE)), 1.0, degrees, SAMPLE_PX_PER_MM),
                [cv2.IMWRITE_JPEG_QUALITY, 95])
    sharp, shaken = read_pages([SAMPLE_PAGE], header=False), read_pages([path], header=False)
    assert not shaken.errors, shaken.errors
    written = _top_readings(sharp)
    assert len(written) >= 12 and len(written & _top_readings(shaken)) >= len(written) - 2
    smears = []
    for picture in (SAMPLE_PAGE, path):
        page = load_pages(picture)[0]
        assert isinstance(page, PageImage)
        smears.append(smear_mm(locate(page, resolve_templates(None))[1]))
    assert smears[0] < 0.6 and 0.8 <= smears[1] <= 1.4, smears
    # Without the second look the page is refused: it is that look that reads it.
    monkeypatch.setattr(read_module, "SMEAR_READABLE_MM", 0.0)
    assert read_pages([path], header=False).errors


@pytest.mark.parametrize(("mm", "degrees"), [(2.0, 0.0), (1.5, 0.0), (2.0, 45.0)])
def test_a_page_smeared_further_is_refused_saying_so(tmp_path: Path, mm: float, degrees: float) -> None:
    """Smeared past what reads (1.5 mm or more, any way), a page is refused with its cause and the fix."""
    path = tmp_path / "shaken.jpg"
    cv2.imwrite(str(path), _shaken(cv2.imread(str(SAMPLE_PAGE)), mm, degrees, SAMPLE_PX_PER_MM),
                [cv2.IMWRITE_JPEG_QUALITY, 95])
    outcome = read_pages([path], header=False)
    assert not outcome.readings.pages
    (error,) = outcome.errors
    assert isinstance(error, PageError)
    assert "the picture is smeared by about" in error.message or "taken while the camera moved" in error.message
    assert error.message.endswith("take it again holding the camera still")


def test_a_ruled_sheet_is_no_note_whatever_way_its_edges_run(tmp_path: Path) -> None:
    """A lined notebook page's edges run one way, as a smeared photo's do: it is said to be no note, and the
    camera is only mentioned as what to do if it is one."""
    image = np.full((3508, 2480, 3), 250, np.uint8)
    for y in range(300, 3400, 94):
        cv2.line(image, (150, y), (2380, y), (200, 160, 140), 3)
    path = _write(tmp_path / "ruled.png", image)
    (error,) = read_pages([path], header=False).errors
    assert isinstance(error, PageError)
    assert error.reason.startswith("no recording note found (no markers and no grid of boards)")
    assert "if it is a note, take it again holding the camera still" in error.reason


def test_a_pdf_page_read_from_a_damaged_picture_is_noted(tmp_path: Path) -> None:
    """PDFium decodes a damaged JPEG picture without a word. When what it makes of it is still found as a
    note, its boards come out inked all over (every cell "written"), which no turn writes: the picture is
    then looked into, and the damage noted, where before the solver only set the boards aside as "a page
    missing, or one from another match?"."""
    import random

    samples = Path(__file__).resolve().parents[2] / "samples" / "alice-bruno" / "light"
    pictures = [Image.open(samples / name).convert("L") for name in ("page-001.jpg", "page-002.jpg")]
    pictures[0].save(tmp_path / "two.pdf", save_all=True, append_images=pictures[1:], resolution=150.0)
    data = bytearray((tmp_path / "two.pdf").read_bytes())
    streams = [(m, data.index(b"endstream", m)) for m in range(len(data)) if data.startswith(b"stream", m)
               and not data.startswith(b"endstream", m - 3)]
    start, end = max(streams[1:], key=lambda s: s[1] - s[0])  # the second page's picture
    rng = random.Random(0)
    cut_from, cut_to = start + (end - start) * 2 // 10, start + (end - start) * 6 // 10
    data[cut_from:cut_to] = bytes(rng.choice((0x00, 0x55, 0xAA)) for _ in range(cut_to - cut_from))
    (tmp_path / "two.pdf").write_bytes(bytes(data))

    outcome = read_pages([tmp_path / "two.pdf"], header=False)
    assert len(outcome.readings.pages) == 2 and not outcome.errors
    assert max(len(board.cells) for board in outcome.readings.pages[1].boards) >= INKED_ALL_OVER
    notice = (f"{tmp_path / 'two.pdf'}: page 2: the data of the page's JPEG picture is damaged (Corrupt JPEG data: "
              "premature end of data segment); read as far as it decodes: check its turns")
    assert outcome.notices == (notice,)
    # A sound page has no board near that: the strict look (a third of rendering the page) is not paid.
    assert max(len(board.cells) for board in outcome.readings.pages[0].boards) < INKED_ALL_OVER // 2


class _StoppedAtPage:
    """A reader that reads as RecordingReader does, until Ctrl-C comes while page ``stop`` is read."""

    def __init__(self, stop: int) -> None:
        self.inner, self.stop, self.pages = RecordingReader(), stop, 0

    def analyse_many(self, cells: Any) -> list[Any]:
        self.pages += 1
        if self.pages == self.stop:
            raise KeyboardInterrupt
        return self.inner.analyse_many(cells)


def test_an_interrupted_read_takes_back_the_overlays_it_drew(a4: Template, tmp_path: Path) -> None:
    """Stopped after a page or two, `read --debug-dir` left their overlays, and the same command run again
    refused to replace them."""
    pages = [_write(tmp_path / f"p{n}.png", make_sheet(a4, written=WRITTEN).image) for n in (1, 2, 3)]
    debug = tmp_path / "debug"
    with pytest.raises(KeyboardInterrupt):
        read_pages(pages, "a4", _StoppedAtPage(3), header=False, debug_dir=debug)
    assert list(debug.iterdir()) == []
    outcome = read_pages(pages, "a4", RecordingReader(), header=False, debug_dir=debug)
    assert len(outcome.readings.pages) == 3
    assert sorted(p.name for p in debug.iterdir()) == ["p1-p1.png", "p2-p1.png", "p3-p1.png"]

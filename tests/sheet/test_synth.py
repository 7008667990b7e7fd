"""Synthetic filled sheets: truth, determinism, damage levels, the command and its bad inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from digitise.cli import cli
from digitise.errors import ExitCode, InputError, OutputError
from digitise.game.record import MatchRecord
from digitise.notation.encode import encode_match
from digitise.notation.marks import BoardMarks
from digitise.notation.mat import format_mat
from digitise.notation.template import Template, apply_homography, load_template, px_per_mm
from digitise.sheet.damage import LEVELS, Degrade
from digitise.sheet.handwriting import GlyphBank
from digitise.sheet.synth import encode_image, render_match_pages, render_page, truth_json, write_synth

from .conftest import detect_markers

LOW_DPI = 60


def test_truth_matches_the_encoded_boards(short_match: MatchRecord, a4: Template, glyph_bank: GlyphBank) -> None:
    pages = render_match_pages(short_match, template=a4, seed=5, degrade="light", glyphs=glyph_bank,
                               name="ann-kato", dpi=LOW_DPI)
    encoded = encode_match(short_match)
    assert len(pages) == -(-len(encoded) // 8)
    seen = 0
    for number, page in enumerate(pages, start=1):
        truth = page.truth
        assert truth["page"] == number and page.number == number
        assert truth["match"] == "ann-kato" and truth["paper"] == "a4" and truth["degrade"] == "light"
        assert truth["seed"] == 5 and truth["dpi"] == LOW_DPI and truth["markers"] is True
        assert truth["header"]["page"] == str(number)
        assert truth["header"]["player_bottom"] == "Ann" and truth["header"]["player_top"] == "Kato"
        assert truth["header"]["match_length"] == "3" and truth["header"]["event"] == "Club night"
        assert truth["image_size"] == [page.image.shape[1], page.image.shape[0]]
        assert page.image.dtype == np.uint8 and page.image.ndim == 3
        for entry in truth["boards"]:
            board = encoded[seen]
            assert entry["index"] == seen % 8 + 1
            assert entry["game"] == board.game
            assert entry["cells"] == {c: list(d) for c, d in board.marks.cells.items()}
            assert entry["crossed"] == board.marks.crossed and entry["arrow"] == board.marks.arrow
            assert entry["actions"] == list(board.actions)
            seen += 1
        json.loads(truth_json(truth))
    assert seen == len(encoded)
    # The match has the marks that matter: crossed dice and a double's arrow.
    assert any(b.marks.crossed for b in encoded) and any(b.marks.arrow for b in encoded)


def test_same_seed_same_bytes_other_seed_other_page(short_match: MatchRecord, a4: Template,
                                                   glyph_bank: GlyphBank) -> None:
    def first_page(seed: int) -> bytes:
        pages = render_match_pages(short_match, template=a4, seed=seed, degrade="medium", glyphs=glyph_bank,
                                   dpi=LOW_DPI)
        return encode_image(pages[0].image, "png", dpi=LOW_DPI) + truth_json(pages[0].truth).encode()

    assert first_page(7) == first_page(7)
    assert first_page(7) != first_page(8)


@pytest.mark.parametrize("level", list(Degrade))
def test_every_level_renders(level: Degrade, a4: Template, glyph_bank: GlyphBank) -> None:
    boards = [(1, BoardMarks({"B7": (6,), "B11": (4,)})), (2, BoardMarks({"centre": (6, 3)}, crossed=True)),
              (3, BoardMarks(arrow=True)), (4, BoardMarks({"Wres": (1, 2)}))]
    page = render_page(boards, page=2, header={"player_top": "Kato"}, template=a4, seed=1, degrade=level,
                       bank=glyph_bank, dpi=80)
    width, height = a4.page_px(80)
    assert page.image.shape == (height, width, 3)
    assert page.truth["markers"] is LEVELS[level].markers
    assert page.truth["header"] == {"player_top": "Kato", "page": "2"}
    assert [b["index"] for b in page.truth["boards"]] == [1, 2, 3, 4]
    if level is Degrade.PHOTOCOPY:
        assert (page.image[:, :, 0] == page.image[:, :, 2]).all()
    # Some ink, some paper: the page is neither blank nor black.
    grey = cv2.cvtColor(page.image, cv2.COLOR_BGR2GRAY)
    assert grey.min() < 120 and np.median(grey) > 150


def test_level_dpi_ranges(a4: Template, glyph_bank: GlyphBank) -> None:
    for level in (Degrade.NONE, Degrade.HEAVY):
        page = render_page([(1, BoardMarks({"W6": (3,)}))], page=1, header={}, template=a4, seed=3, degrade=level,
                           bank=glyph_bank)
        lo, hi = LEVELS[level].dpi
        assert lo <= page.truth["dpi"] <= hi
        assert page.image.shape[:2] == a4.page_px(page.truth["dpi"])[::-1]


@pytest.mark.parametrize("level", [Degrade.NONE, Degrade.MEDIUM, Degrade.HEAVY])
def test_mm_to_px_says_where_the_markers_are(level: Degrade, a4: Template, glyph_bank: GlyphBank, aruco) -> None:  # type: ignore[no-untyped-def]
    dpi = 150
    page = render_page([(1, BoardMarks({"W6": (3,)}))], page=1, header={}, template=a4, seed=11, degrade=level,
                       bank=glyph_bank, dpi=dpi)
    matrix = np.array(page.truth["mm_to_px"])
    found = detect_markers(aruco, page.image)
    assert sorted(found) == [0, 1, 2, 3]
    for marker_id, corners in found.items():
        expected = apply_homography(matrix, a4.marker(marker_id).rect.corners)
        # Within half a millimetre of the truth, after blur, noise and JPEG.
        assert np.abs(corners - expected).max() < 0.5 * px_per_mm(dpi), (marker_id, corners, expected)


def test_photocopy_has_no_markers(a4: Template, glyph_bank: GlyphBank, aruco) -> None:  # type: ignore[no-untyped-def]
    page = render_page([(1, BoardMarks({"W6": (3,)}))], page=1, header={}, template=a4, seed=2,
                       degrade=Degrade.PHOTOCOPY, bank=glyph_bank, dpi=150)
    assert page.truth["markers"] is False
    assert detect_markers(aruco, page.image) == {}


def _ink_mask(image: np.ndarray) -> np.ndarray:
    """Blue or black ink: darker than the grey lines, or clearly coloured."""
    b, g, r = (image[:, :, k].astype(np.int16) for k in range(3))
    return (np.minimum(np.minimum(b, g), r) < 100) | (b - r > 40)


def test_ink_lands_in_the_written_cells(a4: Template, glyph_bank: GlyphBank) -> None:
    dpi = 100
    written = {"B7": (6,), "W12": (5, 5, 5, 5), "Woff": (2,), "B1": (3, 1)}
    page = render_page([(5, BoardMarks(written))], page=1, header={}, template=a4, seed=4, degrade=Degrade.NONE,
                       bank=glyph_bank, dpi=dpi)
    ink = _ink_mask(page.image)
    s = px_per_mm(dpi)
    board = a4.board(5)
    for name, rect in board.cells.items():
        x, y, w, h = rect.inset(rect.w * 0.2).to_px(dpi)
        inside = int(ink[y:y + h, x:x + w].sum())
        if name in written:
            assert inside > 10, name
        elif name != "centre":
            assert inside == 0, name
    # Nothing written elsewhere on the page but the header's page number.
    box = board.rect.inset(-3)
    x, y, w, h = box.to_px(dpi)
    outside = ink.copy()
    outside[y:y + h, x:x + w] = False
    page_field = a4.fields["page"].to_px(dpi)
    outside[page_field[1]:page_field[1] + page_field[3], page_field[0]:page_field[0] + page_field[2]] = False
    # Markers are black: leave them out.
    for m in a4.markers:
        mx, my, mw, mh = m.rect.inset(-1).to_px(dpi)
        outside[my:my + mh, mx:mx + mw] = False
    assert int(outside.sum()) == 0
    assert s > 0


def _write_match(tmp_path: Path, match: MatchRecord) -> Path:
    path = tmp_path / "short.mat"
    path.write_text(format_mat(match), encoding="utf-8")
    return path


def test_write_synth_files(tmp_path: Path, short_match: MatchRecord, digits_png: Path) -> None:
    mat = _write_match(tmp_path, short_match)
    out = tmp_path / "pages"
    written = write_synth(mat, out, seed=2, degrade="medium", glyphs=digits_png, dpi=LOW_DPI)
    names = sorted(p.name for p in out.iterdir())
    pages = -(-len(encode_match(short_match)) // 8)
    assert names == sorted([f"page-{n:03d}.png" for n in range(1, pages + 1)]
                           + [f"page-{n:03d}.truth.json" for n in range(1, pages + 1)] + ["match.mat"])
    assert sorted(written) == sorted(out / n for n in names)
    assert (out / "match.mat").read_bytes() == mat.read_bytes()
    truth = json.loads((out / "page-001.truth.json").read_text(encoding="utf-8"))
    assert truth["match"] == "short" and truth["page"] == 1 and truth["dpi"] == LOW_DPI
    image = cv2.imread(str(out / "page-001.png"))
    assert image.shape[1::-1] == tuple(truth["image_size"])
    # Again into another folder: byte-identical.
    again = tmp_path / "again"
    write_synth(mat, again, seed=2, degrade="medium", glyphs=digits_png, dpi=LOW_DPI)
    for name in names:
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
    # JPEG pages too.
    jpg = tmp_path / "jpg"
    write_synth(mat, jpg, seed=2, degrade="light", glyphs=digits_png, dpi=LOW_DPI, fmt="jpg")
    assert (jpg / "page-001.jpg").read_bytes()[:2] == b"\xff\xd8"


def test_glyph_folder(tmp_path: Path, a4: Template, digits_png: Path) -> None:
    from digitise.sheet.glyphs import load_digit_glyphs

    folder = tmp_path / "glyphs"
    folder.mkdir()
    for digit, images in load_digit_glyphs(digits_png).items():
        for k, image in enumerate(images[:3]):
            cv2.imwrite(str(folder / f"{digit}_{k}.png"), 255 - image)  # dark ink on white
    bank = GlyphBank(load_digit_glyphs(folder))
    page = render_page([(1, BoardMarks({"W6": (3,)}))], page=1, header={}, template=a4, seed=2,
                       degrade=Degrade.NONE, bank=bank, dpi=LOW_DPI)
    assert page.truth["boards"][0]["cells"] == {"W6": [3]}


def test_cli_synth_and_its_bad_inputs(tmp_path: Path, short_match: MatchRecord, digits_png: Path) -> None:
    runner = CliRunner()
    mat = _write_match(tmp_path, short_match)
    out = tmp_path / "out"
    args = ["synth", str(mat), "-o", str(out), "--glyphs", str(digits_png), "--dpi", str(LOW_DPI)]
    result = runner.invoke(cli, [*args, "--degrade", "heavy", "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert (out / "page-001.png").is_file() and (out / "match.mat").is_file()
    before = sorted(p.name for p in tmp_path.iterdir())

    # Exists already: refused, untouched.
    result = runner.invoke(cli, args)
    assert result.exit_code == ExitCode.OUTPUT and "--force" in result.output
    result = runner.invoke(cli, [*args, "--force", "--degrade", "photocopy"])
    assert result.exit_code == 0
    assert json.loads((out / "page-001.truth.json").read_text())["degrade"] == "photocopy"

    bad_mat = tmp_path / "bad.mat"
    bad_mat.write_text("this is not a match\n", encoding="utf-8")
    empty_glyphs = tmp_path / "no-glyphs"
    empty_glyphs.mkdir()
    (empty_glyphs / "readme.txt").write_text("nothing here", encoding="utf-8")
    cases = [
        (["synth", str(mat), "-o", str(tmp_path / "x1"), "--paper", "a3"], "unknown paper 'a3'"),
        (["synth", str(bad_mat), "-o", str(tmp_path / "x2"), "--glyphs", str(digits_png)], "bad.mat"),
        (["synth", str(tmp_path / "missing.mat"), "-o", str(tmp_path / "x3")], "missing.mat"),
        (["synth", str(mat), "-o", str(tmp_path / "x4"), "--glyphs", str(empty_glyphs)], "no usable digit"),
    ]
    for argv, words in cases:
        result = runner.invoke(cli, argv)
        assert result.exit_code == ExitCode.BAD_INPUT, (argv, result.output)
        assert words in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1
    # Nothing half-written: no new folders, no staging leftovers.
    after = sorted(p.name for p in tmp_path.iterdir())
    assert after == sorted([*before, "bad.mat", "no-glyphs"])


def test_unknown_level_and_format(tmp_path: Path, short_match: MatchRecord, digits_png: Path) -> None:
    mat = _write_match(tmp_path, short_match)
    with pytest.raises(InputError, match="damage level"):
        write_synth(mat, tmp_path / "o", degrade="scorched", glyphs=digits_png)
    with pytest.raises(InputError, match="format"):
        write_synth(mat, tmp_path / "o", fmt="gif", glyphs=digits_png)
    assert not (tmp_path / "o").exists()


def test_letter_paper(short_match: MatchRecord, glyph_bank: GlyphBank) -> None:
    letter = load_template("letter")
    pages = render_match_pages(short_match, template=letter, seed=1, degrade="none", glyphs=glyph_bank,
                               dpi=LOW_DPI)
    assert pages[0].truth["paper"] == "letter"
    assert pages[0].image.shape[:2] == letter.page_px(LOW_DPI)[::-1]


def test_names_boards_open_every_game(a4: Template, glyph_bank: GlyphBank) -> None:
    from digitise.game.selfplay import SelfPlayOptions, play_match

    match = play_match(212, SelfPlayOptions(players=("Alice", "Bruno"),
                                            force=frozenset({"double", "take", "drop", "resign"})))
    pages = render_match_pages(match, template=a4, seed=1, degrade="none", glyphs=glyph_bank, dpi=LOW_DPI,
                               names_boards=True)
    boards = [b for p in pages for b in p.truth["boards"]]
    assert len(boards) == len(encode_match(match)) + len(match.games)
    openers = [b for b in boards if b["letters"]]
    assert [b["game"] for b in openers] == [g.number for g in match.games]
    for b in openers:
        assert b["letters"] == {"B1": "Alice", "W1": "Bruno"} and b["cells"] == {} and b["actions"] == []
    assert boards[0]["letters"]


def test_pdf_format(tmp_path: Path, short_match: MatchRecord, digits_png: Path) -> None:
    import pypdfium2 as pdfium

    mat = _write_match(tmp_path, short_match)
    write_synth(mat, tmp_path / "a", degrade="light", seed=1, glyphs=digits_png, dpi=LOW_DPI, fmt="pdf")
    write_synth(mat, tmp_path / "b", degrade="light", seed=1, glyphs=digits_png, dpi=LOW_DPI, fmt="pdf")
    data = (tmp_path / "a" / "pages.pdf").read_bytes()
    assert data == (tmp_path / "b" / "pages.pdf").read_bytes()
    document = pdfium.PdfDocument(data)
    pages = -(-len(encode_match(short_match)) // 8)
    assert len(document) == pages
    assert document[0].get_size()[0] == pytest.approx(297 / 25.4 * 72, abs=0.01)
    assert not list((tmp_path / "a").glob("*.png"))
    assert len(list((tmp_path / "a").glob("*.truth.json"))) == pages


def test_force_replaces_only_its_own_files(tmp_path: Path, short_match: MatchRecord, digits_png: Path) -> None:
    mat = _write_match(tmp_path, short_match)
    out = tmp_path / "out"
    out.mkdir()
    keep = out / "notes.txt"
    keep.write_text("mine", encoding="utf-8")
    stale = out / "page-099.png"
    stale.write_bytes(b"old")
    with pytest.raises(OutputError):
        write_synth(mat, out, glyphs=digits_png, dpi=LOW_DPI)
    write_synth(mat, out, glyphs=digits_png, dpi=LOW_DPI, overwrite=True)
    assert keep.read_text(encoding="utf-8") == "mine" and not stale.exists()
    assert (out / "page-001.png").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_documented_ranges_match_the_code() -> None:
    import re

    from digitise.sheet import damage

    rows = {}
    for line in (damage.__doc__ or "").splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) == 6:
            rows[parts[0]] = parts[1:]
    levels = [Degrade.NONE, Degrade.LIGHT, Degrade.MEDIUM, Degrade.HEAVY, Degrade.PHOTOCOPY]
    for k, level in enumerate(levels):
        r = LEVELS[level]
        lo, hi = r.dpi
        assert rows["dpi"][k] == (str(lo) if lo == hi else f"{lo}-{hi}")
        assert rows["rotation"][k] in {f"±{r.rotation_deg:.1f}°", "0"}
        assert rows["rotation"][k] == "0" or float(rows["rotation"][k][1:-1]) == r.rotation_deg
        for row, span in (("blur sigma (px)", r.blur), ("noise sigma", r.noise)):
            text = rows[row][k]
            documented = (0.0, 0.0) if text == "0" else tuple(float(v) for v in text.split("-"))
            assert documented == span, (level, row)
    readme = Path(__file__).resolve().parents[2] / "samples" / "README.md"
    if readme.is_file():
        assert "photocopy" in readme.read_text(encoding="utf-8")


def test_centre_dice_are_one_line_at_the_writers_size(a4: Template, glyph_bank: GlyphBank,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Unplayed dice go in the long centre strip on one line, as tall as in a point square (the X goes over them)."""
    from digitise.sheet import handwriting
    from digitise.sheet.synth import CENTRE_MAX_HEIGHT, centre_spot

    drawn: list[tuple[float, float]] = []
    original = handwriting.draw_glyph

    def spy(ink: np.ndarray, glyph: np.ndarray, **kwargs: Any) -> tuple[float, float, float, float]:
        drawn.append((kwargs["y"], kwargs["height"]))
        return original(ink, glyph, **kwargs)

    monkeypatch.setattr(handwriting, "draw_glyph", spy)
    s = px_per_mm(200)
    cells = a4.board(1).cells
    centre = cells["centre"].scaled(s)
    point_h = cells["B1"].h * s
    for seed in range(12):
        rng = np.random.default_rng(seed)
        style = handwriting.random_style(rng, mess=0.7)
        ink = np.zeros((int(centre.bottom) + 50, int(centre.right) + 50), np.uint8)
        digit_h = min(point_h * style.size, centre.h * CENTRE_MAX_HEIGHT)
        for digits in ((6, 5), (1, 1, 1, 1), (3, 3, 3)):
            drawn.clear()
            handwriting.write_digits(ink, glyph_bank, digits, centre_spot(centre, digit_h, len(digits), rng), style,
                                     rng, lut=handwriting.weight_lut(style.weight, style.opacity), one_line=True,
                                     digit_h=digit_h)
            baselines = [y for y, _ in drawn]
            # One line: the baselines differ by the hand's jitter only (a second line is a digit lower).
            assert max(baselines) - min(baselines) < 0.4 * digit_h, (seed, digits)
            # Not shrunk: the strip is long enough for the digits at the writer's size.
            assert min(h for _, h in drawn) > 0.75 * digit_h, (seed, digits)

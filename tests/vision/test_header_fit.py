"""Another print's header: its boxes found from its own lines, named by label or order, read through the scan."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from digitise.cli import cli
from digitise.notation.encode import encode_match
from digitise.notation.mat import read_mat_strict
from digitise.notation.template import FIELD_NAMES, load_template
from digitise.sheet.damage import Degrade
from digitise.sheet.prints import PRINTS, OtherPrint
from digitise.sheet.synth import SynthPage, render_page
from digitise.vision.header_fit import by_order, field_of_label, header_boxes
from digitise.vision.layout import fit_layout, reduced
from digitise.vision.page import project
from digitise.vision.read import WORK_LONG_SIDE
from tests.vision.test_layout import DPI, MATCH, blank, glyph_bank

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract program is not installed")
#: What the recorder writes in the header of the pages below.
HEADER = {"event": "Club night", "player_top": "Omar", "player_bottom": "Ines", "match_length": "3"}
#: A header in another order than digitise's own note's, each box labelled.
LABELLED_ORDER = ("player_bottom", "player_top", "match_length", "page", "event", "date", "round")


def fields_placed_within(other: OtherPrint, angle: float = 1.5) -> float:
    """The farthest (mm) a found header field's corner lies from where the print drew it; every field is found."""
    image, truth = blank(other, angle=angle)
    small, factor = reduced(image, WORK_LONG_SIDE)
    fit = fit_layout(small)
    printed = other.template().fields
    assert set(fit.template.fields) == set(FIELD_NAMES)
    worst = 0.0
    for name, rect in fit.template.fields.items():
        want = project(truth, np.array(printed[name].corners))
        got = project(fit.homography, np.array(rect.corners)) / factor
        worst = max(worst, float(np.linalg.norm(want - got, axis=1).max()) / (DPI / 25.4))
    return worst


@pytest.mark.parametrize("name", ["club-small", "photocopy-club"])
def test_the_header_boxes_of_another_print_are_found_by_their_order_where_printed(name: str) -> None:
    # Turned, the page is worked on at 3 px per mm: a box's side is placed to a pixel or so.
    assert fields_placed_within(PRINTS[name]) < 1.0
    assert fields_placed_within(PRINTS[name], angle=0.0) < 0.5


@needs_tesseract
def test_printed_labels_name_the_header_boxes_in_any_order() -> None:
    other = replace(PRINTS["club-small"], header_order=LABELLED_ORDER, header_labels=True)
    # Upright, the page is worked on at 6 px per mm: labels of 2.4 mm are read there.
    assert fields_placed_within(other, angle=0.0) < 0.5


def test_a_print_without_a_header_has_no_header_fields() -> None:
    image, _ = blank(PRINTS["club-large"])
    small, _ = reduced(image, WORK_LONG_SIDE)
    assert not fit_layout(small).template.fields


def test_boxes_of_another_count_are_not_named_by_their_order() -> None:
    binary = np.zeros((400, 1200), np.uint8)
    for k in range(5):
        cv2.rectangle(binary, (20 + 230 * k, 300), (220 + 230 * k, 350), 1, 2)
    rows = header_boxes(binary, [], pitch=50.0)
    assert [len(row) for row in rows] == [5]
    assert by_order(rows) == {}


def test_a_label_names_one_field_or_none() -> None:
    assert field_of_label("Black (top)") == "player_top"
    assert field_of_label("Match to") == "match_length"
    assert field_of_label("Whlte") == "player_bottom"
    assert field_of_label("Notes") is None
    assert field_of_label("Black / White") is None


def page_with_header(other: OtherPrint, header: dict[str, str]) -> SynthPage:
    """The sample match's first boards on ``other``, the header written (medium damage; skips without glyphs)."""
    boards = [(k + 1, board) for k, board in enumerate(encode_match(read_mat_strict(MATCH))[:other.boards])]
    return render_page(boards, page=1, header=header, template=other.template(), seed=5, degrade=Degrade.MEDIUM,
                       bank=glyph_bank(), dpi=DPI, other_print=other.extras())


def scan(tmp_path: Path, page: SynthPage, *options: str) -> tuple[str, str]:
    """``digitise scan`` of the page: the .mat written and what it said on stderr."""
    image, mat = tmp_path / "page.png", tmp_path / "m.mat"
    cv2.imwrite(str(image), page.image)
    done = CliRunner().invoke(cli, ["scan", str(image), "-o", str(mat), *options])
    assert mat.exists(), done.output
    return mat.read_text(encoding="utf-8"), done.stderr


@needs_tesseract
def test_another_print_s_header_gives_the_names_and_length_through_the_scan(tmp_path: Path) -> None:
    text, said = scan(tmp_path, page_with_header(PRINTS["club-small"], HEADER))
    assert " 3 point match" in text
    assert "Ines : 0" in text and "Omar : 0" in text
    assert "player names: not given" not in said and "match length: not given" not in said


@needs_tesseract
def test_a_layout_file_of_another_print_carries_its_header(tmp_path: Path) -> None:
    page = page_with_header(PRINTS["photocopy-club"], HEADER)
    image, layout = tmp_path / "page.png", tmp_path / "club-note.json"
    cv2.imwrite(str(image), page.image)
    overlay = tmp_path / "fit.png"
    done = CliRunner().invoke(cli, ["layout", str(image), "-o", str(layout), "--overlay", str(overlay)])
    assert done.exit_code == 0, done.output
    assert "header boxes found" in done.output and "no header" not in done.output
    assert set(load_template(layout).fields) == set(FIELD_NAMES)
    # The overlay draws the fields in purple, to be checked by eye.
    drawn = cv2.imread(str(overlay))
    assert np.count_nonzero(np.all(np.abs(drawn.astype(int) - (200, 0, 160)) < 30, axis=2)) > 500
    (tmp_path / "scan").mkdir()
    text, _ = scan(tmp_path / "scan", page, "--template", str(layout))
    assert " 3 point match" in text and "Ines : 0" in text and "Omar : 0" in text


def test_a_print_without_a_header_still_writes_bottom_and_top_and_says_why(tmp_path: Path) -> None:
    page = page_with_header(PRINTS["club-large"], HEADER)
    text, said = scan(tmp_path, page)
    assert "Bottom : 0" in text and "Top : 0" in text
    assert "player names: not given and not read from any page header; written as Bottom and Top" in said
    layout = tmp_path / "club-large.json"
    done = CliRunner().invoke(cli, ["layout", str(tmp_path / "page.png"), "-o", str(layout)])
    assert done.exit_code == 0, done.output
    assert "no header boxes found: give the names and length with --players and --length" in done.output
    assert not load_template(layout).fields

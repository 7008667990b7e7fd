"""The header's text fields: cut only when written, read by one tesseract run for many pages."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from digitise.notation.template import Template
from digitise.vision import header
from digitise.vision import read as read_mod
from digitise.vision.header import TESSERACT_MISSING, ocr_fields, ocr_pages, text_field_images
from digitise.vision.ink import CELL_MARGIN_MM
from digitise.vision.read import read_pages

from .conftest import RecordingReader, make_sheet

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract program is not installed")


def _field(text: str, width: int = 600, height: int = 90) -> np.ndarray:
    """A one-line field as the OCR sees it: dark print on white, grey."""
    image = np.full((height, width), 255, np.uint8)
    cv2.putText(image, text, (12, height - 25), cv2.FONT_HERSHEY_SIMPLEX, 1.6, 20, 3, cv2.LINE_AA)
    return image


def _write_field(image: np.ndarray, template: Template, name: str, text: str) -> None:
    """Print ``text`` into header field ``name`` of a rendered page (pixels at the template's scale)."""
    s = image.shape[1] / template.page_mm[0]
    rect = template.fields[name]
    cv2.putText(image, text, (int((rect.x + 3) * s), int((rect.bottom - 1.5) * s)), cv2.FONT_HERSHEY_SIMPLEX,
                0.25 * s, 20, max(1, int(0.12 * s)))


def _spy_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Record the size of every image given to tesseract."""
    runs: list[tuple[int, int]] = []
    real = header.tesseract_words

    def spy(image: np.ndarray, config: str) -> Any:
        runs.append(image.shape[:2])
        return real(image, config)

    monkeypatch.setattr(header, "tesseract_words", spy)
    return runs


@needs_tesseract
def test_many_pages_are_read_in_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _spy_runs(monkeypatch)
    pages = [[("event", _field("OPEN")), ("player_top", _field("KATO"))], [], [("player_bottom", _field("ANN"))]]
    out = ocr_pages(pages)
    assert len(runs) == 1
    assert [sorted(p) for p in out] == [["event", "player_top"], [], ["player_bottom"]]
    assert out[0]["event"]["value"] == "OPEN" and out[0]["player_top"]["value"] == "KATO"
    assert out[2]["player_bottom"]["value"] == "ANN"
    assert all(0.0 <= f["confidence"] <= 1.0 for p in out for f in p.values())


@needs_tesseract
def test_one_page_reads_as_in_a_batch() -> None:
    fields = [("event", _field("OPEN")), ("round", _field("FINAL"))]
    alone = ocr_fields(fields)
    batch = ocr_pages([[("date", _field("MAY"))], fields])[1]
    assert {k: v["value"] for k, v in alone.items()} == {k: v["value"] for k, v in batch.items()}
    assert alone["round"]["value"] == "FINAL"


def test_very_many_fields_take_a_few_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []
    monkeypatch.setattr(header, "tesseract_words", lambda image, config: runs.append(image.shape[0]) or None)
    pages = [[("event", _field("X"))] for _ in range(header.MAX_FIELDS_PER_RUN + 3)]
    assert ocr_pages(pages) == [{} for _ in pages]
    assert len(runs) == 2


@pytest.fixture
def program_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """tesseract as the program (pytesseract), as on a machine without tesserocr."""
    monkeypatch.setattr(header, "tesseract_engine", lambda psm: None)


def test_missing_tesseract_warns_on_every_page(monkeypatch: pytest.MonkeyPatch, program_only: None) -> None:
    pytesseract = pytest.importorskip("pytesseract")
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    out = ocr_pages([[("event", _field("OPEN"))], [("date", _field("MAY"))]])
    assert out[0]["event"]["warning"] == TESSERACT_MISSING
    assert out[1]["date"]["value"] == "" and out[1]["date"]["warning"] == TESSERACT_MISSING


def test_tesseract_runs_with_one_thread_and_the_environment_is_restored(monkeypatch: pytest.MonkeyPatch,
                                                                        program_only: None) -> None:
    pytesseract = pytest.importorskip("pytesseract")
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    seen: list[str | None] = []

    def fake(image: np.ndarray, config: str = "", output_type: Any = None) -> dict[str, list[Any]]:
        seen.append(os.environ.get("OMP_THREAD_LIMIT"))
        return {"text": [], "conf": [], "top": [], "height": [], "left": []}

    monkeypatch.setattr(pytesseract, "image_to_data", fake)
    assert ocr_fields([("event", _field("OPEN"))]) == {}
    assert seen == ["1"]
    assert "OMP_THREAD_LIMIT" not in os.environ
    # A limit the user set is left alone.
    monkeypatch.setenv("OMP_THREAD_LIMIT", "2")
    ocr_fields([("event", _field("OPEN"))])
    assert seen[-1] == "2" and os.environ["OMP_THREAD_LIMIT"] == "2"


needs_tesserocr = pytest.mark.skipif(header.tessdata_folder() is None, reason="tesseract's English model is not installed")


@needs_tesserocr
def test_the_library_loads_the_model_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    tesserocr = pytest.importorskip("tesserocr")
    started: list[int] = []
    real = tesserocr.PyTessBaseAPI

    def counting(*args: Any, **kwargs: Any) -> Any:
        started.append(kwargs["psm"])
        return real(*args, **kwargs)

    monkeypatch.setattr(tesserocr, "PyTessBaseAPI", counting)
    header.tesseract_engine.cache_clear()
    try:
        first = ocr_pages([[("event", _field("OPEN"))]])
        second = ocr_pages([[("round", _field("FINAL"))], [("date", _field("MAY"))]])
    finally:
        header.tesseract_engine.cache_clear()
    assert started == [6]
    assert first[0]["event"]["value"] == "OPEN"
    assert second[0]["round"]["value"] == "FINAL" and second[1]["date"]["value"] == "MAY"


@needs_tesseract
@needs_tesserocr
def test_the_library_and_the_program_read_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tesserocr")
    pages = [[("event", _field("OPEN")), ("player_top", _field("KATO"))], [("player_bottom", _field("ANN LEE"))]]
    library = ocr_pages(pages)
    monkeypatch.setattr(header, "tesseract_engine", lambda psm: None)
    program = ocr_pages(pages)
    assert [{k: v["value"] for k, v in p.items()} for p in library] == [{k: v["value"] for k, v in p.items()} for p in program]
    assert library[1]["player_bottom"]["value"] == "ANN LEE"


def test_a_failing_library_leaves_the_fields_unread(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def SetImageBytes(self, *args: Any) -> None:
            raise RuntimeError("Failed to set image")

    monkeypatch.setattr(header, "tesseract_engine", lambda psm: Broken())
    assert ocr_fields([("event", _field("OPEN"))]) == {}


def test_without_a_model_folder_the_program_is_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))
    monkeypatch.setattr(header, "TESSDATA_DIRS", ())
    header.tesseract_engine.cache_clear()
    try:
        assert header.tessdata_folder() is None
        assert header.tesseract_engine(6) is None
        runs: list[str] = []
        pytesseract = pytest.importorskip("pytesseract")
        monkeypatch.setattr(pytesseract, "image_to_data", lambda image, config="", output_type=None: runs.append(config)
                            or {"text": ["OPEN"], "conf": ["91"], "top": [30], "height": [40], "left": [40]})
        assert ocr_fields([("event", _field("OPEN"))]) == {"event": {"value": "OPEN", "confidence": 0.91}}
        assert runs == ["--psm 6"]
    finally:
        header.tesseract_engine.cache_clear()


def test_only_written_text_fields_are_cut(a4: Template) -> None:
    image = make_sheet(a4).image.copy()
    _write_field(image, a4, "event", "OPEN")
    s = image.shape[1] / a4.page_mm[0]
    cut = text_field_images(image, np.diag([s, s, 1.0]), a4)
    assert [name for name, _ in cut] == ["event"]
    rect = a4.fields["event"]
    field = cut[0][1]
    assert field.ndim == 2 and field.dtype == np.uint8
    # The written stretch only (the box's own height and the ink margin), not the whole box.
    assert field.shape[0] == round((rect.h + 2 * CELL_MARGIN_MM) * header.OCR_PX_PER_MM)
    assert field.shape[1] < 0.6 * rect.w * header.OCR_PX_PER_MM
    # The handwriting dark on clean white: no box lines left.
    assert int(field.min()) < 100
    assert float((field == 255).mean()) > 0.8
    assert int(field[:, :3].min()) == 255 and int(field[:, -3:].min()) == 255


@needs_tesseract
def test_read_pages_reads_every_header_with_one_tesseract_run(a4: Template, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _spy_runs(monkeypatch)
    paths = []
    for k, name in enumerate(("OPEN", "FINAL")):
        image = make_sheet(a4).image.copy()
        _write_field(image, a4, "event", name)
        path = tmp_path / f"page{k}.png"
        assert cv2.imwrite(str(path), image)
        paths.append(path)
    outcome = read_pages(paths, a4, RecordingReader(), header=True)
    assert len(runs) == 1
    assert [p.header["event"]["value"] for p in outcome.readings.pages] == ["OPEN", "FINAL"]
    # The page's own fields stay beside the text.
    assert all(p.header["method"]["value"] == "markers" for p in outcome.readings.pages)


def test_a_matchs_fields_are_read_from_its_first_written_headers_only(a4: Template, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cut: list[int] = []
    real = header.text_field_images

    def spy(image: np.ndarray, homography: np.ndarray, template: Template,
            **kwargs: Any) -> list[tuple[str, np.ndarray]]:
        cut.append(1)
        return real(image, homography, template, **kwargs)

    monkeypatch.setattr(header, "text_field_images", spy)
    monkeypatch.setattr(header, "ocr_pages", lambda pages: [{name: {"value": "X", "confidence": 1.0} for name, _ in p}
                                                            for p in pages])
    paths = []
    # A blank header first (it does not count), then pages that all repeat the event.
    for k in range(read_mod.HEADER_PAGES + 3):
        image = make_sheet(a4).image.copy()
        if k > 0:
            _write_field(image, a4, "event", "OPEN")
        path = tmp_path / f"page{k}.png"
        assert cv2.imwrite(str(path), image)
        paths.append(path)
    outcome = read_pages(paths, a4, RecordingReader(), header=True)
    assert len(cut) == 1 + read_mod.HEADER_PAGES
    assert ["event" in p.header for p in outcome.readings.pages] == [False] + [True] * read_mod.HEADER_PAGES + [False] * 2
    # Every page still says how it was found.
    assert all(p.header["method"]["value"] == "markers" for p in outcome.readings.pages)


@pytest.mark.parametrize(("word", "kept"), [
    ("|", ""), ("-", ""), ("‘Bruno", "Bruno"), ("Alice’", "Alice"), ("|Kato|", "Kato"), ("Me:", "Me"),
    ("Jean-Luc", "Jean-Luc"), ("O'Neil", "O'Neil"), ("Jr.", "Jr."), ("(NL)", "(NL)"), ("1st", "1st"),
])
def test_stray_marks_at_a_name_words_ends_are_dropped(word: str, kept: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(header, "tesseract_words", lambda image, config: {
        "text": [word], "conf": [80], "top": [24 + 10], "height": [40], "left": [10]})
    out = ocr_fields([("player_top", _field("X"))])
    assert out == ({"player_top": {"value": kept, "confidence": 0.8}} if kept else {})


def test_a_name_field_loses_a_stray_bar_and_a_date_keeps_its_slashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shadow's edge across the name field of a phone photo was read as a word "|": the player was
    named "Alice |" in the .mat. Words of a name field without a letter or digit are dropped."""
    field = _field("X")
    first, second = 24 + 10, 24 + field.shape[0] + 24 + 10  # a line inside each stacked field's band

    def fake(image: np.ndarray, config: str) -> dict[str, list[Any]]:
        return {"text": ["Alice", "|", "12", "/", "5"], "conf": [90, 40, 90, 60, 90],
                "top": [first, first, second, second, second], "height": [40] * 5, "left": [10, 200, 10, 80, 120]}

    monkeypatch.setattr(header, "tesseract_words", fake)
    out = ocr_fields([("player_bottom", field), ("date", field)])
    assert out["player_bottom"]["value"] == "Alice" and out["player_bottom"]["confidence"] == 0.9
    assert out["date"]["value"] == "12 / 5"

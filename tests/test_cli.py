"""Every command with bad input: one line ``digitise: error: FILE: reason``, the documented exit code, no traceback.

The exit codes are docs/exit-codes.md's table (:class:`digitise.errors.ExitCode`):
0 ok, 1 flagged, 2 usage, 3 bad input, 4 output exists or unwritable,
5 missing program, 10 internal error. A traceback appears only with ``-v``.
These inputs all fail before the glyph model is needed, so the file runs
without it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from click.testing import CliRunner, Result

from digitise.cli import cli
from digitise.errors import ExitCode

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_MAT = ROOT / "samples" / "chen-dana.mat"
#: Real reader output of a benchmark match (tests/data/README.md): a readings file to solve.
READINGS = ROOT / "tests" / "data" / "heavy_bearoff_misread.readings.json"


def _readings_with_headers(target: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """READINGS with every page's header changed by ``edit``, written to ``target``."""
    readings = json.loads(READINGS.read_text())
    for page in readings["pages"]:
        edit(page["header"])
    target.write_text(json.dumps(readings))
    return target


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_one_error(result: Result, code: ExitCode, *needles: str) -> str:
    """Exactly one stderr line, ``digitise: error: ...`` holding every needle; the exit code; no traceback."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("digitise: error: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    assert "Traceback" not in result.output
    assert result.exit_code == int(code), (result.exit_code, result.output)
    return line


@pytest.fixture
def bad(tmp_path: Path) -> dict[str, Path]:
    """Files that are not what they claim to be, each a classic of a real scan folder."""
    files: dict[str, Path] = {}
    files["text.png"] = tmp_path / "text.png"
    files["text.png"].write_text("this is not an image\n")
    ok, png = cv2.imencode(".png", (np.random.default_rng(0).random((300, 300)) * 255).astype(np.uint8))
    assert ok
    files["truncated.png"] = tmp_path / "truncated.png"
    files["truncated.png"].write_bytes(png.tobytes()[: len(png) // 2])
    jpg = (ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg").read_bytes()
    files["truncated.jpg"] = tmp_path / "truncated.jpg"
    files["truncated.jpg"].write_bytes(jpg[:3000])
    files["empty.pdf"] = tmp_path / "empty.pdf"
    files["empty.pdf"].write_bytes(b"%PDF-1.4\n%%EOF\n")
    files["notes.txt"] = tmp_path / "notes.txt"
    files["notes.txt"].write_text("page 1 is in the other folder\n")
    files["blank.png"] = tmp_path / "blank.png"
    cv2.imwrite(str(files["blank.png"]), np.full((1240, 1754), 255, np.uint8))
    files["bad.mat"] = tmp_path / "bad.mat"
    files["bad.mat"].write_text(" 3 point match\n\n Game 1\n Chen : 0    Dana : 0\n  1) 31: 8/5 6/5   99: 1/2\n")
    files["bad.json"] = tmp_path / "bad.json"
    files["bad.json"].write_text(json.dumps({"pages": [{"page": 1, "boards": "oops"}]}))
    files["broken.json"] = tmp_path / "broken.json"
    files["broken.json"].write_text('{"pages": [\n')
    return files


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("text.png", "not an image"),
        ("truncated.png", "truncated"),
        ("truncated.jpg", "truncated"),
        ("empty.pdf", "PDF"),
        ("notes.txt", "not an image"),
        ("blank.png", "blank page"),
    ],
)
@pytest.mark.parametrize("command", ["scan", "read"])
def test_bad_page_is_one_line_and_exit_3(bad: dict[str, Path], tmp_path: Path, command: str, name: str,
                                         reason: str) -> None:
    suffix = ".mat" if command == "scan" else ".json"
    result = run(command, bad[name], "-o", tmp_path / f"out{suffix}")
    assert_one_error(result, ExitCode.BAD_INPUT, name, reason)
    assert not (tmp_path / f"out{suffix}").exists()


def test_synth_malformed_mat_names_the_line(bad: dict[str, Path], tmp_path: Path) -> None:
    result = run("synth", bad["bad.mat"], "-o", tmp_path / "pages")
    assert_one_error(result, ExitCode.BAD_INPUT, "bad.mat", "line 5", "dice")
    assert not (tmp_path / "pages").exists()


def test_synth_text_file_is_not_a_match(bad: dict[str, Path], tmp_path: Path) -> None:
    result = run("synth", bad["notes.txt"], "-o", tmp_path / "pages")
    assert_one_error(result, ExitCode.BAD_INPUT, "notes.txt", "no match found")


def test_solve_malformed_readings_names_the_json_path(bad: dict[str, Path], tmp_path: Path) -> None:
    result = run("solve", bad["bad.json"], "-o", tmp_path / "out.mat")
    assert_one_error(result, ExitCode.BAD_INPUT, "bad.json", "$.pages[0].boards", "list")
    assert not (tmp_path / "out.mat").exists()


def test_solve_broken_json_names_line_and_column(bad: dict[str, Path], tmp_path: Path) -> None:
    result = run("solve", bad["broken.json"], "-o", tmp_path / "out.mat")
    assert_one_error(result, ExitCode.BAD_INPUT, "broken.json", "line 2 column 1", "not JSON")


def test_batch_input_must_be_a_folder(bad: dict[str, Path], tmp_path: Path) -> None:
    assert_one_error(run("batch", bad["notes.txt"], "-o", tmp_path / "out"), ExitCode.BAD_INPUT,
                     "notes.txt", "not a folder")
    assert_one_error(run("batch", tmp_path / "missing", "-o", tmp_path / "out"), ExitCode.BAD_INPUT,
                     "missing", "no such folder")


def test_batch_on_a_cluster_that_cannot_be_had_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "m1.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    monkeypatch.setattr("digitise.cluster.CONNECT_SECONDS", 1.0)
    if importlib.util.find_spec("distributed") is not None:  # the dask extra installed
        assert_one_error(run("batch", scans, "-o", tmp_path / "out", "--scheduler", "tcp://127.0.0.1:9"),
                         ExitCode.USAGE, "tcp://127.0.0.1:9: no Dask scheduler answers there")
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert_one_error(run("batch", scans, "-o", tmp_path / "out", "--scheduler", "tcp://127.0.0.1:9"),
                     ExitCode.MISSING_DEPENDENCY, "--scheduler needs Dask distributed", "pip install 'digitise[dask]'")


def test_review_bad_report(bad: dict[str, Path]) -> None:
    result = run("review", bad["notes.txt"], "--no-browser", "--port", "0")
    assert_one_error(result, ExitCode.BAD_INPUT, "notes.txt", "line 1 column 1: not JSON")


def test_train_bad_glyph_source(bad: dict[str, Path], tmp_path: Path) -> None:
    result = run("train", "-o", tmp_path / "model", "--glyphs", bad["notes.txt"], "--cells", "100", "--epochs", "1")
    # Without the `train` extra (PyTorch, or onnx beside it) that is a missing program; with it, the glyph
    # file is bad input.
    if result.exit_code == int(ExitCode.MISSING_DEPENDENCY):
        line = assert_one_error(result, ExitCode.MISSING_DEPENDENCY, "is needed", "digitise[train]")
        assert "PyTorch" in line or "onnx" in line, line
    else:
        assert_one_error(result, ExitCode.BAD_INPUT, "notes.txt", "not an image")


@pytest.mark.parametrize(
    "args",
    [
        ["template", "--paper", "a5", "-o", "{tmp}/blank.pdf"],
        ["synth", str(SAMPLE_MAT), "--paper", "a5", "-o", "{tmp}/pages"],
        ["scan", "{blank}", "--template", "a5", "-o", "{tmp}/out.mat"],
    ],
    ids=["template", "synth", "scan"],
)
def test_unknown_paper(bad: dict[str, Path], tmp_path: Path, args: Sequence[str]) -> None:
    filled = [a.format(tmp=tmp_path, blank=bad["blank.png"]) for a in args]
    line = assert_one_error(run(*filled), ExitCode.BAD_INPUT, "unknown paper 'a5'")
    assert "a4" in line and "letter" in line  # it lists the papers it knows


@pytest.mark.parametrize(
    "args",
    [
        ["scan", "{blank}", "-o", "{out}.mat"],
        ["scan", "{blank}", "-o", "{tmp}/fresh.mat", "--report", "{out}.json"],
        ["read", "{blank}", "-o", "{out}.json"],
        ["solve", "{bad_json}", "-o", "{out}.mat"],
        ["template", "-o", "{out}.pdf"],
        ["synth", str(SAMPLE_MAT), "-o", "{out}"],
    ],
    ids=["scan", "scan-report", "read", "solve", "template", "synth"],
)
def test_existing_output_without_force_is_exit_4(bad: dict[str, Path], tmp_path: Path, args: Sequence[str]) -> None:
    out = tmp_path / "existing"
    for target in (out.with_suffix(".mat"), out.with_suffix(".json"), out.with_suffix(".pdf")):
        target.write_text("keep me\n")
    out.mkdir()
    (out / "keep.txt").write_text("keep me\n")
    filled = [a.format(tmp=tmp_path, out=out, blank=bad["blank.png"], bad_json=bad["bad.json"]) for a in args]
    assert_one_error(run(*filled), ExitCode.OUTPUT, "existing", "exists already", "--force")
    # Nothing was touched.
    for target in (out.with_suffix(".mat"), out.with_suffix(".json"), out.with_suffix(".pdf"), out / "keep.txt"):
        assert target.read_text() == "keep me\n"
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_usage_error_is_exit_2(tmp_path: Path) -> None:
    result = run("scan", tmp_path / "page.png")  # no -o
    assert result.exit_code == int(ExitCode.USAGE)
    assert "Missing option '-o'" in result.stderr
    assert "Traceback" not in result.output


def test_traceback_only_with_verbose(bad: dict[str, Path], tmp_path: Path) -> None:
    quiet = run("scan", bad["notes.txt"], "-o", tmp_path / "out.mat")
    loud = run("-v", "scan", bad["notes.txt"], "-o", tmp_path / "out.mat")
    assert "Traceback" not in quiet.stderr
    assert "Traceback (most recent call last)" in loud.stderr
    assert loud.exit_code == quiet.exit_code == int(ExitCode.BAD_INPUT)
    # The one-line message still ends the verbose output.
    assert loud.stderr.splitlines()[-1] == quiet.stderr.strip()


def test_a_bug_is_exit_10_with_a_hint(monkeypatch: pytest.MonkeyPatch, bad: dict[str, Path], tmp_path: Path) -> None:
    import digitise.pipeline

    def broken_scan(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(digitise.pipeline, "scan", broken_scan)
    quiet = run("scan", bad["blank.png"], "-o", tmp_path / "out.mat")
    assert quiet.exit_code == int(ExitCode.INTERNAL)
    assert quiet.stderr.splitlines() == ["digitise: internal error: ZeroDivisionError: a bug (rerun with -v)"]
    loud = run("-v", "scan", bad["blank.png"], "-o", tmp_path / "out.mat")
    assert loud.exit_code == int(ExitCode.INTERNAL)
    assert "Traceback (most recent call last)" in loud.stderr


def test_missing_program_is_exit_5(monkeypatch: pytest.MonkeyPatch, bad: dict[str, Path], tmp_path: Path) -> None:
    import digitise.pipeline
    from digitise.errors import MissingDependencyError

    def no_tesseract(*args: object, **kwargs: object) -> None:
        raise MissingDependencyError("tesseract is not installed (apt-get install tesseract-ocr)", "tesseract")

    monkeypatch.setattr(digitise.pipeline, "scan", no_tesseract)
    result = run("scan", bad["blank.png"], "-o", tmp_path / "out.mat")
    assert_one_error(result, ExitCode.MISSING_DEPENDENCY, "tesseract", "not installed")


def test_train_cellnet_passes_its_options_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`train --cellnet` hands what it was asked (augmentation, counts, cache) to the trainer, nothing else."""
    from digitise.training import cellnet

    seen: list[cellnet.CellNetOptions] = []

    def fake_train(options: cellnet.CellNetOptions, progress: object = None) -> cellnet.CellNetReport:
        seen.append(options)
        return cellnet.CellNetReport((), {})

    monkeypatch.setattr(cellnet, "train_cellnets", fake_train)
    result = run("train", "--cellnet", "-o", tmp_path, "--augment", "--matches", "280", "--only", "point",
                 "--multi-matches", "300", "--cache", tmp_path / "cache", "--second", "--font-hand")
    assert result.exit_code == 0, result.output
    (options,) = seen
    assert options.augment and options.matches == 280 and options.kinds == ("point",)
    assert options.second and options.font_hand
    assert options.multi_matches == 300
    assert options.cache == tmp_path / "cache" and options.epochs == cellnet.POINT_EPOCHS
    assert run("train", "--cellnet", "-o", tmp_path).exit_code == 0 and not seen[-1].augment
    assert not seen[-1].font_hand and not seen[-1].second
    assert seen[-1].multi_matches == 0  # none as shipped


def test_a_player_name_a_mat_cannot_hold_is_a_usage_error(tmp_path: Path) -> None:
    result = run("scan", tmp_path / "page.png", "-o", tmp_path / "out.mat", "--players", "Ann,Ka:to")
    assert result.exit_code == int(ExitCode.USAGE)
    assert "colon" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["scan", "{blank}", "-o", "{tmp}/x.json", "--report", "{tmp}/x.json"], ["x.json", "named for two outputs"]),
        (["scan", "{blank}", "-o", "{tmp}/w.report.readings.json", "--report", "{tmp}/w.report.json"],
         ["w.report.readings.json", "named for two outputs"]),
        (["solve", "{readings}", "-o", "{tmp}/y.mat", "--report", "{tmp}/y.mat"], ["y.mat", "named for two outputs"]),
    ],
    ids=["scan-report", "scan-readings", "solve-report"],
)
def test_one_file_named_for_two_outputs_is_refused_before_any_is_written(
        bad: dict[str, Path], tmp_path: Path, args: Sequence[str], needles: Sequence[str]) -> None:
    filled = [a.format(tmp=tmp_path, blank=bad["blank.png"], readings=READINGS) for a in args]
    assert_one_error(run(*filled), ExitCode.OUTPUT, *needles)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(bad)  # nothing written


def test_the_readings_kept_beside_a_report_are_not_replaced_unasked(bad: dict[str, Path], tmp_path: Path) -> None:
    kept = tmp_path / "m.report.readings.json"
    kept.write_text("keep me\n")
    result = run("scan", bad["blank.png"], "-o", tmp_path / "m.mat", "--report", tmp_path / "m.report.json")
    assert_one_error(result, ExitCode.OUTPUT, "m.report.readings.json", "exists already")
    assert kept.read_text() == "keep me\n" and not (tmp_path / "m.mat").exists()


def test_an_output_under_a_file_names_the_file(bad: dict[str, Path], tmp_path: Path) -> None:
    result = run("solve", READINGS, "-o", bad["notes.txt"] / "out.mat")
    assert_one_error(result, ExitCode.OUTPUT, "notes.txt is a file, not a folder")


def test_solve_refuses_corrections_that_do_not_fit_as_scan_does(tmp_path: Path) -> None:
    corrections = tmp_path / "c.json"
    corrections.write_text(json.dumps({"1:9": "31: 8/5 6/5"}))
    result = run("solve", READINGS, "-o", tmp_path / "out.mat", "--corrections", corrections)
    assert_one_error(result, ExitCode.BAD_INPUT, "c.json")
    assert not (tmp_path / "out.mat").exists()


def test_names_and_length_set_on_the_review_page_win_over_the_command_line(tmp_path: Path) -> None:
    corrections = tmp_path / "c.json"
    corrections.write_text(json.dumps({"format": "digitise-corrections", "version": 2,
                                       "match": {"players": ["Ann", "Ben"], "length": 9}, "corrections": {}}))
    result = run("solve", READINGS, "-o", tmp_path / "out.mat", "--report", tmp_path / "out.json",
                 "--players", "Xavier,Yann", "--length", "3", "--corrections", corrections)
    assert result.exit_code in (ExitCode.OK, ExitCode.FLAGGED), result.output
    text = (tmp_path / "out.mat").read_text()
    assert text.splitlines()[0].strip() == "9 point match"
    assert "Ann : 0" in text and "Ben : 0" in text and "Xavier" not in text
    # The review page re-solves with what the scan was told: the reviewer's names.
    report = json.loads((tmp_path / "out.json").read_text())
    assert (report["players"], report["length"]) == (["Ann", "Ben"], 9)


def test_a_match_length_gnubg_cannot_hold_is_a_usage_error(tmp_path: Path) -> None:
    result = run("solve", READINGS, "-o", tmp_path / "out.mat", "--length", "65")
    assert result.exit_code == int(ExitCode.USAGE) and "--length" in result.stderr
    assert not (tmp_path / "out.mat").exists()


@pytest.mark.parametrize("command", ["synth", "train"])
def test_a_negative_seed_is_a_usage_error(command: str, tmp_path: Path) -> None:
    # NumPy refuses negative seeds: said as a usage error before any work, not an internal error.
    args = ("synth", SAMPLE_MAT, "-o", tmp_path / "out") if command == "synth" else ("train", "-o", tmp_path / "m")
    result = run(*args, "--seed", "-1")
    assert result.exit_code == int(ExitCode.USAGE), result.output
    assert "--seed" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "m").exists()


def test_a_length_and_names_read_nowhere_are_noted_and_flagged(tmp_path: Path) -> None:
    bare = _readings_with_headers(tmp_path / "bare.json", lambda header: header.clear())
    result = run("solve", bare, "-o", tmp_path / "out.mat")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    assert "note: match length: not given" in result.stderr and "note: player names: not given" in result.stderr
    given = run("solve", bare, "-o", tmp_path / "given.mat", "--length", "5", "--players", "Ann,Bo")
    assert "note: match length" not in given.stderr and "note: player names" not in given.stderr
    # The readings are of a 3-point match, won 3-2: at 5 points the record stops short, the only note.
    assert [line for line in given.stderr.splitlines() if "note:" in line] == [
        ("digitise: note: the record ends at Ann 2, Bo 3, before either player reached 5 points: pages missing "
        "at the end, or a shorter match (--length)?")]


def test_a_geometry_file_that_is_not_text_is_bad_input(bad: dict[str, Path], tmp_path: Path) -> None:
    result = run("template", "--paper", bad["blank.png"], "-o", tmp_path / "t.pdf")
    assert_one_error(result, ExitCode.BAD_INPUT, "blank.png", "not UTF-8")


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"games": [1, 2]}, "$.games[0]"),
        ({"games": [{"turns": "x"}]}, "$.games[0].turns"),
        ({"games": [{"turns": [{"page": "1", "board": 1}]}]}, "$.games[0].turns[0].page"),
        ({"games": [], "sources": 5}, "$.sources"),
        ({"games": [], "length": -5}, "$.length"),
        ({"games": [], "players": ["Ann", "Ka:to"]}, "$.players"),
    ],
    ids=["game", "turns", "page", "sources", "length", "players"],
)
def test_review_refuses_a_malformed_report_at_once(tmp_path: Path, doc: dict[str, object], where: str) -> None:
    """Not a server that answers every request with a traceback: one line, the JSON path, exit 3."""
    report = tmp_path / "r.json"
    report.write_text(json.dumps(doc))
    result = run("review", report, "--no-browser", "--port", "0")
    assert_one_error(result, ExitCode.BAD_INPUT, "r.json", where, "not a digitise report")


def test_an_output_that_is_an_input_is_refused_even_with_force(tmp_path: Path) -> None:
    page = tmp_path / "p.jpg"
    page.write_bytes((ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg").read_bytes())
    readings = tmp_path / "g.json"
    readings.write_bytes(READINGS.read_bytes())
    roster, geometry = tmp_path / "roster.txt", tmp_path / "note.json"
    roster.write_text("Alice\nBruno\n")
    assert run("template", "--json").exit_code == 0
    geometry.write_text(run("template", "--json").stdout)
    for args in (["scan", page, "-o", page, "--force"], ["scan", page, "-o", tmp_path / "q.mat", "--report", page,
                                                         "--force"],
                 ["read", page, "-o", page, "--force"], ["solve", readings, "-o", readings, "--force"],
                 # The roster and the note's geometry were written over (--force): they are inputs too.
                 ["solve", readings, "-o", roster, "--roster", roster, "--force"],
                 ["solve", readings, "-o", tmp_path / "q.mat", "--report", roster, "--roster", roster, "--force"],
                 ["scan", page, "-o", roster, "--roster", roster, "--force"],
                 ["read", page, "-o", geometry, "--template", geometry, "--force"]):
        kept = [Path(a) for a in args if isinstance(a, Path) and a.is_file()]
        before = [p.read_bytes() for p in kept]
        assert_one_error(run(*args), ExitCode.OUTPUT, "is also an input")
        assert [p.read_bytes() for p in kept] == before
    assert not (tmp_path / "q.mat").exists()


def test_read_refuses_one_name_for_the_readings_and_the_overlays_before_any_work(tmp_path: Path) -> None:
    """It read every page, drew their overlays into a folder of the readings' name, then failed."""
    page = ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg"
    out = tmp_path / "r.json"
    assert_one_error(run("read", page, "-o", out, "--debug-dir", out), ExitCode.OUTPUT, "named for two outputs")
    assert not out.exists()


def test_corrections_nested_too_deeply_are_bad_input(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    result = run("solve", READINGS, "-o", tmp_path / "out.mat", "--corrections", deep)
    assert_one_error(result, ExitCode.BAD_INPUT, "deep.json", "nested too deeply")


def test_a_blank_note_is_no_match_to_write(tmp_path: Path) -> None:
    """Nothing recorded: no .mat (GNU Backgammon imports none without a game: it was written, "0 point match",
    and flagged), but the reason, as for any bad input; the batch lists the match as failed."""
    scans = tmp_path / "scans"
    scans.mkdir()
    blank = scans / "blank.pdf"
    blank.write_bytes((ROOT / "samples" / "blank-a4.pdf").read_bytes())
    said = "nothing to convert: no move was found on these pages: is anything recorded on them?"
    assert_one_error(run("scan", blank, "-o", tmp_path / "m.mat", "--report", tmp_path / "m.report.json"),
                     ExitCode.BAD_INPUT, f"{blank}: {said}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scans"]
    assert run("read", blank, "-o", tmp_path / "r.json").exit_code == 0
    assert_one_error(run("solve", tmp_path / "r.json", "-o", tmp_path / "m.mat"), ExitCode.BAD_INPUT,
                     f"{tmp_path / 'r.json'}: {said}")
    result = run("batch", scans, "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    assert f"digitise: failed: {blank}: {said}" in result.stderr.splitlines()
    doc = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert doc["jobs"][0]["status"] == "failed" and not (tmp_path / "out" / "blank.mat").exists()


def test_a_solve_report_names_its_readings_for_the_review_page(tmp_path: Path) -> None:
    from digitise.review.session import ReviewSession

    result = run("solve", READINGS, "-o", tmp_path / "m.mat", "--report", tmp_path / "m.report.json")
    assert result.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), result.output
    session = ReviewSession(tmp_path / "m.report.json")
    assert session.export_mat() == (tmp_path / "m.mat").read_text()


def test_one_name_read_for_both_players_is_a_placeholder_and_a_note(tmp_path: Path) -> None:
    def alike(header: dict[str, Any]) -> None:
        if "player_bottom" in header:  # later pages' headers name nobody
            header["player_top"] = dict(header["player_bottom"])

    same = _readings_with_headers(tmp_path / "same.json", alike)
    result = run("solve", same, "-o", tmp_path / "out.mat")
    assert "note: player names: the headers give one name for both players" in result.stderr
    assert "Bottom : 0" in (tmp_path / "out.mat").read_text()


def test_one_player_named_keeps_that_name_and_notes_the_placeholder(tmp_path: Path) -> None:
    def top_unread(header: dict[str, Any]) -> None:
        header.pop("player_top", None)

    one = _readings_with_headers(tmp_path / "one.json", top_unread)
    result = run("solve", one, "-o", tmp_path / "out.mat")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    assert "note: player names: the top player's name was not read from any page header; written as Top" \
        in result.stderr
    assert "Top : 0" in (tmp_path / "out.mat").read_text() and "Lena : 0" in (tmp_path / "out.mat").read_text()

    def split(header: dict[str, Any]) -> None:
        # Each name read on pages that left the other blank: both kept, nothing made up.
        if header.get("page", {}).get("value") == "1":
            header.pop("player_top", None)
        else:
            header.pop("player_bottom", None)

    both = _readings_with_headers(tmp_path / "both.json", split)
    result = run("solve", both, "-o", tmp_path / "both.mat")
    assert "player names" not in result.stderr
    text = (tmp_path / "both.mat").read_text()
    assert "Lena : 0" in text and "Ravi : 0" in text


def test_a_roster_names_the_players_the_headers_misspell(tmp_path: Path) -> None:
    def misread(header: dict[str, Any]) -> None:
        if "player_top" in header:
            header["player_top"]["value"] = "Rav;"

    readings = _readings_with_headers(tmp_path / "r.json", misread)
    roster = tmp_path / "entrants.txt"
    roster.write_text("# Club night, 27 November\nLena\nRavi\n\nKarl\n", encoding="utf-8")
    result = run("solve", readings, "-o", tmp_path / "out.mat", "--report", tmp_path / "out.report.json",
                 "--roster", roster)
    assert "Lena : 0" in (tmp_path / "out.mat").read_text() and "Ravi : 0" in (tmp_path / "out.mat").read_text()
    assert "player names" not in result.stderr
    # The review page re-solves with the same roster.
    assert json.loads((tmp_path / "out.report.json").read_text())["roster"] == ["Lena", "Ravi", "Karl"]


@pytest.mark.parametrize(("content", "reason"), [
    ("", "no names in it"),
    ("# nobody yet\n", "no names in it"),
    ("Lena\nRavi: the champion\n", "line 2: a .mat file cannot hold the name"),
    (b"\xff\xfe", "not a roster (not UTF-8 text)"),
])
def test_a_bad_roster_is_bad_input(tmp_path: Path, content: str | bytes, reason: str) -> None:
    roster = tmp_path / "entrants.txt"
    roster.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = run("solve", READINGS, "-o", tmp_path / "out.mat", "--roster", roster)
    assert_one_error(result, ExitCode.BAD_INPUT, "entrants.txt", reason)
    assert not (tmp_path / "out.mat").exists()


def test_a_symlink_loop_is_bad_input_not_a_crash(tmp_path: Path) -> None:
    loop = tmp_path / "loop.png"
    loop.symlink_to(loop)
    result = run("scan", loop, "-o", tmp_path / "z.mat")
    assert result.exit_code in (int(ExitCode.BAD_INPUT), int(ExitCode.OUTPUT)), result.output
    assert "internal error" not in result.stderr and len(result.stderr.splitlines()) == 1
    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "loop").symlink_to(scans / "loop")
    batch = run("batch", scans, "-o", tmp_path / "out")
    assert batch.exit_code == int(ExitCode.BAD_INPUT) and "internal error" not in batch.stderr, batch.output


def test_read_numbers_the_pages_of_several_files_in_pile_order(tmp_path: Path) -> None:
    pages = sorted((ROOT / "samples" / "alice-bruno" / "light").glob("page-00[12].jpg"))
    result = run("read", *pages, "-o", tmp_path / "r.json", "--no-header")
    assert result.exit_code == 0, result.output
    assert [p["page"] for p in json.loads((tmp_path / "r.json").read_text())["pages"]] == [1, 2]


def test_a_header_confidence_that_is_no_number_is_no_reading(tmp_path: Path) -> None:
    def unweighed(header: dict[str, Any]) -> None:
        if "match_length" in header:
            header["match_length"] = {"value": "7", "confidence": "high"}

    odd = _readings_with_headers(tmp_path / "odd.json", unweighed)
    result = run("solve", odd, "-o", tmp_path / "out.mat")
    assert "note: match length: not given" in result.stderr
    assert (tmp_path / "out.mat").read_text().startswith(" 0 point match")


def test_a_damaged_png_is_one_line_even_below_python(tmp_path: Path) -> None:
    """libpng prints its own "libpng error" line straight to the process's stderr: it must not get the file.

    The file's pixel data is garbage under a sound CRC, so libpng is the one to find it damaged."""
    import struct
    import subprocess
    import sys
    import zlib

    ok, png = cv2.imencode(".png", np.full((300, 300), 200, np.uint8))
    assert ok
    data = png.tobytes()
    at = data.index(b"IDAT") - 4
    length = struct.unpack(">I", data[at:at + 4])[0]
    garbage = bytes(range(256)) * (length // 256 + 1)
    body = b"IDAT" + b"\x78\x01" + garbage[:length - 2]
    damaged = data[:at] + data[at:at + 4] + body + struct.pack(">I", zlib.crc32(body)) + data[at + 12 + length:]
    target = tmp_path / "damaged.png"
    target.write_bytes(damaged)
    done = subprocess.run([sys.executable, "-m", "digitise.cli", "read", str(target), "-o",
                           str(tmp_path / "r.json")], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == int(ExitCode.BAD_INPUT)
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"digitise: error: {target}: cannot decode the image (truncated or damaged file"), line


def test_a_damaged_jpeg_is_read_and_named_below_python(tmp_path: Path) -> None:
    """libjpeg patches over damaged data and prints a warning naming no file: digitise names it and says so."""
    import subprocess
    import sys

    data = (ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg").read_bytes()
    start = data.index(b"\xff\xda")

    def read(share: float, name: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
        at = start + int((len(data) - start) * share)
        damaged = tmp_path / name
        damaged.write_bytes(data[:at] + b"\xff\xd0" + data[at + 2:])
        return damaged, subprocess.run([sys.executable, "-m", "digitise.cli", "read", str(damaged), "-o",
                                        str(tmp_path / f"{name}.json"), "--no-header"],
                                       capture_output=True, text=True, timeout=120, check=False)

    # Damaged near its end: the boards still read, and the page is said to want a look.
    damaged, done = read(0.98, "end.jpg")
    assert done.returncode == int(ExitCode.FLAGGED), done.stderr
    expected = (f"digitise: note: {damaged}: page 1: the JPEG's data is damaged (Corrupt JPEG data: premature end "
                "of data segment); read as far as it decodes: check its turns")
    assert done.stderr.splitlines() == [expected], done.stderr
    assert len(json.loads((tmp_path / "end.jpg.json").read_text())["pages"][0]["boards"]) == 8
    # Halfway: the lower boards are lost, and the error gives the damage as the cause.
    damaged, done = read(0.5, "half.jpg")
    assert done.returncode == int(ExitCode.BAD_INPUT)
    expected = (f"digitise: error: {damaged}: page 1: the JPEG's data is damaged (Corrupt JPEG data: premature end "
                "of data segment), and what decodes is not a readable note: no recording note found: only 4 of 8 "
                "boards show their lines")
    assert done.stderr.splitlines() == [expected], done.stderr


def test_a_batch_whose_reader_has_gone_finishes_and_exits_as_it_would(tmp_path: Path) -> None:
    """`digitise batch ... | head`: the messages are lost once the pipe closes, the batch is not (it exited 10)."""
    import subprocess
    import sys

    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "notes.gif").write_bytes(b"GIF89a")
    shutil.copy(ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg", scans / "m1.jpg")
    child = subprocess.Popen([sys.executable, "-c", "from digitise.cli import main; main()", "batch", str(scans),
                              "-o", str(tmp_path / "out"), "--jobs", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader gone before the first line
    child.stderr.close()
    assert child.wait(timeout=300) == int(ExitCode.BAD_INPUT)  # notes.gif failed; m1 converted
    assert (tmp_path / "out" / "m1.mat").is_file() and (tmp_path / "out" / "summary.json").is_file()


def test_ctrl_c_twice_still_stops_the_batch_with_its_summary(tmp_path: Path) -> None:
    """The second Ctrl-C (or `timeout` signalling the process, then its group) does not cut the stopping short:
    summary.json lists what is left, and the exit is 130 (the second signal killed the batch, or lost the summary)."""
    import signal
    import subprocess
    import sys
    import time

    scans = tmp_path / "scans"
    for name in ("m1", "m2", "m3"):
        (scans / name).mkdir(parents=True)
        for page in sorted((ROOT / "samples" / "chen-dana" / "light").glob("page-*.jpg")):
            shutil.copy(page, scans / name / page.name)
    child = subprocess.Popen([sys.executable, "-c", "from digitise.cli import main; main()", "batch", str(scans),
                              "-o", str(tmp_path / "out"), "--jobs", "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "out").is_dir() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # reading the first match
    child.send_signal(signal.SIGINT)
    time.sleep(0.02)  # while the batch stops its workers
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    assert "digitise: interrupted: " in stderr and "not converted (listed in" in stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["counts"].get("interrupted", 0) >= 2


def test_a_file_name_that_is_not_utf8_is_printed_as_given(tmp_path: Path) -> None:
    """In a UTF-8 locale Python prints strictly: a page or output named with other bytes made a finished scan
    exit 10. Printed back as the bytes given, in the summary and in errors alike."""
    import os
    import subprocess
    import sys

    folder = os.fsencode(tmp_path)
    page = folder + b"/p\xfe.jpg"
    shutil.copy(ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg", os.fsdecode(page))
    output = folder + b"/m\xff.mat"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    command = [sys.executable.encode(), b"-c", b"from digitise.cli import main; main()", b"scan", page, b"-o", output]
    done = subprocess.run(command, capture_output=True, env=env, timeout=300, check=False)
    assert done.returncode == int(ExitCode.FLAGGED), done.stderr
    assert done.stdout.startswith(output + b": 1 page")
    again = subprocess.run(command, capture_output=True, env=env, timeout=300, check=False)
    assert again.returncode == int(ExitCode.OUTPUT)
    assert again.stderr.startswith(b"digitise: error: " + output + b": exists already")


@pytest.mark.parametrize("args", [("solve", "/dev/zero", "-o", "{tmp}/x.mat"),
                                  ("solve", str(READINGS), "-o", "{tmp}/x.mat", "--corrections", "/dev/zero"),
                                  ("solve", str(READINGS), "-o", "{tmp}/x.mat", "--roster", "/dev/urandom"),
                                  ("review", "/dev/zero", "--no-browser")])
def test_a_device_given_as_a_text_input_is_refused_not_read_without_end(tmp_path: Path, args: tuple[str, ...]) -> None:
    """/dev/zero as a readings, corrections or roster file ran the machine out of memory (then exit 10)."""
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    result = run(*(arg.format(tmp=tmp_path) for arg in args))
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    assert result.stderr.endswith(": not a file (a device or socket)\n"), result.stderr


def test_a_pdf_of_blank_pages_is_one_short_error_and_holds_no_page_in_memory(tmp_path: Path) -> None:
    """Each page's problem was kept with its traceback, and so with its picture (5 GB for 500 blank pages), and
    said once a page (a 32 KB line)."""
    from reportlab.pdfgen import canvas

    from digitise.vision.read import read_pages

    pdf = canvas.Canvas(str(tmp_path / "blank.pdf"))
    for _ in range(12):
        pdf.showPage()
    pdf.save()
    result = run("scan", tmp_path / "blank.pdf", "-o", tmp_path / "m.mat")
    assert_one_error(result, ExitCode.BAD_INPUT, f"no page could be read (12 problems): {tmp_path / 'blank.pdf'}: "
                                                 "pages 1-12: blank page: no recording note found")
    errors = read_pages([tmp_path / "blank.pdf"]).errors
    assert len(errors) == 12 and all(e.__traceback__ is None and e.__context__ is None for e in errors)


def test_a_usage_error_is_one_line_from_the_installed_command(tmp_path: Path) -> None:
    """The console script (not CliRunner) prints usage errors as one line and exits 2."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "from digitise.cli import main; main()", "scan", "--length", "65",
                           str(tmp_path / "p.png"), "-o", str(tmp_path / "x.mat")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == int(ExitCode.USAGE)
    expected = ("digitise: usage error: Invalid value for '--length': 65 is not in the range 0<=x<=64. "
                "(see `digitise scan -h`)")
    assert done.stderr.splitlines() == [expected], done.stderr
    ok = subprocess.run([sys.executable, "-c", "from digitise.cli import main; main()", "--version"],
                        capture_output=True, text=True, timeout=120, check=False)
    assert ok.returncode == 0 and "version" in ok.stdout


def test_one_board_corrected_under_two_names_is_refused(tmp_path: Path) -> None:
    corrections = tmp_path / "c.json"
    corrections.write_text('{"1:3": "31: 8/5 6/5", "01:3": "42: 8/4 6/4"}')
    result = run("solve", READINGS, "-o", tmp_path / "out.mat", "--corrections", corrections)
    assert_one_error(result, ExitCode.BAD_INPUT, "c.json", "the same board as '1:3'")


def test_scan_orders_pages_by_their_written_numbers(tmp_path: Path) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    report = tmp_path / "m.report.json"
    result = run("scan", light / "page-002.jpg", light / "page-001.jpg", "-o", tmp_path / "m.mat",
                 "--report", report, "--order", "header")
    assert result.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), result.output
    readings = json.loads((tmp_path / json.loads(report.read_text())["readings"]).read_text())
    assert [p["header"]["page"]["value"] for p in readings["pages"]] == ["1", "2"]
    assert [p["page"] for p in readings["pages"]] == [1, 2] and "page order" not in result.stderr


@pytest.mark.parametrize("where", ["first", "last"])
def test_verbose_may_come_after_the_command_too(tmp_path: Path, where: str) -> None:
    """The errors say "rerun with -v": typed at the end, it must work, not be a usage error."""
    args: list[str | Path] = ["scan", tmp_path / "missing.png", "-o", tmp_path / "m.mat"]
    result = run("-v", *args) if where == "first" else run(*args, "-v")
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    assert "Traceback" in result.stderr and "missing.png: no such file" in result.stderr


def test_a_note_in_a_format_it_cannot_be_printed_in_is_a_usage_error(tmp_path: Path) -> None:
    assert_one_error(run("template", "-o", tmp_path / "note.jpg"), ExitCode.USAGE, "cannot write .jpg: use .pdf, .png or .json")
    assert not (tmp_path / "note.jpg").exists()


def _converted_before(tmp_path: Path, *names: str, flagged: int = 3,
                      summary: dict[str, int] | None = None) -> tuple[Path, Path]:
    """An input folder of matches (one page each, never read) and an output folder where each was converted
    before: its .mat and a report of 40 turns, ``flagged`` of them flagged (or with ``summary``). Returns
    (scans, out)."""
    scans, out = tmp_path / "scans", tmp_path / "out"
    out.mkdir()
    for name in names:
        (scans / name).mkdir(parents=True)
        (scans / name / "p1.png").write_bytes(b"never read: converted before")
        (out / f"{name}.mat").write_text("done\n")
        (out / f"{name}.report.json").write_text(json.dumps({"summary": summary or {"turns": 40, "flagged": flagged}}))
    return scans, out


@pytest.mark.parametrize(("summary", "said"), [
    ({"turns": 40, "flagged": 11, "set_aside": 8}, "3 of 40 turns flagged, 8 boards set aside"),
    ({"turns": 1, "flagged": 8, "set_aside": 8}, "8 boards set aside (1 turn)"),
    ({"turns": 40, "flagged": 1, "set_aside": 1}, "1 board set aside (40 turns)"),
    # A report from before boards set aside were counted apart.
    ({"turns": 1, "flagged": 8}, "8 flagged (1 turn)"),
])
def test_a_batch_tells_turns_flagged_from_boards_set_aside(tmp_path: Path, summary: dict[str, int], said: str) -> None:
    scans, out = _converted_before(tmp_path, "m1", summary=summary)
    result = run("batch", scans, "-o", out, "--jobs", "1")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    assert (f"digitise: flagged: m1 (converted before): {said}; review with: digitise review "
            f"{out / 'm1.report.json'}") in result.stderr.splitlines()
    assert json.loads((out / "summary.json").read_text())["jobs"][0]["set_aside"] == summary.get("set_aside", 0)
    # The batch's own line counts matches, and says so ("1 flagged" alone read as one turn).
    assert result.stdout.startswith("1 match: 1 skipped in ")


def test_a_batch_re_run_still_lists_the_matches_to_review(tmp_path: Path) -> None:
    scans, out = _converted_before(tmp_path, "m1", "m2")
    result = run("batch", scans, "-o", out, "--jobs", "1")
    # Still to review: exit 1 as the first run gave, not a clean 0.
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    assert (f"digitise: flagged: m1 (converted before): 3 of 40 turns flagged; review with: digitise review "
            f"{out / 'm1.report.json'}") in result.stderr.splitlines()
    # Several to review: one page for them all.
    assert result.stderr.splitlines()[-1] == f"digitise: review all 2 flagged matches from one page: digitise review {out}"


def test_a_sheet_given_or_scanned_twice_is_noted(tmp_path: Path) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    medium = ROOT / "samples" / "alice-bruno" / "medium"
    once = run("scan", light / "page-001.jpg", light / "page-002.jpg", "-o", tmp_path / "once.mat")
    assert "pages:" not in once.stderr
    twice = run("scan", light / "page-001.jpg", light / "page-002.jpg", light / "page-001.jpg", medium / "page-002.jpg",
                "-o", tmp_path / "twice.mat")
    assert twice.exit_code == int(ExitCode.FLAGGED), twice.output
    notes = [line for line in twice.stderr.splitlines() if line.startswith("digitise: note: pages:")]
    assert notes == [
        "digitise: note: pages: light/page-001.jpg is given twice (as pages 1 and 3 of the match)",
        ("digitise: note: pages: light/page-002.jpg and medium/page-002.jpg read alike, board for board: "
         "one sheet scanned twice?"),
    ]


def test_a_page_of_another_match_is_noted_by_the_players_it_names(tmp_path: Path) -> None:
    """In the order given (no --order header), a page whose header names other players is said: its boards
    read as new games of this match, with nothing flagged to show it."""
    samples = ROOT / "samples"
    pages = [samples / "alice-bruno" / "light" / "page-001.jpg", samples / "alice-bruno" / "light" / "page-002.jpg",
             samples / "chen-dana" / "light" / "page-002.jpg", samples / "alice-bruno" / "light" / "page-003.jpg"]
    result = run("scan", *pages, "-o", tmp_path / "m.mat", "--report", tmp_path / "m.json")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    note = ("pages: chen-dana/light/page-002.jpg names the players Chen and Dana, alice-bruno/light/page-001.jpg "
            "Alice and Bruno: a page of another match?")
    assert f"digitise: note: {note}" in result.stderr.splitlines()
    doc = json.loads((tmp_path / "m.json").read_text())
    assert note in doc["notes"]
    # Its code beside it, in the match's notes and the scan's own.
    assert doc["note_codes"][doc["notes"].index(note)] == "players-differ"
    assert doc["scan_note_codes"][doc["scan_notes"].index(note)] == "players-differ"
    assert len(doc["note_codes"]) == len(doc["notes"])


def test_another_matchs_corrections_are_refused_before_any_work(tmp_path: Path) -> None:
    """Chen and Dana's page scanned with Alice and Bruno's corrections: "1:1" fits any match's page 1 and
    overwrote a move read right, without a word. The corrections file names the page files it was made on."""
    samples = ROOT / "samples"
    alice = samples / "alice-bruno" / "light" / "page-001.jpg"
    corrections = tmp_path / "ab.corrections.json"
    corrections.write_text(json.dumps({
        "format": "digitise-corrections", "version": 3, "report": "ab.report.json",
        "pages": [{"file": alice.name, "bytes": alice.stat().st_size}], "corrections": {"1:1": "54: 13/8 6/2"}}))
    result = run("scan", samples / "chen-dana" / "light" / "page-001.jpg", "-o", tmp_path / "cd.mat",
                 "--corrections", corrections)
    assert_one_error(result, ExitCode.BAD_INPUT, f"{corrections}: made on other pages (page-001.jpg), not these")
    assert not (tmp_path / "cd.mat").exists()


def test_solve_checks_the_corrections_against_the_pages_read_wherever_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`read` records a page as given (a relative name), and `solve` looked the file up from where it ran:
    from elsewhere it found none, so another match's corrections were applied there and refused here."""
    import shutil

    scans = tmp_path / "scans"
    scans.mkdir()
    shutil.copy(ROOT / "samples" / "chen-dana" / "light" / "page-001.jpg", scans / "scan 1.jpg")
    monkeypatch.chdir(scans)
    assert run("read", "scan 1.jpg", "-o", tmp_path / "cd.readings.json").exit_code == 0
    readings = json.loads((tmp_path / "cd.readings.json").read_text())
    assert readings["pages"][0]["source"] == "scan 1.jpg"
    assert readings["pages"][0]["bytes"] == (scans / "scan 1.jpg").stat().st_size
    alice = ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg"
    corrections = tmp_path / "ab.corrections.json"
    corrections.write_text(json.dumps({
        "format": "digitise-corrections", "version": 3, "report": "ab.report.json",
        "pages": [{"file": alice.name, "bytes": alice.stat().st_size}], "corrections": {"1:1": "54: 13/8 6/2"}}))
    for where in (scans, tmp_path):
        monkeypatch.chdir(where)
        result = run("solve", tmp_path / "cd.readings.json", "-o", tmp_path / "cd.mat", "--corrections", corrections)
        assert_one_error(result, ExitCode.BAD_INPUT, "made on other pages (page-001.jpg), not these")
        assert not (tmp_path / "cd.mat").exists()
    # Corrections made on this very page apply from anywhere, and the report records the page for the next review.
    corrections.write_text(json.dumps({
        "format": "digitise-corrections", "version": 3, "report": "cd.report.json",
        "pages": [{"file": "scan 1.jpg", "bytes": readings["pages"][0]["bytes"]}], "corrections": {}}))
    result = run("solve", tmp_path / "cd.readings.json", "-o", tmp_path / "cd.mat", "--report", tmp_path / "cd.json",
                 "--corrections", corrections)
    assert result.exit_code in (0, 1), result.output
    assert json.loads((tmp_path / "cd.json").read_text())["source_files"] == [
        {"file": "scan 1.jpg", "bytes": readings["pages"][0]["bytes"]}]


def test_a_mistyped_page_stops_the_scan_before_any_work(tmp_path: Path) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    result = run("scan", light / "page-001.jpg", tmp_path / "page-02.jpg", "-o", tmp_path / "m.mat")
    assert_one_error(result, ExitCode.BAD_INPUT, "page-02.jpg: no such file")
    assert not (tmp_path / "m.mat").exists()


@pytest.mark.parametrize("option", ["-o", "--report"])
def test_an_output_file_written_as_a_folder_is_a_usage_error(tmp_path: Path, option: str) -> None:
    """pathlib drops a trailing slash: `-o out/sub/` wrote a file named out/sub."""
    light = ROOT / "samples" / "alice-bruno" / "light"
    outputs = {"-o": str(tmp_path / "m.mat"), "--report": str(tmp_path / "m.json")}
    outputs[option] = f"{tmp_path / 'sub'}/"
    result = run("scan", light / "page-001.jpg", "-o", outputs["-o"], "--report", outputs["--report"])
    assert result.exit_code == int(ExitCode.USAGE), result.output
    assert "names a folder (it ends with /): give a file name" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("report", ["", ".", "/"])
def test_a_report_that_names_no_file_is_an_output_error(tmp_path: Path, report: str) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    result = run("scan", light / "page-001.jpg", "-o", tmp_path / "m.mat", "--report", report)
    assert_one_error(result, ExitCode.OUTPUT, "is a folder, not a file")


def test_corrections_of_boards_the_pages_do_not_have_are_refused(tmp_path: Path) -> None:
    corrections = tmp_path / "c.json"
    corrections.write_text(json.dumps({"99:1": "blank"}))
    result = run("solve", READINGS, "-o", tmp_path / "out.mat", "--corrections", corrections)
    assert_one_error(result, ExitCode.BAD_INPUT, "c.json: corrections that no longer fit this scan: page 99 board 1 "
                                                 "('blank') not in these pages")
    assert not (tmp_path / "out.mat").exists()


def _disk_full_for(monkeypatch: pytest.MonkeyPatch, full: Callable[[Path], bool]) -> None:
    """The pipeline's atomic writes fail as on a full disk for the outputs ``full`` picks."""
    from digitise.errors import OutputError
    from digitise.fileio import write_atomic as real_write
    from digitise.pipeline import batch_run, convert, layout, steps

    def full_disk(path: Path, content: str | bytes, *, overwrite: bool = False) -> Path:
        if full(Path(path)):
            raise OutputError("cannot write: No space left on device", path)
        return real_write(path, content, overwrite=overwrite)

    # Each module of the pipeline that writes files holds its own name for it.
    for module in (convert, steps, batch_run, layout):
        monkeypatch.setattr(module, "write_atomic", full_disk)


def test_a_report_that_cannot_be_written_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk half way through a match's files: the ones already made are removed, so a re-run is not refused."""
    _disk_full_for(monkeypatch, lambda path: str(path).endswith("m.report.json"))
    light = ROOT / "samples" / "alice-bruno" / "light"
    result = run("scan", light / "page-001.jpg", "-o", tmp_path / "m.mat", "--report", tmp_path / "m.report.json")
    assert_one_error(result, ExitCode.OUTPUT, "No space left on device")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_batch_whose_summary_cannot_be_written_still_lists_what_failed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _disk_full_for(monkeypatch, lambda path: Path(path).name == "summary.json")
    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "notes.gif").write_bytes(b"GIF89a")
    (scans / "m1.png").write_bytes(b"not a png")
    result = run("batch", scans, "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code == int(ExitCode.OUTPUT), result.output
    lines = result.stderr.splitlines()
    assert any(line.startswith("digitise: failed:") and "notes.gif" in line for line in lines)
    assert lines[-1].startswith("digitise: error: ") and "summary.json" in lines[-1] and "No space" in lines[-1]
    assert "summary in" not in result.stdout


def test_a_batch_that_cannot_write_a_matchs_files_exits_as_scan_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk fails the match with its reason, and the batch exits 4 (an output), not 3 (an input)."""
    _disk_full_for(monkeypatch, lambda path: str(path).endswith(".report.json"))
    scans = tmp_path / "scans"
    (scans / "m1").mkdir(parents=True)
    shutil.copy(ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg", scans / "m1" / "page-001.jpg")
    (scans / "notes.gif").write_bytes(b"GIF89a")  # a bad input beside it: the output error still decides
    result = run("batch", scans, "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code == int(ExitCode.OUTPUT), result.output
    assert any(line.startswith("digitise: failed:") and "No space left on device" in line
               for line in result.stderr.splitlines())
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {job["name"]: job["status"] for job in summary["jobs"]} == {"m1": "failed", "notes.gif": "failed"}
    assert all("code" not in job for job in summary["jobs"])


@pytest.mark.filterwarnings("ignore:Corrupt EXIF data:UserWarning")  # pytest resets the module's own filter
def test_a_cut_tiff_counts_the_pages_it_held_in_the_batch(tmp_path: Path) -> None:
    """A 3-page TIFF cut in its last page: counted as 1 page before reading (its frames cannot be counted),
    it is listed with the 3 pages reading found (2 read, 1 named as damaged)."""
    from PIL import Image

    light = ROOT / "samples" / "alice-bruno" / "light"
    frames = [Image.open(light / f"page-00{n}.jpg").convert("L") for n in (1, 2, 3)]
    whole = io.BytesIO()
    frames[0].save(whole, format="TIFF", save_all=True, append_images=frames[1:], compression="tiff_deflate")
    data = whole.getvalue()
    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "m1.tif").write_bytes(data[: len(data) * 9 // 10])
    result = run("batch", scans, "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    (job,) = json.loads((tmp_path / "out" / "summary.json").read_text())["jobs"]
    assert job["pages"] == 3 and len(job["page_errors"]) == 1 and "page 3" in job["page_errors"][0]


def test_pictures_digitise_cannot_read_inside_a_match_folder_are_reported(tmp_path: Path) -> None:
    from PIL import Image

    light = ROOT / "samples" / "alice-bruno" / "light"
    match = tmp_path / "scans" / "m1"
    match.mkdir(parents=True)
    shutil.copy(light / "page-001.jpg", match / "page-001.jpg")
    Image.open(light / "page-002.jpg").save(match / "page-002.gif")
    (match / "notes.txt").write_text("ignored: not a picture\n")
    result = run("batch", tmp_path / "scans", "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    skipped = [line for line in result.stderr.splitlines() if line.startswith("digitise: page skipped:")]
    assert len(skipped) == 1 and "page-002.gif" in skipped[0]


def test_batch_can_order_each_match_by_its_written_page_numbers(tmp_path: Path) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    match = tmp_path / "scans" / "m1"
    match.mkdir(parents=True)
    shutil.copy(light / "page-002.jpg", match / "a.jpg")
    shutil.copy(light / "page-001.jpg", match / "b.jpg")
    result = run("batch", tmp_path / "scans", "-o", tmp_path / "out", "--jobs", "1", "--order", "header")
    assert result.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), result.output
    readings = json.loads((tmp_path / "out" / "m1.report.readings.json").read_text())
    assert [Path(p["source"]).name for p in readings["pages"]] == ["b.jpg", "a.jpg"]


def test_loose_pictures_at_the_top_of_a_batch_get_a_word(tmp_path: Path) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    scans = tmp_path / "scans"
    scans.mkdir()
    for name in ("page-001.jpg", "page-002.jpg"):
        shutil.copy(light / name, scans / name)
    result = run("batch", scans, "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), result.output
    assert (f"digitise: note: 2 one-page pictures at the top of {scans} were each converted as a match of its own; "
            "put the pages of one match in a sub-folder of their own") in result.stderr.splitlines()
    # One beside a match folder: more likely a page of that match.
    (scans / "page-002.jpg").unlink()
    (scans / "m1").mkdir()
    shutil.copy(light / "page-002.jpg", scans / "m1" / "page-002.jpg")
    result = run("batch", scans, "-o", tmp_path / "out2", "--jobs", "1")
    assert (f"digitise: note: a one-page picture at the top of {scans} was converted as a match of its own; "
            "if it is a page of another match, put it in that match's folder") in result.stderr.splitlines()
    # Alone, a picture is a match of one page: nothing to say.
    shutil.rmtree(scans / "m1")
    result = run("batch", scans, "-o", tmp_path / "out3", "--jobs", "1")
    assert "one-page picture" not in result.stderr


def test_a_scanners_pdf_cut_short_gives_the_pages_before_the_cut(tmp_path: Path) -> None:
    """A multi-page PDF cut short (a transfer that stopped) was refused whole; its whole page pictures are read."""
    data = (ROOT / "samples" / "chen-dana" / "medium" / "pages.pdf").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) * 9 // 10])
    result = run("scan", cut, "-o", tmp_path / "m.mat")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    assert result.stdout.startswith(f"{tmp_path / 'm.mat'}: 4 pages, 1 game, ")
    lines = result.stderr.splitlines()
    assert (f"digitise: note: {cut}: page 1: the PDF is cut short (its index of pages is lost): 5 page pictures "
            "found in what is left, read in the order stored; pages after the cut are lost; read as far as it "
            "decodes: check its turns") in lines
    assert any(line.startswith(f"digitise: page skipped: {cut}: page 5: the page's JPEG picture is truncated")
               for line in lines), lines
    assert (tmp_path / "m.mat").read_text().startswith(" 3 point match")


def test_the_command_list_reads_in_the_order_of_the_work_and_whole() -> None:
    """`digitise --help` listed the commands alphabetically, each description cut off with "..."."""
    result = run("--help")
    assert result.exit_code == 0
    listed = result.stdout.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed if line.strip()] == [
        "template", "layout", "scan", "batch", "review", "read", "solve", "synth", "train"]
    assert not [line for line in listed if line.rstrip().endswith("...")], listed


def test_files_beside_a_batchs_matches_are_named_not_failed(tmp_path: Path) -> None:
    """A roster and a readme beside the match folders failed as two matches, and the batch exited 3; an
    earlier in-place batch's outputs failed the next batch run elsewhere, one match a file."""
    light = ROOT / "samples" / "alice-bruno" / "light"
    scans = tmp_path / "scans"
    (scans / "m1").mkdir(parents=True)
    shutil.copy(light / "page-001.jpg", scans / "m1" / "page-001.jpg")
    (scans / "entrants.txt").write_text("Alice\nBruno\n")
    (scans / "README.md").write_text("round 2\n")
    first = run("batch", scans, "-o", scans, "--jobs", "1", "--roster", scans / "entrants.txt")
    assert first.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), first.output
    assert (scans / "m1.mat").is_file()
    result = run("batch", scans, "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code == first.exit_code, result.output
    assert not [line for line in result.stderr.splitlines() if line.startswith("digitise: failed:")]
    left_out = json.loads((tmp_path / "out" / "summary.json").read_text())["left_out"]
    assert left_out == ["entrants.txt", "m1.mat", "m1.report.json", "m1.report.readings.json", "README.md",
                        "summary.csv", "summary.json"]
    assert (f"digitise: note: left out 7 files at the top of {scans} that are no picture or PDF: entrants.txt, "
            "m1.mat, m1.report.json, m1.report.readings.json, README.md and 2 more (all in summary.json)") \
        in result.stderr.splitlines()
    assert [job["name"] for job in json.loads((tmp_path / "out" / "summary.json").read_text())["jobs"]] == ["m1"]


def test_a_match_whose_first_page_is_numbered_later_is_noted(tmp_path: Path) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    result = run("scan", light / "page-002.jpg", light / "page-003.jpg", "-o", tmp_path / "m.mat")
    assert "digitise: note: pages: the first page, page-002.jpg, is numbered 2: is page 1 missing?" in \
        result.stderr.splitlines()
    result = run("scan", light / "page-004.jpg", "-o", tmp_path / "n.mat")
    assert "digitise: note: pages: the first page, page-004.jpg, is numbered 4: are pages 1 to 3 missing?" in \
        result.stderr.splitlines()
    # Given in reverse, nothing is missing: the note says what is wrong and how to mend it.
    result = run("scan", light / "page-003.jpg", light / "page-002.jpg", light / "page-001.jpg", "-o", tmp_path / "r.mat")
    assert ("digitise: note: pages: not in the order of their numbers (the first, page-003.jpg, is numbered 3, and "
            "page-002.jpg 2): give them in order, or add --order header") in result.stderr.splitlines()


def test_a_forced_batch_re_run_keeps_what_the_review_said(tmp_path: Path) -> None:
    light = ROOT / "samples" / "alice-bruno" / "light"
    match = tmp_path / "scans" / "m1"
    match.mkdir(parents=True)
    shutil.copy(light / "page-001.jpg", match / "page-001.jpg")
    out = tmp_path / "out"
    first = run("batch", tmp_path / "scans", "-o", out, "--jobs", "1")
    assert first.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), first.output
    assert json.loads((out / "m1.report.json").read_text())["mat"] == "m1.mat"
    (out / "m1.report.corrections.json").write_text(json.dumps(
        {"format": "digitise-corrections", "version": 2, "match": {"players": ["Ann", "Ben"]}, "corrections": {}}))
    again = run("batch", tmp_path / "scans", "-o", out, "--jobs", "1", "--force")
    assert again.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), again.output
    assert "Ann : 0" in (out / "m1.mat").read_text()


def test_a_re_run_counts_the_flags_the_review_left(tmp_path: Path) -> None:
    scans, out = _converted_before(tmp_path, "m1")
    (out / "m1.report.readings.json").write_text("{}")
    (out / "m1.report.corrections.json").write_text(json.dumps(
        {"format": "digitise-corrections", "version": 2, "summary": {"games": 1, "turns": 40, "flagged": 0},
         "corrections": {"1:2": "double"}}))
    result = run("batch", scans, "-o", out, "--jobs", "1")
    assert result.exit_code == int(ExitCode.OK), result.output
    assert "flagged" not in result.stderr
    assert json.loads((out / "summary.json").read_text())["jobs"][0]["flagged"] == 0


def test_a_re_run_says_when_a_converted_matchs_report_is_gone(tmp_path: Path) -> None:
    """The .mat is written last, so a match with its .mat was converted whole; files deleted since are said."""
    scans, out = _converted_before(tmp_path, "m1", flagged=0)
    result = run("batch", scans, "-o", out, "--jobs", "1")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    assert ("digitise: note: m1: m1.report.readings.json is gone: the review page needs it; --force converts the "
            "match again") in result.stderr.splitlines()


def test_closed_out_turns_are_counted_in_the_report(tmp_path: Path) -> None:
    """chen-dana has two turns of Dana on the bar against a closed board: no board, dances of 21 in the .mat."""
    pages = sorted((ROOT / "samples" / "chen-dana" / "light").glob("page-*.jpg"))
    result = run("scan", *pages, "-o", tmp_path / "m.mat", "--report", tmp_path / "m.json")
    assert result.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), result.output
    assert json.loads((tmp_path / "m.json").read_text())["closed_out"] == 2
    once = run("scan", ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg", "-o", tmp_path / "n.mat",
               "--report", tmp_path / "n.json")
    assert once.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), once.output
    assert json.loads((tmp_path / "n.json").read_text())["closed_out"] == 0


def test_missing_inputs_and_unwritable_outputs_have_their_own_exit_codes(tmp_path: Path) -> None:
    """Not usage errors (2): a file that is not there is bad input (3), an output that cannot be made is 4."""
    folder = tmp_path / "folder"
    folder.mkdir()
    result = run("solve", folder, "-o", tmp_path / "x.mat")
    assert_one_error(result, ExitCode.BAD_INPUT, "folder", "is a folder, not a file")
    result = run("solve", READINGS, "-o", tmp_path / "y.mat", "--corrections", tmp_path / "none.json")
    assert_one_error(result, ExitCode.BAD_INPUT, "none.json", "no such file")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    scans = tmp_path / "scans"
    scans.mkdir()
    shutil.copy(ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg", scans / "page-001.jpg")
    result = run("batch", scans, "-o", a_file)
    assert result.exit_code == int(ExitCode.OUTPUT) and "a-file" in result.stderr, result.output


def test_scan_of_pages_none_readable_names_every_problem(tmp_path: Path) -> None:
    """Two bad pages: both are named at once, so they are not found one run at a time."""
    (tmp_path / "a.png").write_bytes(b"GIF89a" + bytes(40))
    (tmp_path / "b.png").write_text("notes, not pixels\n")
    result = CliRunner().invoke(cli, ["scan", str(tmp_path / "a.png"), str(tmp_path / "b.png"),
                                      "-o", str(tmp_path / "m.mat")])
    assert result.exit_code == ExitCode.BAD_INPUT
    lines = result.output.strip().splitlines()
    expected = (f"digitise: error: no page could be read (2 problems): {tmp_path / 'a.png'}: a GIF image, which "
                f"digitise does not read: save the page as PNG, JPEG or PDF; {tmp_path / 'b.png'}: not an image "
                "or PDF (expected PNG, JPEG, TIFF, BMP, WebP or PDF)")
    assert lines == [expected]
    assert not (tmp_path / "m.mat").exists()


def test_scan_says_a_problem_of_every_page_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cause shared by every page (the reader's model file gone) is one message with its count, not one a page."""
    from digitise.errors import InputError
    from digitise.vision import cells

    model = tmp_path / "cellnet_point.json"

    def broken_reader() -> None:
        raise InputError("model metadata missing (run `digitise train --cellnet`)", model)

    monkeypatch.setattr(cells, "default_reader", broken_reader)
    pages = sorted((ROOT / "samples" / "alice-bruno" / "light").glob("page-*.jpg"))[:3]
    assert len(pages) == 3
    result = CliRunner().invoke(cli, ["scan", *map(str, pages), "-o", str(tmp_path / "m.mat")])
    assert result.exit_code == ExitCode.BAD_INPUT
    expected = (f"digitise: error: no page could be read (3 problems): {model}: model metadata missing "
                "(run `digitise train --cellnet`) (x3)")
    assert result.output.strip().splitlines() == [expected]


def test_a_missing_model_is_one_error_before_any_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken install (a shipped model gone) stops scan and batch at once, naming the file: not one error a
    page or a match, and never a quietly weaker reader."""
    from digitise.vision import cells

    gone = tmp_path / "models" / "cellnet_point.onnx"
    monkeypatch.setattr(cells, "POINT_MODEL", gone)
    scans, out = tmp_path / "scans", tmp_path / "out"
    for name in ("m1", "m2"):
        (scans / name).mkdir(parents=True)
        shutil.copy(ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg", scans / name / "page-001.jpg")
    needle = f"{gone}: cell model not found (run `digitise train --cellnet`)"
    assert_one_error(run("batch", scans, "-o", out, "--jobs", "1"), ExitCode.BAD_INPUT, needle)
    assert not out.exists()  # stopped before making anything
    assert_one_error(run("scan", scans / "m1" / "page-001.jpg", "-o", tmp_path / "m.mat"), ExitCode.BAD_INPUT, needle)
    assert not (tmp_path / "m.mat").exists()


def test_a_batch_re_run_names_a_corrections_file_it_cannot_read(tmp_path: Path) -> None:
    """A match reviewed, then its corrections file spoilt by hand: the re-run names the file, not hides the match."""
    scans, out = _converted_before(tmp_path, "m1")
    (out / "m1.report.corrections.json").write_text("{garbage")
    result = run("batch", scans, "-o", out, "--jobs", "1")
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    assert any(line.startswith(f"digitise: note: m1: {out / 'm1.report.corrections.json'}: line 1 column 2: not JSON")
               for line in result.stderr.splitlines()), result.stderr


@pytest.mark.parametrize("name", [b"plain.report.json", b"it's a \\ name.json", b"caf\xe9 \xff.report.json",
                                  b"two\nlines\t.report.json"])
def test_a_path_printed_for_copying_names_the_file_in_a_shell(tmp_path: Path, name: bytes) -> None:
    """The review command printed after a scan or batch names the file when pasted into a shell, a name that
    is not UTF-8 too (printed as Python holds it, it showed as \\udcff and named nothing)."""
    import os
    import shutil
    import subprocess

    from digitise.cli import shell_quoted

    shell = shutil.which("bash")
    if shell is None:
        pytest.skip("no bash")
    target = os.path.join(os.fsencode(tmp_path), name)
    with open(target, "wb"):
        pass
    quoted = shell_quoted(os.fsdecode(target))
    quoted.encode("ascii" if b"\xe9" in name else "utf-8")  # printable as it is
    assert "\n" not in quoted and "\t" not in quoted  # on one line
    assert subprocess.run([shell, "-c", f"test -e {quoted}"], check=False).returncode == 0


def test_a_file_named_with_a_newline_is_named_on_one_line(tmp_path: Path) -> None:
    """Every message is one line, which scripts and logs read a line at a time: a newline (or an escape
    sequence) in a file's name is shown escaped."""
    bad = tmp_path / "page\none\x1b[2J.png"
    bad.write_text("not a picture")
    assert_one_error(run("scan", bad, "-o", tmp_path / "m.mat"), ExitCode.BAD_INPUT,
                     "page\\none\\x1b[2J.png: not an image or PDF")
    scans = tmp_path / "scans"
    (scans / "m1").mkdir(parents=True)
    (scans / "m1" / "p\n1.png").write_text("not a picture")
    result = run("batch", scans, "-o", tmp_path / "out", "--jobs", "1")
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    failed = [line for line in result.stderr.splitlines() if line.startswith("digitise: failed:")]
    assert len(failed) == 1 and "p\\n1.png" in failed[0], result.stderr


def test_a_two_sided_scan_gives_the_match_of_its_fronts_and_names_each_back(tmp_path: Path) -> None:
    """A duplex scanner makes a page of every sheet's back, where the front shows through faint and mirrored.
    Each was refused as "mirrored: flip it and scan again": the match was right, the advice wrong."""
    from PIL import Image

    from digitise.sheet.damage import back_of_sheet
    from digitise.vision.read import SHOW_THROUGH

    fronts = [Image.open(p).convert("RGB") for p in sorted((ROOT / "samples" / "alice-bruno" / "light").glob("page-*.jpg"))[:3]]
    sheets = []
    for front in fronts:
        sheets += [front, Image.fromarray(back_of_sheet(np.asarray(front.convert("L")), 0.12)).convert("RGB")]
    sheets[0].save(tmp_path / "duplex.pdf", save_all=True, append_images=sheets[1:], resolution=150)
    fronts[0].save(tmp_path / "fronts.pdf", save_all=True, append_images=fronts[1:], resolution=150)
    result = run("scan", tmp_path / "duplex.pdf", "-o", tmp_path / "duplex.mat")
    assert result.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), result.output
    assert result.stderr.count(SHOW_THROUGH) == 3 and "mirrored" not in result.stderr
    assert [line for line in result.stderr.splitlines() if "page skipped" in line] == [
        f"digitise: page skipped: {tmp_path / 'duplex.pdf'}: page {n}: {SHOW_THROUGH}" for n in (2, 4, 6)]
    alone = run("scan", tmp_path / "fronts.pdf", "-o", tmp_path / "fronts.mat")
    assert alone.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), alone.output
    moves = [line for line in (tmp_path / "duplex.mat").read_text().splitlines() if line[:1] == " "]
    assert len(moves) >= 10 and moves == [line for line in (tmp_path / "fronts.mat").read_text().splitlines() if line[:1] == " "]


def _as_unprivileged(command: list[str]) -> list[str] | None:
    """``command`` run so that file permissions bind (as ``nobody`` when root), or None when that cannot be done."""
    import os
    import subprocess

    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    wrapped = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    # The interpreter itself may live where nobody can read (a pyenv under /root).
    probe = subprocess.run([*wrapped[:-len(command)], command[0], "-c", "import digitise.cli"],
                           capture_output=True, timeout=60, check=False)
    return wrapped if probe.returncode == 0 else None


@pytest.mark.parametrize(("command", "name"), [
    (["solve", "{file}", "-o", "{out}/out.mat"], "readings.json"),
    (["read", "{file}", "-o", "{out}/r.json"], "page.png"),
    (["synth", "{file}", "-o", "{out}/synth"], "match.mat"),
])
def test_an_unreadable_input_is_bad_input_not_a_usage_error(command: list[str], name: str) -> None:
    """click's own readability check called an unreadable page a usage error (exit 2); it is bad input (3),
    named with the reason, as inside a batch."""
    import subprocess
    import sys
    import tempfile

    # Under /tmp, not pytest's tmp_path, which only its owner can enter.
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        place = Path(folder)
        place.chmod(0o777)
        unreadable = place / name
        unreadable.write_bytes(b"not read")
        unreadable.chmod(0)
        args = [a.format(file=unreadable, out=place) for a in command]
        wrapped = _as_unprivileged([sys.executable, "-m", "digitise.cli", *args])
        if wrapped is None:
            pytest.skip("running as root without setpriv, or an interpreter nobody may run: permissions do not bind")
        done = subprocess.run(wrapped, capture_output=True, text=True, timeout=120, check=False,
                              env={"PATH": "/usr/bin:/bin", "HOME": folder})
    assert done.returncode == int(ExitCode.BAD_INPUT), done.stderr
    assert done.stderr.splitlines() == [f"digitise: error: {unreadable}: cannot read: Permission denied"], done.stderr


def _on_terminal(args: Sequence[str | Path], columns: int = 100) -> tuple[int, str]:
    """Run digitise under a real terminal (a pseudo-terminal ``columns`` wide, 0 x 0 for 0): its exit code and
    all it showed."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: digitise, its stdout and stderr the terminal
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30 if columns else 0, columns, 0, 0))
            os.execv(sys.executable, [sys.executable, "-m", "digitise.cli", *map(str, args)])
        finally:
            os._exit(99)
    shown = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the terminal closed: digitise has ended
            break
        if not chunk:
            break
        shown += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), shown.decode("utf-8", "replace")


@pytest.mark.parametrize("columns", [100, 0])
def test_a_batch_on_a_terminal_draws_its_progress_bar(tmp_path: Path, columns: int) -> None:
    """Under a real terminal: a bar a page. One that says it is 0 x 0 (a console never told its size) had the
    bar draw nothing, and the batch looked hung."""
    scans = tmp_path / "scans"
    (scans / "m1").mkdir(parents=True)
    for name in ("page-001.jpg", "page-002.jpg"):
        shutil.copy(ROOT / "samples" / "alice-bruno" / "light" / name, scans / "m1" / name)
    code, text = _on_terminal(["batch", scans, "-o", tmp_path / "out"], columns)
    assert code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), text
    assert "2/2 [" in text and "page/s" in text, text
    assert "1 match: " in text


def test_scan_on_a_terminal_shows_its_pages_read_then_only_the_summary_or_the_error(tmp_path: Path) -> None:
    """A long PDF read without a word looked hung; the bar is cleared once the pages are read, so the summary
    (or the one-line error) is what stays."""
    light = ROOT / "samples" / "alice-bruno" / "light"
    pages = [light / "page-001.jpg", light / "page-002.jpg"]
    code, text = _on_terminal(["scan", *pages, "-o", tmp_path / "m.mat"])
    assert code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), text
    assert "2/2 [" in text
    # What stays on the screen: the bar's line overwritten by blanks (\r), then the summary.
    last = text.replace("\r\n", "\n").split("\r")[-1].strip()
    # Two pages of a longer match: the note that the record stops short comes first, then the summary.
    lines = last.splitlines()
    assert lines[0].startswith("digitise: note: the record ends"), text
    assert lines[1].startswith(f"{tmp_path / 'm.mat'}: 2 pages, "), text
    code, text = _on_terminal(["scan", *pages, "-o", tmp_path / "m.mat"])
    assert code == int(ExitCode.OUTPUT)
    assert text.replace("\r\n", "\n").split("\r")[-1].strip().startswith("digitise: error: "), text
    code, text = _on_terminal(["read", *pages, "-o", tmp_path / "m.readings.json", "--no-header"])
    assert code in (int(ExitCode.OK), int(ExitCode.FLAGGED)) and "2/2 [" in text, text


@pytest.mark.parametrize("command", ["solve", "scan"])
def test_a_json_input_with_a_number_of_5000_digits_is_said_in_our_words(tmp_path: Path, command: str) -> None:
    """Python's own wording ("use sys.set_int_max_str_digits() to increase the limit") reached the user, as if
    the fix were in Python."""
    big = tmp_path / "big.json"
    big.write_text('{"pages": [], "x": ' + "9" * 5000 + "}\n", encoding="utf-8")
    if command == "solve":
        result = run("solve", big, "-o", tmp_path / "m.mat")
        what = "a readings file"
    else:
        result = run("scan", "samples/alice-bruno/light/page-001.jpg", "-o", tmp_path / "m.mat", "--corrections", big)
        what = "a corrections file"
    line = assert_one_error(result, ExitCode.BAD_INPUT, f"{big}: not {what}: a number 5,000 digits long at line 1")
    assert "sys." not in line and "int_max" not in line


def test_scan_to_a_device_is_refused_before_any_page_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`scan -o /dev/full --force` read and solved the whole match, then could not write it."""
    import digitise.vision.read

    def no_reading(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a page was read")

    monkeypatch.setattr(digitise.vision.read, "read_pages", no_reading)
    result = run("scan", ROOT / "samples" / "chen-dana" / "light" / "page-001.jpg", "-o", "/dev/full", "--force")
    assert_one_error(result, ExitCode.OUTPUT, "/dev/full: is not a regular file")


@pytest.fixture(scope="module")
def director_batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Result]:
    """A real batch of one sample match (alice-bruno's light pages: two turns flagged) beside a file that is
    no match: (scans, output folder, the run)."""
    scans = tmp_path_factory.mktemp("director") / "scans"
    shutil.copytree(ROOT / "samples" / "alice-bruno" / "light", scans / "alice", ignore=shutil.ignore_patterns("*.json"))
    (scans / "roster.txt").write_text("Alice\nBruno\n")
    out = scans.parent / "out"
    return scans, out, run("batch", scans, "-o", out, "--jobs", "1")


def test_a_batch_gives_each_match_its_players_length_result_and_figures(
        director_batch: tuple[Path, Path, Result]) -> None:
    scans, out, result = director_batch
    assert result.exit_code == int(ExitCode.FLAGGED), result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1 match: 1 flagged in ") and lines[0].endswith(
        f"; summary in {out / 'summary.json'} and {out / 'summary.csv'}")
    assert lines[1] == "alice: Alice v Bruno, 3-point match, Bruno won 3-0; 2 games, 60 turns, 2 flagged"
    (job,) = json.loads((out / "summary.json").read_text())["jobs"]
    assert {k: job[k] for k in ("players", "length", "score", "winner", "games", "turns", "flagged", "closed_out",
                                "notes")} == {"players": ["Alice", "Bruno"], "length": 3, "score": [0, 3],
                                              "winner": "Bruno", "games": 2, "turns": 60, "flagged": 2,
                                              "closed_out": 0, "notes": []}
    import csv

    (row,) = csv.DictReader(io.StringIO((out / "summary.csv").read_text(encoding="utf-8-sig")))
    assert row == {"match": "alice", "status": "flagged", "bottom player": "Alice", "top player": "Bruno",
                   "length": "3", "bottom score": "0", "top score": "3", "winner": "Bruno", "games": "2",
                   "turns": "60", "flagged": "2", "set aside": "0", "closed out": "0", "pages": "8", "notes": "",
                   "reason": "", "report": "alice.report.json"}
    # The same figures when the match is skipped as converted before (read from its .mat and report).
    again = run("batch", scans, "-o", out, "--jobs", "1")
    assert again.stdout.splitlines()[1] == ("alice (converted before): Alice v Bruno, 3-point match, Bruno won 3-0; "
                                            "2 games, 60 turns, 2 flagged")
    assert next(csv.DictReader(io.StringIO((out / "summary.csv").read_text(encoding="utf-8-sig"))))["winner"] == "Bruno"


def test_exit_zero_passes_flagged_turns_and_still_reports_them(director_batch: tuple[Path, Path, Result]) -> None:
    """Exit 1 is a good scan's normal outcome (turns flagged), which stops a `set -e` script: --exit-zero."""
    scans, out, _ = director_batch
    result = run("batch", scans, "-o", out, "--jobs", "1", "--exit-zero")
    assert result.exit_code == 0, result.output
    assert "digitise: flagged: alice (converted before): 2 of 60 turns flagged" in result.stderr
    report = out / "alice.report.json"
    solved = run("solve", report.with_name("alice.report.readings.json"), "-o", out / "again.mat", "--exit-zero")
    assert solved.exit_code == 0 and "flagged for review" in solved.stdout, solved.output


@pytest.mark.parametrize("command", ["scan", "batch"])
def test_exit_zero_still_fails_on_bad_input(tmp_path: Path, command: str) -> None:
    bad_page = tmp_path / "scans" / "m1.png"
    bad_page.parent.mkdir()
    bad_page.write_bytes(b"not a png at all")
    if command == "scan":
        result = run("scan", bad_page, "-o", tmp_path / "m.mat", "--exit-zero")
    else:
        result = run("batch", bad_page.parent, "-o", tmp_path / "out", "--jobs", "1", "--exit-zero")
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output


@pytest.mark.parametrize("on_path", [False, True])
def test_review_hint_names_digitise_as_it_can_be_typed_again(tmp_path: Path, on_path: bool) -> None:
    """Started as .venv/bin/digitise (scripts/demo, before the environment is activated) the hint says that path;
    with digitise on the PATH it says ``digitise``: either way the printed command works as printed."""
    import subprocess

    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    launcher = bin_dir / "digitise"
    launcher.write_text(f"#!{sys.executable}\nfrom digitise.cli import main\nraise SystemExit(main())\n")
    launcher.chmod(0o755)
    path = os.pathsep.join(([str(bin_dir)] if on_path else []) + [os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    env = {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT)}
    command = "digitise" if on_path else "venv/bin/digitise"
    done = subprocess.run([command, "solve", str(READINGS), "-o", "x.mat", "--report", "x.json"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=False)
    assert done.returncode == ExitCode.FLAGGED, done.stderr
    assert done.stdout.splitlines()[-1] == f"review them with: {command} review x.json"

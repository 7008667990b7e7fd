"""The review session on a real solve: a correction re-decodes the match and is saved; export and learning."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import cv2
import pytest

from digitise.errors import InputError
from digitise.review.board_parts import no_double_because
from digitise.review.refusals import CorrectionRefused
from digitise.review.session import ReviewSession
from digitise.solve.corrections import corrections_path, load_corrections, save_corrections
from digitise.solve.reasons import Reason, reason_by_code
from digitise.solve.report_types import SideName, Turn, TurnAction
from tests import reports

#: What the damaged board (page 1, board 3) truly records.
TRUE_PLAY = {"page": 1, "board": 3, "action": "move", "dice": [5, 1], "move": "22/21 8/3"}


def turn_at(session: ReviewSession, page: int, board: int) -> dict:
    return next(t for t in session.state()["turns"] if (t["page"], t["board"]) == (page, board))


def test_damaged_board_is_flagged_and_the_export_is_wrong(solved_sample: tuple[Path, str]) -> None:
    report, truth = solved_sample
    session = ReviewSession(report)
    damaged = turn_at(session, 1, 3)
    assert damaged["flagged"] and damaged["text"] != "bottom 51: 22/21 8/3"
    assert session.export_mat() != truth


def test_a_flagged_turn_carries_what_to_do_about_each_reason(solved_sample: tuple[Path, str]) -> None:
    """Beside each reason of a flagged turn the state says what to do about it: its reason's action, by code."""
    session = ReviewSession(solved_sample[0])
    damaged = turn_at(session, 1, 3)
    assert damaged["flagged"] and damaged["reasons"]
    expected = [reason.action for reason in map(reason_by_code, damaged["reason_codes"]) if reason is not None]
    assert damaged["reason_actions"] == expected and len(expected) == len(damaged["reasons"])
    assert all(turn["reason_actions"] == [] for turn in session.state()["turns"] if not turn["reasons"])


def test_a_report_without_codes_has_the_actions_told_from_its_texts(sample_report: Path) -> None:
    """A report written before reasons had codes: the code, and so the action, is found from the reason's text."""
    doc = json.loads(sample_report.read_text(encoding="utf-8"))
    for game in doc["games"]:
        for turn in game["turns"]:
            del turn["reason_codes"]
    sample_report.write_text(json.dumps(doc), encoding="utf-8")
    session = ReviewSession(sample_report, resolve=False)
    flagged = turn_at(session, 1, 2)
    assert flagged["reasons"] == ["low confidence"] and flagged["reason_codes"] == [Reason.LOW_CONFIDENCE.code]
    assert flagged["reason_actions"] == [Reason.LOW_CONFIDENCE.action]


def test_correction_re_decodes_and_exports_the_true_match(solved_sample: tuple[Path, str]) -> None:
    report, truth = solved_sample
    session = ReviewSession(report)
    result = session.correct(TRUE_PLAY)
    assert result["correction"] == "51: 22/21 8/3"
    changed = {(c["page"], c["board"]): c for c in result["changes"]}
    assert changed[(1, 3)]["after"] == "bottom 51: 22/21 8/3"
    # A later board is re-decoded from the corrected position: the checker it moves is on 5, not 8.
    assert changed[(1, 5)]["before"] == "bottom 42: 13/11 8/4"
    assert changed[(1, 5)]["after"] == "bottom 21: 13/11 5/4"
    assert session.export_mat() == truth
    state = session.state()
    assert turn_at(session, 1, 3)["corrected"] and turn_at(session, 1, 5)["changed"]
    assert state["corrections"] == [{"page": 1, "board": 3, "text": "51: 22/21 8/3"}]
    # Saved next to the report; a new session (browser closed, server restarted) re-applies it.
    assert load_corrections(corrections_path(report)) == {(1, 3): "51: 22/21 8/3"}
    again = ReviewSession(report)
    assert again.export_mat() == truth
    assert turn_at(again, 1, 3)["correction"] == "51: 22/21 8/3"


def test_the_corrections_file_records_the_page_files_the_scan_read(solved_sample: tuple[Path, str]) -> None:
    """So that `scan --corrections` can tell this match's pages from another's (a board's number cannot)."""
    report, _ = solved_sample
    doc = json.loads(report.read_text())
    doc["source_files"] = [{"file": "page-001.jpg", "bytes": 812345}]
    report.write_text(json.dumps(doc))
    ReviewSession(report).correct(TRUE_PLAY)
    saved = json.loads(corrections_path(report).read_text())
    assert saved["pages"] == [{"file": "page-001.jpg", "bytes": 812345}]
    # Re-solved, the report keeps them: a second correction records them too.
    session = ReviewSession(report)
    session.uncorrect({"page": 1, "board": 3})
    assert json.loads(corrections_path(report).read_text())["pages"] == saved["pages"]
    # Checked as the corrections file's part is, or the file it writes could not be read back.
    for entry, where in (({"file": "scans/page-001.jpg", "bytes": 1}, "$.source_files[0].file"),
                         ({"file": "page-001.jpg"}, "$.source_files[0]")):
        report.write_text(json.dumps({**doc, "source_files": [entry]}))
        with pytest.raises(InputError, match=rf"{re.escape(where)}: not a digitise report: must be"):
            ReviewSession(report)


def test_a_corrected_board_still_offers_the_scans_candidates(solved_sample: tuple[Path, str]) -> None:
    """Once corrected, a board listed only its correction: taking the runner-up meant undoing first."""
    session = ReviewSession(solved_sample[0])
    read_as = [c["correction"] for c in turn_at(session, 1, 3)["candidates"]]
    session.correct(TRUE_PLAY)
    candidates = turn_at(session, 1, 3)["candidates"]
    assert candidates[0]["correction"] == "bottom 51: 22/21 8/3" and not candidates[0].get("as_scanned")
    assert [c["correction"] for c in candidates[1:]] == [c for c in read_as if c != "bottom 51: 22/21 8/3"]
    assert all(c["as_scanned"] for c in candidates[1:])
    # One of them taken instead: it replaces the correction.
    session.correct({"page": 1, "board": 3, "text": candidates[1]["correction"]})
    assert load_corrections(corrections_path(solved_sample[0])) == {(1, 3): candidates[1]["correction"]}


def test_undo_restores_the_solver_reading(solved_sample: tuple[Path, str]) -> None:
    report, truth = solved_sample
    session = ReviewSession(report)
    before = session.export_mat()
    session.correct(TRUE_PLAY)
    result = session.uncorrect({"page": 1, "board": 3})
    assert session.export_mat() == before != truth
    assert any((c["page"], c["board"]) == (1, 3) for c in result["changes"])
    assert load_corrections(corrections_path(report)) == {}


def test_illegal_typed_move_is_refused_with_the_legal_ones(solved_sample: tuple[Path, str]) -> None:
    report, _ = solved_sample
    session = ReviewSession(report)
    with pytest.raises(CorrectionRefused) as refused:
        session.correct({**TRUE_PLAY, "move": "22/21 8/2"})
    # The moves are a 61: that is said first; then the plays of 51 nearest what was typed, the fix among them.
    assert refused.value.reason.startswith("22/21 8/2 is not a legal play of 51 for Alice (bottom) here; it is a "
                                           "play of 61: are the dice right? Else legal plays include ")
    assert "22/21 8/3" in refused.value.reason.split("include ")[1].split(", ")[:2]
    with pytest.raises(CorrectionRefused, match=r"51 can be played by Alice \(bottom\) here"):
        session.correct({**TRUE_PLAY, "move": ""})
    assert not corrections_path(report).exists()


def test_a_correction_the_match_cannot_follow_is_refused_and_nothing_changes(
    solved_sample: tuple[Path, str],
) -> None:
    report, _ = solved_sample
    session = ReviewSession(report)
    before = session.export_mat()
    # Board 6 is top's 44; saying it is a resignation leaves later boards unexplained... but the
    # solver may still honour it. A double on the opening board cannot be honoured (no cube action
    # before the first roll), so the solver tags it and the session refuses it.
    # With the rule's reason: a double before the first roll is no double at all.
    with pytest.raises(CorrectionRefused, match="no legal match reads page 1 board 1 as 'double' "
                                                r"\(a game opens with a roll, never a double\) together"):
        session.correct({"page": 1, "board": 1, "action": "double"})
    assert session.export_mat() == before
    assert not corrections_path(report).exists()


def test_a_refusal_names_the_change_made_and_the_earlier_correction_it_clashes_with(
    solved_sample: tuple[Path, str],
) -> None:
    report, _ = solved_sample
    session = ReviewSession(report)
    session.correct(TRUE_PLAY)
    # An opening board left blank: the match then cannot reach 22/21 on board 3 (the earlier correction).
    with pytest.raises(CorrectionRefused) as refused:
        session.correct({"page": 1, "board": 1, "action": "blank"})
    assert refused.value.reason == (
        "no legal match reads page 1 board 1 as 'blank' together with the earlier correction of page 1 board 3 "
        "('51: 22/21 8/3'): if that one is wrong, undo it first; nothing was changed")
    assert load_corrections(corrections_path(report)) == {(1, 3): "51: 22/21 8/3"}


def test_undoing_a_correction_a_later_one_rests_on_says_which_to_undo_first(
    solved_sample: tuple[Path, str],
) -> None:
    """Board 1 corrected to leave checkers on 11 and 10, then board 3 to play from them: undoing board 1 was
    refused as "no legal match reads page 1 board 3 ... together with the rest of the note", with no word of
    what to do."""
    session = ReviewSession(solved_sample[0])
    session.correct({"page": 1, "board": 1, "action": "move", "dice": [3, 2], "move": "13/10 13/11"})
    session.correct({"page": 1, "board": 3, "action": "move", "dice": [2, 1], "move": "11/9 10/9"})
    with pytest.raises(CorrectionRefused) as refused:
        session.uncorrect({"page": 1, "board": 1})
    assert refused.value.reason == (
        "no legal match reads page 1 board 3 as '21: 11/9 10/9' without the correction of page 1 board 1, which "
        "it rests on: undo page 1 board 3 first; nothing was changed")
    assert set(load_corrections(corrections_path(solved_sample[0]))) == {(1, 1), (1, 3)}
    session.uncorrect({"page": 1, "board": 3})
    session.uncorrect({"page": 1, "board": 1})
    assert load_corrections(corrections_path(solved_sample[0])) == {}


def test_uncorrect_names_the_board_it_needs(solved_sample: tuple[Path, str]) -> None:
    session = ReviewSession(solved_sample[0])
    for place, words in (({"page": -1, "board": 1}, r"\$\.page: must be a whole number 1 to 9999, got -1"),
                         ({"page": 10 ** 4000, "board": 1}, r"got 1000000\d*…$")):
        with pytest.raises(InputError, match=words) as refused:
            session.uncorrect(place)
        assert len(str(refused.value)) < 300


def test_corrections_file_that_no_longer_fits_is_a_clear_error(solved_sample: tuple[Path, str]) -> None:
    report, _ = solved_sample
    save_corrections(corrections_path(report), {(3, 2): "21: 13/11 5/4"}, report.name)
    with pytest.raises(InputError, match=r"corrections\.json: corrections that no longer fit this scan: page 3 board 2"):
        ReviewSession(report)
    save_corrections(corrections_path(report), {(1, 1): "double"}, report.name)
    with pytest.raises(InputError, match=r"no longer fit this scan: page 1 board 1 \('double'\)"):
        ReviewSession(report)


def test_learn_saves_labelled_cell_crops(solved_sample: tuple[Path, str], tmp_path: Path) -> None:
    """The corrected board's cells, found by the reader's own fit of the printed note, filed by label."""
    report, _ = solved_sample
    learn = tmp_path / "learn"
    session = ReviewSession(report, learn_dir=learn)
    session.correct(TRUE_PLAY)
    labels = json.loads((learn / "boards" / "match_p1b3.json").read_text())
    # 51: 22/21 8/3 for bottom: the 1 lands on 21 (B4, the top row), the 5 on 3 (W3).
    assert labels["cells"] == {"B4": [1], "W3": [5]}
    assert labels["cell_crops"] == 24 + 3 - 0  # 24 points, both off squares and the centre
    five = cv2.imread(str(learn / "5" / "match_p1b3_W3.png"), cv2.IMREAD_GRAYSCALE)
    one = cv2.imread(str(learn / "1" / "match_p1b3_B4.png"), cv2.IMREAD_GRAYSCALE)
    empties = sorted((learn / "empty").glob("match_p1b3_*.png"))
    assert len(empties) == 25
    # The written digits are in their crops (white ink on black) and the empty squares are empty:
    # the cells line up with the page.
    assert five is not None and one is not None
    assert (five > 127).sum() > 100 and (one > 127).sum() > 50
    for path in empties:
        empty = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
        assert empty is not None and (empty > 127).sum() < 20, path.name
    crop = cv2.imread(str(learn / "boards" / "match_p1b3.png"))
    assert crop is not None and crop.shape[:2] == tuple(labels["box"][3:1:-1])


def test_readings_option_and_missing_readings(solved_sample: tuple[Path, str], tmp_path: Path) -> None:
    report, truth = solved_sample
    doc = json.loads(report.read_text())
    readings = report.parent / doc.pop("readings")
    bare = report.parent / "bare.json"
    bare.write_text(json.dumps(doc))
    session = ReviewSession(bare)
    assert not session.state()["can_export"] and "--readings" in session.messages[0]
    with pytest.raises(CorrectionRefused, match="--readings"):
        session.export_mat()
    with_option = ReviewSession(bare, readings_path=readings)
    with_option.correct(TRUE_PLAY)
    assert with_option.export_mat() == truth


@pytest.mark.parametrize(
    ("content", "reason"),
    [("{", "not JSON"), ('{"turns": []}', 'no "games" list')],
)
def test_bad_report_is_an_input_error(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(InputError, match=reason) as caught:
        ReviewSession(path)
    assert str(path) in caught.value.message


def test_a_missed_double_is_marked_with_the_drop_button(tmp_path: Path) -> None:
    """The arrow of the double was not seen: the solver reads a resignation; "drop" puts the double back."""
    from digitise.notation.mat import format_mat
    from tests.review.sample_match import write_sample

    sample = write_sample(tmp_path, damage=12, lose_arrow=True)
    assert sample.damaged == (2, 5)
    session = ReviewSession(_report_for(sample.readings))
    assert turn_at(session, 2, 5)["action"] == "resign"
    result = session.correct({"page": 2, "board": 5, "action": "drop"})
    assert result["correction"] == "double; drop"
    assert {"bottom double", "top drop"} <= {c["after"] for c in result["changes"]}
    assert session.export_mat() == format_mat(sample.truth)


def _report_for(readings: Path) -> Path:
    """A report of a plain solve of ``readings`` (what `digitise scan` writes), beside it."""
    from digitise.notation.readings import load_readings
    from digitise.solve import report_to_json, solve

    result = solve(load_readings(readings), players=("Alice", "Bob"), length=5)
    report = dict(result.report)
    report.update(readings=readings.name, players=["Alice", "Bob"], length=5)
    path = readings.parent / "match.json"
    path.write_text(report_to_json(report), encoding="utf-8")
    return path


def test_crops_come_from_the_right_page_of_a_multi_page_tiff(tmp_path: Path) -> None:
    import numpy as np

    from digitise.notation.readings import BoardReading, PageReading, Readings, readings_to_json

    frames = [np.full((500, 600, 3), shade, np.uint8) for shade in (40, 200)]
    for frame, shade in zip(frames, (40, 200), strict=True):
        cv2.rectangle(frame, (100, 100), (300, 180), (shade // 2, 0, 255), -1)
    assert cv2.imwritemulti(str(tmp_path / "scan.tif"), frames)
    box = (100, 100, 201, 81)
    pages = tuple(PageReading("scan.tif", n, (BoardReading(1, box=box),)) for n in (1, 2))
    (tmp_path / "r.json").write_text(readings_to_json(Readings(pages)))
    (tmp_path / "rep.json").write_text(json.dumps(reports.report_json(reports.report([]), readings="r.json")))
    session = ReviewSession(tmp_path / "rep.json", resolve=False)
    for page, shade in ((1, 40), (2, 200)):
        png = session.crop_png(page, 1)
        assert png is not None
        crop = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        assert crop is not None
        assert crop.shape[:2] == (81 + 2 * 3, 201 + 2 * 8)
        assert tuple(crop[40, 100]) == (shade // 2, 0, 255)  # the board's own colour
        assert tuple(crop[0, 0]) == (shade, shade, shade)  # the margin around it, from the same page
    assert session.crop_png(3, 1) is None


def test_the_scans_notes_survive_a_re_solve(solved_sample: tuple[Path, str]) -> None:
    """A note of the scan (the page order kept) is no solver's: a correction's re-solve keeps it."""
    from digitise.pipeline import ORDER_KEPT

    report, _ = solved_sample
    doc = json.loads(report.read_text())
    doc["notes"] = [*doc.get("notes", []), ORDER_KEPT]
    doc["scan_notes"] = [ORDER_KEPT]
    report.write_text(json.dumps(doc))
    session = ReviewSession(report)
    assert session.state()["notes"].count(ORDER_KEPT) == 1
    session.correct(TRUE_PLAY)
    assert session.state()["notes"].count(ORDER_KEPT) == 1
    assert [note.text for note in session.scan.scan_notes] == [ORDER_KEPT]


def test_a_scan_note_that_is_not_text_is_refused(solved_sample: tuple[Path, str]) -> None:
    report, _ = solved_sample
    doc = json.loads(report.read_text())
    doc["scan_notes"] = [3]
    report.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"\$\.scan_notes: not a digitise report: a note is not text"):
        ReviewSession(report)


@pytest.mark.parametrize(("spoil", "where", "what"), [
    (lambda t: t["candidates"].__setitem__(0, 1.0), "candidates[0]", "a candidate is not an object"),
    (lambda t: t["candidates"][0].__setitem__("player", 5), "candidates[0].player", "not bottom or top"),
    (lambda t: t["candidates"][0].__setitem__("probability", float("nan")), "candidates[0].probability",
     "not a number from 0 to 1"),
    (lambda t: t.__setitem__("confidence", float("inf")), "confidence", "not a number from 0 to 1"),
    (lambda t: t.__setitem__("dice", [7, 1]), "dice", "not two dice 1-6"),
])
def test_a_report_spoilt_where_the_page_shows_it_is_refused_at_the_start(
        sample_report: Path, spoil: Any, where: str, what: str) -> None:
    """Such a report (no readings: shown as written) gave the page an internal error, or JSON it cannot read."""
    doc = json.loads(sample_report.read_text())
    turn = doc["games"][0]["turns"][1]
    assert turn["candidates"], "the sample's second turn has candidates"
    spoil(turn)
    sample_report.write_text(json.dumps(doc))
    with pytest.raises(InputError) as refused:
        ReviewSession(sample_report, resolve=False)
    assert refused.value.where == f"$.games[0].turns[1].{where}" and what in refused.value.reason


def test_a_withdrawn_correction_takes_its_learning_crops_with_it(solved_sample: tuple[Path, str],
                                                                  tmp_path: Path) -> None:
    report, _ = solved_sample
    learn = tmp_path / "learn"
    session = ReviewSession(report, learn_dir=learn)
    session.correct(TRUE_PLAY)
    assert (learn / "5" / "match_p1b3_W3.png").is_file()
    (learn / "5" / "other_p1b3_W3.png").write_bytes(b"another report's crop")
    session.uncorrect({"page": 1, "board": 3})
    assert sorted(p.name for p in learn.rglob("*") if p.is_file()) == ["other_p1b3_W3.png"]


def test_forget_learning_crops_takes_only_that_boards_files(tmp_path: Path) -> None:
    """A board corrected again under other digits must not leave its old crops under the old labels."""
    from digitise.review.pictures import forget_learning_crops

    files = ["4/m_p1b3_W3.png", "5/m_p1b3_W3.png", "empty/m_p1b3_B12.png", "boards/m_p1b3.png", "boards/m_p1b3.json",
             "5/m_p1b4_W3.png", "5/m_p1b3_x_W3.png", "boards/m_p1b4.json", "5/m_p1b3_W3.txt"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    assert forget_learning_crops(tmp_path, "m_p1b3") == 5
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["5/m_p1b3_W3.txt", "5/m_p1b3_x_W3.png", "5/m_p1b4_W3.png", "boards/m_p1b4.json"]
    assert forget_learning_crops(tmp_path / "missing", "m_p1b3") == 0


def _scanned_without_names(report: Path) -> None:
    """The report as a scan told nothing and whose headers were blank: names and length made up."""
    doc = json.loads(report.read_text(encoding="utf-8"))
    doc.update(players=None, length=None)
    report.write_text(json.dumps(doc), encoding="utf-8")


def test_names_and_length_set_on_the_page_are_written_saved_and_reset(solved_sample: tuple[Path, str]) -> None:
    report, truth = solved_sample
    _scanned_without_names(report)
    session = ReviewSession(report)
    made_up = session.state()["match"]
    assert made_up["players"] == ["Bottom", "Top"] and made_up["players_from"] == "unsure"
    assert made_up["length"] == 0 and made_up["length_from"] == "unsure"
    assert any(n.startswith("player names") for n in session.state()["notes"])
    session.correct(TRUE_PLAY)
    result = session.set_header({"players": ["Alice", "Bob"], "length": 5})
    assert result["match"]["players"] == ["Alice", "Bob"] and result["match"]["players_from"] == "review"
    assert result["match"]["length"] == 5 and result["match"]["length_from"] == "review"
    # With the board corrected and the header set, the export is the true match, names and length too.
    assert session.export_mat() == truth
    assert not any(n.startswith(("player names", "match length")) for n in session.state()["notes"])
    saved = json.loads(corrections_path(report).read_text(encoding="utf-8"))
    assert saved["match"] == {"players": ["Alice", "Bob"], "length": 5}
    assert ReviewSession(report).export_mat() == truth
    # Null (or left out) hands the field back to the scan.
    session.set_header({"players": None})
    assert session.state()["match"]["players"] == ["Bottom", "Top"]
    assert "match" not in json.loads(corrections_path(report).read_text(encoding="utf-8"))
    assert load_corrections(corrections_path(report)) == {(1, 3): "51: 22/21 8/3"}


def test_names_the_scan_was_given_are_shown_as_given(solved_sample: tuple[Path, str]) -> None:
    report, _ = solved_sample
    match = ReviewSession(report).state()["match"]
    assert (match["players"], match["players_from"], match["length"], match["length_from"]) == (
        ["Alice", "Bob"], "scan", 5, "scan")


def test_a_bad_header_request_changes_nothing(solved_sample: tuple[Path, str]) -> None:
    report, _ = solved_sample
    session = ReviewSession(report)
    before = session.export_mat()
    for request, where in (({"players": ["Alice", "Alice"]}, "$.players"), ({"length": 99}, "$.length"),
                           ({"players": ["A"], "length": 3}, "$.players"), ({"cube": 2}, "$")):
        with pytest.raises(InputError) as caught:
            session.set_header(request)
        assert caught.value.where == where
    assert session.export_mat() == before
    assert not corrections_path(report).exists()


def test_a_correction_that_cannot_be_saved_is_not_shown_either(
        solved_sample: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved before shown: the page never shows (or exports) what the file does not hold."""
    import digitise.review.session as session_module
    from digitise.errors import OutputError

    report, _ = solved_sample
    session = ReviewSession(report)
    before = (session.export_mat(), session.state()["corrections"])

    def full_disk(*args: object, **kwargs: object) -> Path:
        raise OutputError("cannot write: No space left on device", "c.json")

    monkeypatch.setattr(session_module, "save_corrections", full_disk)
    with pytest.raises(OutputError):
        session.correct(TRUE_PLAY)
    with pytest.raises(OutputError):
        session.set_header({"players": ["Ann", "Ben"]})
    assert (session.export_mat(), session.state()["corrections"]) == before


def test_save_writes_the_corrected_match_over_the_scans_mat(solved_sample: tuple[Path, str]) -> None:
    report, truth = solved_sample
    doc = json.loads(report.read_text(encoding="utf-8"))
    session = ReviewSession(report)
    with pytest.raises(CorrectionRefused, match="names no .mat file"):
        session.save_mat()
    scanned = report.parent / "match.mat"
    scanned.write_text(session.export_mat(), encoding="utf-8")
    report.write_text(json.dumps({**doc, "mat": "match.mat"}), encoding="utf-8")
    session = ReviewSession(report)
    assert session.state()["can_save"] and session.state()["mat"] == "match.mat"
    assert session.state()["mat_saved"]
    # Each change writes the .mat: closing the page after correcting leaves no stale file.
    result = session.correct(TRUE_PLAY)
    assert result["mat"] == {"written": str(scanned.resolve())}
    assert scanned.read_text(encoding="utf-8") == truth and session.state()["mat_saved"]
    scanned.write_text(" 5 point match\n", encoding="utf-8")
    assert not session.state()["mat_saved"]
    assert session.save_mat() == {"saved": str(scanned.resolve())}
    assert scanned.read_text(encoding="utf-8") == truth
    # A file that is no match is never replaced, whatever the report says.
    notes = report.parent / "notes.mat"
    notes.write_text("my notes\n")
    report.write_text(json.dumps({**doc, "mat": "notes.mat"}), encoding="utf-8")
    with pytest.raises(CorrectionRefused, match="is not a .mat file: not replaced"):
        ReviewSession(report).save_mat()
    # A correction is still taken (and saved); the page says why the .mat was not written.
    result = ReviewSession(report).correct(TRUE_PLAY)
    assert "is not a .mat file: not replaced" in result["mat"]["error"]
    assert notes.read_text() == "my notes\n"


def test_the_mat_a_report_names_is_written_only_inside_its_folder(solved_sample: tuple[Path, str],
                                                                  tmp_path: Path) -> None:
    report, _ = solved_sample
    doc = json.loads(report.read_text(encoding="utf-8"))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "precious.mat").write_text(" 1 point match\n")
    for named in ("../elsewhere/precious.mat", str(outside / "precious.mat"), "newdir/created.mat"):
        report.write_text(json.dumps({**doc, "mat": named}), encoding="utf-8")
        session = ReviewSession(report)
        assert session.mat_path() is None and not session.state()["can_save"], named
        session.correct(TRUE_PLAY)
    assert (outside / "precious.mat").read_text() == " 1 point match\n"
    assert not (report.parent / "newdir").exists()


def test_a_mat_that_is_a_pipe_is_never_opened(solved_sample: tuple[Path, str]) -> None:
    import os

    report, _ = solved_sample
    doc = json.loads(report.read_text(encoding="utf-8"))
    os.mkfifo(report.parent / "match.mat")
    report.write_text(json.dumps({**doc, "mat": "match.mat"}), encoding="utf-8")
    session = ReviewSession(report)
    assert session.state()["mat_saved"] is False
    result = session.correct(TRUE_PLAY)
    assert "not a .mat file" in result["mat"]["error"]


def test_two_pages_on_one_match_never_undo_each_other(solved_sample: tuple[Path, str]) -> None:
    """The folder's page and a single report's page both open: a change made in one is never lost in the other."""
    from digitise.review.refusals import CHANGED_ELSEWHERE

    report, _ = solved_sample
    first, second = ReviewSession(report), ReviewSession(report)
    first.correct(TRUE_PLAY)
    with pytest.raises(CorrectionRefused) as refused:
        second.set_header({"players": ["Alice", "Bruno"]})
    assert refused.value.reason == CHANGED_ELSEWHERE
    # The refused page now holds what the file says; the same change again goes through, keeping both.
    assert second.state()["corrections"] == [{"page": 1, "board": 3, "text": "51: 22/21 8/3"}]
    second.set_header({"players": ["Alice", "Bruno"]})
    saved = json.loads(corrections_path(report).read_text(encoding="utf-8"))
    assert saved["corrections"] == {"1:3": "51: 22/21 8/3"} and saved["match"] == {"players": ["Alice", "Bruno"]}
    with pytest.raises(CorrectionRefused):
        first.uncorrect({"page": 1, "board": 3})
    assert load_corrections(corrections_path(report)) == {(1, 3): "51: 22/21 8/3"}


def test_a_folder_that_cannot_be_written_is_said_at_the_start(sample_report: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from digitise import fileio

    real_access = os.access
    # Root may write anywhere: the folder is made to look read-only instead of being chmod-ed.
    monkeypatch.setattr(fileio.os, "access",
                        lambda path, mode: False if Path(path) == sample_report.parent else real_access(path, mode))
    session = ReviewSession(sample_report)
    assert any(m.startswith(f"corrections cannot be saved ({sample_report.parent} is not writable)")
               for m in session.messages), session.messages


def test_a_learning_folder_that_is_a_file_is_refused_at_the_start(sample_report: Path) -> None:
    from digitise.errors import OutputError

    a_file = sample_report.parent / "crops"
    a_file.write_text("not a folder")
    with pytest.raises(OutputError, match="cannot save learning crops: .* is a file, not a folder"):
        ReviewSession(sample_report, learn_dir=a_file)


def test_a_corrections_file_spoilt_by_hand_is_never_saved_over(solved_sample: tuple[Path, str]) -> None:
    """A typo made by hand in the corrections file: every change is refused, naming it, until it is mended; the
    corrections made before are neither forgotten nor overwritten."""
    report, truth = solved_sample
    session = ReviewSession(report)
    session.correct(TRUE_PLAY)
    saved = corrections_path(report)
    good = saved.read_text(encoding="utf-8")
    spoilt = good.replace('"51: 22/21 8/3"', '"51: 22/21 8/3",')
    saved.write_text(spoilt, encoding="utf-8")
    for _ in range(2):
        with pytest.raises(InputError, match="not JSON"):
            session.correct({"page": 1, "board": 5, "action": "move", "dice": [2, 1], "move": "13/11 5/4"})
        assert saved.read_text(encoding="utf-8") == spoilt
        assert session.corrections == {(1, 3): "51: 22/21 8/3"}
    # The page says so as it loads, before any change is tried.
    (problem,) = [m for m in session.state()["messages"] if "not JSON" in m]
    assert "none can be saved or exported until the file is mended" in problem
    saved.write_text(good, encoding="utf-8")  # as this session last wrote it: nothing to say
    assert not any("changed elsewhere" in m or "not JSON" in m for m in session.state()["messages"])
    assert session.export_mat() == truth
    session.correct({"page": 1, "board": 5, "action": "move", "dice": [2, 1], "move": "13/11 5/4"})
    assert load_corrections(saved) == {(1, 3): "51: 22/21 8/3", (1, 5): "21: 13/11 5/4"}


def test_a_second_review_of_the_same_report_cannot_save_or_export_stale_corrections(
        solved_sample: tuple[Path, str]) -> None:
    report, truth = solved_sample
    saving, exporting, correcting = ReviewSession(report), ReviewSession(report), ReviewSession(report)
    correcting.correct(TRUE_PLAY)
    for act in (saving.save_mat, exporting.export_mat):
        with pytest.raises(CorrectionRefused, match="changed elsewhere"):
            act()
    # Refused once, each has taken the file as it now is.
    for session in (saving, exporting):
        assert session.corrections == {(1, 3): "51: 22/21 8/3"} and session.export_mat() == truth
    loading = ReviewSession(report)
    correcting.uncorrect({"page": 1, "board": 3})
    messages = loading.state()["messages"]  # a page loading its state takes the file as it is now, saying so
    assert any("changed elsewhere" in m for m in messages) and loading.corrections == {}


def test_one_turns_correction_keeps_the_boards_other_turn() -> None:
    """A board holding the last move and the resignation after it: marking either keeps the other; a double is a
    board of its own, so marking one replaces the move (and a drop ends the game by itself)."""
    from digitise.review.board_parts import with_other_turns

    board = [reports.turn(1, 1, "top", "move", (5, 5), "8/3 4/off 4/off 3/off"),
             reports.turn(1, 1, "bottom", "resign", points=1)]
    assert with_other_turns("resign 2", "resign", board) == "top 55: 8/3 4/off 4/off 3/off; resign 2"
    assert with_other_turns("top 55: 8/3 6/1 4/off 3/off", "move", board) == "top 55: 8/3 6/1 4/off 3/off; resign 1"
    assert with_other_turns("double; drop", "cube", board) == "double; drop"
    assert with_other_turns("resign 1", "resign", [reports.turn(1, 1, "top", "double"),
                                                   reports.turn(1, 1, "bottom", "take")]) == "double; take; resign 1"


@pytest.mark.parametrize(("candidate", "correction"), [
    ({"action": "move", "player": "top", "dice": [5, 2], "move": "8/3 6/4"}, "top 52: 8/3 6/4"),
    # The answer to the double of the board before is part of the choice.
    ({"action": "move", "player": "top", "dice": [5, 2], "move": "8/3 6/4", "answer": "take"}, "take; top 52: 8/3 6/4"),
    ({"action": "move", "player": "bottom", "dice": [3, 1], "move": "8/5 6/5", "answer": "drop"},
     "drop; bottom 31: 8/5 6/5"),
    ({"action": "move", "player": "top", "dice": [6, 3], "move": ""}, "top 63:"),
    # A double answered on its own board, one the next board answers, one taken and at once conceded.
    ({"action": "double", "player": "top", "answer": "drop"}, "double; drop"),
    ({"action": "double", "player": "top"}, "double"),
    ({"action": "double", "player": "top", "answer": "take", "result": {"winner": "bottom", "points": 2}},
     "double; bottom wins 2"),
    ({"action": "resign", "result": {"winner": "bottom", "points": 1}}, "bottom wins 1"),
    ({"action": "blank"}, "blank"),
    ({"action": "letters"}, None),
])
def test_each_candidate_sends_the_correction_that_forces_it(candidate: dict[str, object], correction: str | None) -> None:
    from digitise.review.changes import candidate_correction
    from digitise.solve import parse_correction

    result: Any = candidate.get("result") or {}
    made = reports.candidate(str(candidate["action"]), str(candidate.get("move") or ""), candidate.get("dice"),  # type: ignore[arg-type]
                             player=candidate.get("player"), answer=candidate.get("answer"),  # type: ignore[arg-type]
                             winner=result.get("winner"), points=result.get("points", 0))
    assert candidate_correction(made) == correction
    if correction is not None:
        parse_correction(correction)  # the solver's correction language takes it


def test_two_review_servers_of_one_report_never_both_save(solved_sample: tuple[Path, str]) -> None:
    """A match's own review page and its folder's page are two processes on one corrections file: each
    checked the file, solved, then saved, and both answered "saved" while the later save undid the earlier.
    Now one saves and the other finds the file changed (and says so): what was answered saved is in it."""
    import threading

    from digitise.review.refusals import ChangedElsewhere
    from digitise.solve.corrections import load_corrections_file

    report, _ = solved_sample
    first, second = ReviewSession(report), ReviewSession(report)
    outcome: dict[str, str] = {}

    def attempt(name: str, change: Any) -> None:
        try:
            change()
            outcome[name] = "saved"
        except ChangedElsewhere:
            outcome[name] = "changed elsewhere"

    threads = [threading.Thread(target=attempt, args=("move", lambda: first.correct(TRUE_PLAY))),
               threading.Thread(target=attempt, args=("names", lambda: second.set_header({"players": ["Zed", "Yan"]})))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcome.values()) == ["changed elsewhere", "saved"], outcome
    saved = load_corrections_file(corrections_path(report))
    if outcome["move"] == "saved":
        assert saved.boards == {(1, 3): "51: 22/21 8/3"} and saved.header.players is None
    else:
        assert saved.boards == {} and saved.header.players == ("Zed", "Yan")


def _turn(board: int, player: SideName, action: TurnAction = "move") -> Turn:
    return reports.turn(1, board, player, action)


#: A 3-point match: in game 1 Bob doubles and Alice takes (she owns the cube), and Bob wins 2 (Crawford next); game 2 is the
#: Crawford game; in game 3 (Alice 0, Bob 2, cube centred) Bob's double would gain nothing.
CUBE_REPORT = reports.report([
    reports.game(1, [_turn(1, "bottom"), _turn(2, "top"), _turn(3, "bottom"), _turn(4, "top", "double"),
                     _turn(4, "bottom", "take"), _turn(5, "top"), _turn(6, "bottom"), _turn(7, "top")], "top", 2),
    reports.game(2, [_turn(8, "top"), _turn(9, "bottom"), _turn(10, "top")], "bottom", 1),
    reports.game(3, [_turn(11, "bottom"), _turn(12, "top"), _turn(13, "bottom")]),
])


@pytest.mark.parametrize(("board", "text", "rule"), [
    (1, "double", "a game opens with a roll, never a double"),
    (2, "double", None),  # the cube is centred: the marks decide
    (5, "double", "Alice (bottom) owns the cube: only they may double"),
    (7, "double; take", "Alice (bottom) owns the cube: only they may double"),
    (6, "double", None),  # the owner may redouble
    (9, "double", "this is the Crawford game, in which no one may double"),
    (12, "double", ("Bob (top) needs 1 to win the match and the cube is at 1: a double gains nothing, "
                    "and GNU Backgammon allows none")),
    (13, "double", None),  # Alice needs 3
    (6, "63: 13/7 13/10", None),  # no double
    (20, "double", None),  # no turn on that board
])
def test_a_refused_double_names_the_rule_that_forbids_it(board: int, text: str, rule: str | None) -> None:
    assert no_double_because(CUBE_REPORT, (1, board), text, ["Alice", "Bob"], 3) == rule


def test_the_turns_of_a_board_the_fit_is_unsure_of_are_flagged_and_shown_with_its_squares(
    unsure_fit_report: Path,
) -> None:
    """A page of another print with one board ruled by hand, through ``digitise scan``: that board's turns, and only
    they, are flagged unsure-fit, and their picture comes with the squares as placed drawn over it."""
    import numpy as np

    report = json.loads(unsure_fit_report.read_text(encoding="utf-8"))
    turns = [turn for game in report["games"] for turn in game["turns"]]
    unsure = {(turn["page"], turn["board"]) for turn in turns if "unsure-fit" in turn["reason_codes"]}
    assert unsure == {(1, 3)}
    flagged = next(turn for turn in turns if turn["board"] == 3)
    assert "its squares may be misplaced" in " ".join(flagged["reasons"])
    session = ReviewSession(unsure_fit_report)
    shown = {(turn["page"], turn["board"]): turn["overlay"] for turn in session.state()["turns"]}
    assert shown[(1, 3)] and not any(overlay for place, overlay in shown.items() if place != (1, 3))
    plain, drawn = session.crop_png(1, 3), session.crop_png(1, 3, overlay=True)
    assert plain is not None and drawn is not None
    plain_image = cv2.imdecode(np.frombuffer(plain, np.uint8), cv2.IMREAD_COLOR)
    drawn_image = cv2.imdecode(np.frombuffer(drawn, np.uint8), cv2.IMREAD_COLOR)
    assert plain_image.shape == drawn_image.shape
    # The squares are drawn in green where the scan has none.
    green = (drawn_image[..., 1].astype(int) - drawn_image[..., 2].astype(int) > 60).mean()
    assert green > 0.01 and (plain_image[..., 1].astype(int) - plain_image[..., 2].astype(int) > 60).mean() < 0.001
    assert session.crop_png(1, 2, overlay=True) is None

"""Reviewing a folder of reports (a batch's output): finding them, one session each, their figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from digitise.errors import InputError
from digitise.review.folder import ReviewFolder, find_reports
from digitise.solve.corrections import corrections_path, load_corrections
from tests.review.test_session import TRUE_PLAY


def test_finds_only_reports_in_natural_order(batch_folder: Path) -> None:
    assert [p.name for p in find_reports(batch_folder)] == ["m2.report.json", "m10.report.json"]


def test_a_folder_without_reports_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "x.readings.json").write_text("{}")
    with pytest.raises(InputError, match="no digitise report in this folder"):
        ReviewFolder(tmp_path)
    with pytest.raises(InputError, match="no such folder"):
        ReviewFolder(tmp_path / "absent")


def test_each_match_has_its_own_session_and_corrections(batch_folder: Path) -> None:
    folder = ReviewFolder(batch_folder)
    listed = folder.matches()
    assert [(m["number"], m["name"], m["opened"]) for m in listed] == [(1, "m2", False), (2, "m10", False)]
    assert listed[0]["flagged"] >= 1 and listed[0]["corrected"] == 0 and listed[0]["turns"] > 10
    with pytest.raises(KeyError):
        folder.session(3)
    second = folder.session(2)
    assert folder.session(2) is second
    second.correct(TRUE_PLAY)
    assert load_corrections(corrections_path(batch_folder / "m10.report.json")) == {(1, 3): "51: 22/21 8/3"}
    assert not corrections_path(batch_folder / "m2.report.json").exists()
    after = folder.matches()
    assert after[1]["opened"] and after[1]["corrected"] == 1
    assert after[1]["flagged"] < listed[1]["flagged"]
    # A closed match's figures come from its files: the saved correction is counted.
    again = ReviewFolder(batch_folder).matches()
    assert again[1]["corrected"] == 1 and not again[1]["opened"]


def test_a_bad_corrections_file_is_shown_against_its_match(batch_folder: Path) -> None:
    corrections_path(batch_folder / "m2.report.json").write_text('{"1:2": "jump"}')
    listed = ReviewFolder(batch_folder).matches()
    assert "cannot read 'jump'" in listed[0]["problem"]
    assert "problem" not in listed[1]


def test_only_a_few_sessions_keep_their_pictures_and_none_is_dropped(
        batch_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session stays (a request may be saving in it); the coldest ones only forget their decoded pages."""
    import digitise.review.folder as folder_module

    monkeypatch.setattr(folder_module, "OPEN_SESSIONS", 1)
    folder = ReviewFolder(batch_folder)
    first = folder.session(1)
    assert first.crop_png(1, 3) is not None and all(first.pictures_kept)
    first.correct(TRUE_PLAY)
    second = folder.session(2)
    assert first.pictures_kept == (0, 0)
    assert [m["opened"] for m in folder.matches()] == [True, True]
    assert folder.session(1) is first and folder.session(2) is second
    assert first.state()["corrections"] == [{"page": 1, "board": 3, "text": "51: 22/21 8/3"}]
    assert first.crop_png(1, 3) is not None


def test_a_closed_match_is_listed_as_last_solved_on_the_page(batch_folder: Path) -> None:
    """After a restart the list shows the flags left, not the report's: corrections keep the summary."""
    before = ReviewFolder(batch_folder).matches()[1]
    folder = ReviewFolder(batch_folder)
    folder.session(2).correct(TRUE_PLAY)
    after = ReviewFolder(batch_folder).matches()[1]
    assert not after["opened"] and after["corrected"] == 1
    assert after["flagged"] == folder.matches()[1]["flagged"] < before["flagged"]


def test_a_match_scanned_again_gets_a_new_session(batch_folder: Path) -> None:
    """A batch re-run with --force while the folder's page is open: the match opens as the new scan is."""
    import json
    import os

    folder = ReviewFolder(batch_folder)
    first = folder.session(1)
    assert folder.session(1) is first
    report = batch_folder / "m2.report.json"
    doc = json.loads(report.read_text(encoding="utf-8"))
    doc["mat"] = "m2-new.mat"  # what the page saves to: the new scan's
    (batch_folder / "new.json").write_text(json.dumps(doc), encoding="utf-8")
    os.replace(batch_folder / "new.json", report)
    renewed = folder.session(1)
    assert renewed is not first and folder.session(1) is renewed
    assert first.state()["mat"] == "m2.mat" and renewed.state()["mat"] == "m2-new.mat"


def test_each_match_is_listed_with_its_players_length_result_and_dances(batch_folder: Path) -> None:
    """The director's view: who played, to how many points, who won and by what score, the closed-out turns
    written as dances. A closed match's come from its .mat (corrections are written into it); an open one's
    from its session, as corrected."""
    from digitise.game.record import outcome
    from digitise.notation.mat import read_mat

    closed = ReviewFolder(batch_folder).matches()
    # The fixture's .mat files hold no game yet: nothing said rather than a made-up result.
    assert [(m["players"], m["score"], m["winner"]) for m in closed] == [(None, None, None)] * 2
    folder = ReviewFolder(batch_folder)
    session = folder.session(2)
    session.correct(TRUE_PLAY)
    ended = session.outcome()
    assert ended is not None and ended.players == ("Alice", "Bob") and ended.length == 5
    listed = folder.matches()[1]
    assert (listed["players"], listed["length"], listed["score"], listed["winner"], listed["games"]) == (
        ["Alice", "Bob"], 5, [ended.score.bottom, ended.score.top], ended.winner_name, ended.games)
    assert listed["closed_out"] == session.report.closed_out
    # Closed again, the same from the .mat the correction was written into.
    written = outcome(read_mat(batch_folder / "m10.mat").match)
    assert written == ended
    again = ReviewFolder(batch_folder).matches()[1]
    assert {k: again[k] for k in ("players", "length", "score", "winner")} == {
        k: listed[k] for k in ("players", "length", "score", "winner")}


def test_a_matchs_page_comes_with_its_first_flagged_turn_drawn(batch_folder: Path) -> None:
    """A folder's match page is answered with the match opened and its first turn to review in it; a match that
    cannot be opened gets the bare page, whose state request says why."""
    import urllib.request

    from digitise.review.server import ReviewServer

    corrections_path(batch_folder / "m10.report.json").write_text('{"1:2": "jump"}')
    server = ReviewServer(ReviewFolder(batch_folder), "127.0.0.1", 0)
    server.start_in_thread()
    try:
        with urllib.request.urlopen(server.url + "m/1/") as answer:
            html = answer.read().decode("utf-8")
        assert 'id="initial-state"' in html and "Is this what was written?" in html
        assert '<img class="crop" src="api/crop/' in html
        with urllib.request.urlopen(server.url + "m/2/") as answer:
            bare = answer.read().decode("utf-8")
        assert 'id="initial-state"' not in bare and "Loading…" in bare
    finally:
        server.shutdown()
        server.server_close()

"""The corrections file: what `digitise scan --corrections` and the review server read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from digitise.errors import InputError
from digitise.solve import parse_correction
from digitise.solve.corrections import (
    MatchHeader,
    check_fit,
    correction_from_request,
    corrections_path,
    corrections_to_json,
    header_from_json,
    load_corrections,
    load_corrections_file,
    parse_moves,
    save_corrections,
    unfitting,
)
from tests import reports


def test_round_trip_is_sorted_and_byte_stable(tmp_path: Path) -> None:
    corrections = {(2, 1): "double; drop", (1, 5): "21: 13/11 5/4", (1, 7): "resign 2"}
    path = save_corrections(tmp_path / "m.corrections.json", corrections, "m.json")
    assert load_corrections(path) == dict(sorted(corrections.items()))
    first = path.read_bytes()
    save_corrections(path, dict(reversed(list(corrections.items()))), "m.json")
    assert path.read_bytes() == first
    assert list(json.loads(first)["corrections"]) == ["1:5", "1:7", "2:1"]
    # Every text is one the solver reads.
    for text in load_corrections(path).values():
        parse_correction(text)


def test_bare_mapping_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"2:5": "61: 13/7 8/7", "3:1": "double"}')
    assert load_corrections(path) == {(2, 5): "61: 13/7 8/7", (3, 1): "double"}


def test_corrections_path_sits_next_to_the_report() -> None:
    assert corrections_path(Path("/x/night/match.json")) == Path("/x/night/match.corrections.json")


@pytest.mark.parametrize(
    ("content", "where", "reason"),
    [
        ("{", "line 1 column 2", "not JSON"),
        ('{"format": "other", "version": 1, "corrections": {}}', "$.format", "not a corrections file"),
        ('{"format": "digitise-corrections", "version": 9, "corrections": {}}', "$.version", "unsupported version 9"),
        ('{"format": "digitise-corrections", "version": 1, "corrections": []}', "$.corrections", "must be an object"),
        ('{"1-5": "double"}', "$.1-5", "page:board"),
        ('{"1:9": "double"}', "$.1:9", "board 1-8"),
        ('{"1:5": 3}', "$.1:5", "a correction is text"),
        ('{"1:5": "jump"}', "$.1:5", "cannot read 'jump'"),
        ('{"1:5": "resign 0"}', "$.1:5", "points must be at least 1"),
        ('["1:5"]', "$", "must be an object"),
        ('{"games": [], "summary": {}}', "$", "not a corrections file but a report"),
        ('{"format": "digitise-corrections", "version": 1, "match": {"length": 3}, "corrections": {}}', "$.match",
         "version 1 files have no match part"),
        ('{"format": "digitise-corrections", "version": 2, "match": [], "corrections": {}}', "$.match",
         "must be an object"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"event": "x"}, "corrections": {}}', "$.match",
         "unknown key 'event'"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"players": ["A"]}, "corrections": {}}',
         "$.match.players", "must be two names"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"players": ["A", "A"]}, "corrections": {}}',
         "$.match.players", "need different names"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"players": ["A:1", "B"]}, "corrections": {}}',
         "$.match.players", "cannot hold a name with a colon"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"players": [" ", "B"]}, "corrections": {}}',
         "$.match.players", "give two names"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"length": 65}, "corrections": {}}',
         "$.match.length", "0 to 64"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"length": true}, "corrections": {}}',
         "$.match.length", "whole number"),
    ],
)
def test_bad_files_name_the_file_the_place_and_the_reason(
    tmp_path: Path, content: str, where: str, reason: str
) -> None:
    path = tmp_path / "bad.corrections.json"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        load_corrections(path)
    assert caught.value.path == str(path)
    assert caught.value.where == where
    assert reason in caught.value.reason
    assert caught.value.message.startswith(f"{path}: {where}: ")


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="absent.json: no such file$"):
        load_corrections(tmp_path / "absent.json")
    with pytest.raises(InputError, match="is a folder, not a file"):
        load_corrections(tmp_path)
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="not UTF-8"):
        load_corrections(binary)


@pytest.mark.parametrize(
    ("request_doc", "text"),
    [
        ({"page": 1, "board": 2, "action": "move", "dice": [1, 2], "move": "24/23  13/11"}, "21: 24/23 13/11"),
        ({"page": 1, "board": 2, "action": "move", "dice": [6, 3], "move": ""}, "63:"),
        ({"page": 1, "board": 2, "action": "move", "dice": [4, 4], "move": "13/9(2)", "player": "top"},
         "top 44: 13/9(2)"),
        ({"page": 1, "board": 2, "action": "double"}, "double"),
        ({"page": 1, "board": 2, "action": "take"}, "double; take"),
        ({"page": 1, "board": 2, "action": "drop"}, "double; drop"),
        ({"page": 1, "board": 2, "action": "resign", "points": 2}, "resign 2"),
        ({"page": 1, "board": 2, "action": "blank"}, "blank"),
        ({"page": 3, "board": 8, "text": " bottom  wins 3 "}, "bottom wins 3"),
    ],
)
def test_requests_become_solver_corrections(request_doc: dict, text: str) -> None:
    key, got = correction_from_request(request_doc)
    assert key == (request_doc["page"], request_doc["board"])
    assert got == text
    parse_correction(got)


def test_parse_moves_reads_mat_notation() -> None:
    assert parse_moves("24/18 13/9") == [(24, 18), (13, 9)]
    assert parse_moves("bar/22* 6/off") == [(25, 22), (6, 0)]
    assert parse_moves("24/18/14") == [(24, 18), (18, 14)]
    assert parse_moves("13/9(2) 25/21") == [(13, 9), (13, 9), (25, 21)]
    assert parse_moves("") == []
    for bad, message in (("8-4", "cannot read"), ("4/8", "backwards"), ("30/20", "not 0")):
        with pytest.raises(ValueError, match=message):
            parse_moves(bad)


def test_fit_against_a_report() -> None:
    report = reports.report(
        [reports.game(1, [reports.turn(1, 1, "bottom", "double"),
                          reports.turn(1, 2, "top", "double", reasons=["correction does not fit", "low confidence"])])],
        [reports.skipped(1, 3, "blank board inside a game")])
    ok = {(1, 1): "31: 8/5 6/5", (1, 3): "blank", (2, 4): "blank"}
    assert unfitting(report, ok) == []
    check_fit(report, ok, "c.json")
    bad = {(1, 2): "double", (4, 1): "52: 13/8 13/11"}
    assert unfitting(report, bad) == [(1, 2), (4, 1)]
    with pytest.raises(InputError, match=r"c.json: corrections that no longer fit this scan: page 1 board 2"):
        check_fit(report, bad, "c.json")


def test_json_text_is_deterministic() -> None:
    text = corrections_to_json({(1, 2): "double"}, "r.json")
    assert text == corrections_to_json({(1, 2): "double"}, "r.json")
    assert json.loads(text) == {"format": "digitise-corrections", "version": 3, "report": "r.json",
                                "corrections": {"1:2": "double"}}


def _pages_file(tmp_path: Path, made_on: list[tuple[str, int]]) -> Path:
    path = tmp_path / "m.corrections.json"
    save_corrections(path, {(1, 2): "double"}, "m.json", pages=made_on)
    return path


def test_the_pages_a_review_was_made_on_round_trip(tmp_path: Path) -> None:
    path = _pages_file(tmp_path, [("page-001.jpg", 812345), ("page-002.jpg", 798120)])
    doc = json.loads(path.read_text())
    assert doc["pages"] == [{"file": "page-001.jpg", "bytes": 812345}, {"file": "page-002.jpg", "bytes": 798120}]
    assert load_corrections_file(path).pages == (("page-001.jpg", 812345), ("page-002.jpg", 798120))


def test_corrections_made_on_other_pages_are_refused_and_on_some_other_pages_noted(tmp_path: Path) -> None:
    """A board's number fits any match's pages (another match's "1:1" overwrote a move read right, without a
    word): the page files the review was made on, by name and size, must be among those scanned."""
    from digitise.solve.corrections import check_pages, page_files

    one, two = tmp_path / "page-001.jpg", tmp_path / "page-002.jpg"
    one.write_bytes(b"a" * 10)
    two.write_bytes(b"b" * 20)
    made_on = page_files([one, two])
    assert made_on == (("page-001.jpg", 10), ("page-002.jpg", 20))
    kept = load_corrections_file(_pages_file(tmp_path, list(made_on)))
    assert check_pages(kept, page_files([one, two]), "m.corrections.json") is None
    # Another match's pages, named alike: the sizes tell.
    other = tmp_path / "other"
    other.mkdir()
    (other / "page-001.jpg").write_bytes(b"c" * 11)
    (other / "page-002.jpg").write_bytes(b"d" * 21)
    with pytest.raises(InputError, match=r"m.corrections.json: made on other pages \(page-001.jpg, page-002.jpg\), "
                                         r"not these: is it the corrections file of another match\?"):
        check_pages(kept, page_files([other / "page-001.jpg", other / "page-002.jpg"]), "m.corrections.json")
    # Page 2 scanned again: applied, with a note naming it.
    note = check_pages(kept, page_files([one, other / "page-002.jpg"]), "m.corrections.json")
    assert note == ("corrections: m.corrections.json was made on pages that differ from these (page-002.jpg): "
                    "check the corrected turns of those pages")
    assert "some are not given" in (check_pages(kept, page_files([one]), "m.corrections.json") or "")
    # A file that records no pages (version 2, or a `solve` report's review) is not checked.
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"format": "digitise-corrections", "version": 2, "corrections": {"1:2": "double"}}))
    assert check_pages(load_corrections_file(bare), page_files([other / "page-001.jpg"]), bare) is None


@pytest.mark.parametrize(("pages", "where", "reason"), [
    ('{"file": "a.jpg"}', "$.pages[0]", "must be"),
    ('{"file": "", "bytes": 3}', "$.pages[0].file", "a file's name"),
    ('{"file": "x/a.jpg", "bytes": 3}', "$.pages[0].file", "a file's name"),
    ('{"file": "a.jpg", "bytes": -1}', "$.pages[0].bytes", ""),
    ('{"file": "a.jpg", "bytes": true}', "$.pages[0].bytes", ""),
])
def test_a_malformed_pages_part_is_named(tmp_path: Path, pages: str, where: str, reason: str) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"format": "digitise-corrections", "version": 3, "pages": [' + pages + '], "corrections": {}}')
    with pytest.raises(InputError) as caught:
        load_corrections_file(path)
    assert where in str(caught.value) and reason in str(caught.value)
    path.write_text('{"format": "digitise-corrections", "version": 2, "pages": [], "corrections": {}}')
    with pytest.raises(InputError, match=r"\$\.pages.*version 2 files have no pages part"):
        load_corrections_file(path)


def test_match_header_round_trips_and_version_1_files_still_read(tmp_path: Path) -> None:
    path = tmp_path / "m.corrections.json"
    header = MatchHeader(("Ana María", "Bo"), 7)
    save_corrections(path, {(1, 2): "double"}, "m.json", header)
    saved = load_corrections_file(path)
    assert saved.boards == {(1, 2): "double"}
    assert saved.header == header
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["match"] == {"players": ["Ana María", "Bo"], "length": 7}
    # Names are kept as written, not escaped: the file is for people too.
    assert "Ana María" in path.read_text(encoding="utf-8")
    # Only what was set is written; nothing set, no "match" part.
    save_corrections(path, {}, "m.json", MatchHeader(length=0))
    assert json.loads(path.read_text())["match"] == {"length": 0}
    assert load_corrections_file(path).header == MatchHeader(None, 0)
    save_corrections(path, {}, "m.json")
    assert "match" not in json.loads(path.read_text())
    old = tmp_path / "old.corrections.json"
    old.write_text('{"format": "digitise-corrections", "version": 1, "report": "m.json", '
                   '"corrections": {"1:3": "double"}}')
    assert load_corrections_file(old).boards == {(1, 3): "double"}
    assert not load_corrections_file(old).header.given


def test_header_requests_are_checked_and_names_tidied() -> None:
    assert header_from_json({"players": [" Ann  Lee ", "Bo"], "length": None}, "$", "request") == MatchHeader(
        ("Ann Lee", "Bo"), None)
    assert header_from_json({}, "$", "request") == MatchHeader()
    with pytest.raises(InputError) as caught:
        header_from_json({"players": ["Ann", "Bo"], "length": "5"}, "$", "request")
    assert (caught.value.where, caught.value.path) == ("$.length", "request")


@pytest.mark.parametrize(
    ("content", "where", "reason"),
    [
        ('{"format": "digitise-corrections", "version": 2.0, "corrections": {}}', "$.version", "unsupported version"),
        ('{"format": "digitise-corrections", "version": true, "corrections": {}}', "$.version", "unsupported version"),
        ('{"format": "digitise-corrections", "version": 2, "Match": {}, "corrections": {}}', "$.Match", "unknown key"),
        ('{"format": "digitise-corrections", "version": 2, "match": {"players": ["12)", "Bo"]}, "corrections": {}}',
         "$.match.players", "start like a move number"),
        ('{"1:3": "61: \u0661\u0663/7 8/7"}', "$.1:3", "cannot read"),
    ],
)
def test_hand_edited_files_are_checked_alike(tmp_path: Path, content: str, where: str, reason: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_corrections(path)
    assert (caught.value.where, reason in caught.value.reason) == (where, True), caught.value.message


def test_a_number_too_long_to_read_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"1:3": ' + "1" * 5000 + "}")
    with pytest.raises(InputError) as info:
        load_corrections(path)
    assert info.value.message == f"{path}: not a corrections file: a number 5,000 digits long at line 1 column 9 " \
                                 "(none may be over 4,300)"


def test_a_summary_out_of_range_is_dropped_not_shown(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"format": "digitise-corrections", "version": 2, '
                    '"summary": {"games": 1, "turns": -4, "flagged": 2}, "corrections": {}}')
    assert load_corrections_file(path).summary is None

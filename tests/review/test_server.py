"""The review server's endpoints, over real HTTP on a free port of 127.0.0.1."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import pytest

from digitise.game.position import Position
from digitise.review.server import MAX_BODY, ReviewServer
from digitise.solve.corrections import corrections_path, load_corrections
from digitise.solve.reasons import Reason


def request(
    server: ReviewServer, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Send one raw request (paths are sent exactly as given, never normalised)."""
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def post_json(server: ReviewServer, path: str, doc: Any) -> tuple[int, Any]:
    status, _, body = request(server, "POST", path, json.dumps(doc).encode(), {"Content-Type": "application/json"})
    return status, json.loads(body)


def test_binds_to_loopback_by_default(review_server: ReviewServer) -> None:
    assert review_server.server_address[0] == "127.0.0.1"
    assert review_server.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize(("bind", "shown"), [("::", "http://[::1]:"), ("[::1]", "http://[::1]:"),
                                              ("0.0.0.0", "http://127.0.0.1:")])
def test_an_ipv6_or_every_address_bind_gives_an_address_to_open(sample_report: Path, bind: str, shown: str) -> None:
    """--host [::1] (as a URL writes it) was refused as an unknown name, and --host :: printed http://[::]:PORT/,
    which no browser opens."""
    from digitise.review.session import ReviewSession

    try:
        server = ReviewServer(ReviewSession(sample_report, resolve=False), bind, 0)
    except OSError as exc:  # a machine without IPv6
        pytest.skip(f"cannot bind {bind}: {exc}")
    try:
        assert server.url.startswith(shown), server.url
    finally:
        server.server_close()


def test_page_and_static_files(review_server: ReviewServer) -> None:
    status, headers, body = request(review_server, "GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"/static/review.js" in body
    for name, kind in (("review.js", "text/javascript"), ("review.css", "text/css")):
        status, headers, body = request(review_server, "GET", f"/static/{name}")
        assert status == 200 and headers["Content-Type"].startswith(kind) and body


def test_state_lists_turns_with_readings(review_server: ReviewServer) -> None:
    status, _, body = request(review_server, "GET", "/api/state")
    state = json.loads(body)
    assert status == 200
    assert [t["id"] for t in state["turns"]] == ["p1b1", "p1b2", "p1b3"]
    flagged = [t for t in state["turns"] if t["flagged"]]
    assert [t["text"] for t in flagged] == ["top 42: 8/4 6/4"]
    assert flagged[0]["cells"] == {"B4": [{"digits": [4, 2], "probability": 1.0}]}
    assert flagged[0]["has_crop"] is True
    assert state["can_export"] is False  # no solver in this fixture


def test_crop_is_the_board_from_the_page(review_server: ReviewServer) -> None:
    import cv2
    import numpy as np

    status, headers, body = request(review_server, "GET", "/api/crop/1/2.png")
    assert status == 200 and headers["Content-Type"] == "image/png"
    crop = cv2.imdecode(np.frombuffer(body, np.uint8), cv2.IMREAD_COLOR)
    assert crop is not None
    # 300 x 120 box plus a 4 % margin each side.
    assert crop.shape[:2] == (120 + 2 * 4, 300 + 2 * 12)
    assert request(review_server, "GET", "/api/crop/1/7.png")[0] == 404
    assert request(review_server, "GET", "/api/crop/9/1.png")[0] == 404


def test_board_svg(review_server: ReviewServer) -> None:
    pid = Position.initial().position_id()
    status, headers, body = request(review_server, "GET", f"/api/board.svg?position={pid}&mover=top&highlight=8,6")
    assert status == 200 and headers["Content-Type"] == "image/svg+xml"
    assert body.count(b'class="checker') == 30
    for bad in (f"/api/board.svg?position={pid}&mover=left", "/api/board.svg?position=<script>&mover=top",
                "/api/board.svg?position=%2F%2F%2F%2F%2F%2F%2F%2F%2F%2F%2F%2F%2F%2F&mover=top"):
        status, _, body = request(review_server, "GET", bad)
        assert status == 400 and "error" in json.loads(body)


@pytest.mark.parametrize(
    "path",
    [
        "/../../etc/passwd",
        "/files/../../etc/passwd",
        "/files/..%2f..%2f..%2fetc%2fpasswd",
        "/files/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/files/%252e%252e/etc/passwd",
        "/files//etc/passwd",
        "/files/%2fetc%2fpasswd",
        "/static/../server.py",
        "/static/..%2fserver.py",
        "/files/page1.png%00.txt",
        "/files/..\\..\\etc\\passwd",
    ],
)
def test_no_path_traversal(review_server: ReviewServer, path: str) -> None:
    status, headers, body = request(review_server, "GET", path)
    assert status in (403, 404)
    assert b"root:" not in body
    assert headers["Content-Type"].startswith("application/json") and "error" in json.loads(body)


def test_serves_files_under_the_report_folder(review_server: ReviewServer, sample_report: Path) -> None:
    status, headers, body = request(review_server, "GET", "/files/page1.png")
    assert status == 200 and headers["Content-Type"] == "image/png"
    assert body == (sample_report.parent / "page1.png").read_bytes()
    # A symlink out of the folder is outside it too.
    (sample_report.parent / "escape").symlink_to("/etc")
    assert request(review_server, "GET", "/files/escape/hostname")[0] == 403
    # Only scans, reports and matches: never a page a browser would run, nor a hidden file (a key kept in the folder).
    (sample_report.parent / "notes.html").write_text("<script>alert(1)</script>", encoding="utf-8")
    assert request(review_server, "GET", "/files/notes.html")[0] == 403
    (sample_report.parent / ".ssh").mkdir()
    (sample_report.parent / ".ssh" / "id_rsa.png").write_bytes(b"secret")
    assert request(review_server, "GET", "/files/.ssh/id_rsa.png")[0] == 403
    (sample_report.parent / "m.mat").write_text(" 1 point match\n", encoding="utf-8")
    status, headers, body = request(review_server, "GET", "/files/m.mat")
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and body == b" 1 point match\n"


def test_foreign_host_header_refused(review_server: ReviewServer) -> None:
    port = review_server.server_address[1]
    # The last one names 127.0.0.1 before the last colon, but it is no host of ours.
    for host in ("evil.example:80", "127.0.0.1.evil.example", f"127.0.0.1:{port}@evil.example", "", "[::1"):
        status, _, body = request(review_server, "GET", "/api/state", headers={"Host": host})
        assert status == 403 and "host" in json.loads(body)["error"], host
    for host in (f"127.0.0.1:{port}", "localhost", f"[::1]:{port}"):
        assert request(review_server, "GET", "/api/state", headers={"Host": host})[0] == 200, host


@pytest.mark.parametrize("bind", ["127.0.0.2", "0.0.0.0"])
def test_foreign_host_header_refused_whatever_address_is_bound(sample_report: Path, bind: str) -> None:
    """DNS rebinding was only checked when bound to 127.0.0.1, localhost or ::1: bound to another loopback
    address, or shared with --host 0.0.0.0, any web page could rebind its name here and post corrections."""
    import socket

    from digitise.review.session import ReviewSession

    server = ReviewServer(ReviewSession(sample_report, resolve=False), bind, 0)
    server.start_in_thread()
    try:
        port = server.server_address[1]
        target = "127.0.0.2" if bind == "127.0.0.2" else "127.0.0.1"
        connection = http.client.HTTPConnection(target, port, timeout=10)

        def status_for(host: str, method: str = "GET") -> int:
            body = json.dumps({"players": ["Evil", "Site"]}).encode() if method == "POST" else None
            headers = {"Host": host, "Content-Type": "application/json", "Origin": f"http://{host}"}
            connection.request(method, "/api/state" if method == "GET" else "/api/match", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            connection.close()
            return response.status

        assert status_for(f"evil.example:{port}") == 403
        assert status_for(f"evil.example:{port}", "POST") == 403
        assert not corrections_path(sample_report).exists()
        for host in (f"{target}:{port}", f"localhost:{port}", f"{socket.gethostname()}:{port}", f"192.168.1.20:{port}"):
            assert status_for(host) == 200, host
    finally:
        server.shutdown()
        server.server_close()


def test_a_client_that_hangs_up_before_its_answer_leaves_no_traceback(
        review_server: ReviewServer, capfd: pytest.CaptureFixture[str]) -> None:
    """Each error answer written to a closed connection printed a traceback on the terminal (134 of them for
    600 dropped connections); the server went on, but the terminal was buried."""
    import socket
    import time

    host, port = review_server.server_address[:2]
    for line in (b"GET /api/state HTTP/1.1\r\nHost: evil.example\r\n\r\n", b"GET /nonexistent HTTP/1.1\r\n\r\n",
                 b"FOO / HTTP/1.1\r\n\r\n"):
        for _ in range(5):
            with socket.create_connection((str(host), int(port))) as client:
                client.sendall(line)
    time.sleep(0.5)
    assert request(review_server, "GET", "/api/state")[0] == 200
    assert "Traceback" not in capfd.readouterr().err


def test_legal_correction_is_saved_atomically_next_to_the_report(
    review_server: ReviewServer, sample_report: Path
) -> None:
    status, doc = post_json(review_server, "/api/correct",
                            {"page": 1, "board": 2, "action": "move", "dice": [5, 2], "move": "8/3 6/4"})
    assert status == 200, doc
    assert doc["correction"] == "52: 8/3 6/4"
    assert load_corrections(corrections_path(sample_report)) == {(1, 2): "52: 8/3 6/4"}
    state = json.loads(request(review_server, "GET", "/api/state")[2])
    turn = next(t for t in state["turns"] if t["id"] == "p1b2")
    assert turn["corrected"] and turn["correction"] == "52: 8/3 6/4"
    # The same correction as text (what accepting a candidate sends), with the player named.
    status, doc = post_json(review_server, "/api/correct", {"page": 1, "board": 2, "text": "top 52:  8/3 6/4"})
    assert status == 200 and doc["correction"] == "top 52: 8/3 6/4"
    # Undo removes it from the file too.
    status, doc = post_json(review_server, "/api/uncorrect", {"page": 1, "board": 2})
    assert status == 200
    assert load_corrections(corrections_path(sample_report)) == {}


def test_illegal_move_gets_a_clear_message(review_server: ReviewServer, sample_report: Path) -> None:
    status, doc = post_json(review_server, "/api/correct",
                            {"page": 1, "board": 2, "action": "move", "dice": [4, 2], "move": "24/20 6/5"})
    assert status == 409
    assert "24/20 6/5 is not a legal play of 42 for top" in doc["error"]
    assert "legal plays include" in doc["error"]
    assert not corrections_path(sample_report).exists()


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        (b"not json", 400, "not JSON"),
        (b"[1, 2]", 400, "must be an object"),
        (b'{"page": 1, "board": 2}', 400, "missing 'action'"),
        (b'{"page": 1, "board": 9, "action": "double"}', 400, "$.board: must be a whole number 1 to 8"),
        (b'{"page": "1", "board": 2, "action": "double"}', 400, "whole number"),
        (b'{"page": 1, "board": 2, "action": "jump"}', 400, "must be one of"),
        (b'{"page": 1, "board": 2, "action": "move", "dice": [7, 1], "move": ""}', 400, "$.dice[0]"),
        (b'{"page": 1, "board": 2, "action": "move", "dice": [4, 2], "move": "8-4"}', 400, "cannot read"),
        (b'{"page": 1, "board": 2, "action": "resign"}', 400, "$.points"),
        (b'{"page": 1, "board": 2, "action": "double", "dice": [1, 2]}', 400, "a double has no 'dice'"),
        (b'{"page": 1, "board": 2, "text": "jump around"}', 400, "cannot read 'jump around'"),
        (b'{"page": 1, "board": 2, "text": 42}', 400, "$.text"),
        (b'{"page": 1, "board": 2, "action": "double", "evil": 1}', 400, "unknown key"),
        (b'{"page": 5, "board": 2, "action": "double"}', 409, "not in the readings"),
        (b'\xff\xfe', 400, "not JSON"),
        (b"[" * 8000 + b"]" * 8000, 400, "nested too deeply"),
    ],
)
def test_malformed_corrections_are_4xx_with_a_message(
    review_server: ReviewServer, body: bytes, status: int, fragment: str
) -> None:
    got, _, answer = request(review_server, "POST", "/api/correct", body, {"Content-Type": "application/json"})
    assert got == status
    assert fragment in json.loads(answer)["error"]


def test_request_limits(review_server: ReviewServer) -> None:
    big = b'{"page": 1, "board": 2, "action": "double", "x": "' + b"a" * MAX_BODY + b'"}'
    status, _, body = request(review_server, "POST", "/api/correct", big, {"Content-Type": "application/json"})
    assert status == 413 and "over" in json.loads(body)["error"]
    status, _, _ = request(review_server, "POST", "/api/correct", b"{}", {"Content-Type": "text/plain"})
    assert status == 415
    status, _, _ = request(review_server, "POST", "/api/correct", b"{}",
                           {"Content-Type": "application/json", "Origin": "http://evil.example"})
    assert status == 403
    status, headers, _ = request(review_server, "DELETE", "/api/correct")
    assert status == 405 and headers["Allow"] == "GET, HEAD, POST"
    assert request(review_server, "POST", "/api/nothing", b"{}", {"Content-Type": "application/json"})[0] == 404
    status, _, body = request(review_server, "POST", "/api/save", b"42", {"Content-Type": "application/json"})
    assert status == 400 and "{}" in json.loads(body)["error"]


def test_a_body_shorter_than_its_length_is_refused_not_waited_for(review_server: ReviewServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from digitise.review import server as server_module

    # The server's wait for the missing bytes, shortened for the test (10 s when serving).
    monkeypatch.setattr(server_module.ReviewHandler, "timeout", 0.5)
    host, port = review_server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=10) as raw:
        raw.sendall(b"POST /api/correct HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100\r\n\r\n{}")
        # The server closes the connection after its answer: read to the end.
        chunks = []
        while chunk := raw.recv(65536):
            chunks.append(chunk)
        answer = b"".join(chunks).decode("latin-1")
    assert answer.startswith(("HTTP/1.0 400", "HTTP/1.1 400")), answer[:80]
    assert "shorter than its Content-Length" in answer


def test_export_without_a_solved_match_is_a_clear_409(review_server: ReviewServer) -> None:
    status, _, body = request(review_server, "GET", "/api/export.mat")
    assert status == 409 and "--readings" in json.loads(body)["error"]


def test_match_names_and_length_over_http(review_server: ReviewServer, sample_report: Path) -> None:
    status, answer = post_json(review_server, "/api/match", {"players": ["Ann", "Ann"]})
    assert status == 400 and answer["error"] == "$.players: the two players need different names"
    status, answer = post_json(review_server, "/api/match", {"length": -1})
    assert status == 400 and answer["error"].startswith("$.length: must be a whole number 0 to 64")
    assert not corrections_path(sample_report).exists()
    status, answer = post_json(review_server, "/api/match", {"players": ["Ann", "Ben"], "length": 3})
    assert status == 200 and answer["match"]["reviewed"] == {"players": ["Ann", "Ben"], "length": 3}
    saved = json.loads(corrections_path(sample_report).read_text(encoding="utf-8"))
    assert saved["match"] == {"players": ["Ann", "Ben"], "length": 3}
    status, _, body = request(review_server, "GET", "/api/state")
    assert json.loads(body)["match"]["players"] == ["Ann", "Ben"]


def test_a_folder_lists_its_matches_and_serves_each_under_its_number(batch_folder: Path) -> None:
    from digitise.review.folder import ReviewFolder
    from tests.review.conftest import served

    with served(ReviewFolder(batch_folder)) as server:
        status, headers, body = request(server, "GET", "/")
        assert status == 200 and b"/static/folder.js" in body
        status, _, body = request(server, "GET", "/api/matches")
        assert status == 200 and [m["name"] for m in json.loads(body)["matches"]] == ["m2", "m10"]
        status, headers, _ = request(server, "GET", "/m/2")
        assert status == 301 and headers["Location"] == "/m/2/"
        status, _, body = request(server, "GET", "/m/2/")
        assert status == 200 and b'href="api/export.mat"' in body
        status, _, body = request(server, "GET", "/m/2/api/state")
        assert status == 200 and json.loads(body)["title"] == "m10.report.json"
        status, answer = post_json(server, "/m/2/api/correct", {"page": 1, "board": 3, "action": "move",
                                                                "dice": [5, 1], "move": "22/21 8/3"})
        assert status == 200, answer
        assert load_corrections(corrections_path(batch_folder / "m10.report.json")) == {(1, 3): "51: 22/21 8/3"}
        status, headers, body = request(server, "GET", "/m/2/api/export.mat")
        assert status == 200 and 'filename="m10.mat"' in headers["Content-Disposition"]
        assert request(server, "GET", "/m/3/api/state")[0] == 404
        assert request(server, "GET", "/api/state")[0] == 404
        assert request(server, "GET", "/m/1/files/..%2f..%2fetc/passwd")[0] in (403, 404)
        assert request(server, "GET", "/m/1/files/page1.png")[0] == 200
        assert post_json(server, "/api/correct", {"page": 1, "board": 3, "action": "double"})[0] == 404


def test_a_match_that_cannot_be_opened_still_gets_its_page_and_says_why(batch_folder: Path) -> None:
    from digitise.review.folder import ReviewFolder
    from tests.review.conftest import served

    corrections_path(batch_folder / "m10.report.json").write_text('{"9:1": "double"}')
    with served(ReviewFolder(batch_folder)) as server:
        status, _, body = request(server, "GET", "/m/2/")
        assert status == 200 and b"/static/review.js" in body
        status, _, body = request(server, "GET", "/m/2/api/state")
        assert status == 400 and "no longer fit this scan" in json.loads(body)["error"]
        assert request(server, "GET", "/m/3/")[0] == 404
        assert request(server, "GET", "/m/1/api/state")[0] == 200


def test_save_over_http_writes_the_matchs_mat(batch_folder: Path) -> None:
    from digitise.review.folder import ReviewFolder
    from tests.review.conftest import served

    with served(ReviewFolder(batch_folder)) as server:
        status, answer = post_json(server, "/m/1/api/save", {})
        assert status == 200 and answer["saved"] == str((batch_folder / "m2.mat").resolve())
        assert (batch_folder / "m2.mat").read_text(encoding="utf-8").strip().startswith("5 point match")
        assert "Game 1" in (batch_folder / "m2.mat").read_text(encoding="utf-8")
        status, _, _ = request(server, "POST", "/m/1/api/save", b"{}", {"Content-Type": "text/plain"})
        assert status == 415


def test_inputs_python_cannot_read_are_4xx_not_a_dropped_connection(review_server: ReviewServer) -> None:
    huge = "1" * 5000
    status, _, body = request(review_server, "POST", "/api/correct",
                              f'{{"page": {huge}, "board": 1, "action": "blank"}}'.encode(),
                              {"Content-Type": "application/json"})
    assert json.loads(body)["error"] == "the body is not JSON: a number 5,000 digits long at line 1 column 10 " \
                                        "(none may be over 4,300)" and status == 400
    position = Position.initial().position_id()
    status, _, _ = request(review_server, "GET", f"/api/board.svg?position={position}&mover=bottom&highlight={'9' * 4301}")
    assert status == 200
    # "²" passes str.isdigit() and fails int(): it is no point to light up, not a dropped connection.
    status, _, body = request(review_server, "GET", f"/api/board.svg?position={position}&mover=top&highlight=%C2%B2,8")
    assert status == 200 and body.startswith(b"<svg")
    assert request(review_server, "GET", "/api/crop/%C2%B2/1.png")[0] == 404
    assert request(review_server, "GET", "/files/" + "a" * 256)[0] == 404
    for method in ("OPTIONS", "TRACE", "BREW"):
        status, headers, body = request(review_server, method, "/api/state")
        assert status in (405, 501) and headers["Content-Type"].startswith("application/json"), method
        assert json.loads(body)["error"]


def test_a_refusal_for_changes_made_elsewhere_says_so_in_the_answer(review_server: ReviewServer,
                                                                  sample_report: Path) -> None:
    """The page loads the match again on such a refusal: the answer carries it, not only the message's words."""
    from digitise.review.session import ReviewSession
    from tests.review.conftest import served

    correction = {"page": 1, "board": 2, "action": "move", "dice": [5, 2], "move": "8/3 6/4"}
    with served(ReviewSession(sample_report, resolve=False)) as other:
        assert post_json(other, "/api/correct", correction)[0] == 200
    status, doc = post_json(review_server, "/api/correct", correction)
    assert status == 409 and doc["changed_elsewhere"] is True and "changed elsewhere" in doc["error"]
    status, doc = post_json(review_server, "/api/uncorrect", {"page": 3, "board": 2})
    assert status == 409 and "changed_elsewhere" not in doc


def test_a_bug_in_a_route_is_a_500_with_a_message_and_the_server_goes_on(
        review_server: ReviewServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from digitise.review import server as server_module

    def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("a bug")

    monkeypatch.setattr(server_module, "board_svg", broken)
    position = Position.initial().position_id()
    status, headers, body = request(review_server, "GET", f"/api/board.svg?position={position}&mover=top")
    assert status == 500 and headers["Content-Type"].startswith("application/json")
    assert "internal error (RuntimeError: a bug)" in json.loads(body)["error"]
    assert "Traceback" in caplog.text or any(r.exc_info for r in caplog.records)
    assert request(review_server, "GET", "/api/state")[0] == 200


def _rescan(report: Path, *, flagged: bool, page_colour: int | None = None) -> None:
    """Write the sample's report again as a new scan would (by rename), its second turn ``flagged`` or not;
    with ``page_colour``, the page picture and the readings too."""
    import os

    import cv2

    doc = json.loads(report.read_text(encoding="utf-8"))
    doc["games"][0]["turns"][1].update(flagged=flagged, reasons=["low confidence"] if flagged else [],
                                       reason_codes=[Reason.LOW_CONFIDENCE.code] if flagged else [])
    doc["summary"]["flagged"] = int(flagged)
    if page_colour is not None:
        page = cv2.imread(str(report.parent / "page1.png"))
        page[:] = page_colour
        cv2.imwrite(str(report.parent / "new.png"), page)
        os.replace(report.parent / "new.png", report.parent / "page1.png")
        readings = report.parent / "sample.readings.json"
        (report.parent / "new.json").write_text(readings.read_text(encoding="utf-8") + "\n", encoding="utf-8")
        os.replace(report.parent / "new.json", readings)
    (report.parent / "new.json").write_text(json.dumps(doc), encoding="utf-8")
    os.replace(report.parent / "new.json", report)


def _flagged_turns(server: ReviewServer) -> list[int]:
    status, _, body = request(server, "GET", "/api/state")
    assert status == 200
    return [t["board"] for t in json.loads(body)["turns"] if t["flagged"]]


def test_a_page_left_open_over_a_new_scan_shows_the_new_scan(review_server: ReviewServer, sample_report: Path) -> None:
    """`scan --force` while the review page was open: the page showed the old scan's turns and crops, and its
    next correction wrote the old readings, re-solved, over the new scan's .mat."""
    import cv2
    import numpy as np

    assert _flagged_turns(review_server) == [2]
    old_crop = request(review_server, "GET", "/api/crop/1/2.png")[2]
    _rescan(sample_report, flagged=False, page_colour=200)
    assert _flagged_turns(review_server) == []
    status, _, new_crop = request(review_server, "GET", "/api/crop/1/2.png")
    assert status == 200 and new_crop != old_crop
    assert (cv2.imdecode(np.frombuffer(new_crop, np.uint8), cv2.IMREAD_GRAYSCALE) == 200).all()


def test_a_change_from_a_page_of_the_old_scan_is_refused(sample_report: Path) -> None:
    from digitise.review.refusals import ChangedElsewhere
    from digitise.review.session import ReviewSession

    session = ReviewSession(sample_report, resolve=False)
    _rescan(sample_report, flagged=False)
    assert session.rescanned()
    with pytest.raises(ChangedElsewhere, match="scanned again"):
        session.correct({"page": 1, "board": 2, "action": "move", "dice": [5, 2], "move": "8/3 6/4"})
    assert not corrections_path(sample_report).exists()
    renewed = session.renewed()
    assert renewed is not session and not renewed.rescanned()
    assert [t.flagged for t in renewed.report.games[0].turns] == [False, False, False]


def test_a_new_scan_that_cannot_be_loaded_keeps_the_old_page_and_refuses_changes(
        review_server: ReviewServer, sample_report: Path) -> None:
    import os

    whole = sample_report.read_text(encoding="utf-8")
    (sample_report.parent / "new.json").write_text("{half written", encoding="utf-8")
    os.replace(sample_report.parent / "new.json", sample_report)
    status, _, body = request(review_server, "GET", "/api/state")
    state = json.loads(body)
    assert status == 200 and [t["board"] for t in state["turns"] if t["flagged"]] == [2]
    assert any("scanned again" in m and "cannot be reviewed" in m and "not JSON" in m
               for m in state["messages"]), state["messages"]
    status, doc = post_json(review_server, "/api/correct",
                            {"page": 1, "board": 2, "action": "move", "dice": [5, 2], "move": "8/3 6/4"})
    assert status == 409 and "scanned again" in doc["error"]
    assert not corrections_path(sample_report).exists()
    # Once the scan is whole, the page shows it.
    sample_report.write_text(whole, encoding="utf-8")
    _rescan(sample_report, flagged=False)
    assert _flagged_turns(review_server) == []


def test_a_change_made_on_an_older_state_is_refused(review_server: ReviewServer, sample_report: Path) -> None:
    """Two tabs of one match: a change sent with the revision of a state since changed would undo, unseen,
    what the other tab did."""
    status, _, body = request(review_server, "GET", "/api/state")
    seen = json.loads(body)["revision"]
    first = {"page": 1, "board": 2, "action": "move", "dice": [5, 2], "move": "8/3 6/4", "revision": seen}
    assert post_json(review_server, "/api/correct", first)[0] == 200
    now = json.loads(request(review_server, "GET", "/api/state")[2])["revision"]
    assert now != seen
    for path, change in (("/api/correct", {"page": 1, "board": 2, "action": "move", "dice": [4, 2],
                                           "move": "8/4 6/4"}),
                         ("/api/uncorrect", {"page": 1, "board": 2}),
                         ("/api/match", {"players": ["Ann", "Ben"], "length": 5})):
        status, doc = post_json(review_server, path, {**change, "revision": seen})
        assert status == 409 and doc["changed_elsewhere"] is True, (path, doc)
        assert "changed on another page or tab" in doc["error"]
    assert load_corrections(corrections_path(sample_report)) == {(1, 2): "52: 8/3 6/4"}
    # Made on the state as it is, a change goes through; saving needs no revision.
    assert post_json(review_server, "/api/uncorrect", {"page": 1, "board": 2, "revision": now})[0] == 200
    status, doc = post_json(review_server, "/api/correct", {**first, "revision": 7})
    assert status == 400 and "$.revision" in doc["error"]


def test_the_export_keeps_a_names_own_letters(solved_sample: tuple[Path, str]) -> None:
    """A download named after a report "Zoë v 李" came out as "Zo_ v _.mat": the name is also given in
    UTF-8 (RFC 6266's filename*), beside the plain one for clients that read only that."""
    from urllib.parse import unquote

    from digitise.review.session import ReviewSession
    from tests.review.conftest import served

    report = solved_sample[0].rename(solved_sample[0].with_name("Zoë v 李.json"))
    with served(ReviewSession(report)) as server:
        status, headers, body = request(server, "GET", "/api/export.mat")
    assert status == 200 and body.strip().startswith(b"5 point match")
    disposition = headers["Content-Disposition"]
    assert 'filename="Zo_ v _.mat"' in disposition
    assert unquote(disposition.split("filename*=UTF-8''")[1]) == "Zoë v 李.mat"


def test_a_request_with_two_host_headers_is_refused(review_server: ReviewServer) -> None:
    """Two Host headers were answered with the first one's server (a proxy may have read the other): 400, as
    RFC 9112 asks, whichever of them names this server."""
    import socket

    host, port = review_server.server_address[:2]
    for second in ("evil.example", f"127.0.0.1:{port}"):
        with socket.create_connection((str(host), int(port)), timeout=10) as client:
            client.sendall(f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: {second}\r\n"
                           "Connection: close\r\n\r\n".encode())
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")), head
        assert "Host" in json.loads(body)["error"]


def test_twenty_corrections_sent_at_once_each_get_an_answer(sample_report: Path) -> None:
    """20 correction POSTs at once, met by a server busy elsewhere: with the standard library's listen backlog
    of 5, only 6 were taken in and the others waited on the kernel's retries (a probe's clients saw 1-6 of them
    reset, their corrections lost). All 20 are taken in at once now and each is answered: the first applied,
    the others 409 as the match moved on under them."""
    import socket

    from digitise.review.session import ReviewSession

    session = ReviewSession(sample_report, resolve=False)
    body = json.dumps({"page": 1, "board": 2, "action": "move", "dice": [5, 2], "move": "8/3 6/4",
                       "revision": session.state()["revision"]}).encode()
    request_bytes = (b"POST /api/correct HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\n" + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    server = ReviewServer(session, "127.0.0.1", 0)
    clients: list[socket.socket] = []
    lost: list[str] = []
    serving = False
    try:
        host, port = server.server_address[:2]
        # Not serving yet: the connections wait in the listen queue. Half a second is well below the kernel's
        # first retry of a connection it had no room for (1 s): one that does not get in at once is not queued.
        for number in range(20):
            try:
                clients.append(socket.create_connection((str(host), int(port)), timeout=0.5))
                clients[-1].sendall(request_bytes)
            except OSError as exc:
                lost.append(f"connection {number + 1}: {type(exc).__name__}")
        assert not lost, lost
        server.start_in_thread()
        serving = True
        statuses = []
        for client in clients:
            client.settimeout(30)
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
            statuses.append(answer.split(b" ", 2)[1] if answer.startswith(b"HTTP/") else answer)
    finally:
        for client in clients:
            client.close()
        if serving:
            server.shutdown()
        server.server_close()
    assert statuses.count(b"200") == 1 and statuses.count(b"409") == 19, statuses

"""The review page in a real browser: headless Debian chromium driven by Playwright.

It clicks through a correction of a real solve (one damaged board), checks the
page's messages, and checks the exported .mat is the true match.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from digitise.review.session import ReviewSession
from digitise.solve.corrections import corrections_path, load_corrections
from tests.review.conftest import served

pytestmark = pytest.mark.browser

CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()), None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def browser_page() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900}, accept_downloads=True)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            # A refused correction is a 4xx the browser logs as a failed load: expected, not a page error.
            page.on("console", lambda msg: errors.append(msg.text)
                    if msg.type == "error" and not msg.text.startswith("Failed to load resource") else None)
            yield page
            assert errors == []
        finally:
            browser.close()


def screenshot(page: Any, name: str) -> None:
    """Keep a picture of the page when DIGITISE_SCREENSHOTS names a folder (to look at by eye)."""
    folder = os.environ.get("DIGITISE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


@contextlib.contextmanager
def showing_the_sample(page: Any, report: Path) -> Iterator[None]:
    """The hand-made sample report served (not re-solved) and open on its first flagged turn, page 1 board 2."""
    with served(ReviewSession(report, resolve=False)) as server:
        page.goto(server.url)
        page.wait_for_selector("#detail h2:has-text('page 1 board 2')")
        yield


def test_correct_a_flagged_turn_and_export(
    browser_page: Any, solved_sample: tuple[Path, str], tmp_path: Path
) -> None:
    report, truth = solved_sample
    page = browser_page
    with served(ReviewSession(report)) as server:
        page.goto(server.url)
        page.wait_for_selector("#turns li.turn")
        # Flagged turns only at first; the damaged board is among them.
        flagged = page.locator("#turns li.turn")
        assert flagged.count() >= 1
        assert all("flagged" in (flagged.nth(i).get_attribute("class") or "") for i in range(flagged.count()))
        damaged = page.locator("#turns li.turn", has_text="p1 b3")
        damaged.click()
        page.wait_for_selector("#detail h2:has-text('page 1 board 3')")
        assert page.locator("img.crop").count() == 1
        assert page.locator("figure.diagram img").count() == 2
        # Each candidate says why it ranks where it does (the solver's reasons, shown under it).
        why = page.locator("li.candidate .why")
        assert why.count() == page.locator("li.candidate").count() >= 2
        assert re.search(r"(marks|later boards) fit [\d.]+x (better|worse)|likel", why.nth(1).inner_text())
        # The scan's crop enlarges for faint digits (click or z) and shrinks back.
        small = page.locator("img.crop").bounding_box()["width"]
        page.click("img.crop")
        page.wait_for_selector("img.crop.zoomed")
        assert page.locator("img.crop").bounding_box()["width"] > 1.5 * small
        page.keyboard.press("z")
        page.wait_for_selector("img.crop:not(.zoomed)")
        assert page.locator("table.cells th", has_text="W3").count() == 1
        screenshot(page, "1-flagged")

        # j/k walk the list of flagged turns, and come back.
        ids = page.eval_on_selector_all("#turns li.turn", "items => items.map(i => i.dataset.id)")
        here = ids.index("p1b3")
        if len(ids) > 1:
            away, back = ("k", "j") if here > 0 else ("j", "k")
            page.keyboard.press(away)
            neighbour = ids[here - 1] if away == "k" else ids[here + 1]
            page.wait_for_selector(f"#turns li.current[data-id='{neighbour}']")
            page.keyboard.press(back)
        page.wait_for_selector("#turns li.current[data-id='p1b3']")
        page.wait_for_selector("#detail h2:has-text('page 1 board 3')")

        # An illegal play: refused, with the legal ones named; nothing saved.
        page.keyboard.press("m")
        page.fill("#move", "51: 22/21 8/2")
        page.keyboard.press("Enter")
        page.wait_for_selector("#error:has-text('not a legal play')")
        assert "legal plays include" in page.inner_text("#error")
        assert not corrections_path(report).exists()
        screenshot(page, "2-illegal")

        # The true play: the solver re-decodes and the page shows what changed.
        page.fill("#move", "51: 22/21 8/3")
        page.click("#apply-move")
        page.wait_for_selector("#changes:not([hidden])")
        changes = page.inner_text("#changes")
        # The corrected board, and a later one re-decoded from the corrected position (the checker it moves is on 5).
        assert re.search(r"page 1 board 3: bottom \d\d: [^\n]* → bottom 51: 22/21 8/3", changes)
        assert "page 1 board 5: bottom 42: 13/11 8/4 → bottom 21: 13/11 5/4" in changes
        assert load_corrections(corrections_path(report)) == {(1, 3): "51: 22/21 8/3"}
        page.check("#show-all")
        page.wait_for_selector("#turns li.turn.corrected")
        assert "p1 b3" in page.inner_text("#turns li.turn.corrected")
        screenshot(page, "3-corrected")

        # Export: the corrected .mat is the true match.
        with page.expect_download() as download_info:
            page.click("#export")
        download = download_info.value
        assert download.suggested_filename == "match.mat"
        target = tmp_path / "exported.mat"
        download.save_as(str(target))
        assert target.read_text(encoding="utf-8") == truth


def test_candidates_say_how_a_double_was_answered(browser_page: Any, sample_report: Path) -> None:
    """A double dropped on its own board, one taken there and conceded, and one the next board answers
    are three decisions: the candidates must not all read "double"."""
    import json

    report = json.loads(sample_report.read_text(encoding="utf-8"))
    turn = report["games"][0]["turns"][1]
    turn["candidates"] = [
        {"action": "double", "player": "top", "answer": "drop", "move": "", "dice": None, "probability": 0.6,
         "reasons": ["marks fit 2.0x better"]},
        {"action": "double", "player": "top", "move": "", "dice": None, "probability": 0.3,
         "reasons": ["marks fit 2.0x worse"]},
        {"action": "double", "player": "top", "answer": "take", "result": {"winner": "bottom", "points": 2},
         "move": "", "dice": None, "probability": 0.05, "reasons": ["marks fit 12x worse"]},
        {"action": "move", "player": "top", "answer": "take", "move": "8/3 6/4", "dice": [5, 2],
         "probability": 0.05, "reasons": ["marks fit 12x worse"]},
    ]
    sample_report.write_text(json.dumps(report), encoding="utf-8")
    page = browser_page
    with showing_the_sample(page, sample_report):
        texts = [t.strip() for t in page.locator("li.candidate .move").all_inner_texts()]
        assert len(texts) == 4
        assert texts[0].endswith("double, dropped") and texts[1].endswith("double")
        assert "double, taken" in texts[2] and "wins 2" in texts[2]
        assert texts[3].startswith("the double before taken; ")
        assert len(set(texts)) == 4


def test_keyboard_accepts_a_candidate(browser_page: Any, sample_report: Path) -> None:
    """1-9 pick a candidate, Enter accepts it (hand-made report, not re-solved)."""
    page = browser_page
    with showing_the_sample(page, sample_report):
        page.keyboard.press("2")
        page.wait_for_selector("li.candidate.picked:has-text('52: 8/3 6/4')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#turns li.turn.corrected")
        assert load_corrections(corrections_path(sample_report)) == {(1, 2): "top 52: 8/3 6/4"}
        # The export link says why it cannot export without a re-solve.
        assert "readings" in (page.get_attribute("#export", "title") or "")
        page.keyboard.press("u")
        page.wait_for_selector("#turns li.turn:not(.corrected)")
        assert load_corrections(corrections_path(sample_report)) == {}


def test_enter_does_what_the_focused_control_says(browser_page: Any, sample_report: Path) -> None:
    """Enter on the Export link is no accept; Enter in the resignation's points marks the resignation,
    not the move typed above it; u undoes the last correction even when another turn is shown."""
    page = browser_page
    with showing_the_sample(page, sample_report):
        page.focus("#export")
        page.keyboard.press("Enter")
        page.wait_for_load_state("networkidle")
        assert not corrections_path(sample_report).exists()
        # A resignation with no points is asked about on the page, not sent as "0".
        page.fill("#resign-points", "")
        page.click("#mark-resign")
        page.wait_for_selector("#error:has-text('Give the points')")
        assert not corrections_path(sample_report).exists()
        page.fill("#move", "52: 8/3 6/4")
        page.fill("#resign-points", "2")
        page.focus("#resign-points")
        page.keyboard.press("Enter")
        page.wait_for_selector("#turns li.turn.corrected")
        # Marked on a move's board, the resignation comes after that move (NOTATION.md): the move stays.
        assert load_corrections(corrections_path(sample_report)) == {(1, 2): "top 42: 8/4 6/4; resign 2"}
        # Another turn shown (j): u still takes back the correction just made.
        page.evaluate("document.activeElement.blur()")  # a click on the body would land on a button
        page.keyboard.press("j")
        page.keyboard.press("u")
        page.wait_for_selector("#turns li.turn:not(.corrected)")
        page.wait_for_load_state("networkidle")
        assert load_corrections(corrections_path(sample_report)) == {}


class _SlowSession(ReviewSession):
    """A correction that takes a while, as a re-solve of a long match does."""

    def correct(self, request: Any, revision: str | None = None) -> dict[str, Any]:
        time.sleep(1.5)
        return super().correct(request, revision)


def test_keys_pressed_while_a_correction_is_made_do_not_act_and_typing_survives(
        browser_page: Any, sample_report: Path) -> None:
    """While the page waits for the re-solve, shortcuts do nothing (they would act on the page its answer
    replaces: a "2" and Enter accepted a candidate nobody chose) and what is being typed is kept."""
    page = browser_page
    with served(_SlowSession(sample_report, resolve=False)) as server:
        page.goto(server.url)
        page.wait_for_selector("#detail h2:has-text('page 1 board 2')")
        page.fill("#move", "52: 8/3 6/4")
        page.click("#apply-move")
        page.wait_for_selector("body.busy")
        for key in ("j", "2", "Enter"):
            page.keyboard.press(key)
        page.fill("#move", "61: 13/7 8/7")
        page.wait_for_selector("body:not(.busy)")
        page.wait_for_selector("#turns li.turn.corrected")
        assert load_corrections(corrections_path(sample_report)) == {(1, 2): "52: 8/3 6/4"}
        assert page.input_value("#move") == "61: 13/7 8/7"
        assert page.evaluate("document.activeElement.id") == "move"
        assert "page 1 board 2" in page.inner_text("#detail h2")


def test_the_move_field(browser_page: Any, sample_report: Path) -> None:
    """m selects the play shown (typing replaces it); a play typed without its dice is named as such."""
    page = browser_page
    with showing_the_sample(page, sample_report):
        page.evaluate("document.activeElement.blur()")  # a click on the body would land on a button
        page.keyboard.press("m")
        page.keyboard.type("24/18 13/9")
        assert page.input_value("#move") == "24/18 13/9"
        page.click("#apply-move")
        page.wait_for_selector("#error:has-text('Type the dice first, then the play')")
        assert not corrections_path(sample_report).exists()


def test_keys_after_a_typed_move_and_the_tick_box(browser_page: Any, sample_report: Path) -> None:
    """A typed move taken leaves the field: j then moved on instead of typing "j" into it. After a click on
    "all turns", j, k and a worked no more until the focus left the tick box. The tab names its match."""
    page = browser_page
    with showing_the_sample(page, sample_report):
        assert page.title() == "sample.json · digitise review"
        page.evaluate("document.activeElement.blur()")
        page.keyboard.press("m")
        page.keyboard.type("52: 8/3 6/4")
        page.keyboard.press("Enter")
        page.wait_for_selector("#turns li.turn.corrected")
        assert page.evaluate("document.activeElement.id") != "move"
        page.click("#show-all")
        page.wait_for_selector("#turns li.turn >> nth=2")
        page.keyboard.press("j")
        page.wait_for_selector("#detail h2:has-text('page 1 board 3')")
        assert page.input_value("#move") != "52: 8/3 6/4j"
        page.keyboard.press("a")
        page.wait_for_function("!document.getElementById('show-all').checked")


def test_a_reload_comes_back_to_the_turn_shown(browser_page: Any, sample_report: Path) -> None:
    """A reload (F5, or the browser restarted) went back to the first flagged turn."""
    page = browser_page
    with showing_the_sample(page, sample_report):
        page.keyboard.press("a")
        page.click("#turns li.turn >> nth=2")
        page.wait_for_selector("#detail h2:has-text('page 1 board 3')")
        assert page.url.endswith("#p1b3")
        page.reload()
        page.wait_for_selector("#detail h2:has-text('page 1 board 3')")
        assert page.is_checked("#show-all")  # not a flagged turn: shown among all


def test_a_change_from_a_tab_showing_an_older_state_is_refused(
        browser_page: Any, sample_report: Path) -> None:
    """Two tabs of one match: the second, loaded before the first corrected a board, overwrote that
    correction (or the names set there) without a word. Now it is refused, and the tab shows the match
    as it is."""
    page = browser_page
    with served(ReviewSession(sample_report, resolve=False)) as server:
        page.goto(server.url)
        page.wait_for_selector("#detail h2:has-text('page 1 board 2')")
        other = page.context.browser.new_page()
        other.goto(server.url)
        other.wait_for_selector("#detail h2:has-text('page 1 board 2')")
        other.keyboard.press("2")
        other.keyboard.press("Enter")
        other.wait_for_selector("#turns li.turn.corrected")
        page.keyboard.press("Enter")  # the first candidate, on the page that has not seen the change
        page.wait_for_selector("#error:has-text('changed on another page or tab')")
        page.wait_for_selector("#turns li.turn.corrected")  # it shows the other tab's correction now
        assert load_corrections(corrections_path(sample_report)) == {(1, 2): "top 52: 8/3 6/4"}
        other.close()


def test_the_turn_list_and_the_candidates_are_reached_with_tab(browser_page: Any, sample_report: Path) -> None:
    page = browser_page
    with showing_the_sample(page, sample_report):
        page.focus("#turns li.turn.current")
        page.keyboard.press("Tab")
        # The list is one stop: Tab goes on to the candidates, whose picked one takes the focus.
        assert page.evaluate("document.activeElement.matches('li.candidate.picked')")
        # Another candidate focused (as a screen reader's cursor would): Enter picks it, Enter again accepts.
        page.evaluate("document.querySelectorAll('li.candidate')[1].focus()")
        page.keyboard.press("Enter")
        page.wait_for_selector("li.candidate.picked:has-text('52: 8/3 6/4')")
        assert page.evaluate("document.activeElement.matches('li.candidate.picked')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#turns li.turn.corrected")
        assert load_corrections(corrections_path(sample_report)) == {(1, 2): "top 52: 8/3 6/4"}


def test_the_matchs_notes_are_shown(browser_page: Any, sample_report: Path) -> None:
    """A doubt about the whole match (a name made up) is on the page, not only in the report."""
    import json

    doc = json.loads(sample_report.read_text())
    note = "player names: the top player's name was not read from any page header; written as Top"
    doc["notes"] = [note]
    sample_report.write_text(json.dumps(doc))
    page = browser_page
    with served(ReviewSession(sample_report, resolve=False)) as server:
        page.goto(server.url)
        page.wait_for_selector("#messages p.note")
        assert page.inner_text("#messages p.note") == f"Note: {note}"


def test_set_the_names_and_length_the_header_did_not_give(
    browser_page: Any, solved_sample: tuple[Path, str], tmp_path: Path
) -> None:
    """A scan with no names or length told and none read: the reviewer types them, the export has them."""
    import json

    report, _ = solved_sample
    doc = json.loads(report.read_text(encoding="utf-8"))
    doc.update(players=None, length=None)
    report.write_text(json.dumps(doc), encoding="utf-8")
    page = browser_page
    with served(ReviewSession(report)) as server:
        page.goto(server.url)
        page.wait_for_selector("#turns li.turn")
        assert page.input_value("#player-bottom") == "Bottom" and page.input_value("#player-top") == "Top"
        assert "placeholder" in page.inner_text("#players-from")
        assert "player names" in page.inner_text("#messages")
        # One name twice: refused with the reason, nothing saved.
        page.fill("#player-bottom", "Bob")
        page.fill("#player-top", "Bob")
        page.click("#apply-match")
        page.wait_for_selector("#match-error:has-text('different names')")
        assert not corrections_path(report).exists()
        page.fill("#player-bottom", "Alice")
        page.fill("#match-length", "5")
        page.keyboard.press("Enter")
        page.wait_for_selector("#players-from:has-text('set here')")
        assert "player names" not in page.inner_text("#messages")
        assert page.input_value("#match-length") == "5"
        screenshot(page, "4-match")
        with page.expect_download() as download_info:
            page.click("#export")
        target = tmp_path / "named.mat"
        download_info.value.save_as(str(target))
        lines = target.read_text(encoding="utf-8").splitlines()
        assert lines[0].strip() == "5 point match"
        assert "Alice : 0" in lines[3] and "Bob : 0" in lines[3]
        # A name typed but not set is set before an export, not silently left out.
        page.fill("#player-bottom", "Alicia")
        with page.expect_download() as download_info:
            page.click("#export")
        download_info.value.save_as(str(target))
        assert "Alicia : 0" in target.read_text(encoding="utf-8").splitlines()[3]
        page.wait_for_selector("#players-from:has-text('set here')")
        assert page.input_value("#player-bottom") == "Alicia"
        # Back to the scan's: the placeholders again, and the file keeps no match part.
        page.click("#reset-match")
        page.wait_for_selector("#players-from:has-text('placeholder')")
        assert page.input_value("#player-bottom") == "Bottom"
        assert "match" not in json.loads(corrections_path(report).read_text(encoding="utf-8"))


def test_review_a_batch_folder_match_by_match(
        browser_page: Any, batch_folder: Path, solved_sample_master: tuple[Path, str]) -> None:
    from digitise.review.folder import ReviewFolder

    truth = solved_sample_master[1]
    page = browser_page
    with served(ReviewFolder(batch_folder)) as server:
        page.goto(server.url)
        page.wait_for_selector("#matches tbody tr[data-name='m10']")
        assert page.locator("#matches tbody tr").count() == 2
        assert "2 match(es), 2 with flagged turns" in page.inner_text("#summary")
        screenshot(page, "5-folder")
        page.click("#matches tr[data-name='m10'] a")
        page.wait_for_selector("#turns li.turn")
        assert page.url.split("#")[0].endswith("/m/2/")
        # The first turns are in the served page; the title is filled by the script after.
        page.wait_for_selector("#title:not(:empty)")
        assert page.inner_text("#title") == "m10.report.json"
        page.locator("#turns li.turn", has_text="p1 b3").click()
        page.wait_for_selector("#detail h2:has-text('page 1 board 3')")
        # The crop and diagrams load from the match's own relative paths.
        page.wait_for_load_state("networkidle")
        assert page.eval_on_selector_all("img", "imgs => imgs.length === 3 && imgs.every(i => i.naturalWidth > 0)")
        page.fill("#move", "51: 22/21 8/3")
        page.click("#apply-move")
        page.wait_for_selector("#changes:not([hidden])")
        assert load_corrections(corrections_path(batch_folder / "m10.report.json")) == {(1, 3): "51: 22/21 8/3"}
        # Written over the batch's own m10.mat at once: the corrected match where the batch put it.
        page.wait_for_selector("#mat-status:has-text('m10.mat is up to date')")
        assert (batch_folder / "m10.mat").read_text(encoding="utf-8") == truth
        assert (batch_folder / "m2.mat").read_text(encoding="utf-8") == " 5 point match\n"
        # A file that fell behind (changed on disk) is offered a Save.
        (batch_folder / "m10.mat").write_text(" 5 point match\n", encoding="utf-8")
        page.reload()
        page.wait_for_selector("#save:visible")
        assert page.inner_text("#save") == "Save m10.mat"
        page.click("#save")
        page.wait_for_selector("#saved")
        assert (batch_folder / "m10.mat").read_text(encoding="utf-8") == truth
        page.click("#up")
        page.wait_for_selector("#matches tr[data-name='m10'] td:nth-child(9):has-text('1')")
        assert page.inner_text("#matches tr[data-name='m2'] td:nth-child(9)") == "0"
        # Each match's players, length and result, as the match now stands.
        cells = page.eval_on_selector_all("#matches tr[data-name='m10'] td", "tds => tds.map(td => td.innerText)")
        assert cells[1:4] == ["Alice v Bob", "5", ServedOutcome.said(ReviewFolder(batch_folder).matches()[1])]


def test_enter_accepts_after_j_k_and_a_correction(browser_page: Any, sample_report: Path) -> None:
    """j and k, and every correction, leave the focus on the turn list: Enter there accepts the pick."""
    page = browser_page
    with showing_the_sample(page, sample_report):
        page.keyboard.press("j")
        page.keyboard.press("k")
        assert page.evaluate("document.activeElement.matches('#turns li.turn.current')")
        page.keyboard.press("2")
        page.wait_for_selector("li.candidate.picked:has-text('52: 8/3 6/4')")
        page.keyboard.press("Enter")
        page.wait_for_selector("#turns li.turn.corrected")
        assert load_corrections(corrections_path(sample_report)) == {(1, 2): "top 52: 8/3 6/4"}


def test_a_refused_export_and_a_spoilt_corrections_file_are_said(
    browser_page: Any, solved_sample: tuple[Path, str]
) -> None:
    """Export is no silently cancelled download; a corrections file spoilt by hand is named as the page loads;
    the length emptied goes back to the scan's, and a length that is no whole number is refused."""
    report, _ = solved_sample
    page = browser_page
    with served(ReviewSession(report)) as server:
        page.goto(server.url)
        page.wait_for_selector("#turns li.turn")
        assert page.input_value("#match-length") == "5"
        page.fill("#match-length", "1e1")
        page.keyboard.press("Enter")
        page.wait_for_selector("#match-error:has-text('a whole number from 0')")
        assert not corrections_path(report).exists()
        page.fill("#match-length", "7")
        page.keyboard.press("Enter")
        page.wait_for_selector("#length-from:has-text('set here')")
        page.fill("#match-length", "")
        page.keyboard.press("Enter")
        page.wait_for_selector("#length-from:not(:has-text('set here'))")
        assert page.input_value("#match-length") == "5"
        assert page.inner_text("#match-error") == ""
        corrections_path(report).write_text("not json {", encoding="utf-8")
        page.click("#export")
        page.wait_for_selector("#changes .error:has-text('Not exported')")
        assert "not JSON" in page.inner_text("#changes")
        page.reload()
        page.wait_for_selector("#messages:has-text('none can be saved or exported until the file is mended')")


def test_the_page_fits_a_phone_screen(browser_page: Any, solved_sample: tuple[Path, str]) -> None:
    """At 390 px wide nothing sticks out past the screen's edge (the candidates and the toolbar did)."""
    report, _ = solved_sample
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 800})
    with served(ReviewSession(report)) as server:
        page.goto(server.url)
        page.wait_for_selector("li.candidate")
        page.wait_for_load_state("networkidle")
        outside = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
            .map((e) => `${e.tagName}#${e.id}.${e.className}`)""")
        assert outside == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # The header wraps, not its words one a line: the turn keeps most of the screen (it had 60 px).
        assert page.locator("header").bounding_box()["height"] < 160
        assert page.locator("#detail").bounding_box()["height"] > 400
        screenshot(page, "5-phone")


class ServedOutcome:
    """What the folder page says of a match's result (folder.js's result())."""

    @staticmethod
    def said(entry: dict[str, Any]) -> str:
        bottom, top = entry["players"]
        if entry["winner"] is not None:
            return f"{entry['winner']} won {max(entry['score'])}-{min(entry['score'])}"
        return f"{bottom} {entry['score'][0]}, {top} {entry['score'][1]}" + (" (unfinished)" if entry["length"] else "")


def test_the_page_says_what_to_do_and_what_the_readings_mean(browser_page: Any, sample_report: Path) -> None:
    """One line says what to do with the turn; the readings have a legend in words, and pointing at a square's name
    (in the table or on the legend's board) outlines that square on the scan, which is twice its old 560 px."""
    page = browser_page
    page.set_viewport_size({"width": 1600, "height": 1000})
    with showing_the_sample(page, sample_report):
        assert page.locator("#instruction").inner_text() == (
            "Is this what was written? Enter accepts, 1-9 picks another · m types a move")
        legend = page.locator("#readings-legend")
        assert legend.is_visible()
        for words in ("centre 35 40%", "B4 233 16%", "crossed", "arrow", "letters", "nothing written",
                      "a 3 and a 5 in the centre strip, 40 % likely"):
            assert words in legend.inner_text().replace("\u00a0", " "), words
        # The legend's board: the squares' names laid out as the note prints them, those read here in bold.
        names = page.locator("table.names td[data-cell]")
        assert names.count() == 29
        assert [names.nth(i).inner_text() for i in (0, 1, 12, 13)] == ["Bres", "B12", "B1", "Boff"]
        read = sorted(page.locator("table.names td.read").all_inner_texts())
        assert read == sorted(page.locator("table.cells th[data-cell]").all_inner_texts())
        assert page.locator("table.names td[data-cell='W6']").get_attribute("title") == "W6: White's 6 point, Black's 19"
        crop = page.locator("img.crop")
        page.wait_for_function("document.querySelector('img.crop').complete")
        box = crop.bounding_box()
        assert box["width"] >= 2 * 560
        mark = page.locator("#cell-mark")
        assert not mark.is_visible()
        first = page.locator("table.cells th[data-cell]").first
        name = first.inner_text()
        first.hover()
        assert mark.is_visible() and mark.get_attribute("data-square") == name
        expected = page.evaluate(f"view.state.turns.find((t) => t.id === view.current).cell_boxes[{name!r}]")
        found = mark.bounding_box()
        assert abs(found["x"] - (box["x"] + expected[0] * box["width"])) < 4
        assert abs(found["y"] - (box["y"] + expected[1] * box["height"])) < 4
        assert abs(found["width"] - expected[2] * box["width"]) < 6
        assert "marked" in (page.locator("table.names td[data-cell='" + name + "']").get_attribute("class") or "")
        page.locator("table.names td[data-cell='centre']").hover()
        assert mark.get_attribute("data-square") == "centre"
        page.locator("h2").hover()
        assert not mark.is_visible()
        screenshot(page, "6-legend")


def test_the_first_answer_shows_the_first_flagged_turn(browser_page: Any, sample_report: Path) -> None:
    """The page's first answer holds the first flagged turn, drawn: even without its script the turn, its scan, its
    candidates and readings are there, and with the script the page shows the same turn without fetching the state."""
    import urllib.request

    with served(ReviewSession(sample_report, resolve=False)) as server:
        with urllib.request.urlopen(server.url) as answer:
            html = answer.read().decode("utf-8")
        assert '<img class="crop" src="api/crop/1/2.png"' in html
        assert "Is this what was written?" in html and 'id="initial-state"' in html
        context = browser_page.context.browser.new_context(java_script_enabled=False)
        try:
            bare = context.new_page()
            bare.goto(server.url)
            assert "page 1 board 2" in bare.locator("#detail h2").inner_text()
            assert bare.locator("img.crop").is_visible()
            assert bare.locator("li.candidate").count() == 2
            assert bare.locator("li.candidate.picked .move").inner_text() == "top 42: 8/4 6/4"
            assert bare.locator("#turns li.turn.current").inner_text().startswith("G1 p1 b2")
            assert bare.locator("#readings-legend").is_visible()
        finally:
            context.close()
        page = browser_page
        fetched: list[str] = []
        page.on("request", lambda request: fetched.append(request.url))
        page.goto(server.url)
        page.wait_for_selector("#detail h2:has-text('page 1 board 2')")
        page.wait_for_load_state("networkidle")
        assert not [url for url in fetched if url.endswith("/api/state")]
        assert page.locator("#initial-state").count() == 0
        assert page.locator("li.candidate.picked .move").inner_text() == "top 42: 8/4 6/4"


def test_a_board_the_fit_is_unsure_of_is_shown_with_its_squares_drawn_over_it(
    browser_page: Any, unsure_fit_report: Path
) -> None:
    """A scanned page of another print with a board ruled by hand: its turn shows the board's picture with the squares
    as placed drawn over it, and says why; a turn of another board shows none."""
    page = browser_page
    with served(ReviewSession(unsure_fit_report)) as server:
        page.goto(server.url)
        page.wait_for_selector("#turns li.turn")
        page.locator("#turns li.turn", has_text="p1 b3").first.click()
        page.wait_for_selector("#detail h2:has-text('page 1 board 3')")
        overlay = page.locator("figure.overlay-box img.overlay")
        overlay.wait_for()
        page.wait_for_function("() => document.querySelector('img.overlay').naturalWidth > 0")
        assert overlay.is_visible()
        assert "squares may be misplaced" in page.inner_text("ul.reasons")
        assert "squares as placed" in page.inner_text("figure.overlay-box figcaption")
        screenshot(page, "unsure-fit")
        page.check("#show-all")
        page.wait_for_selector("#turns[aria-label='All turns']")
        others = page.eval_on_selector_all("#turns li.turn", "items => items.map(i => i.dataset.id)")
        other = next(i for i in others if not i.startswith("p1b3"))
        page.locator(f"#turns li.turn[data-id='{other}']").click()
        page.wait_for_selector(f"#turns li.current[data-id='{other}']")
        assert page.locator("img.overlay").count() == 0


def test_a_flagged_turn_says_what_to_do_about_its_reasons(browser_page: Any, sample_report: Path) -> None:
    """A flagged turn shows, beside its reason, what to do about it: as the reason's tooltip and in a line under
    the reasons, both in the page's first answer (without its script) and as the script draws it."""
    from digitise.solve.reasons import Reason

    action = Reason.LOW_CONFIDENCE.action
    with served(ReviewSession(sample_report, resolve=False)) as server:
        context = browser_page.context.browser.new_context(java_script_enabled=False)
        try:
            bare = context.new_page()
            bare.goto(server.url)
            assert bare.locator("ul.reasons li").get_attribute("title") == action
            assert action in bare.locator("p.todo").inner_text()
        finally:
            context.close()
        page = browser_page
        page.goto(server.url)
        page.wait_for_selector("#detail h2:has-text('page 1 board 2')")
        page.wait_for_load_state("networkidle")
        assert page.locator("#initial-state").count() == 0  # the script has drawn the turn again
        assert page.locator("ul.reasons li").inner_text() == "low confidence"
        assert page.locator("ul.reasons li").get_attribute("title") == action
        todo = page.locator("p.todo")
        assert todo.is_visible() and todo.inner_text() == f"What to do: {action}"
        screenshot(page, "reason-action")

"""Batch behaviour with injected jobs: bad files never stop a batch, reruns skip, summaries are complete."""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from digitise.errors import ExitCode, InputError, OutputError, PageError
from digitise.fileio import write_atomic
from digitise.pipeline import BatchInterrupted, Job, JobResult, ScanOptions, batch, find_jobs


def _fake_runner(job: Job, options: ScanOptions) -> JobResult:
    """Pretends to scan: fails on files named 'bad', crashes on 'crash', else writes the .mat."""
    names = " ".join(p.name for p in job.pages)
    if "crash" in names:
        raise RuntimeError("boom")
    if "bad" in names:
        return JobResult(job.name, "failed", len(job.pages), PageError("not a recording note", job.pages[0], "page 1").message)
    write_atomic(job.output, f"{len(job.pages)} pages\n", overwrite=options.overwrite)
    return JobResult(job.name, "done", len(job.pages), turns=3)


def _crashing_runner(job: Job, options: ScanOptions) -> JobResult:
    if job.name == "m2":
        raise RuntimeError("worker bug")
    return _fake_runner(job, options)


def _sleepy_runner(job: Job, options: ScanOptions) -> JobResult:
    """m1 takes ten minutes (a match being read when the batch is stopped); the others as _fake_runner."""
    if job.name == "m1":
        import time

        time.sleep(600)
    return _fake_runner(job, options)


def _sleepy_last_runner(job: Job, options: ScanOptions) -> JobResult:
    """The last match queued ("single") takes ten minutes; the others as _fake_runner."""
    if job.name == "single":
        import time
        time.sleep(600)
    return _fake_runner(job, options)


def _tree(root: Path) -> Path:
    scans = root / "scans"
    (scans / "m1").mkdir(parents=True)
    (scans / "m1" / "page10.png").write_bytes(b"x")
    (scans / "m1" / "page9.png").write_bytes(b"x")
    (scans / "m2").mkdir()
    (scans / "m2" / "bad.png").write_bytes(b"x")
    (scans / "empty").mkdir()
    (scans / "notes.txt").write_text("hello")
    (scans / "single.pdf").write_bytes(b"%PDF")
    return scans


def test_find_jobs_one_match_per_folder_or_file(tmp_path: Path) -> None:
    jobs, failed, left_out = find_jobs(_tree(tmp_path), tmp_path / "out")
    assert [j.name for j in jobs] == ["m1", "m2", "single"]
    # Pages sort naturally: page9 before page10.
    assert [p.name for p in jobs[0].pages] == ["page9.png", "page10.png"]
    assert {r.name: r.status for r in failed} == {"empty": "failed"}
    assert all(r.reason for r in failed)
    # A text file at the top is no page and no failed match: left out, and named.
    assert [p.name for p in left_out] == ["notes.txt"]


def test_files_beside_the_scans_are_left_out_and_a_picture_named_otherwise_is_a_page(tmp_path: Path) -> None:
    """An entry list, a readme, or an earlier in-place batch's outputs at the top of the input each
    failed as a match (the batch exited 3 for a roster file beside the scans); a page saved without
    its suffix is read, as it is inside a match's folder."""
    scans = _tree(tmp_path)
    (scans / "entrants.txt").write_text("Karl\nMei\n")
    (scans / "old.mat").write_text(" 3 point match\n")
    (scans / "summary.json").write_text("{}")
    png = cv2.imencode(".png", np.full((40, 30), 255, np.uint8))[1].tobytes()
    (scans / "scan001").write_bytes(png)
    (scans / "pretend.png").write_text("not a picture")  # named as a page: a page, which reading refuses
    (scans / "entrants.xlsx").write_bytes(b"PK\x03\x04" + bytes(60))  # an Office roster is a ZIP inside
    jobs, failed, left_out = find_jobs(scans, tmp_path / "out")
    assert [j.name for j in jobs] == ["m1", "m2", "pretend", "scan001", "single"]
    assert [p.name for p in left_out] == ["entrants.txt", "entrants.xlsx", "notes.txt", "old.mat", "summary.json"]
    assert {r.name for r in failed} == {"empty"}


def test_what_looks_like_a_lost_match_at_the_top_still_fails(tmp_path: Path) -> None:
    """Left out with a note, these would hide a match: a zipped match folder, a phone's picture saved without
    its suffix in a format not read, and a scan that was never written."""
    scans = _tree(tmp_path)
    (scans / "match3.zip").write_bytes(b"PK\x03\x04" + bytes(60))
    (scans / "IMG_0001").write_bytes(b"\0\0\0\x18ftypheic" + bytes(40))
    (scans / "scan004").write_bytes(b"")
    _, failed, left_out = find_jobs(scans, tmp_path / "out")
    reasons = {r.name: r.reason for r in failed}
    assert reasons["match3.zip"].endswith("match3.zip: an archive: unpack it (a match's pages in a folder of their "
                                          "own) and convert again")
    assert reasons["IMG_0001"].endswith("IMG_0001: a HEIC image, which digitise does not read: save the page as "
                                        "PNG, JPEG or PDF")
    assert reasons["scan004"].endswith("scan004: empty file")
    assert [p.name for p in left_out] == ["notes.txt"]


def test_a_folder_of_paperwork_only_names_what_it_holds(tmp_path: Path) -> None:
    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "entrants.txt").write_text("Karl\n")
    with pytest.raises(InputError, match=r"no match found: no sub-folder of pages, image or PDF in it "
                                         r"\(only entrants.txt\)"):
        find_jobs(scans, tmp_path / "out")


def test_an_earlier_batchs_output_folder_left_in_the_input_is_no_match(tmp_path: Path) -> None:
    scans = _tree(tmp_path)
    old = scans / "converted-last-week"
    old.mkdir()
    (old / "m1.mat").write_text("done\n")
    (old / "summary.json").write_text("{}")
    jobs, failed, _ = find_jobs(scans, tmp_path / "out")
    assert "converted-last-week" not in {j.name for j in jobs} | {r.name for r in failed}
    (old / "summary.json").unlink()  # without its summary it is a folder with no page: said so
    assert any(r.name == "converted-last-week" and "no image or PDF inside" in r.reason
               for r in find_jobs(scans, tmp_path / "out")[1])


def test_what_the_operating_system_leaves_among_the_scans_is_no_match(tmp_path: Path) -> None:
    """A Mac's zip unpacks "__MACOSX/", Windows writes "Thumbs.db" and "desktop.ini", a USB stick holds
    "System Volume Information": each was a failed match, and the batch exited as failed."""
    scans = _tree(tmp_path)
    (scans / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0")
    (scans / "desktop.ini").write_text("[.ShellClassInfo]")
    (scans / "__MACOSX" / "m1").mkdir(parents=True)
    (scans / "__MACOSX" / "m1" / "._page9.png").write_bytes(b"\0\5\26\7")
    (scans / "System Volume Information").mkdir()
    (scans / "m1" / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0")
    (scans / "m1" / "__MACOSX").mkdir()
    (scans / "m1" / "__MACOSX" / "page11.png").write_bytes(b"x")  # even one named as a page
    jobs, failed, _ = find_jobs(scans, tmp_path / "out")
    assert [j.name for j in jobs] == ["m1", "m2", "single"]
    assert [p.name for p in jobs[0].pages] == ["page9.png", "page10.png"]
    assert {r.name for r in failed} == {"empty"}


def test_a_link_loop_among_the_matches_is_named_as_one(tmp_path: Path) -> None:
    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "loopA").symlink_to(scans / "loopB")
    (scans / "loopB").symlink_to(scans / "loopA")
    (scans / "gone.png").symlink_to(tmp_path / "nowhere.png")
    jobs, failed, _ = find_jobs(scans, tmp_path / "out")
    reasons = {r.name: r.reason for r in failed}
    assert reasons["loopA"] == f"{scans / 'loopA'}: is a link that leads nowhere (a loop or a missing target)"
    assert reasons["loopB"].endswith("is a link that leads nowhere (a loop or a missing target)")
    assert [j.name for j in jobs] == ["gone"]  # a page by its name: reading it says the link leads nowhere


def test_find_jobs_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such folder"):
        find_jobs(tmp_path / "missing", tmp_path / "out")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match="not a folder"):
        find_jobs(tmp_path / "notes.txt", tmp_path / "out")
    (tmp_path / "scans").mkdir()
    (tmp_path / "scans" / "page.gif").write_bytes(b"GIF89a")
    (failed,) = find_jobs(tmp_path / "scans", tmp_path / "out")[1]
    assert failed.reason.endswith("page.gif: a GIF picture, which digitise does not read: save the page as PNG, "
                                  "JPEG or PDF")


@pytest.mark.parametrize("jobs", [1, 2])
def test_batch_goes_on_past_bad_files(tmp_path: Path, jobs: int) -> None:
    out = tmp_path / "out"
    summary = batch(_tree(tmp_path), out, ScanOptions(), jobs=jobs, runner=_fake_runner)
    status = {r.name: r.status for r in summary.results}
    assert status == {"empty": "failed", "m1": "done", "m2": "failed", "single": "done"}
    assert summary.exit_code is ExitCode.BAD_INPUT
    assert (out / "m1.mat").read_text() == "2 pages\n"
    doc = json.loads((out / "summary.json").read_text())
    assert doc["counts"] == {"done": 2, "failed": 2}
    assert summary.left_out == ("notes.txt",) and doc["left_out"] == ["notes.txt"]
    reasons = {j["name"]: j["reason"] for j in doc["jobs"]}
    assert "bad.png: page 1: not a recording note" in reasons["m2"]


def test_batch_survives_a_crashing_job(tmp_path: Path) -> None:
    summary = batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), jobs=2, runner=_crashing_runner)
    crashed = next(r for r in summary.results if r.name == "m2")
    assert crashed.status == "failed" and "worker bug" in crashed.reason
    assert next(r for r in summary.results if r.name == "m1").status == "done"


def _dying_runner(job: Job, options: ScanOptions) -> JobResult:
    """m2's worker dies as the kernel's out-of-memory killer ends one: no exception, the process gone."""
    if job.name == "m2":
        import os

        os._exit(137)
    return _fake_runner(job, options)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_worker_that_dies_costs_its_own_match_only(tmp_path: Path, jobs: int) -> None:
    """A worker killed (kill -9, or out of memory) broke the pool, and every match not done yet, the queued
    ones too, was failed with "A process in the process pool was terminated abruptly". With one job the
    matches were converted in the batch's own process, and one that died took the whole batch with it."""
    summary = batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), jobs=jobs, runner=_dying_runner)
    status = {r.name: r.status for r in summary.results}
    # Converted (a match done just as the pool broke is taken from its .mat: "flagged" here, with no report).
    assert status["m1"] in ("done", "flagged") and status["single"] in ("done", "flagged"), \
        [(r.name, r.reason) for r in summary.results]
    died = next(r for r in summary.results if r.name == "m2")
    assert died.status == "failed" and "the process converting it died" in died.reason
    assert summary.exit_code is ExitCode.INTERNAL
    assert (tmp_path / "out" / "m1.mat").exists() and (tmp_path / "out" / "single.mat").exists()


def test_a_batch_clears_what_a_killed_worker_left_half_written(tmp_path: Path) -> None:
    """A worker killed mid-write leaves its temporary file: the next batch into the folder removes it once
    it is a minute old (a review page may be saving into the folder just now)."""
    import os
    import time

    out = tmp_path / "out"
    out.mkdir()
    old, fresh, theirs = out / ".m1.mat.abcd_123.tmp", out / ".m2.mat.efgh_456.tmp", out / "notes.tmp"
    for path in (old, fresh, theirs):
        path.write_text("half")
    os.utime(old, (time.time() - 120, time.time() - 120))
    os.utime(theirs, (time.time() - 120, time.time() - 120))
    batch(_tree(tmp_path), out, ScanOptions(), jobs=1, runner=_fake_runner)
    assert not old.exists() and fresh.exists() and theirs.exists()


def test_unfinished_writes_can_be_taken_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a batch worker told to stop (SIGTERM) removes before it goes: the writes it is in the middle of."""

    from digitise import fileio

    seen: list[Path] = []
    taken_back: list[Path] = []

    def stopped(fd: int) -> None:
        seen.extend(p for p in tmp_path.iterdir() if fileio.TEMP_NAME.match(p.name))
        fileio.remove_unfinished()
        taken_back.extend(p for p in seen if not p.exists())
        raise KeyboardInterrupt

    monkeypatch.setattr(fileio.os, "fsync", stopped)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "m.mat", "text")
    assert len(seen) == 1 and taken_back == seen and list(tmp_path.iterdir()) == []
    # Taken back once: a file later under that name is no write of this one's.
    seen[0].write_text("another's")
    fileio.remove_unfinished()
    assert seen[0].exists()


def test_a_named_pipe_among_the_pages_fails_its_match_without_waiting(tmp_path: Path) -> None:
    """A pipe named page.png that something holds open without writing hung the batch: reading it waits."""
    import os

    scans = _tree(tmp_path)
    (scans / "m3").mkdir()
    held = []
    # Inside a match's folder, and at the top named as no picture (looking into it to tell would wait too).
    for pipe in (scans / "m3" / "page.png", scans / "m3" / "page4", scans / "scanner-feed"):
        os.mkfifo(pipe)
        # Open for reading and writing (Linux allows it on a pipe): a writer that never writes.
        held.append(os.open(pipe, os.O_RDWR))
    try:
        summary = batch(scans, tmp_path / "out", ScanOptions(), jobs=1, runner=_fake_runner)
    finally:
        for fd in held:
            os.close(fd)
    for name in ("m3", "scanner-feed"):
        result = next(r for r in summary.results if r.name == name)
        assert result.status == "failed" and "a named pipe, not a page file" in result.reason
    assert next(r for r in summary.results if r.name == "m1").status == "done"


def _level_runner(job: Job, options: ScanOptions) -> JobResult:
    """Says, as its reason, the logging level of the process it runs in."""
    return JobResult(job.name, "done", len(job.pages), str(logging.getLogger().getEffectiveLevel()))


def test_workers_log_at_the_callers_level(tmp_path: Path) -> None:
    # -v must reach the worker processes, or a crashed job's traceback (logged there) is lost.
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.DEBUG)
    try:
        summary = batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), jobs=2, runner=_level_runner)
    finally:
        root.setLevel(before)
    ran = [r for r in summary.results if r.status == "done"]
    assert [r.name for r in ran] == ["m1", "m2", "single"]
    assert {r.reason for r in ran} == {str(logging.DEBUG)}


def test_only_pictures_converted_one_to_a_match_count_as_loose(tmp_path: Path) -> None:
    scans = tmp_path / "scans"
    scans.mkdir()
    for name in ("page1.png", "page2.jpg", "bad.png", "night.pdf"):
        (scans / name).write_bytes(b"x")
    summary = batch(scans, tmp_path / "out", ScanOptions(), jobs=1, runner=_fake_runner)
    assert {r.name: r.status for r in summary.results} == {"page1": "done", "page2": "done", "bad": "failed",
                                                           "night": "done"}
    # The failed picture was converted as nothing, and a PDF is a match's own file.
    assert summary.loose_pages == 2


def test_rerun_skips_done_matches_unless_forced(tmp_path: Path) -> None:
    scans, out = _tree(tmp_path), tmp_path / "out"
    batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
    (out / "m1.mat").write_text("kept\n")
    again = batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
    assert {r.name: r.status for r in again.results}["m1"] == "skipped"
    assert (out / "m1.mat").read_text() == "kept\n"
    forced = batch(scans, out, ScanOptions(overwrite=True), jobs=1, runner=_fake_runner)
    assert {r.name: r.status for r in forced.results}["m1"] == "done"
    assert (out / "m1.mat").read_text() == "2 pages\n"


def test_batch_progress_reports_every_job(tmp_path: Path) -> None:
    seen: list[str] = []
    batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), jobs=1, runner=_fake_runner,
          progress=lambda r: seen.append(r.name))
    assert sorted(seen) == ["empty", "m1", "m2", "single"]


def test_scanning_collects_the_youngest_generation_less_often(tmp_path: Path) -> None:
    """A scan raises the youngest generation's threshold for its process (a page that cannot be read is enough:
    it is set before any page is read), never lowers it, and leaves collection switched off off."""
    import gc

    from digitise.pipeline import GC_YOUNG_THRESHOLD, scan

    page = tmp_path / "p.png"
    page.write_bytes(b"not an image")

    def scanned_with(threshold: int) -> int:
        gc.set_threshold(threshold, 10, 10)
        with pytest.raises(InputError, match="not an image"):
            scan([page], tmp_path / "m.mat", None, ScanOptions())
        assert gc.get_threshold()[1:] == (10, 10)
        return gc.get_threshold()[0]

    old = gc.get_threshold()
    try:
        assert scanned_with(700) == GC_YOUNG_THRESHOLD
        assert scanned_with(50_000) == 50_000  # never lowered
        assert scanned_with(0) == 0  # collection switched off stays off
    finally:
        gc.set_threshold(*old)


def test_inputs_that_would_write_the_same_match_are_failed_not_lost(tmp_path: Path) -> None:
    """m1/, m1.png and m1.pdf all make m1.mat: none is converted over another, each says why."""
    scans = _tree(tmp_path)
    (scans / "m1.png").write_bytes(b"x")
    (scans / "m1.pdf").write_bytes(b"%PDF")
    summary = batch(scans, tmp_path / "out", ScanOptions(), jobs=1, runner=_fake_runner)
    status = {r.name: r.status for r in summary.results}
    assert status["m1"] == status["m1.png"] == status["m1.pdf"] == "failed"
    assert status["single"] == "done" and not (tmp_path / "out" / "m1.mat").exists()
    reason = next(r.reason for r in summary.results if r.name == "m1.png")
    assert "m1.png:" in reason and "would also write m1.mat" in reason
    assert len(json.loads((tmp_path / "out" / "summary.json").read_text())["jobs"]) == len(summary.results)


def test_an_output_folder_inside_the_input_is_not_read_as_matches(tmp_path: Path) -> None:
    scans = _tree(tmp_path)
    for out in (scans / "converted", scans):
        first = batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
        again = batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
        # The second run finds what the first found, its own .mat and summary.json left alone.
        assert [r.name for r in again.results] == [r.name for r in first.results], out
        assert {r.name: r.status for r in again.results}["m1"] == "skipped"


def test_an_empty_input_folder_is_an_error_not_a_silent_success(tmp_path: Path) -> None:
    (tmp_path / "scans").mkdir()
    with pytest.raises(InputError, match="no match found"):
        batch(tmp_path / "scans", tmp_path / "out", ScanOptions(), jobs=1, runner=_fake_runner)


def test_an_output_folder_that_cannot_be_made_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputError, match="afile is a file"):
        batch(_tree(tmp_path), tmp_path / "afile" / "out", ScanOptions(), jobs=1, runner=_fake_runner)


def test_an_output_folder_that_holds_pages_is_refused_before_any_match(tmp_path: Path) -> None:
    scans = _tree(tmp_path)
    with pytest.raises(InputError, match="holds pages"):
        batch(scans, scans / "m1", ScanOptions(), jobs=1, runner=_fake_runner)
    assert not (scans / "m1" / "single.mat").exists()


def test_what_an_interrupted_run_left_without_its_mat_is_replaced_on_the_rerun(tmp_path: Path) -> None:
    """A report and readings without their .mat are a stopped run's: the rerun converts the match."""
    scans, out = _tree(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / "m1.report.readings.json").write_text("stale\n")
    summary = batch(scans, out, ScanOptions(), jobs=1, runner=_leftovers_runner)
    reasons = {r.name: (r.status, r.reason) for r in summary.results}
    assert reasons["m1"] == ("done", "") and reasons["single"] == ("done", ""), reasons


def _leftovers_runner(job: Job, options: ScanOptions) -> JobResult:
    """Converts a match only when told to replace a stopped run's leftovers and nothing else."""
    if not options.leftovers or options.overwrite:
        return JobResult(job.name, "failed", job.page_count, f"options {options}")
    return _fake_runner(job, options)


def test_a_sub_folder_that_cannot_be_read_fails_its_match_not_silently(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Path.rglob skips an unreadable folder without a word; the match would lose its pages."""
    import os

    scans = _tree(tmp_path)
    (scans / "m1" / "later").mkdir()
    walk = os.walk

    def walk_denied(top: object, onerror: object = None, followlinks: bool = False):  # type: ignore[no-untyped-def]
        for root, dirs, files in walk(top, followlinks=followlinks):  # type: ignore[call-overload]
            if Path(root).name == "later":
                onerror(PermissionError(13, "Permission denied", root))  # type: ignore[operator]
            yield root, dirs, files

    monkeypatch.setattr(os, "walk", walk_denied)  # the os module find_jobs walks with
    jobs, failed, _ = find_jobs(scans, tmp_path / "out")
    m1 = next(r for r in failed if r.name == "m1")
    assert "later: cannot open the folder: Permission denied" in m1.reason
    assert "m1" not in [j.name for j in jobs]


def _paged(numbers: list[object]) -> object:
    from digitise.notation.readings import PageReading, Readings

    return Readings(tuple(PageReading("p.png", i + 1, (), header={} if n is None else {"page": {"value": n, "confidence": 0.9}})
                          for i, n in enumerate(numbers)))


def test_order_by_header_sorts_by_the_written_page_number() -> None:
    from digitise.pipeline import order_by_header

    readings, note = order_by_header(_paged(["3", "1", "2"]))
    assert [p.header["page"]["value"] for p in readings.pages] == ["1", "2", "3"] and note is None


@pytest.mark.parametrize(("numbers", "shown"), [(["2", None], "2, ?"), (["2", "two"], "2, ?"), (["1", " "], "1, ?"),
                                               (["1", "0"], "1, 0?")])
def test_order_by_header_keeps_the_given_order_with_a_note_when_a_number_is_missing(numbers: list[object],
                                                                                   shown: str) -> None:
    from digitise.pipeline import order_by_header

    given = _paged(numbers)
    readings, note = order_by_header(given)
    # The note lists the numbers read, as the README says: they show a page missing or out of place.
    assert readings == given and note is not None and note.code == "order-kept"
    assert note.text == (f"page order: not every page's number could be read surely (read: {shown}; "
                         "? unsure); the pages are in the order given")


def test_pages_out_of_order_are_not_told_to_add_the_order_option_they_were_given_with() -> None:
    """With --order header given and the order kept (a number read unsurely), the note said "or add --order
    header" beside the note of why the order was kept."""
    from dataclasses import replace

    from digitise.pipeline import page_notes

    given = _paged(["3", "2", "1"])
    given = replace(given, pages=tuple(replace(page, header={"page": {"value": page.header["page"]["value"],
                                                                      "confidence": 0.999}},
                                               source=f"p{k}.png") for k, page in enumerate(given.pages)))
    told = ("pages: not in the order of their numbers (the first, p0.png, is numbered 3, and p1.png 2): give them "
            "in order")
    assert [note.text for note in page_notes(given)] == [told + ", or add --order header"]
    assert [note.text for note in page_notes(given, ordered_by_header=True)] == [told]
    assert [note.code for note in page_notes(given)] == ["pages-not-in-order"]


def test_order_by_header_does_not_use_a_number_read_unsurely() -> None:
    from dataclasses import replace

    from digitise.pipeline import ORDER_KEPT, order_by_header

    given = _paged(["2", "1"])
    unsure = replace(given.pages[1], header={"page": {"value": "1", "confidence": 0.49}})
    given = replace(given, pages=(given.pages[0], unsure))
    readings, note = order_by_header(given)
    assert readings == given and note is not None and note.text == ORDER_KEPT.format(numbers="2, 1?")


@pytest.mark.parametrize(("numbers", "told"), [(["1", "2", "2", "3"], "1, 2, 2, 3) do not run from 1 to 4"),
                                               (["2", "1", "4"], "2, 1, 4) do not run from 1 to 3")])
def test_order_by_header_keeps_the_given_order_when_the_numbers_repeat_or_skip(numbers: list[object],
                                                                              told: str) -> None:
    from digitise.pipeline import order_by_header

    given = _paged(numbers)
    readings, note = order_by_header(given)
    assert readings == given and note is not None and told in note.text and note.code == "order-broken"


def _page_telling_runner(job: Job, options: ScanOptions) -> JobResult:
    """Tells the batch of each page as the real scan does (through the worker's channel), then writes."""
    from digitise.pipeline import executors

    for _ in range(job.page_count):
        executors.tell_page_read(job.name)
    return _fake_runner(job, options)


@pytest.mark.parametrize("jobs", [1, 2])
def test_batch_tells_of_every_page_as_it_is_read(tmp_path: Path, jobs: int) -> None:
    scans = tmp_path / "scans"
    for name, count in (("m1", 3), ("m2", 2)):
        (scans / name).mkdir(parents=True)
        for k in range(count):
            (scans / name / f"p{k}.png").write_bytes(b"x")
    told: list[tuple[str, str]] = []
    batch(scans, tmp_path / "out", ScanOptions(), jobs=jobs, runner=_page_telling_runner,
          page_progress=lambda name: told.append(("page", name)), progress=lambda r: told.append(("end", r.name)),
          started=lambda total: told.append(("start", str(total))))
    # The page total comes first, before any job (the bar is made from it).
    assert told[0] == ("start", "5")
    told = told[1:]
    assert sorted(told) == [("end", "m1"), ("end", "m2")] + [("page", "m1")] * 3 + [("page", "m2")] * 2
    # A match's pages are all told before its end (the bar then makes up only what was never read).
    for name in ("m1", "m2"):
        end = told.index(("end", name))
        assert max(i for i, event in enumerate(told) if event == ("page", name)) < end


def test_batch_progress_counts_pages_to_the_total_found() -> None:
    """A bar moves a page at a time; a match's end makes up the pages it never read, and a page told after its
    end is not counted, so the count ends at the pages found."""
    from digitise.pipeline import BatchProgress

    shown: list[tuple[object, ...]] = []

    class View:
        def found(self, pages: int) -> None:
            shown.append(("found", pages))

        def page_read(self, step: int, read: int, found: int, match: str) -> None:
            shown.append(("page", step, read, found, match))

        def match_ended(self, result: JobResult, step: int) -> None:
            shown.append(("end", result.name, step))

    told = BatchProgress(View())
    told.started(5)
    told.page_read("m1")
    told.page_read("m2")
    told.match_ended(JobResult("m1", "failed", 3))
    told.page_read("m1")  # a worker's late word: m1 has ended
    told.match_ended(JobResult("m2", "done", 2))
    assert shown == [("found", 5), ("page", 1, 1, 5, "m1"), ("page", 1, 2, 5, "m2"), ("end", "m1", 2),
                     ("end", "m2", 1)]


def test_a_pdf_match_counts_its_pages_and_tells_each_as_it_is_read(tmp_path: Path) -> None:
    """The real scan through the batch: one PDF of five pages is five pages, told one by one."""
    pdf = Path(__file__).resolve().parent.parent / "samples" / "chen-dana" / "medium" / "pages.pdf"
    scans = tmp_path / "scans"
    scans.mkdir()
    (scans / "cd.pdf").write_bytes(pdf.read_bytes())
    jobs, _, _ = find_jobs(scans, tmp_path / "out")
    assert [(j.name, j.page_count) for j in jobs] == [("cd", 5)]
    pages: list[str] = []
    summary = batch(scans, tmp_path / "out", ScanOptions(), jobs=1, page_progress=pages.append)
    assert pages == ["cd"] * 5
    assert [(r.name, r.pages) for r in summary.results] == [("cd", 5)]
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["jobs"][0]["pages"] == 5


def test_scan_keeps_the_given_order_with_a_note_the_review_page_keeps(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """One page's number unread: the order given is kept, and the report says so where a re-solve keeps it."""
    from dataclasses import replace

    from digitise.notation.readings import load_readings
    from digitise.pipeline import ORDER_KEPT, scan
    from digitise.vision import read

    readings = load_readings(Path(__file__).parent / "data" / "heavy_bearoff_misread.readings.json")
    second = readings.pages[1]
    unnumbered = replace(second, header={k: v for k, v in second.header.items() if k != "page"})
    readings = replace(readings, pages=(readings.pages[0], unnumbered, *readings.pages[2:]))
    monkeypatch.setattr(read, "read_pages", lambda *a, **k: read.ReadOutcome(readings, ()))
    page = tmp_path / "p.png"
    page.write_bytes(b"not read: the reader is replaced")
    summary = scan([page], tmp_path / "m.mat", tmp_path / "m.report.json", ScanOptions(order="header"))
    kept = ORDER_KEPT.format(numbers="1, ?, 3, 4, 5, 6, 7, 8, 9?, 10, 11, 12?, 13, 14, 15?, 16, 17, 8")
    assert kept in summary.notes and summary.exit_code is ExitCode.FLAGGED
    report = json.loads((tmp_path / "m.report.json").read_text())
    assert report["scan_notes"] == [kept] and report["notes"].count(kept) == 1


def test_pages_are_ordered_folder_by_folder_then_by_exact_name(tmp_path: Path) -> None:
    """A folder's own files, then its sub-folders; never left to the order the file system lists them in."""
    match = tmp_path / "scans" / "m1"
    for name in ("b/page1.png", "a/page1.png", "page2.png", "Page2.png", "a/page10.png", "page9.png"):
        (match / name).parent.mkdir(parents=True, exist_ok=True)
        (match / name).write_bytes(b"x")
    jobs, failed, _ = find_jobs(tmp_path / "scans", tmp_path / "out")
    assert not failed
    assert [str(p.relative_to(match)) for p in jobs[0].pages] == [
        "Page2.png", "page2.png", "page9.png", "a/page1.png", "a/page10.png", "b/page1.png"]


def test_summary_is_the_same_however_the_output_folder_is_named(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    scans = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    for out in (Path("out1"), tmp_path / "out2"):
        out.mkdir()
        (out / "m1.mat").write_text("done before\n")
        (out / "m1.report.json").write_text(json.dumps({"summary": {"turns": 40, "flagged": 3}}))
        batch(Path("scans"), out, ScanOptions(), jobs=1, runner=_fake_runner)
    assert (tmp_path / "out1" / "summary.json").read_bytes() == (tmp_path / "out2" / "summary.json").read_bytes()
    assert scans.is_dir()


def test_a_re_run_keeps_what_the_skipped_matches_reports_say(tmp_path: Path) -> None:
    """summary.json is rewritten by every run: a match skipped as done keeps its turns and flags there."""
    scans = _tree(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "m1.mat").write_text("done before\n")
    (out / "m1.report.json").write_text(json.dumps({"summary": {"turns": 40, "flagged": 3}}))
    (out / "single.mat").write_text("done before, its report lost\n")
    batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
    jobs = {j["name"]: j for j in json.loads((out / "summary.json").read_text())["jobs"]}
    assert (jobs["m1"]["status"], jobs["m1"]["turns"], jobs["m1"]["flagged"]) == ("skipped", 40, 3)
    # Relative to the summary's folder: the same bytes however the output folder was named.
    assert jobs["m1"]["report"] == "m1.report.json"
    assert (jobs["single"]["status"], jobs["single"]["turns"], jobs["single"]["report"]) == ("skipped", 0, None)
    assert (out / "m1.mat").read_text() == "done before\n"


def test_pages_of_two_scanning_runs_keep_their_folders_together(tmp_path: Path) -> None:
    match = tmp_path / "scans" / "m1"
    for run, names in (("part1", ("scan-001.png", "scan-002.png")), ("part2", ("scan-001.png",))):
        (match / run).mkdir(parents=True)
        for name in names:
            (match / run / name).write_bytes(b"x")
    jobs, _, _ = find_jobs(tmp_path / "scans", tmp_path / "out")
    assert [str(p.relative_to(match)) for p in jobs[0].pages] == [
        "part1/scan-001.png", "part1/scan-002.png", "part2/scan-001.png"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_interrupted_batch_stops_at_once_and_says_what_is_left(tmp_path: Path, jobs: int) -> None:
    """Ctrl-C (here: raised as the first match ends): the match being read is stopped, not waited for (it
    would take ten minutes), the queued ones are not begun, and summary.json lists them as interrupted."""
    out = tmp_path / "out"

    def stop(result: JobResult) -> None:
        if result.name in ("m2", "single"):
            raise KeyboardInterrupt

    # With one worker the last match is queued behind m2 and may be converted before m2's result is heard (a
    # loaded machine): it takes ten minutes here, so the stop always finds it unconverted.
    runner = _sleepy_runner if jobs == 2 else _sleepy_last_runner
    with pytest.raises(BatchInterrupted) as info:
        batch(_tree(tmp_path), out, ScanOptions(), jobs=jobs, runner=runner, progress=stop)
    status = {r.name: r.status for r in info.value.summary.results}
    assert status["m1"] == ("interrupted" if jobs == 2 else "done")
    assert "interrupted" in status.values()
    doc = json.loads((out / "summary.json").read_text())
    assert doc["counts"].get("interrupted") == list(status.values()).count("interrupted")
    assert not (out / "m1.mat").exists() or jobs == 1
    # Which matches have no results, in summary.json and in the spreadsheet's rows.
    missing = [name for name, said in status.items() if said == "interrupted"]
    assert doc["missing"] == missing
    rows = list(csv.DictReader(io.StringIO((out / "summary.csv").read_text(encoding="utf-8-sig"))))
    assert [row["match"] for row in rows if row["status"] == "interrupted"] == missing
    assert all(row["turns"] == "" and "interrupted" in row["reason"] for row in rows if row["status"] == "interrupted")


def test_a_match_written_as_the_batch_was_stopped_is_listed_as_converted(tmp_path: Path) -> None:
    """Stopped after a match's files were all written but before its result came back: the summary says what
    the disk holds (it said "interrupted" beside a complete .mat)."""
    import os

    out = tmp_path / "out"
    (tmp_path / "batch.pid").write_text(str(os.getpid()))
    # One worker converts m1, m2 and single in that order (the longest first, then as found).
    with pytest.raises(BatchInterrupted) as info:
        batch(_tree(tmp_path), out, ScanOptions(), jobs=1, runner=_written_then_stopped)
    found = {r.name: r for r in info.value.summary.results}
    assert (found["m2"].status, found["m2"].turns, found["m2"].flagged) == ("flagged", 12, 2)
    assert found["single"].status == "interrupted"
    jobs = {j["name"]: j["status"] for j in json.loads((out / "summary.json").read_text())["jobs"]}
    assert jobs["m2"] == "flagged" and jobs["single"] == "interrupted"


def _written_then_stopped(job: Job, options: ScanOptions) -> JobResult:
    """m2's files are written, then Ctrl-C reaches the batch before m2's result does."""
    import os
    import signal
    import time

    if job.name == "m2":
        write_atomic(job.report, json.dumps({"summary": {"turns": 12, "flagged": 2}}))
        write_atomic(job.output, "written\n")
        os.kill(int((job.output.parent.parent / "batch.pid").read_text()), signal.SIGINT)
        time.sleep(60)  # the batch stops this worker long before
    return _fake_runner(job, options)


def test_a_match_folder_loses_no_page_without_a_word(tmp_path: Path) -> None:
    """A picture named without a picture's suffix is a page; a page that is a link leading nowhere is kept, for
    reading to name; a scanner's notes and index files are not pages."""
    import cv2
    import numpy as np

    match = tmp_path / "scans" / "m1"
    match.mkdir(parents=True)
    ok, png = cv2.imencode(".png", np.full((500, 500), 255, np.uint8))
    assert ok
    (match / "page1.png").write_bytes(png.tobytes())
    (match / "page2").write_bytes(png.tobytes())
    (match / "page3.png.bak").write_bytes(png.tobytes())
    (match / "page4.jpg").symlink_to(tmp_path / "gone.jpg")
    (match / "notes.txt").write_text("table 4, round 2\n")
    (match / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0 not a page")
    (job,) = find_jobs(tmp_path / "scans", tmp_path / "out")[0]
    assert [p.name for p in job.pages] == ["page1.png", "page2", "page3.png.bak", "page4.jpg"]
    from digitise.vision.images import iter_pages

    with pytest.raises(InputError, match="page4.jpg: is a link that leads nowhere"):
        list(iter_pages(match / "page4.jpg"))


def test_two_batches_into_one_folder_at_once_the_second_is_refused(tmp_path: Path) -> None:
    import fcntl

    from digitise.pipeline import LOCK_NAME

    out, scans = tmp_path / "out", _tree(tmp_path)
    out.mkdir()
    with open(out / LOCK_NAME, "a+b") as held:  # a batch running now
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(OutputError, match="another batch is converting into this folder now"):
            batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
    assert not (out / "summary.json").exists() and not (out / "m1.mat").exists()
    summary = batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)  # the other one has ended
    assert (out / "m1.mat").exists() and summary.results


def test_a_link_back_to_the_folder_is_no_match(tmp_path: Path) -> None:
    scans = _tree(tmp_path)
    (scans / "loop").symlink_to(".")
    (scans / "up").symlink_to("..")
    jobs, failed, _ = find_jobs(scans, tmp_path / "out")
    assert [j.name for j in jobs] == ["m1", "m2", "single"]
    reasons = {r.name: r.reason for r in failed}
    assert reasons["loop"].endswith("loop: a link to the folder being converted, or one above it: not a match")
    assert "up" in reasons


def _pid_runner(job: Job, options: ScanOptions) -> JobResult:
    """Says, as its reason, the process it ran in."""
    import os

    return JobResult(job.name, "failed", job.page_count, str(os.getpid()))


def test_no_more_workers_than_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs 1000 on one core: one worker, not this process (one of several matches may kill its process)."""
    import os

    monkeypatch.setattr("os.cpu_count", lambda: 1)
    summary = batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), jobs=1000, runner=_pid_runner)
    pids = {r.reason for r in summary.results if r.name in ("m1", "m2", "single")}
    assert len(pids) == 1 and pids != {str(os.getpid())}


def test_a_match_with_no_turn_is_refused_with_the_solvers_reason() -> None:
    """Writing no game from the start can follow (the wrong pages): said, and no .mat GNU Backgammon refuses."""
    from digitise.game.record import MatchRecord
    from digitise.pipeline.steps import some_turn_found as _some_turn_found
    from digitise.solve import Reason, Report, SolveResult
    from digitise.solve.report_types import Summary

    def solved(turns: int) -> SolveResult:
        notes = (Reason.PLAYERS_UNKNOWN.flag(), Reason.NO_GAME.flag(boards=7))
        return SolveResult(MatchRecord(0, ("Bottom", "Top"), ()),
                           Report((), (), Summary(7, 0, turns, 0, 0, 1.0), notes=notes))

    with pytest.raises(InputError, match="^nothing to convert: no legal game explains the marks: 7 boards") as info:
        _some_turn_found(solved(0), [Path("a.png"), Path("b.png")])
    assert info.value.message.endswith("are these the pages of one match, in order? (2 files, a.png first)")
    _some_turn_found(solved(3), [Path("a.png")])


def _no_work(job: Job, options: ScanOptions) -> JobResult:
    raise AssertionError(f"{job.name} converted: the batch should have been refused before any work")


@pytest.mark.parametrize("name", ["summary.json", "summary.csv"])
def test_a_summary_the_batch_did_not_write_is_not_replaced_without_force(tmp_path: Path, name: str) -> None:
    """`batch -o DIR` replaced a summary.json in DIR that was someone else's (a probe's finding): refused
    before any match is converted, and replaced only with --force."""
    out, scans = tmp_path / "out", _tree(tmp_path)
    out.mkdir()
    (out / name).write_text("the director's own notes\n")
    with pytest.raises(OutputError, match=f"{name}: exists already and was not written by digitise batch"):
        batch(scans, out, ScanOptions(), jobs=1, runner=_no_work)
    assert (out / name).read_text() == "the director's own notes\n" and not (out / "m1.mat").exists()
    batch(scans, out, ScanOptions(overwrite=True), jobs=1, runner=_fake_runner)
    assert (out / name).read_text(encoding="utf-8-sig").startswith(("{", "match,status,"))


def test_a_batch_replaces_its_own_summaries_and_those_of_an_earlier_version(tmp_path: Path) -> None:
    out, scans = tmp_path / "out", _tree(tmp_path)
    batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
    # A summary.json written before it said its format: its counts and jobs are a batch's.
    (out / "summary.json").write_text('{"counts": {"done": 1}, "jobs": []}\n')
    again = batch(scans, out, ScanOptions(), jobs=1, runner=_fake_runner)
    assert json.loads((out / "summary.json").read_text())["format"] == "digitise-batch-summary"
    assert {r.name: r.status for r in again.results}["m1"] == "skipped"


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_summary_that_cannot_be_written_is_found_before_any_match_is_converted(tmp_path: Path, kind: str) -> None:
    """A summary.json that is a folder was found only once every match was converted: then the batch's log
    was lost. Refused at once, --force or not."""
    import os

    out, scans = tmp_path / "out", _tree(tmp_path)
    out.mkdir()
    if kind == "folder":
        (out / "summary.json").mkdir()
    else:
        os.mkfifo(out / "summary.json")
    reason = "is a folder, not a file" if kind == "folder" else "is not a regular file"
    for overwrite in (False, True):
        with pytest.raises(OutputError, match=f"summary.json: {reason}"):
            batch(scans, out, ScanOptions(overwrite=overwrite), jobs=1, runner=_no_work)
    assert not (out / "m1.mat").exists()


def test_the_summary_csv_has_a_row_a_match_and_keeps_formulas_as_text(tmp_path: Path) -> None:
    from digitise.pipeline import CSV_COLUMNS, BatchSummary

    converted = JobResult("m1", "flagged", 8, turns=60, flagged=3, set_aside=1, notes=("a note",),
                          report=str(tmp_path / "m1.report.json"), players=("=cmd|' /C calc'!A0", "Bruno"),
                          length=5, score=(2, 5), winner="Bruno", games=4, closed_out=2)
    failed = JobResult("m2", "failed", 1, "m2/p.png: not a recording note")
    text = BatchSummary((converted, failed), 1.0).to_csv(tmp_path)
    assert text.startswith("\ufeff") and "\r\n" in text
    rows = list(csv.reader(io.StringIO(text[1:])))
    assert rows[0] == list(CSV_COLUMNS)
    assert rows[1] == ["m1", "flagged", "'=cmd|' /C calc'!A0", "Bruno", "5", "2", "5", "Bruno", "4", "60", "3", "1",
                       "2", "8", "a note", "", "m1.report.json"]
    assert rows[2] == ["m2", "failed", "", "", "", "", "", "", "", "", "", "", "", "1", "",
                       "m2/p.png: not a recording note", ""]


def _hold_units(path: str, units: int, held: Any, done: Any) -> None:
    """In another process (a batch's worker): hold ``units`` of a 4-unit page memory until ``done`` is set."""
    from digitise.pipeline import PAGE_MEMORY_UNIT, PageBudget

    budget = PageBudget(Path(path), 4 * PAGE_MEMORY_UNIT)
    with budget.hold(units * PAGE_MEMORY_UNIT):
        held.set()
        done.wait(60)


def test_the_page_memory_a_batch_shares_is_never_overdrawn_across_its_processes(tmp_path: Path) -> None:
    """One process holding 3 of 4 units: another gets 1 at once, not 2, until the first lets go, or dies."""
    import multiprocessing

    from digitise.pipeline import PAGE_MEMORY_UNIT, PageBudget

    context = multiprocessing.get_context("spawn")
    lock = tmp_path / ".digitise-pages.lock"
    for ends in ("lets go", "killed"):
        held, done = context.Event(), context.Event()
        worker = context.Process(target=_hold_units, args=(str(lock), 3, held, done))
        worker.start()
        try:
            assert held.wait(60)
            budget = PageBudget(lock, 4 * PAGE_MEMORY_UNIT)
            with pytest.raises(BlockingIOError), budget.hold(2 * PAGE_MEMORY_UNIT, wait=False):
                pass
            with budget.hold(PAGE_MEMORY_UNIT, wait=False):
                pass
            # A page larger than the whole memory waits for all of it (then is read alone).
            with pytest.raises(BlockingIOError), budget.hold(100 * PAGE_MEMORY_UNIT, wait=False):
                pass
            if ends == "lets go":
                done.set()
            else:
                worker.kill()
            worker.join(60)
            with budget.hold(4 * PAGE_MEMORY_UNIT, wait=False):
                pass
            budget.close()
        finally:
            # A process killed while waiting on the event leaves it owing a wake-up: setting it then never returns.
            if worker.is_alive():
                done.set()
                worker.join(60)


def _memory_said(job: Job, options: ScanOptions) -> JobResult:
    """Says the page memory the batch gave its jobs (in its reason)."""
    assert options.page_memory is not None
    path, total = options.page_memory
    return JobResult(job.name, "done", 1, f"{path.name} {total}")


def test_a_batchs_workers_share_one_page_memory_of_half_the_machines(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from digitise import pipeline
    from digitise.pipeline import executors
    from digitise.vision import page_memory

    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert pipeline.batch_page_memory() == physical // 2
    out = tmp_path / "out"
    summary = batch(_tree(tmp_path), out, ScanOptions(), jobs=2, runner=_memory_said)
    said = {r.reason for r in summary.results if r.status == "done"}
    assert said == {f".digitise-pages.lock {physical // 2}"}
    assert not [p.name for p in out.iterdir() if p.name.startswith(".digitise-pages")]

    # Each job of a worker reads its pages in that memory (run_job shares it, and stops when the job ends).
    seen: list[object] = []

    def scan_seeing(*args: Any, **kwargs: Any) -> Any:
        seen.append(page_memory.shared_page_memory())
        raise InputError("not a note")

    monkeypatch.setattr(executors, "scan", scan_seeing)  # run_job's own name for it
    job = Job("m1", (tmp_path / "p.png",), out / "m1.mat", out / "m1.report.json", 1)
    pipeline.run_job(job, ScanOptions(page_memory=(out / "x.lock", 8 * pipeline.PAGE_MEMORY_UNIT)))
    assert isinstance(seen[0], pipeline.PageBudget) and seen[0].units == 8
    assert page_memory.shared_page_memory() is None

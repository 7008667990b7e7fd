"""``batch --scheduler``: matches converted on a Dask cluster's worker processes, as local processes convert them.

A real ``LocalCluster`` of two worker processes (one thread each, as
docs/distributed.md starts them), the real pipeline on sample pages, and
workers really killed (SIGKILL) in the middle of a match.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from digitise.errors import MissingDependencyError, OptionError
from digitise.fileio import write_atomic
from digitise.pipeline import BatchInterrupted, Job, JobResult, ScanOptions, batch

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed (pip install '.[dask]')")

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """The address of a cluster of two worker processes that tries a match whose worker died once more only."""
    import dask

    # Its default (3) would have a match that kills every worker it meets kill four.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster:
        yield str(cluster.scheduler_address)


def _scans(root: Path) -> Path:
    """Two short matches of the samples: two pages of one, one page of the other."""
    scans = root / "scans"
    (scans / "alice").mkdir(parents=True)
    for page in ("page-001.jpg", "page-002.jpg"):
        shutil.copy(SAMPLES / "alice-bruno" / "light" / page, scans / "alice" / page)
    (scans / "chen").mkdir()
    shutil.copy(SAMPLES / "chen-dana" / "light" / "page-001.jpg", scans / "chen" / "page-001.jpg")
    return scans


def _tree(root: Path) -> Path:
    """Three one- or two-page matches of fake pages (the runners below never read them)."""
    scans = root / "scans"
    for name, pages in (("m1", 2), ("m2", 1), ("m3", 1)):
        (scans / name).mkdir(parents=True)
        for page in range(pages):
            (scans / name / f"page{page}.png").write_bytes(b"x")
    return scans


def _outputs(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if not path.name.startswith(".")}


def test_a_cluster_converts_as_local_processes_do(tmp_path: Path, scheduler: str) -> None:
    """The same summary.json, .mat, reports and readings byte for byte; a re-run skips, --force converts again."""
    scans = _scans(tmp_path)
    local = batch(scans, tmp_path / "local", ScanOptions(), jobs=2)
    ended: list[str] = []
    pages: list[str] = []
    on_cluster = batch(scans, tmp_path / "cluster", ScanOptions(), scheduler=scheduler,
                       progress=lambda result: ended.append(result.name), page_progress=pages.append)
    assert {r.name: r.status for r in on_cluster.results} == {"alice": "flagged", "chen": "flagged"}
    assert [(r.name, r.status, r.turns, r.flagged) for r in on_cluster.results] == \
        [(r.name, r.status, r.turns, r.flagged) for r in local.results]
    # The report named as the folder was given: the CLI's "review with" line is the same too.
    assert [r.report for r in on_cluster.results] == [str(tmp_path / "cluster" / f"{n}.report.json")
                                                      for n in ("alice", "chen")]
    first = _outputs(tmp_path / "local")
    assert _outputs(tmp_path / "cluster") == first
    assert sorted(ended) == ["alice", "chen"]
    # Told as the pages are read, each once at most (the batch's end makes up one heard late).
    assert set(pages) <= {"alice", "chen"} and pages.count("alice") <= 2 and pages.count("chen") <= 1

    again = batch(scans, tmp_path / "cluster", ScanOptions(), scheduler=scheduler)
    assert {r.status for r in again.results} == {"skipped"}
    batch(scans, tmp_path / "local", ScanOptions(), jobs=2)
    assert _outputs(tmp_path / "cluster") == _outputs(tmp_path / "local")
    mat = tmp_path / "cluster" / "chen.mat"
    os.utime(mat, (0, 0))
    forced = batch(scans, tmp_path / "cluster", ScanOptions(overwrite=True), scheduler=scheduler)
    assert {r.status for r in forced.results} == {"flagged"} and mat.stat().st_mtime > 0
    assert _outputs(tmp_path / "cluster") == first


def test_relative_folders_reach_workers_whole(tmp_path: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker has a working folder of its own: folders named from the batch's reach it from the root."""
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    summary = batch(Path("scans"), Path("out"), ScanOptions(), scheduler=scheduler, runner=_fake_runner)
    assert {r.status for r in summary.results} == {"done"}
    assert (tmp_path / "out" / "m1.mat").read_text() == "2 pages\n"


def _fake_runner(job: Job, options: ScanOptions) -> JobResult:
    """Pretends to scan: writes the report, then the .mat (last, as a scan does)."""
    write_atomic(job.report, json.dumps({"summary": {"turns": 3, "flagged": 0}}), overwrite=True)
    write_atomic(job.output, f"{len(job.pages)} pages\n", overwrite=options.overwrite)
    return JobResult(job.name, "done", len(job.pages), turns=3, report=str(job.report))


def _attempt(job: Job) -> int:
    """Counts the tries of ``job`` in a file beside the outputs; this try's number."""
    tries = job.output.parent.parent / f"{job.name}.tries"
    with tries.open("a") as handle:
        handle.write("x")
    return tries.stat().st_size


def _killed_mid_match(job: Job, options: ScanOptions) -> JobResult:
    """m1's first try: its report written and its .mat begun (a temporary file), then the worker is killed."""
    if job.name == "m1" and _attempt(job) == 1:
        write_atomic(job.report, json.dumps({"summary": {"turns": 1, "flagged": 1}}))
        (job.output.parent / f".{job.output.name}.abcd1234.tmp").write_text("half a mat")
        os.kill(os.getpid(), signal.SIGKILL)
    return _fake_runner(job, options)


def test_a_worker_killed_mid_match_has_the_match_run_again(tmp_path: Path, scheduler: str) -> None:
    out = tmp_path / "out"
    summary = batch(_tree(tmp_path), out, ScanOptions(), scheduler=scheduler, runner=_killed_mid_match)
    assert {r.name: r.status for r in summary.results} == {"m1": "done", "m2": "done", "m3": "done"}
    assert (tmp_path / "m1.tries").read_text() == "xx"
    # The .mat whole (written by the second try), the report the second try's, never half of either.
    assert (out / "m1.mat").read_text() == "2 pages\n"
    assert json.loads((out / "m1.report.json").read_text())["summary"]["turns"] == 3
    assert json.loads((out / "summary.json").read_text())["counts"] == {"done": 3}


def _killed_after_writing(job: Job, options: ScanOptions) -> JobResult:
    """m2's worker is killed after its match was written, before its result was sent."""
    result = _fake_runner(job, options)
    if job.name == "m2" and _attempt(job) == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return result


def test_a_match_written_before_its_worker_was_killed_is_not_converted_again(tmp_path: Path,
                                                                              scheduler: str) -> None:
    out = tmp_path / "out"
    summary = batch(_tree(tmp_path), out, ScanOptions(), scheduler=scheduler, runner=_killed_after_writing)
    found = {r.name: r for r in summary.results}
    assert (found["m2"].status, found["m2"].turns) == ("done", 3)
    assert (tmp_path / "m2.tries").read_text() == "x"


def _always_killed(job: Job, options: ScanOptions) -> JobResult:
    """m3 kills its worker each time it is tried, once the other matches are converted (a worker's death is
    blamed on the matches it held, the queued ones too: Dask cannot tell them apart)."""
    if job.name == "m3":
        others = [job.output.with_name(f"{name}.mat") for name in ("m1", "m2")]
        end = time.monotonic() + 60
        while not all(path.exists() for path in others) and time.monotonic() < end:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)
    return _fake_runner(job, options)


def test_a_match_that_kills_every_worker_it_meets_fails_alone(tmp_path: Path, scheduler: str) -> None:
    summary = batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), scheduler=scheduler, runner=_always_killed)
    found = {r.name: r for r in summary.results}
    assert found["m3"].status == "failed" and "the process converting it died" in found["m3"].reason
    assert not (tmp_path / "out" / "m3.mat").exists()
    # Dask may count a worker's death against a task that was queued on it too: such a match fails the same
    # way, whole or not at all, and the batch goes on with the rest.
    for name in ("m1", "m2"):
        done = found[name].status == "done"
        assert done or "the process converting it died" in found[name].reason
        assert (tmp_path / "out" / f"{name}.mat").exists() == done
    assert int(summary.exit_code) == 10


def _slow_pages(job: Job, options: ScanOptions) -> JobResult:
    """m1 reads a page every tenth of a second for a minute; the others at once."""
    from digitise.pipeline import executors

    if job.name == "m1":
        for _ in range(600):
            executors.tell_page_read(job.name)
            time.sleep(0.1)
    return _fake_runner(job, options)


def test_an_interrupted_batch_stops_its_tasks_and_says_what_is_left(tmp_path: Path, scheduler: str) -> None:
    out = tmp_path / "out"

    def stop(result: JobResult) -> None:
        raise KeyboardInterrupt

    with pytest.raises(BatchInterrupted) as info:
        batch(_tree(tmp_path), out, ScanOptions(), scheduler=scheduler, runner=_slow_pages, progress=stop)
    status = {r.name: r.status for r in info.value.summary.results}
    assert status["m1"] == "interrupted" and not (out / "m1.mat").exists()
    doc = json.loads((out / "summary.json").read_text())
    assert doc["counts"].get("interrupted") == list(status.values()).count("interrupted")
    assert all((out / f"{name}.mat").exists() for name, s in status.items() if s == "done")


def test_no_scheduler_there_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("digitise.cluster.CONNECT_SECONDS", 1.0)
    with pytest.raises(OptionError, match="no Dask scheduler answers there"):
        batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), scheduler="tcp://127.0.0.1:9", runner=_fake_runner)


def test_jobs_are_this_machines_not_a_clusters(tmp_path: Path, scheduler: str) -> None:
    with pytest.raises(OptionError, match="--jobs"):
        batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), jobs=2, scheduler=scheduler, runner=_fake_runner)


def test_without_dask_the_scheduler_option_says_what_to_install(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'digitise\[dask\]'"):
        batch(_tree(tmp_path), tmp_path / "out", ScanOptions(), scheduler="tcp://127.0.0.1:8786", runner=_fake_runner)

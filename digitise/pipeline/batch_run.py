"""A batch: every match of a folder converted, one bad file never stopping the others."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from digitise.errors import DigitiseError, OutputError
from digitise.fileio import make_folder, write_atomic
from digitise.pipeline.executors import Executor, executor_for, remember_stop_signals, run_job
from digitise.pipeline.jobs import (
    MATCH_FILE_SUFFIXES,
    Job,
    JobResult,
    converted_unheard,
    find_jobs,
    skipped_as_converted,
)
from digitise.pipeline.locks import PAGES_LOCK_NAME, batch_lock, batch_page_memory, mutex_path
from digitise.pipeline.options import ScanOptions
from digitise.pipeline.steps import readings_beside
from digitise.pipeline.summary import (
    BatchInterrupted,
    BatchSummary,
    check_summaries,
    summary_csv_path,
    summary_path,
)


def batch(
    input_dir: Path,
    output_dir: Path,
    options: ScanOptions,
    *,
    jobs: int | None = None,
    progress: Callable[[JobResult], None] | None = None,
    page_progress: Callable[[str], None] | None = None,
    started: Callable[[int], None] | None = None,
    runner: Callable[[Job, ScanOptions], JobResult] = run_job,
    executor: Executor | None = None,
    scheduler: str | None = None,
) -> BatchSummary:
    """Convert every match under ``input_dir`` into ``output_dir``.

    Matches already converted are skipped unless ``options.overwrite``.
    ``runner`` is the per-job function (tests inject failing ones); ``executor``
    runs it, by default in ``jobs`` worker processes (all cores: :class:`LocalProcesses`), or with ``scheduler``
    (``tcp://HOST:PORT``) on that Dask cluster's workers (:class:`OnCluster`). ``progress`` hears of each
    job as it ends, ``page_progress`` of each page read (the job's name) as it
    is read, in whichever process reads it; ``started`` of the pages found, before any job.
    """
    start = time.perf_counter()
    found, failed, left_out = find_jobs(input_dir, output_dir)
    if options.template is not None:
        # imported here: keeps start-up light (OpenCV, NumPy)
        from digitise.vision.read import resolve_templates

        resolve_templates(options.template)  # a bad --template is one error, not one per match
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.vision.cells import check_models

    check_models()  # so is a broken install
    # Before any job: a folder that cannot take the outputs would fail every one of them.
    make_folder(output_dir)
    chosen = executor_for(scheduler, jobs, (input_dir, output_dir)) if executor is None else \
        contextlib.nullcontext(executor)
    with chosen as running, batch_lock(output_dir):
        check_summaries(output_dir, options.overwrite)
        pages_lock = output_dir / PAGES_LOCK_NAME
        if options.page_memory is None:
            options = replace(options, page_memory=(pages_lock, batch_page_memory()))
        try:
            return _batch_in(found, failed, left_out, input_dir, output_dir, options, start, running, progress,
                             page_progress, started, runner)
        finally:
            for lock in (pages_lock, mutex_path(pages_lock)):
                with contextlib.suppress(OSError):
                    lock.unlink(missing_ok=True)


def _batch_in(found: list[Job], failed: list[JobResult], left_out: list[Path], input_dir: Path, output_dir: Path,
              options: ScanOptions, start: float, executor: Executor, progress: Callable[[JobResult], None] | None,
              page_progress: Callable[[str], None] | None, started: Callable[[int], None] | None,
              runner: Callable[[Job, ScanOptions], JobResult]) -> BatchSummary:
    """The batch's jobs run with its output folder held (see :func:`batch`)."""
    if started:
        started(sum(job.page_count for job in found))
    # Job names are unique (find_jobs fails clashing ones), so results can be keyed by them.
    results: dict[str, JobResult] = {}
    todo: list[Job] = []
    for job in found:
        if job.output.exists() and not options.overwrite:
            done = skipped_as_converted(job)
            lost = [path.name for path in (job.report, readings_beside(job.report)) if not path.exists()]
            if lost:
                # Its .mat stands, but the review of it needs the files beside it: said, not left to the review.
                gone = f"{lost[0]} is gone: the review page needs it" if len(lost) == 1 else \
                    f"{' and '.join(lost)} are gone: the review page needs them"
                done = replace(done, notes=(*done.notes, f"{gone}; --force converts the match again"))
            results[job.name] = done
        else:
            todo.append(job)
    for r in (*failed, *results.values()):
        if progress:
            progress(r)
    # A job without its .mat is not done: what an interrupted run left beside it is its own to replace.
    own = replace(options, leftovers=True)
    begun = time.time()
    try:
        with remember_stop_signals():
            executor.run(todo, own, results, progress, page_progress, runner, begun)
    except KeyboardInterrupt:
        # Stopped (Ctrl-C, SIGTERM): what is done stays done, and the summary says what is not.
        for job in todo:
            if job.name not in results:
                results[job.name] = converted_unheard(job, begun) or JobResult(
                    job.name, "interrupted", job.page_count,
                    f"{job.name}: not converted: the batch was interrupted (the same command again converts it)")
        summary = _summarise(found, failed, left_out, results, input_dir, output_dir, start)
        raise BatchInterrupted(summary) from None
    return _summarise(found, failed, left_out, results, input_dir, output_dir, start)


def _summarise(found: list[Job], failed: list[JobResult], left_out: list[Path], results: dict[str, JobResult],
               input_dir: Path, output_dir: Path, start: float) -> BatchSummary:
    """The batch's summary, written to ``summary.json`` (a failure to write it is kept in the summary)."""
    # Pictures converted one to a match (a PDF or TIFF is a match's own file; a failed file was not converted).
    loose = sum(1 for job in found if job.page_count == 1 and job.pages[0].parent == input_dir
                and job.pages[0].suffix.lower() not in MATCH_FILE_SUFFIXES and results[job.name].status != "failed")
    summary = BatchSummary((*failed, *(results[j.name] for j in found)), time.perf_counter() - start,
                           loose_pages=loose, left_out=tuple(path.name for path in left_out))
    try:
        # The summary is the batch's own log: each run replaces it on purpose; a link of that name is replaced
        # too, never written through (it could lead to one of the inputs).
        for target, text in ((summary_path(output_dir), summary.to_json(output_dir)),
                             (summary_csv_path(output_dir), summary.to_csv(output_dir))):
            if target.is_symlink():
                target.unlink()
            write_atomic(target, text, overwrite=True)
    except DigitiseError as exc:
        # Said after the matches' own results: losing the file must not lose the list of what failed.
        return replace(summary, summary_error=exc)
    except OSError as exc:  # the link could not be taken away
        return replace(summary, summary_error=OutputError(f"cannot write: {exc.strerror or exc}", target))
    return summary

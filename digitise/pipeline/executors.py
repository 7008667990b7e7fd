"""What runs a batch's jobs: one job (``run_job``) in worker processes of this machine, or on a Dask
cluster, and how a stop reaches them.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from digitise.cluster import connect
from digitise.errors import DigitiseError, ExitCode, OptionError
from digitise.fileio import remove_unfinished
from digitise.pipeline.convert import scan
from digitise.pipeline.jobs import Job, JobResult, converted_unheard
from digitise.pipeline.locks import PageBudget
from digitise.pipeline.options import ScanOptions
from digitise.solve.corrections import corrections_path

if TYPE_CHECKING:
    from digitise.cluster import Channel, Cluster

log = logging.getLogger(__name__)


#: How this process tells the batch that a page was read, given the job's name (set by the batch:
#: its own callback in-process, a queue's ``put`` in a worker).
_page_read: Callable[[str], None] | None = None


def tell_page_read(job_name: str) -> None:
    """Tell the batch that a page of ``job_name`` was read, as :func:`run_job` does (for a batch's own
    ``runner``); nothing when no batch listens."""
    if _page_read is not None:
        _page_read(job_name)


def run_job(job: Job, options: ScanOptions) -> JobResult:
    """Scan one job; every failure becomes a result, so a batch never stops."""
    start = time.perf_counter()
    tell = _page_read
    on_page = (lambda: tell(job.name)) if tell is not None else None
    reviewed = corrections_path(job.report)
    if options.corrections is None and os.path.isfile(reviewed):
        # A match converted again (--force) keeps what its review said.
        options = replace(options, corrections=reviewed)
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.vision.images import share_page_memory

    budget = PageBudget(*options.page_memory) if options.page_memory else None
    shared = share_page_memory(budget)
    try:
        summary = scan(list(job.pages), job.output, job.report, options, on_page=on_page)
    except DigitiseError as exc:
        # The summary line must say which match failed, even when the error names no file.
        reason = exc.message if exc.path else f"{job.name}: {exc.message}"
        return JobResult(job.name, "failed", job.page_count, reason, seconds=time.perf_counter() - start,
                         code=int(exc.exit_code))
    except Exception as exc:  # a bug in one job must not cost the batch
        log.debug("job %s crashed", job.name, exc_info=True)
        return JobResult(job.name, "failed", job.page_count, f"{job.name}: internal error: {type(exc).__name__}: {exc}",
                         seconds=time.perf_counter() - start, code=int(ExitCode.INTERNAL))
    finally:
        share_page_memory(shared)
        if budget is not None:
            budget.close()
    status = "flagged" if summary.exit_code is ExitCode.FLAGGED else "done"
    # The pages as read: a damaged TIFF or PDF may hold more than could be counted before reading it.
    pages = max(job.page_count, summary.pages + len(summary.page_errors))
    return JobResult(job.name, status, pages, turns=summary.turns, flagged=summary.flagged,
                     set_aside=summary.set_aside, seconds=time.perf_counter() - start,
                     page_errors=summary.page_errors, notes=summary.notes,
                     report=str(job.report), closed_out=summary.closed_out).told(summary.outcome)


#: How log lines look on stderr (the CLI sets it up; batch workers, separate processes, copy it).
LOG_FORMAT = "%(levelname)s: %(message)s"


def _init_worker(events: Any = None, log_level: int = logging.WARNING, batch_pid: int | None = None) -> None:
    global _page_read
    _page_read = events.put if events is not None else None
    # Ctrl-C reaches every process of the terminal's group: the batch itself stops its workers (they would
    # otherwise each print a traceback, and the pool go on with the matches queued).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The batch stops its workers with SIGTERM: by default that ends one mid-write, leaving the temporary
    # file of its write behind in the output folder.
    signal.signal(signal.SIGTERM, _stop_worker)
    if batch_pid is not None:
        threading.Thread(target=_exit_without, args=(batch_pid,), daemon=True, name="batch-watch").start()
    # A worker is a fresh process: without this, -v would lose a crashed job's traceback there.
    logging.basicConfig(level=log_level, format=LOG_FORMAT)
    # One process per core: keep each library single-threaded so jobs don't fight.
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        # imported here: keeps start-up light (OpenCV)
        import cv2

        cv2.setNumThreads(1)
    except ImportError:  # pragma: no cover
        pass


def _stop_worker(signum: int, frame: Any) -> None:
    """SIGTERM in a batch worker: the unfinished writes' temporary files removed, then gone at once (the
    pool's own loop would catch an exception and carry on with the next match)."""
    remove_unfinished()
    os._exit(128 + signum)


def _exit_without(batch_pid: int) -> None:
    """End this worker once the batch that started it is gone (killed): a worker is the forkserver's child,
    so it is not told, and would go on converting and writing matches nobody waits for."""
    while True:
        time.sleep(WATCH_SECONDS)
        if not _alive(batch_pid):
            os._exit(1)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, killed and not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - alive, as another user (the pid was taken again)
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):  # no /proc (not Linux): kill's answer stands
        return True


#: How often (seconds) a batch's worker checks that the batch is still there.
WATCH_SECONDS = 1.0


class Executor(Protocol):
    """What runs a batch's jobs: worker processes of this machine (:class:`LocalProcesses`), or the workers
    of a Dask cluster (:class:`OnCluster`)."""

    def run(self, todo: list[Job], own: ScanOptions, results: dict[str, JobResult],
            progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
            runner: Callable[[Job, ScanOptions], JobResult], begun: float) -> None:
        """Run ``runner(job, own)`` for each of ``todo``; each result into ``results`` and ``progress`` as it
        ends, each page read to ``page_progress``. Raises KeyboardInterrupt when the batch is stopped, its
        workers stopped first; a match whose ``.mat`` was written since ``begun`` (a ``time.time()``) is
        converted, though its result was not heard."""


@dataclass(frozen=True, slots=True)
class LocalProcesses:
    """Jobs in worker processes of this machine: ``jobs`` of them (default and most: one a core)."""

    jobs: int | None = None

    def run(self, todo: list[Job], own: ScanOptions, results: dict[str, JobResult],
            progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
            runner: Callable[[Job, ScanOptions], JobResult], begun: float) -> None:
        """See :meth:`Executor.run`."""
        cores = os.cpu_count() or 1
        # At most one worker a core: each holds a page's images and models (~250 MB) and more only take turns.
        workers = max(1, min(self.jobs or cores, cores, len(todo) or 1))
        _run_jobs(todo, own, results, workers, progress, page_progress, runner, begun)


@dataclass(frozen=True, slots=True)
class OnCluster:
    """Jobs as tasks of a running Dask cluster (``batch --scheduler``), one match a task.

    The workers read the pages and write the outputs themselves (atomically,
    the ``.mat`` last), so every folder must be on a file system they share.
    A match whose worker is lost is run again on another; one whose ``.mat``
    a lost worker had written already is taken from it, not converted twice.
    """

    cluster: Cluster

    def run(self, todo: list[Job], own: ScanOptions, results: dict[str, JobResult],
            progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
            runner: Callable[[Job, ScanOptions], JobResult], begun: float) -> None:
        """See :meth:`Executor.run`."""
        told: Counter[str] = Counter()
        pages = {job.name: job.page_count for job in todo}

        def relay_pages() -> None:
            for name in self.cluster.heard():
                # A match run again after its worker was lost tells its pages again: counted once.
                if page_progress is not None and told[name] < pages.get(name, 0):
                    told[name] += 1
                    page_progress(name)

        def take(done: list[Any]) -> None:
            for future in done:
                job = pending.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - what the worker could not send back
                    reason = "the process converting it died (killed, or out of memory?): the other matches " \
                             "went on" if self.cluster.lost(exc) else f"worker failed: {exc}"
                    result = JobResult(job.name, "failed", job.page_count, f"{job.name}: {reason}",
                                       code=int(ExitCode.INTERNAL))
                if result is None:
                    continue  # stopped before it was converted: the batch says so
                if result.report is not None:
                    result = replace(result, report=str(job.report))  # as the user named the folder
                results[job.name] = result
                if progress:
                    progress(result)

        # A worker has a working folder of its own: it is given every path whole. The batch's page memory is
        # this machine's: a worker's is bounded by its own --memory-limit (docs/distributed.md).
        whole = replace(own, template=_whole_template(own.template),
                        roster_file=_whole(own.roster_file) if own.roster_file is not None else None,
                        page_memory=None)
        pending: dict[Any, Job] = {}
        try:
            for job in todo:
                # The longest matches first, so no worker is left with a long one at the end. Keys of one
                # group: a big batch is queued at the scheduler, and a worker holds only the matches it runs.
                pending[self.cluster.submit(_run_task, runner, _whole_job(job), whole, begun, self.cluster.channel,
                                            key=f"digitise-match-{uuid.uuid4().hex}",
                                            priority=job.page_count)] = job
            while pending:
                if _stop_asked.is_set():
                    raise KeyboardInterrupt
                relay_pages()
                done = [future for future in pending if future.done()]
                if done:
                    take(done)
                else:
                    time.sleep(PAGE_POLL_SECONDS)
            relay_pages()
        except BaseException:
            # Tasks are threads on other machines, never killed: each is asked to stop at its next page, and
            # those writing their outputs are waited for, so that the summary tells what is on disk.
            self.cluster.stop()
            end = time.monotonic() + STOP_SECONDS
            while pending and time.monotonic() < end:
                take([future for future in pending if future.done()])
                time.sleep(PAGE_POLL_SECONDS)
            self.cluster.cancel(list(pending))
            raise


#: How long (s) a stopped batch waits for its cluster's tasks to stop or finish writing their match.
STOP_SECONDS = 60.0
#: How often (s) at most a cluster's task asks whether its batch was stopped.
STOP_POLL_SECONDS = 1.0


class _Stopped(BaseException):
    """Raised in a cluster's task when its batch was stopped: not an error of the match (run_job passes it on)."""


def _run_task(runner: Callable[[Job, ScanOptions], JobResult], job: Job, options: ScanOptions, begun: float,
              channel: Channel) -> JobResult | None:
    """One match as a task on a cluster's worker (:class:`OnCluster`); None when the batch was stopped first."""
    global _page_read
    if channel.stopped():
        return None
    written = converted_unheard(job, begun)
    if written is not None:
        return written  # by a worker lost after it wrote the .mat: this is its match run again

    asked = time.monotonic()

    def tell(name: str) -> None:
        nonlocal asked
        # Asking is a round trip to the scheduler: once a second is soon enough to stop.
        if time.monotonic() - asked >= STOP_POLL_SECONDS:
            asked = time.monotonic()
            if channel.stopped():
                raise _Stopped
        channel.tell(name)

    # Workers run one task a thread: the same function for every task of the batch.
    _page_read = tell
    _one_thread()
    try:
        return runner(job, options)
    except _Stopped:
        return None


def _one_thread() -> None:
    """Keep OpenCV to one thread in this process: one match a core, so matches don't fight."""
    try:
        # imported here: keeps start-up light (OpenCV)
        import cv2

        cv2.setNumThreads(1)
    except ImportError:  # pragma: no cover
        pass


def _whole(path: Path) -> Path:
    """``path`` from the root, as this process sees it (not resolving links)."""
    return Path(os.path.abspath(path))


def _whole_job(job: Job) -> Job:
    """``job`` with every path from the root: a worker elsewhere has another working folder."""
    return replace(job, pages=tuple(_whole(page) for page in job.pages), output=_whole(job.output),
                   report=_whole(job.report))


def _whole_template(template: str | None) -> str | None:
    """A template given as a file, from the root; a paper name as it is."""
    return str(_whole(Path(template))) if template is not None and os.path.isfile(template) else template


@contextlib.contextmanager
def executor_for(scheduler: str | None, jobs: int | None, shared: Sequence[Path]) -> Iterator[Executor]:
    """The executor a batch asked for: local processes, or the Dask cluster at ``scheduler``."""
    if scheduler is None:
        yield LocalProcesses(jobs)
        return
    if jobs is not None:
        raise OptionError("--jobs counts this machine's processes: a cluster runs one match a worker thread, as "
                          "many as its workers were started with (docs/distributed.md)")

    with connect(scheduler, shared) as cluster:
        yield OnCluster(cluster)


def _run_jobs(todo: list[Job], own: ScanOptions, results: dict[str, JobResult], workers: int,
              progress: Callable[[JobResult], None] | None, page_progress: Callable[[str], None] | None,
              runner: Callable[[Job, ScanOptions], JobResult], begun: float = 0.0) -> None:
    """Run ``todo`` in ``workers`` processes (in this one when it is a single match); each result into
    ``results`` as it ends.

    ``begun`` (a ``time.time()``): a match whose ``.mat`` was written since then is converted, though a
    worker's death kept its result from being heard.
    """
    global _page_read

    def record(result: JobResult) -> None:
        results[result.name] = result
        if progress:
            progress(result)

    # One job or two, matches are converted in worker processes, so a match that kills its process (out of
    # memory, a crash below Python) costs that match alone. A lone match has no others to cost.
    if len(todo) <= 1:
        _page_read = page_progress
        try:
            for job in todo:
                record(runner(job, own))
        finally:
            _page_read = None
    else:
        # Longest matches first, so no worker is left with a long one at the end (results keep job order).
        by_size = sorted(todo, key=lambda job: -job.page_count)
        # forkserver, not fork: forking a process that runs threads (a GUI, a test
        # runner, onnxruntime) can deadlock the children.
        context = multiprocessing.get_context("forkserver")
        events = context.SimpleQueue() if page_progress else None

        def relay_pages() -> None:
            while events is not None and page_progress is not None and not events.empty():
                page_progress(events.get())

        def pool_run(jobs: list[Job], processes: int) -> list[Job]:
            with ProcessPoolExecutor(max_workers=processes, initializer=_init_worker,
                                     initargs=(events, logging.getLogger().getEffectiveLevel(), os.getpid()),
                                     mp_context=context) as pool:
                pending: dict[Future[JobResult], Job] = {pool.submit(runner, job, own): job for job in jobs}
                try:
                    broken = _collect(pending, results, progress, relay_pages)
                except BaseException:
                    # No public way to stop the matches being read before Python 3.14's terminate_workers();
                    # leaving the pool's block would wait for every queued match to be converted first.
                    workers_now = list((getattr(pool, "_processes", None) or {}).values())
                    pool.shutdown(wait=False, cancel_futures=True)
                    for process in workers_now:
                        process.terminate()
                    # Gone before the summary is written, so that it tells what is on disk.
                    for process in workers_now:
                        process.join(timeout=10)
                    raise
                relay_pages()
            return sorted(broken, key=jobs.index)

        def heard_of(jobs: list[Job]) -> list[Job]:
            """``jobs`` less those a worker converted before the pool broke (their .mat says so)."""
            left = []
            for job in jobs:
                written = converted_unheard(job, begun)
                if written is None:
                    left.append(job)
                else:
                    record(written)
            return left

        remaining = by_size
        while remaining:
            broken = heard_of(pool_run(remaining, workers))
            # A worker died (killed, or out of memory): the pool fails every match not done, the queued
            # ones too. The one that killed it was among the first few handed out: each of those is tried
            # again alone, so it cannot take others with it; the rest go on in a new pool.
            suspects, remaining = broken[:workers + 1], broken[workers + 1:]
            for job in suspects:
                if heard_of(pool_run([job], 1)):
                    record(JobResult(job.name, "failed", job.page_count,
                                     f"{job.name}: the process converting it died (killed, or out of memory?): "
                                     "the other matches went on", code=int(ExitCode.INTERNAL)))
        if events is not None:
            events.close()


#: Set when Ctrl-C (or the CLI's SIGTERM) reaches a running batch. The KeyboardInterrupt the signal raises can be
#: lost, raised inside a ``__del__`` or a callback that swallows it (a test saw a batch run on to its end so);
#: :func:`_collect` raises it again from this.
_stop_asked = threading.Event()


@contextlib.contextmanager
def remember_stop_signals() -> Iterator[None]:
    """SIGINT and SIGTERM, while the batch runs, also set :data:`_stop_asked` (then do what they did)."""
    _stop_asked.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    def remembered(signum: int, frame: Any) -> None:
        _stop_asked.set()
        handler = previous[signum]
        if callable(handler):
            handler(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt

    for signum, handler in previous.items():
        # Only what would stop the batch: a signal ignored, or SIGTERM left to end the process, stays so.
        if callable(handler):
            signal.signal(signum, remembered)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if callable(handler):
                signal.signal(signum, handler)


def _collect(pending: dict[Future[JobResult], Job], results: dict[str, JobResult],
             progress: Callable[[JobResult], None] | None, relay_pages: Callable[[], None]) -> list[Job]:
    """Wait for the workers' jobs, each result into ``results`` (and ``progress``) as it ends; the jobs not
    done because a worker died (the pool is then broken) are returned, not taken for failed."""
    broken: list[Job] = []
    while pending:
        if _stop_asked.is_set():
            raise KeyboardInterrupt
        # Woken now and then to pass on the pages read and to see a stop asked, not only when a match is done.
        done, _ = wait(pending, timeout=PAGE_POLL_SECONDS, return_when=FIRST_COMPLETED)
        relay_pages()
        for future in done:
            job = pending.pop(future)
            try:
                result = future.result()
            except BrokenProcessPool:
                broken.append(job)
                continue
            except Exception as exc:  # noqa: BLE001 - what the worker could not send back
                result = JobResult(job.name, "failed", job.page_count, f"{job.name}: worker failed: {exc}",
                                   code=int(ExitCode.INTERNAL))
            results[job.name] = result
            if progress:
                progress(result)
    return broken


#: How often (seconds) a batch with workers passes on the pages they read.
PAGE_POLL_SECONDS = 0.2

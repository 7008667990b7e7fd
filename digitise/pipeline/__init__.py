"""The whole job: pages in, ``.mat`` and report out (``scan``), and many matches at once (``batch``).

``scan`` joins the reader (:mod:`digitise.vision.read`) and the solver
(:mod:`digitise.solve`). ``batch`` runs ``scan`` for every match found in a
folder, in worker processes, and never lets one bad file stop the others.

Its modules: :mod:`~digitise.pipeline.convert` (one match: ``scan``, ``read``, ``solve``) and its
:mod:`~digitise.pipeline.steps`, :mod:`~digitise.pipeline.options` (``ScanOptions``, ``ScanSummary``),
:mod:`~digitise.pipeline.notes` (notes on the pages), :mod:`~digitise.pipeline.jobs` (a batch's matches
found), :mod:`~digitise.pipeline.batch_run` (``batch``), :mod:`~digitise.pipeline.executors` (worker
processes or a cluster), :mod:`~digitise.pipeline.summary` (``summary.json`` and ``.csv``),
:mod:`~digitise.pipeline.locks` (the output folder's lock, the shared page memory),
:mod:`~digitise.pipeline.progress` and :mod:`~digitise.pipeline.layout` (``digitise layout``).
"""

from __future__ import annotations

from digitise.pipeline.batch_run import batch
from digitise.pipeline.convert import (
    GC_YOUNG_THRESHOLD,
    ReadSummary,
    load_roster,
    read_to_file,
    scan,
    solve_readings,
)
from digitise.pipeline.executors import (
    LOG_FORMAT,
    PAGE_POLL_SECONDS,
    STOP_POLL_SECONDS,
    STOP_SECONDS,
    WATCH_SECONDS,
    Executor,
    LocalProcesses,
    OnCluster,
    run_job,
    tell_page_read,
)
from digitise.pipeline.jobs import (
    ARCHIVE_SUFFIXES,
    IMAGE_SUFFIXES,
    MATCH_FILE_SUFFIXES,
    NAMES_SHOWN,
    OUTPUT_SUFFIXES,
    SUMMARY_CSV_NAME,
    SUMMARY_FORMAT,
    SUMMARY_NAME,
    SYSTEM_ENTRIES,
    UNREAD_IMAGE_SUFFIXES,
    FoundMatches,
    Job,
    JobResult,
    find_jobs,
    listed_names,
)
from digitise.pipeline.layout import LayoutSummary, layout_to_file
from digitise.pipeline.locks import (
    LOCK_NAME,
    LOCKED,
    ORPHAN_SECONDS,
    PAGE_MEMORY_SHARE,
    PAGE_MEMORY_UNIT,
    PAGES_LOCK_NAME,
    PageBudget,
    batch_page_memory,
)
from digitise.pipeline.notes import (
    ALIKE_BOARDS,
    FIRST_PAGE_SURE,
    MIRRORED_PRINT_METHOD,
    NAMES_SURE,
    NAMES_UNLIKE,
    ORDER_BROKEN,
    ORDER_KEPT,
    ORDER_SURE,
    TURNED_METHOD,
    mirrored_print_note,
    order_by_header,
    page_notes,
    turned_page_note,
    unread_boards_note,
)
from digitise.pipeline.options import ScanOptions, ScanSummary
from digitise.pipeline.progress import BatchProgress, BatchView, is_terminal, pages_held
from digitise.pipeline.steps import readings_beside
from digitise.pipeline.summary import (
    CSV_COLUMNS,
    BatchInterrupted,
    BatchSummary,
    check_summaries,
    summary_csv_path,
    summary_path,
)

__all__ = [
    "ALIKE_BOARDS",
    "ARCHIVE_SUFFIXES",
    "CSV_COLUMNS",
    "FIRST_PAGE_SURE",
    "GC_YOUNG_THRESHOLD",
    "IMAGE_SUFFIXES",
    "LOCKED",
    "LOCK_NAME",
    "LOG_FORMAT",
    "MATCH_FILE_SUFFIXES",
    "MIRRORED_PRINT_METHOD",
    "NAMES_SHOWN",
    "NAMES_SURE",
    "NAMES_UNLIKE",
    "ORDER_BROKEN",
    "ORDER_KEPT",
    "ORDER_SURE",
    "ORPHAN_SECONDS",
    "OUTPUT_SUFFIXES",
    "PAGES_LOCK_NAME",
    "PAGE_MEMORY_SHARE",
    "PAGE_MEMORY_UNIT",
    "PAGE_POLL_SECONDS",
    "STOP_POLL_SECONDS",
    "STOP_SECONDS",
    "SUMMARY_CSV_NAME",
    "SUMMARY_FORMAT",
    "SUMMARY_NAME",
    "SYSTEM_ENTRIES",
    "TURNED_METHOD",
    "UNREAD_IMAGE_SUFFIXES",
    "WATCH_SECONDS",
    "BatchInterrupted",
    "BatchProgress",
    "BatchSummary",
    "BatchView",
    "Executor",
    "FoundMatches",
    "Job",
    "JobResult",
    "LayoutSummary",
    "LocalProcesses",
    "OnCluster",
    "PageBudget",
    "ReadSummary",
    "ScanOptions",
    "ScanSummary",
    "batch",
    "batch_page_memory",
    "check_summaries",
    "find_jobs",
    "is_terminal",
    "layout_to_file",
    "listed_names",
    "load_roster",
    "mirrored_print_note",
    "order_by_header",
    "page_notes",
    "pages_held",
    "read_to_file",
    "readings_beside",
    "run_job",
    "scan",
    "solve_readings",
    "summary_csv_path",
    "summary_path",
    "tell_page_read",
    "turned_page_note",
    "unread_boards_note",
]

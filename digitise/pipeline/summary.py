"""A batch's summary: its results, and the ``summary.json`` and ``summary.csv`` it writes."""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from digitise.errors import DigitiseError, ExitCode, InputError, OutputError
from digitise.fileio import check_outputs, json_document, read_input, read_text, real_path
from digitise.pipeline.jobs import SUMMARY_CSV_NAME, SUMMARY_FORMAT, SUMMARY_NAME, JobResult


class BatchInterrupted(KeyboardInterrupt):
    """A batch stopped by Ctrl-C or SIGTERM: the matches done are kept and listed in ``summary``."""

    def __init__(self, summary: BatchSummary) -> None:
        super().__init__("interrupted")
        self.summary = summary


@dataclass(frozen=True, slots=True)
class BatchSummary:
    """All job results of a batch, in the order of the jobs."""

    results: tuple[JobResult, ...]
    seconds: float
    #: Why ``summary.json`` could not be written (a full disk), when it could not.
    summary_error: DigitiseError | None = None
    #: Matches that are one loose picture at the top of the input (pages of one match dropped there
    #: side by side each become a match of their own: worth a word).
    loose_pages: int = 0
    #: Files at the top of the input that are no pictures, left out (:attr:`FoundMatches.left_out`).
    left_out: tuple[str, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        """OUTPUT if the summary or a match's files could not be written, INTERNAL if a job met a bug,
        BAD_INPUT if a job failed otherwise, FLAGGED if one needs review, else OK."""
        if self.summary_error is not None:
            return self.summary_error.exit_code
        statuses = {r.status for r in self.results}
        if "failed" in statuses:
            codes = {r.code for r in self.results if r.status == "failed"}
            # A full disk or a folder not writable fails every match after it: said as 4, as scan says it.
            for code in (ExitCode.OUTPUT, ExitCode.INTERNAL):
                if code in codes:
                    return code
            return ExitCode.BAD_INPUT
        # A match converted by an earlier run and still to review counts as much as one converted now: a
        # re-run must not say all is well where the first run said look.
        if "flagged" in statuses or any(r.needs_review or r.notes or r.page_errors for r in self.results):
            return ExitCode.FLAGGED
        return ExitCode.OK

    @property
    def counts(self) -> dict[str, int]:
        """How many jobs ended in each status, by status name."""
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        return dict(sorted(counts.items()))

    def to_json(self, folder: Path | None = None) -> str:
        """The ``summary.json`` document; with ``folder`` (where it is written), report paths relative to it.

        Relative, the file is the same whichever way the output folder was
        named (``out``, ``./out``, ``/abs/out``) and stays right when the folder moves.
        """
        jobs = []
        for r in self.results:
            job = {k: v for k, v in asdict(r).items() if k not in ("seconds", "code")}
            if folder is not None and r.report:
                job["report"] = Path(os.path.relpath(real_path(r.report), real_path(folder))).as_posix()
            jobs.append(job)
        doc: dict[str, Any] = {"format": SUMMARY_FORMAT, "counts": self.counts, "jobs": jobs}
        missing = self.missing
        if missing:
            # An interrupted batch: these matches have no results, in this file or in summary.csv.
            doc["missing"] = list(missing)
        if self.left_out:
            doc["left_out"] = list(self.left_out)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    @property
    def missing(self) -> tuple[str, ...]:
        """The matches not converted because the batch was stopped first."""
        return tuple(r.name for r in self.results if r.status == "interrupted")

    def to_csv(self, folder: Path | None = None) -> str:
        """``summary.csv``: a row a match (:data:`CSV_COLUMNS`), for a spreadsheet; report paths as in
        :meth:`to_json`. A match without results (failed, interrupted) has its status and reason only."""
        rows = io.StringIO()
        writer = csv.writer(rows, lineterminator="\r\n")
        writer.writerow(CSV_COLUMNS)
        for r in self.results:
            report = r.report or ""
            if folder is not None and r.report:
                report = Path(os.path.relpath(real_path(r.report), real_path(folder))).as_posix()
            converted = r.players is not None
            bottom, top = r.players or ("", "")
            score = r.score or ("", "")
            figures = (r.games, r.turns, r.flagged, r.set_aside, r.closed_out) if converted or r.turns else \
                ("",) * 5
            writer.writerow([_cell(r.name), r.status, _cell(bottom), _cell(top),
                             "" if r.length is None else r.length, *score, _cell(r.winner or ""), *figures, r.pages,
                             _cell(" | ".join((*r.page_errors, *r.notes))), _cell(r.reason), _cell(report)])
        # Excel takes a UTF-8 file for its own code page unless it starts with a byte order mark.
        return "\ufeff" + rows.getvalue()


#: The columns of ``summary.csv`` (docs/batch.md says what each holds).
CSV_COLUMNS = ("match", "status", "bottom player", "top player", "length", "bottom score", "top score", "winner",
               "games", "turns", "flagged", "set aside", "closed out", "pages", "notes", "reason", "report")


def _cell(text: str) -> str:
    """``text`` for a spreadsheet cell: one starting as a formula does (``=``, ``+``, ``-``, ``@``) is kept as
    text by a leading apostrophe, so a name or note read from a page is never run as one."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def summary_path(output_dir: Path) -> Path:
    """Where ``batch`` writes its ``summary.json`` in ``output_dir``."""
    return output_dir / SUMMARY_NAME


def summary_csv_path(output_dir: Path) -> Path:
    """Where ``batch`` writes its ``summary.csv`` (the same, for a spreadsheet) in ``output_dir``."""
    return output_dir / SUMMARY_CSV_NAME


def check_summaries(output_dir: Path, overwrite: bool) -> None:
    """Refuse, before any match is converted, a ``summary.json`` or ``summary.csv`` the batch could not write
    at its end, or that it would replace unasked: a folder, a device, or a file a batch did not write
    (without ``overwrite``: ``--force``). An earlier batch's own are its log, replaced on purpose."""
    for target, ours in ((summary_path(output_dir), _our_summary), (summary_csv_path(output_dir), _our_csv)):
        check_outputs([target], overwrite=True)
        if os.path.exists(target) and not overwrite and not ours(target):
            raise OutputError("exists already and was not written by digitise batch (use --force to replace it, "
                              "or give another output folder)", target)


def _our_summary(path: Path) -> bool:
    """Whether ``path`` holds a ``summary.json`` a batch wrote (its counts and jobs; a format since it said one)."""
    try:
        doc = json_document(read_text(path, "a batch summary"))
    except (InputError, ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and (doc.get("format") == SUMMARY_FORMAT if "format" in doc else
                                      isinstance(doc.get("counts"), dict) and isinstance(doc.get("jobs"), list))


def _our_csv(path: Path) -> bool:
    """Whether ``path`` is a ``summary.csv`` a batch wrote (its first line is the batch's header row)."""
    try:
        text = read_input(path, 4096).decode("utf-8-sig")
    except (InputError, UnicodeDecodeError):
        return False
    return text.split("\r\n", 1)[0] == ",".join(CSV_COLUMNS)

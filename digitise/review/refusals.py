"""Why a change under review is refused, and how a session tells its files were changed under it: the refusals,
the lock held on the report while a change is made, and the files' stamps."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from digitise.errors import DigitiseError

#: Why a change is refused when the corrections file changed under the page.
CHANGED_ELSEWHERE = ("the corrections were changed elsewhere (another review page of this match, or by hand) since "
                     "this page loaded them: reload the page to see them; nothing was changed here")


class CorrectionRefused(DigitiseError):
    """A correction that cannot be applied: illegal, not fitting the match, or naming no board."""


@contextmanager
def report_locked(report: Path) -> Iterator[None]:
    """Held while a session checks the corrections file, re-solves and saves: exclusive among processes.

    Two review servers of one report (its own page and its folder's, say)
    each checked the file, solved for half a second, then saved: both
    answered "saved", and the later save undid the earlier one unseen. With
    the lock the later one finds the file changed and says so. A lock on the
    report (which a review never rewrites) via ``flock``; where there is none
    (not POSIX) or the report cannot be opened, the check alone guards.
    """
    try:
        # imported here: POSIX only, its absence handled
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        handle = open(report, "rb")  # noqa: SIM115 - held across the yield
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class ChangedElsewhere(CorrectionRefused):
    """Refused because the corrections file changed since the page loaded it: the page should load it again."""


#: Why a change is refused when it was made on a state of the match since changed.
STALE_PAGE = ("this match was changed on another page or tab since this one showed it: the page now shows the "
              "change; nothing was changed here")

#: Why a change is refused when the match was scanned again under the page.
RESCANNED = ("the match was scanned again since this page loaded it (its report or readings changed): reload the "
             "page to review the new scan; nothing was changed here")


def file_stamp(path: Path | None) -> tuple[int, int, int] | None:
    """What tells a file rewritten (digitise writes by rename, so a new inode): inode, mtime, size; None if absent."""
    if path is None:
        return None
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_ino, found.st_mtime_ns, found.st_size)

"""A batch's hold on its output folder, and the page memory its workers share (:class:`PageBudget`)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from digitise.errors import OutputError
from digitise.fileio import TEMP_NAME


@contextlib.contextmanager
def batch_lock(output_dir: Path) -> Iterator[None]:
    """Hold the output folder for this batch: a second batch into it at the same time would take this one's
    matches for converted and write its summary over this one's."""
    try:
        # imported here: POSIX only, its absence handled
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, as before
        yield
        return
    try:
        handle = open(output_dir / LOCK_NAME, "a+b")  # noqa: SIM115 - held open for the whole batch
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", output_dir / LOCK_NAME) from exc
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(LOCKED, output_dir) from None
        try:
            same = os.fstat(handle.fileno()).st_ino == (output_dir / LOCK_NAME).stat().st_ino
        except OSError:
            same = False
        if not same:
            # Locked just as the batch before let go of it and took the file away: a batch after this
            # one would lock a new file, and both would run.
            raise OutputError(LOCKED, output_dir)
        _remove_orphans(output_dir)
        try:
            yield
        finally:
            # Taken away while still held: the folder holds the batch's outputs only. A folder made
            # read-only meanwhile keeps it: that must not cost the summary of what was done.
            with contextlib.suppress(OSError):
                (output_dir / LOCK_NAME).unlink(missing_ok=True)


#: Age (s) past which a temporary file in a batch's output folder is an orphan: a write takes milliseconds.
ORPHAN_SECONDS = 60.0


def _remove_orphans(output_dir: Path) -> None:
    """Remove the temporary files a batch worker killed mid-write left in ``output_dir`` (held by this batch).

    Only files named as :func:`~digitise.fileio.write_atomic` names them, and a minute old: a review page
    may be saving into the folder at this moment.
    """
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(output_dir):
            with contextlib.suppress(OSError):
                if (TEMP_NAME.match(entry.name) and entry.is_file(follow_symlinks=False)
                        and now - entry.stat(follow_symlinks=False).st_mtime > ORPHAN_SECONDS):
                    os.unlink(entry.path)


#: The hidden file a batch locks in its output folder while it runs.
LOCK_NAME = ".digitise-batch.lock"
#: The hidden file whose locks share the batch's page memory among its workers (:class:`PageBudget`).
PAGES_LOCK_NAME = ".digitise-pages.lock"
#: The part of the machine's memory the pages a batch's workers decode may take together: each worker
#: holds a page's peak (a 600-megapixel colour page: 3.4 GB) while it reads it, and waits while the others
#: hold too much. A page larger than the whole is read alone.
PAGE_MEMORY_SHARE = 0.5
#: Its unit: a 300-dpi A4 colour page at its peak takes about one.
PAGE_MEMORY_UNIT = 64 << 20


def batch_page_memory() -> int:
    """The bytes of decoded pages a batch's workers may hold at once (:data:`PAGE_MEMORY_SHARE` of memory)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX: as much as 8 GB
        physical = 16 << 30
    return max(PAGE_MEMORY_UNIT, int(physical * PAGE_MEMORY_SHARE))


class PageBudget:
    """Bytes of decoded pages the processes of a batch hold at once, shared through locks on one file.

    The bytes are cut into units of :data:`PAGE_MEMORY_UNIT`, each a byte of
    the file that a process holding it locks (POSIX record locks: held by
    the process, gone with it if it is killed, so a worker's death frees its
    share). A process takes its units with a lock on a second file held,
    so two never wait on each other with some units each. One page at a time
    a process (a batch's worker reads its pages in turn); a job's budget is
    closed when the job ends.
    """

    def __init__(self, path: Path, total: int) -> None:
        self.path = path
        self.units = max(1, total // PAGE_MEMORY_UNIT)
        self._files: tuple[Any, Any] | None = None

    def _handles(self) -> tuple[Any, Any]:
        """The units' file and the file locked while units are taken, open for the process's life: closing
        any descriptor of a file drops all the process's record locks on it."""
        if self._files is None:
            self._files = (open(self.path, "a+b"), open(mutex_path(self.path), "a+b"))  # noqa: SIM115
        return self._files

    def close(self) -> None:
        """Let go of the files (and so of any unit still held)."""
        for handle in self._files or ():
            handle.close()
        self._files = None

    @contextlib.contextmanager
    def hold(self, nbytes: int, *, wait: bool = True) -> Iterator[None]:
        """Hold ``nbytes`` (at least a unit, at most all) for the block; ``wait=False``: raise
        ``BlockingIOError`` at once rather than wait for them."""
        try:
            # imported here: POSIX only, its absence handled
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: nothing shared
            yield
            return
        wanted = min(self.units, max(1, -(-nbytes // PAGE_MEMORY_UNIT)))
        units, mutex = self._handles()
        fd = units.fileno()
        held: list[int] = []
        try:
            with _flocked(mutex, wait):
                for unit in range(self.units):
                    if len(held) == wanted:
                        break
                    try:
                        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, unit)
                        held.append(unit)
                    except OSError:
                        continue
                if len(held) < wanted and not wait:
                    raise BlockingIOError(f"{wanted} of {self.units} units of page memory are not free")
                for unit in range(self.units):
                    if len(held) == wanted:
                        break
                    if unit not in held:
                        # Only their holders hold the others now, and they let go without this lock.
                        fcntl.lockf(fd, fcntl.LOCK_EX, 1, unit)
                        held.append(unit)
            yield
        finally:
            for unit in held:
                with contextlib.suppress(OSError):
                    fcntl.lockf(fd, fcntl.LOCK_UN, 1, unit)


def mutex_path(path: Path) -> Path:
    """The file a :class:`PageBudget` locks while a process takes its units."""
    return path.with_name(path.name + ".taking")


@contextlib.contextmanager
def _flocked(handle: Any, wait: bool) -> Iterator[None]:
    """The open file ``handle`` locked whole for the block."""
    # imported here: POSIX only (hold, its one caller, has made sure of it)
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    try:
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
#: Why a batch is refused an output folder another batch holds.
LOCKED = "another batch is converting into this folder now: wait for it to end, or give another output folder"

"""What a progress bar or log needs to know: the pages a scan holds, and a batch's pages counted as they are read."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from digitise.pipeline.jobs import JobResult


def pages_held(pages: Sequence[Path]) -> int | None:
    """How many pages ``pages`` hold, for a progress bar; None when one is not a plain file (a pipe, such
    as ``<(command)``, can be read only once)."""
    # imported here: keeps start-up light (OpenCV, NumPy)
    from digitise.vision.images import page_count

    if not all(os.path.isfile(page) for page in pages):
        return None
    return sum(page_count(page) for page in pages)


def is_terminal() -> bool:
    """True when progress can be drawn as a bar (stderr is a terminal)."""
    return sys.stderr.isatty()


class BatchView(Protocol):
    """Where a batch's progress is shown (the CLI's bar, or its lines in a log)."""

    def found(self, pages: int) -> None:
        """The pages of every match, found before any is converted."""

    def page_read(self, step: int, read: int, found: int, match: str) -> None:
        """A page of ``match`` read: ``step`` pages more, ``read`` of the ``found`` so far."""

    def match_ended(self, result: JobResult, step: int) -> None:
        """A match converted (or failed, or skipped), with the ``step`` of pages it never told of."""


class BatchProgress:
    """A batch's pages counted as they are read, for a :class:`BatchView`; its methods are ``batch``'s
    ``started``, ``page_progress`` and ``progress``.

    The count moves a page at a time, and a match's end makes up the pages it
    never read (a bad file), so the count ends at the pages found. A page told
    after its match ended (a worker's late word) is not counted again.
    """

    def __init__(self, view: BatchView) -> None:
        self.view = view
        self.pages_found = 0
        # Pages counted so far per match.
        self.counted: dict[str, int] = {}
        self.ended: set[str] = set()

    def started(self, total: int) -> None:
        """The batch found ``total`` pages."""
        self.pages_found = total
        self.view.found(total)

    def page_read(self, name: str) -> None:
        """A page of match ``name`` was read."""
        if name in self.ended:
            return
        self.counted[name] = self.counted.get(name, 0) + 1
        self.view.page_read(1, sum(self.counted.values()), self.pages_found, name)

    def match_ended(self, result: JobResult) -> None:
        """A match's result came in."""
        self.ended.add(result.name)
        self.view.match_ended(result, max(0, result.pages - self.counted.get(result.name, 0)))

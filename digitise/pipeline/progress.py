"""What the CLI's progress bar needs to know."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path


def pages_held(pages: Sequence[Path]) -> int | None:
    """How many pages ``pages`` hold, for a progress bar; None when one is not a plain file (a pipe, such
    as ``<(command)``, can be read only once)."""
    from digitise.vision.images import page_count

    if not all(os.path.isfile(page) for page in pages):
        return None
    return sum(page_count(page) for page in pages)


def is_terminal() -> bool:
    """True when progress can be drawn as a bar (stderr is a terminal)."""
    return sys.stderr.isatty()

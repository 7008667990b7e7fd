"""What a command shows besides its summary: the progress bar of pages read, and commands to copy again."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from digitise.cli.frame import NOT_ONE_LINE


def as_typed() -> str:
    """digitise as the user can type it again: ``digitise`` when that is on the PATH, else the path this run
    was started by (``.venv/bin/digitise`` before the environment is activated, as ``scripts/demo`` runs it)."""
    # imported here: keeps `digitise --help` light (shutil loads zlib, bz2 and lzma: 7 modules)
    import shutil

    started = sys.argv[0] if sys.argv else ""
    if Path(started).name != "digitise":
        return "digitise"  # run as a module or from a test: the installed command's name
    found = shutil.which("digitise")
    if found is not None and os.path.realpath(found) == os.path.realpath(started):
        return "digitise"
    return shell_quoted(started)


def shell_quoted(path: str) -> str:
    r"""``path`` quoted for a POSIX shell, to copy into a command.

    A name that is not UTF-8 (read from disk as it is, its odd bytes kept as
    surrogates) is written in bash's ``$'...'`` form with those bytes as
    ``\xHH``: printed as it is, it would show as ``\udcff`` and name no file.
    So is a name with a newline or another control character in it, which
    would break the command's line.
    """
    # imported here: keeps `digitise --help` light (shlex)
    import shlex

    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        if not NOT_ONE_LINE.search(path):
            return shlex.quote(path)
    raw = os.fsencode(path)
    return "$'" + "".join(chr(b) if 32 <= b < 127 and chr(b) not in "'\\" else f"\\x{b:02x}" for b in raw) + "'"


def page_bar(total: int | None, *, leave: bool = True) -> Any:
    """A progress bar on stderr (a terminal), a step a page read; ``leave=False``: gone once closed."""
    # imported here: keeps `digitise --help` light (tqdm)
    from tqdm import tqdm

    # A terminal that says it is 0 x 0 (a console never told its size: `docker exec -t`, a serial line)
    # had tqdm draw nothing at all, and a long run looked hung.
    columns, lines = _terminal_size()
    return tqdm(total=total, unit="page", file=sys.stderr, ncols=None if columns else 80,
                nrows=None if lines else 24, leave=leave)


@contextlib.contextmanager
def pages_shown(pages: Sequence[Path]) -> Iterator[Callable[[], None] | None]:
    """What to call as each page is read: a bar's step on a terminal, nothing elsewhere (a log stays quiet).

    The bar is gone once the pages are read, so the summary or the one-line error stands alone.
    """
    # imported here: keeps `digitise --help` light (the pipeline and the solver, ~0.1 s)
    from digitise.pipeline import is_terminal, pages_held

    if not is_terminal():
        yield None
        return
    bar = page_bar(pages_held(pages), leave=False)
    try:
        yield lambda: bar.update(1)
    finally:
        bar.close()


def _terminal_size() -> tuple[int, int]:
    """The columns and lines of the terminal on stderr, 0 where it does not say."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):
        return 0, 0
    return size.columns, size.lines

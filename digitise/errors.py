"""One family of errors, each carrying the file and the reason.

Library code raises these; only :mod:`digitise.cli` turns them into a one-line
message and an exit code (see :class:`ExitCode`).
"""

from __future__ import annotations

import enum
from pathlib import Path


class ExitCode(enum.IntEnum):
    """Process exit codes, stable and documented in docs/exit-codes.md."""

    OK = 0
    #: Output written, but some turns are flagged for review.
    FLAGGED = 1
    #: Bad command line (click uses 2 for its own usage errors too).
    USAGE = 2
    #: An input file could not be read or is not what it should be.
    BAD_INPUT = 3
    #: An output could not be written (exists without --force, no permission).
    OUTPUT = 4
    #: A required external program (gnubg, tesseract, chromium) is missing.
    MISSING_DEPENDENCY = 5
    #: A bug: an unexpected exception. Rerun with -v for the traceback.
    INTERNAL = 10

    def flags_passed(self) -> ExitCode:
        """The code with flagged turns taken as success (``--exit-zero``): OK for FLAGGED, any other unchanged
        (a bad input, an output not written, are still failures)."""
        return ExitCode.OK if self is ExitCode.FLAGGED else self


class DigitiseError(Exception):
    """Base of every error digitise raises on purpose.

    ``path`` names the file, ``where`` a place inside it (``line 12``,
    ``page 2``, ``$.pages[0].boards[3]``), ``reason`` says what is wrong.
    """

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, reason: str, path: str | Path | None = None, where: str | None = None) -> None:
        self.reason = reason
        self.path = str(path) if path is not None else None
        self.where = where
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one-line message: ``file: where: reason``."""
        parts = [p for p in (self.path, self.where) if p]
        return ": ".join([*parts, self.reason])


def short(text: str, most: int = 60) -> str:
    """``text`` cut to ``most`` characters for a message: what a reason quotes from the input (a pasted page, a
    line of a binary file) must not fill the screen."""
    return text if len(text) <= most else text[: most - 1] + "…"


class InputError(DigitiseError):
    """An input file is unreadable or of the wrong kind."""


class MatFormatError(InputError):
    """A ``.mat`` file that cannot be read."""


class ReadingsError(InputError):
    """A readings JSON document that does not follow the contract."""


class TemplateError(InputError):
    """A template geometry file that is invalid, or an unknown paper size."""


class PageError(InputError):
    """A page image that is not a readable recording note."""


class LayoutError(PageError):
    """A page whose boards cannot be fitted from its own lines (no grid of Kato boards on it)."""


class OptionError(DigitiseError):
    """An option that cannot be honoured on this machine (a port already in use): the fix is another value."""

    exit_code = ExitCode.USAGE


class OutputError(DigitiseError):
    """An output file that cannot be written (exists, no permission)."""

    exit_code = ExitCode.OUTPUT


class MissingDependencyError(DigitiseError):
    """A package or program a command needs is not installed (PyTorch for ``digitise train``)."""

    exit_code = ExitCode.MISSING_DEPENDENCY

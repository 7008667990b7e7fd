"""Atomic, never-silently-overwriting output files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from digitise.errors import OutputError


def _umask() -> int:
    """The process's umask (reading it means setting it: set it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, content: str | bytes, *, overwrite: bool = False) -> Path:
    """Write ``content`` to ``path`` all at once: a reader sees the old file or the new one.

    Raises :class:`OutputError` when ``path`` exists and ``overwrite`` is false,
    so a user's earlier result is never replaced without asking.
    """
    target = Path(path)
    if target.exists() and not overwrite:
        raise OutputError("exists already (use --force to replace it)", target)
    data = content.encode("utf-8") if isinstance(content, str) else content
    directory = target.parent if str(target.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            # mkstemp makes the file private (0600); an output file gets the mode any new file would.
            os.chmod(tmp, 0o666 & ~_umask())
            if overwrite:
                os.replace(tmp, target)
            else:
                # A hard link fails if the name was taken since the check above: never replaced unasked.
                try:
                    os.link(tmp, target)
                except FileExistsError:
                    raise OutputError("exists already (use --force to replace it)", target) from None
                except OSError:
                    # File systems without hard links: the check above is all we can do.
                    os.replace(tmp, target)
                Path(tmp).unlink(missing_ok=True)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", target) from exc
    return target

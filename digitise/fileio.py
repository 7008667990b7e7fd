"""Files in and out: atomic, never-silently-overwriting outputs; inputs read with one wording for every failure."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from digitise.errors import InputError, OutputError


def _umask() -> int:
    """The process's umask (reading it means setting it: set it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: Temporary files being written now (write_atomic): a worker stopped by SIGTERM removes them before it goes.
_UNFINISHED: set[str] = set()


def remove_unfinished() -> None:
    """Remove the temporary files of writes not finished (called by a batch worker told to stop)."""
    for tmp in list(_UNFINISHED):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _UNFINISHED.clear()


#: What write_atomic names its temporary files: ".NAME." + 8 of mkstemp's characters + ".tmp".
TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")


#: Why an output is refused that exists and is no file (``-o /dev/full``): it cannot be replaced atomically.
NOT_REGULAR = "is not a regular file (a device, pipe or socket): give a file name"


def write_atomic(path: str | Path, content: str | bytes, *, overwrite: bool = False) -> Path:
    """Write ``content`` to ``path`` all at once: a reader sees the old file or the new one.

    Raises :class:`OutputError` when ``path`` exists and ``overwrite`` is false,
    so a user's earlier result is never replaced without asking.
    """
    target = Path(path)
    # os.path's tests, not Path's: in a folder the user may not enter, Path.is_dir() raises PermissionError
    # (an internal error) where these say no, and making the file then says why it cannot be.
    if os.path.isdir(target):
        raise OutputError("is a folder, not a file", target)
    if os.path.islink(target) and overwrite:
        # Replaced, the link itself would become a file: write the file it names, as other tools do.
        target = Path(os.path.realpath(target))
    if os.path.exists(target) and not os.path.isfile(target):
        raise OutputError(NOT_REGULAR, target)
    if os.path.lexists(target) and not overwrite:
        raise OutputError("exists already (use --force to replace it)", target)
    # A file name that is not UTF-8 (an old archive's) reaches Python as lone surrogates: written as "\udcff",
    # which is what JSON writes for them anyway, so a report naming such a file is still valid UTF-8 and JSON.
    data = content.encode("utf-8", errors="backslashreplace") if isinstance(content, str) else content
    directory = target.parent if str(target.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
        _UNFINISHED.add(tmp)
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
        finally:
            _UNFINISHED.discard(tmp)
    except OSError as exc:
        raise OutputError(f"cannot write: {folder_problem(target) or exc.strerror or exc}", target) from exc
    return target


def check_outputs(targets: Sequence[Path], overwrite: bool, inputs: Sequence[Path] = (),
                  replaceable: Sequence[Path] = ()) -> None:
    """Refuse, before any work, outputs that could not all be written: so none is left half done.

    Two outputs under one name, an output that is one of the command's
    ``inputs`` (even with ``overwrite``), a folder where a file is to go, a
    device, pipe or socket (even with ``overwrite``), an existing file without ``overwrite`` (unless it is one of the targets
    named ``replaceable``), a folder that is a file or cannot be written.
    """
    read_from = {real_path(p) for p in inputs}
    leftover = {real_path(p) for p in replaceable}
    seen: dict[Path, Path] = {}
    existing: list[Path] = []
    for target in targets:
        key = real_path(target)
        if key in read_from:
            raise OutputError("is also an input of this command: give the output another name", target)
        if key in seen:
            raise OutputError(f"named for two outputs (also {seen[key]}): give each its own name", target)
        seen[key] = target
        if os.path.isdir(target):
            raise OutputError("is a folder, not a file", target)
        if os.path.exists(target) and not os.path.isfile(target):
            # Found here, not once the work is done (write_atomic refuses it too: /dev/full, a pipe).
            raise OutputError(NOT_REGULAR, target)
        if os.path.exists(target) and not overwrite and key not in leftover:
            existing.append(target)
        problem = folder_problem(target)
        if problem:
            raise OutputError(f"cannot write: {problem}", target)
    if existing:
        # All of them at once: fixing one at a time and meeting the next is no way to learn it.
        others = ", ".join(str(p) for p in existing[1:])
        verb = "does" if len(existing) == 2 else "do"
        raise OutputError(f"exists already, as {verb} {others} (use --force to replace them)" if others
                          else "exists already (use --force to replace it)", existing[0])


def beside(report: str | Path, suffix: str) -> Path:
    """A file kept next to a report: ``m1.report.json`` with ``.readings.json`` is ``m1.report.readings.json``.

    The report's name is kept whole (less ``.json``): with reports named as
    ``scan`` and ``batch`` name them (``NAME.report.json``), a file beside
    one never takes the name of the match's own ``NAME.mat``.
    """
    report = Path(report)
    return report.with_name(report.name.removesuffix(".json") + suffix)


def why_unreadable(exc: OSError) -> str:
    """The reason an input file could not be read, worded alike by every command."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a file"
    return f"cannot read: {exc.strerror or exc}"


#: Largest input file read (bytes): a 1200-dpi A3 colour scan stored uncompressed is 830 MB.
MAX_INPUT_BYTES = 2 << 30


def read_input(path: str | Path, limit: int | None = None) -> bytes:
    """The bytes of the input file ``path`` (its first ``limit`` bytes when given), or
    :class:`~digitise.errors.InputError` naming it and saying why not.

    Only files and pipes are read. A device (``/dev/zero``) would be read
    until memory runs out, and a named pipe nobody writes to would block for
    ever: it is opened without waiting, so with no writer it reads as empty,
    while a shell's ``<(command)`` is read as it is written.
    """
    source = Path(path)
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as exc:
        raise InputError("is a link that leads nowhere" if os.path.islink(source) else why_unreadable(exc),
                         source) from exc
    except OSError as exc:
        raise InputError(why_unreadable(exc), source) from exc
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        os.close(fd)
        raise InputError("is a folder, not a file" if stat.S_ISDIR(mode) else "not a file (a device or socket)",
                         source)
    with os.fdopen(fd, "rb") as handle:
        if stat.S_ISFIFO(mode) and hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a writer is there: wait for what it writes
        most = MAX_INPUT_BYTES + 1 if limit is None else limit
        if stat.S_ISREG(mode):
            # Asked for more than there is, Python allocates all it was asked for first.
            most = min(most, os.fstat(fd).st_size + 1)
        try:
            data = handle.read(most) if stat.S_ISREG(mode) else _read_pipe(handle, most)
        except OSError as exc:
            raise InputError(why_unreadable(exc), source) from exc
    if limit is None and len(data) > MAX_INPUT_BYTES:
        raise InputError(f"file too large (over {MAX_INPUT_BYTES >> 30} GB)", source)
    return data


def _read_pipe(handle: Any, most: int) -> bytes:
    """Up to ``most`` bytes from a pipe, read as they come (its size is not known beforehand)."""
    chunks: list[bytes] = []
    got = 0
    while got < most:
        chunk = handle.read1(min(1 << 20, most - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


#: The largest text input read (readings, reports, corrections, rosters, templates): a long match's
#: readings are a few megabytes; more is another kind of file, or a device that never ends.
MAX_TEXT_BYTES = 256 << 20


def read_text(path: str | Path, what: str, error: type[InputError] = InputError) -> str:
    """The UTF-8 text of the input file ``path``, or ``error`` naming it and saying why not.

    ``what`` names the kind of file in the message ("a readings file"). Read
    as :func:`read_input` reads (no device, a named pipe without waiting for
    ever), and at most :data:`MAX_TEXT_BYTES`: ``/dev/zero`` given as a
    corrections file ran the machine out of memory.
    """
    source = Path(path)
    try:
        data = read_input(source, MAX_TEXT_BYTES + 1)
    except InputError as exc:
        raise error(exc.reason, source) from exc
    if len(data) > MAX_TEXT_BYTES:
        raise error(f"not {what}: over {MAX_TEXT_BYTES >> 20} MB", source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not {what} (not UTF-8 text)", source) from exc


class _RepeatedKey(ValueError):
    """A key given twice in one JSON object: json.loads keeps the last one without a word."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return found


class _LongNumber(ValueError):
    """A whole number too long for any field of ours (and for Python's int(), past 4300 digits)."""


#: The most digits a whole number in a JSON input may have: Python's own limit for int() (no field of ours
#: comes near it), checked here so that a longer one is said in our words.
MAX_NUMBER_DIGITS = 4300
_LONG_NUMBER = re.compile(rf"-?[0-9]{{{MAX_NUMBER_DIGITS + 1},}}")


def _whole_number(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _LongNumber(digits)
    return int(digits)


def long_number_said(text: str) -> str:
    """Where in the JSON ``text`` a whole number too long to be any of ours is, and how long, in words."""
    found = _LONG_NUMBER.search(text)
    if found is None:
        return f"a number of more than {MAX_NUMBER_DIGITS} digits"
    line = text.count("\n", 0, found.start()) + 1
    column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
    digits = len(found.group().lstrip("-"))
    return f"a number {digits:,} digits long at line {line} column {column} (none may be over {MAX_NUMBER_DIGITS:,})"


def json_document(text: str) -> Any:
    """``json.loads`` of ``text``; a whole number longer than :data:`MAX_NUMBER_DIGITS` is a :class:`ValueError`
    saying so in digitise's words (:func:`long_number_said`), not Python's advice to raise its own limit."""
    try:
        return json.loads(text, parse_int=_whole_number)
    except _LongNumber:
        raise ValueError(long_number_said(text)) from None


def parse_json(text: str, source: str | Path | None, what: str, error: type[InputError] = InputError) -> Any:
    """The JSON document ``text`` (from ``source``), or ``error`` saying where it stops being JSON.

    A key given twice in one object is an error too: a hand-edited corrections
    file with two entries for one board would otherwise lose one unseen. So is
    a whole number too long to be any of ours (:data:`MAX_NUMBER_DIGITS`).
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_int=_whole_number)
    except _LongNumber as exc:
        raise error(f"not {what}: {long_number_said(text)}", source) from exc
    except _RepeatedKey as exc:
        key = str(exc.args[0])
        raise error(f"not {what}: the key {key[:40]!r} is given twice in one object (which one is meant?)",
                    source) from exc
    except json.JSONDecodeError as exc:
        raise error(f"not JSON: {exc.msg}", source, f"line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise error(f"not {what}: nested too deeply", source) from exc
    except ValueError as exc:  # pragma: no cover - json raises no other ValueError on a str
        raise error(f"not {what}: {exc}", source) from exc


def load_json(path: str | Path, what: str, error: type[InputError] = InputError) -> Any:
    """The JSON document in the input file ``path`` (see :func:`read_text` and :func:`parse_json`)."""
    return parse_json(read_text(path, what, error), path, what, error)


def check_inputs(paths: Sequence[Path]) -> None:
    """Refuse, before any work, input files that are not there: a mistyped page must not shorten a match.

    Raises :class:`~digitise.errors.InputError` naming the first path that
    does not exist, is a link leading nowhere, or is a folder.
    """
    for path in paths:
        if not os.path.exists(path):
            if os.path.islink(path):
                raise InputError("is a link that leads nowhere (a loop or a missing target)", path)
            raise InputError(why_absent(path), path)
        if os.path.isdir(path):
            raise InputError("is a folder, not a file", path)


def why_absent(path: str | Path, noun: str = "file") -> str:
    """Why ``path``, which ``os.path.exists`` does not see, is not there: "no such file", or that it cannot
    be looked at (in a folder the user may not enter it may well be there)."""
    try:
        os.stat(path)
    except PermissionError as exc:
        return why_unreadable(exc)
    except OSError:
        pass
    return f"no such {noun}"


def real_path(path: str | Path) -> Path:
    """``path`` absolute with its links followed, as far as they go (a link loop is no error here)."""
    return Path(os.path.realpath(path))


def folder_problem(target: Path) -> str | None:
    """Why ``target``'s folder cannot take it (its nearest existing ancestor is a file or read-only), if so."""
    folder = target.parent if str(target.parent) else Path(".")
    existing = next((f for f in (folder, *folder.parents) if os.path.exists(f)), None)
    if existing is None:
        return None
    if not os.path.isdir(existing):
        return f"{existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable"
    return None


def make_folder(path: str | Path) -> Path:
    """``path`` as a folder (made with its parents if need be), or :class:`OutputError` saying why not."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = folder_problem(folder / "x") or exc.strerror or exc
        raise OutputError(f"cannot make the folder: {why}", folder) from exc
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError("cannot write into the folder: not writable", folder)
    return folder


def natural_key(path: Path) -> tuple[list[tuple[int, list[object]]], str]:
    """Sort ``page10`` after ``page9``, folder by folder (``part1/scan-002`` before ``part2/scan-001``).

    A scanner numbers the files of each run from 1 again, so pages of one
    match scanned in two runs sit in two folders with the same names: the
    folders come first, and a folder's own files before its sub-folders.
    Names alike but for case (``Page1``, ``page1``) are ordered by their
    exact names, never left to the order the file system lists them in.
    """
    def natural(text: str) -> list[object]:
        # isdecimal, not isdigit: "²" is a digit that int() refuses.
        return [int(t) if t.isdecimal() else t.lower() for t in re.split(r"(\d+)", text)]

    return [(1, natural(part)) for part in path.parent.parts] + [(0, natural(path.name))], str(path)

"""Drive GNU Backgammon to check `.mat` files: import many files in ONE gnubg process.

gnubg's importer is a weak validator (see ../shared/GNUBG.md): it prints warnings
but exits 0, so a test must look at what it printed and at what it understood.
:func:`import_mats` imports each file in turn inside one ``gnubg -t -q -r -p``
run (its embedded Python), and returns per file what gnubg printed while
importing, the match it understood (``gnubg.match()``, bar 25, off 0) and,
if asked, its own re-export (``export match mat``).

Usage from a test (with the ``gnubg`` fixture of tests/conftest.py)::

    from tests.gnubg_driver import import_mats
    [result] = import_mats([path], gnubg=gnubg)
    assert result.warnings == ()
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GNUBG_CANDIDATES = ("/usr/games/gnubg", "/usr/bin/gnubg")

# Runs inside gnubg. C stdio and Python buffer separately, so both are flushed
# before each marker: the markers then split gnubg's output file by file.
_SCRIPT = r'''
import ctypes, json, os, sys
import gnubg
libc = ctypes.CDLL(None)
jobs = json.loads(os.environ["GNUBG_DRIVER_JOBS"])

def mark(text):
    sys.stdout.flush()
    libc.fflush(None)
    os.write(1, ("\n@@gnubg_driver %s\n" % text).encode())

gnubg.command("set confirm default yes")
for job in jobs:
    i = job["index"]
    mark("begin %d" % i)
    out = {"match": None, "exported": False, "exception": None}
    try:
        gnubg.command('import mat "%s"' % job["input"])
        try:
            out["match"] = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
        except Exception:
            out["match"] = None
        if out["match"] is not None and job["export"]:
            gnubg.command('export match mat "%s"' % job["export"])
            out["exported"] = os.path.exists(job["export"])
    except Exception as exc:
        out["exception"] = repr(exc)
    mark("end %d" % i)
    with open(job["json"], "w") as fh:
        json.dump(out, fh)
'''

_BANNER = re.compile(
    r"^(GNU Backgammon \d|Copyright \(C\)|This program comes with ABSOLUTELY NO WARRANTY|"
    r"This is free software, and you are welcome)"
)
_BOARD = re.compile(r"^( GNU Backgammon  Position ID:| {17}Match ID   :|[ v^][+|])")
# Echoes of our own commands and answers to gnubg's confirmations: not about the file.
_BENIGN = re.compile(
    r"^(Will not display boards|Overwrite existing file|Are you sure you want to (start a new|discard the current) match"
    r"|The current match or session is being logged|Start new match|A new \d+ point match)"
)
_MARK = re.compile(r"^@@gnubg_driver (begin|end) (\d+)$")


@dataclass(frozen=True)
class GnubgImport:
    """What GNU Backgammon made of one ``.mat`` file."""

    path: Path
    #: ``gnubg.match()`` as JSON (``match-info``, ``games``), or None if nothing was imported.
    match: dict[str, Any] | None
    #: Everything gnubg printed while importing (banner and board diagrams removed).
    messages: tuple[str, ...]
    #: gnubg's own re-export of the file (``export match mat``), when asked for.
    export: str | None = None
    error: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """Messages that are about the file: invalid moves, rejected variations, unrecognised lines."""
        return tuple(m for m in self.messages if not _BENIGN.match(m))

    @property
    def ok(self) -> bool:
        """True when gnubg imported a match and said nothing about the file."""
        return self.match is not None and not self.warnings and self.error is None


def find_gnubg() -> str | None:
    """The gnubg binary, or None when it is not installed."""
    for candidate in GNUBG_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("gnubg")


def import_mats(paths: Sequence[str | Path], *, gnubg: str | None = None, export: bool = True,
                timeout: float = 600) -> list[GnubgImport]:
    """Import every file in one gnubg process; one :class:`GnubgImport` per path, in order."""
    binary = gnubg or find_gnubg()
    if binary is None:
        raise FileNotFoundError("GNU Backgammon (gnubg) is not installed")
    with tempfile.TemporaryDirectory(prefix="gnubg_driver.") as tmp:
        work = Path(tmp)
        home = work / "home"
        (home / ".gnubg").mkdir(parents=True)
        jobs: list[dict[str, Any]] = []
        for i, path in enumerate(paths):
            # gnubg's command line cannot quote '"' or '\\': import a copy with a plain name.
            source = work / f"in{i}.mat"
            shutil.copyfile(path, source)
            jobs.append({"index": i, "input": str(source), "json": str(work / f"out{i}.json"),
                         "export": str(work / f"export{i}.mat") if export else None})
        script = work / "driver.py"
        script.write_text(_SCRIPT)
        output = ""
        start = 0
        # A file that crashes gnubg (an empty first name does) must not lose the rest:
        # files run in order, so start again after the first one without a result.
        while start < len(jobs):
            output += _run(binary, script, work, home, jobs[start:], timeout)
            start = next((i for i in range(start, len(jobs)) if not Path(jobs[i]["json"]).exists()),
                         len(jobs)) + 1
        messages = _messages_by_job(output, len(jobs))
        results = []
        for i, (path, job) in enumerate(zip(paths, jobs, strict=True)):
            data: dict[str, Any] = {}
            out_json = Path(job["json"])
            if out_json.exists():
                data = json.loads(out_json.read_text())
            error = data.get("exception")
            if not data:
                error = "gnubg crashed or stopped on this file"
            exported = Path(job["export"]) if job["export"] else None
            text = exported.read_text(encoding="utf-8", errors="replace") \
                if exported is not None and exported.exists() else None
            results.append(GnubgImport(Path(path), data.get("match"), messages[i], text, error))
        return results


def _run(binary: str, script: Path, work: Path, home: Path, jobs: list[dict[str, Any]],
         timeout: float) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env.update({"HOME": str(home), "LC_ALL": "C", "LANG": "C", "LANGUAGE": "C",
                "GNUBG_DRIVER_JOBS": json.dumps(jobs)})
    done = subprocess.run([binary, "-t", "-q", "-r", "-p", str(script)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                          timeout=timeout, cwd=work, check=False)
    return done.stdout.decode("utf-8", "replace")


def import_mat(path: str | Path, *, gnubg: str | None = None, export: bool = True) -> GnubgImport:
    """Import one file (see :func:`import_mats`; prefer batches, gnubg's start-up is slow)."""
    return import_mats([path], gnubg=gnubg, export=export)[0]


def _messages_by_job(output: str, count: int) -> list[tuple[str, ...]]:
    found: list[list[str]] = [[] for _ in range(count)]
    current: int | None = None
    for line in output.splitlines():
        text = line.rstrip()
        mark = _MARK.match(text)
        if mark:
            current = int(mark.group(2)) if mark.group(1) == "begin" else None
            continue
        if current is None or not text.strip() or _BANNER.match(text) or _BOARD.match(text):
            continue
        found[current].append(text)
    return [tuple(m) for m in found]

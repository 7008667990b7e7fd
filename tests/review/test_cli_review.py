"""`digitise review` from the command line: serves on 127.0.0.1; bad input is one line and exit 3, a port in use exit 2."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner

from digitise.cli import cli
from digitise.errors import ExitCode
from digitise.solve.corrections import corrections_path

ROOT = Path(__file__).resolve().parents[2]


def _address(line: str) -> str:
    """The address the first line of `digitise review` gives."""
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert found, line
    return found.group(0)


@contextlib.contextmanager
def served_cli(*args: str | Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``digitise review ARGS --port 0 --no-browser`` in a process: (its first line, the process), until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "digitise.cli", "review", *map(str, args), "--port", "0", "--no-browser"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        _address(line)
        yield line, process
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_serves_the_report_until_stopped(sample_report: Path) -> None:
    with served_cli(sample_report) as (line, _):
        with urllib.request.urlopen(_address(line) + "api/state", timeout=10) as response:
            state = json.load(response)
        assert state["title"] == "sample.json" and len(state["turns"]) == 3
        assert str(corrections_path(sample_report)) in line


def test_bad_report_is_one_line_and_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = CliRunner().invoke(cli, ["review", str(bad), "--no-browser"])
    assert result.exit_code == ExitCode.BAD_INPUT
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"digitise: error: {bad}: line 1 column 2: not JSON")


def test_bad_corrections_file_is_one_line_and_exit_3(sample_report: Path) -> None:
    corrections_path(sample_report).write_text('{"1:2": "jump"}')
    result = CliRunner().invoke(cli, ["review", str(sample_report), "--no-browser"])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "sample.corrections.json: $.1:2: correction 'jump': cannot read 'jump'" in result.output


def test_port_in_use_is_one_line_and_a_usage_error(sample_report: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["review", str(sample_report), "--port", str(port), "--no-browser"])
    assert result.exit_code == ExitCode.USAGE
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"digitise: error: cannot listen on 127.0.0.1:{port}: ")
    assert lines[0].endswith("(try another --port)")


def test_shared_on_every_address_it_says_how_others_reach_it(sample_report: Path) -> None:
    with served_cli(sample_report, "--host", "0.0.0.0") as (first, process):
        assert process.stderr is not None
        second = process.stderr.readline()
        port = _address(first).rsplit(":", 1)[1]
        assert second.startswith("listening on every address of this machine: from another one, open http://")
        assert second.rstrip().endswith(f":{port}")


def test_a_batch_folder_is_served_as_a_list_of_its_matches(batch_folder: Path) -> None:
    with served_cli(batch_folder) as (line, _):
        assert f"2 matches in {batch_folder}" in line
        with urllib.request.urlopen(_address(line) + "api/matches", timeout=10) as response:
            listed = json.load(response)
        assert [m["name"] for m in listed["matches"]] == ["m2", "m10"]
        with urllib.request.urlopen(_address(line) + "m/1/api/state", timeout=20) as response:
            assert json.load(response)["title"] == "m2.report.json"


def test_a_folder_without_reports_or_with_readings_is_one_line(tmp_path: Path, batch_folder: Path) -> None:
    result = CliRunner().invoke(cli, ["review", str(tmp_path), "--no-browser"])
    assert result.exit_code == ExitCode.BAD_INPUT
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"digitise: error: {tmp_path}: no digitise report in this folder")
    result = CliRunner().invoke(cli, ["review", str(batch_folder), "--readings", str(batch_folder / "x.json"),
                                      "--no-browser"])
    assert result.exit_code == ExitCode.USAGE
    assert result.output.strip() == ("digitise: error: --readings names one report's readings: "
                                     "give a report, not a folder")

"""The code's own checks: ruff's lint and mypy's strict typing (settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)


def test_ruff_finds_nothing() -> None:
    pytest.importorskip("ruff", reason="ruff is a test extra (pip install -e .[test])")
    done = _run("ruff", "check", "digitise", "tests", "benchmarks", "scripts")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_finds_nothing() -> None:
    pytest.importorskip("mypy", reason="mypy is a test extra (pip install -e .[test])")
    done = _run("mypy", "digitise")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout

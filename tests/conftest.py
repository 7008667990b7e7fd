"""Shared fixtures: where ../shared is, and whether external programs exist."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DIGITISE_SHARED", ROOT.parent / "shared"))
MATCHES = SHARED / "data" / "matches"
MATCHES_BAD = SHARED / "data" / "matches-bad"
DIGITS_PNG = SHARED / "data" / "digits.png"
GNUBG_CHECK = SHARED / "tools" / "gnubg_check"
GNUBG = next((p for p in ("/usr/games/gnubg", "/usr/bin/gnubg") if Path(p).exists()), None)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def real_matches() -> list[Path]:
    """The real .mat files of ../shared (empty when it is absent)."""
    return sorted(MATCHES.glob("*.mat")) if MATCHES.is_dir() else []


@pytest.fixture
def matches_dir() -> Path:
    if not MATCHES.is_dir():
        pytest.skip(f"../shared/data/matches not found at {MATCHES}")
    return MATCHES


@pytest.fixture
def digits_png() -> Path:
    if not DIGITS_PNG.is_file():
        pytest.skip(f"../shared/data/digits.png not found at {DIGITS_PNG}")
    return DIGITS_PNG


@pytest.fixture
def gnubg() -> str:
    if GNUBG is None:
        pytest.skip("GNU Backgammon is not installed (apt-get install gnubg)")
    return GNUBG


@pytest.fixture
def gnubg_check() -> Path:
    if GNUBG is None or not GNUBG_CHECK.is_file():
        pytest.skip("gnubg or ../shared/tools/gnubg_check missing")
    return GNUBG_CHECK

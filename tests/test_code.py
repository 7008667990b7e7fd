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


#: What each part of the package may import (besides itself): lower layers never import higher ones,
#: and the peers (vision and sheet, solve and vision) stay apart. See the folder listing of docs/development.md.
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "fileio": {"errors"},
    "game": {"errors"},
    "notation": {"errors", "fileio", "game"},
    "vision": {"errors", "fileio", "notation"},
    "sheet": {"errors", "fileio", "game", "notation"},
    "solve": {"errors", "fileio", "game", "notation"},
    "training": {"errors", "fileio", "game", "notation", "sheet", "vision"},
    "adaptation": {"errors", "fileio", "game", "notation", "solve", "vision"},
    "cluster": {"errors"},
    "pipeline": {"adaptation", "cluster", "errors", "fileio", "game", "notation", "solve", "vision"},
    "review": {"errors", "fileio", "game", "notation", "solve", "vision"},
    "cli": {"__version__", "errors", "fileio", "game", "notation", "pipeline", "review", "sheet", "solve",
            "training", "vision"},
}


def _imported_parts(path: Path) -> set[tuple[str, int]]:
    """The parts of ``digitise`` a module imports (at any depth, lazy imports too), with a line of each."""
    import ast

    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "digitise":
                found.update((alias.name, node.lineno) for alias in node.names)
            elif node.module.startswith("digitise."):
                found.add((node.module.split(".")[1], node.lineno))
        elif isinstance(node, ast.Import):
            found.update((alias.name.split(".")[1], node.lineno) for alias in node.names
                         if alias.name.startswith("digitise."))
    return found


def test_lower_layers_never_import_higher_ones() -> None:
    package = ROOT / "digitise"
    wrong = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        part = rel.parts[0].removesuffix(".py")
        if part == "__init__":
            continue
        assert part in MAY_IMPORT, f"{rel}: a new part of the package: say what it may import"
        wrong += [f"{rel}:{line}: {part} imports {target}" for target, line in sorted(_imported_parts(path))
                  if target != part and target not in MAY_IMPORT[part]]
    assert not wrong, "\n".join(wrong)

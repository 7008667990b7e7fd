"""The host a speed figure was measured on, in one line that the speed benchmarks print with their figures.

The same code reads 5.2-6.0 pages a second on one core of some shared
hosts and 3.0-4.5 on others (benchmarks/README.md, 2026-11-27 to
2026-11-29), and they all call themselves "AMD EPYC". So a speed figure
carries what tells hosts apart: the CPU's family and model numbers (its
generation), its widest vector extension (the compiled libraries pick
their code by it) and the library versions it ran with.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
from pathlib import Path

#: The libraries whose compiled code does most of a page's work.
LIBRARIES = ("numpy", "opencv-python-headless", "onnxruntime", "isal")


def cpu_fields(cpuinfo: str) -> dict[str, str]:
    """The first processor's ``key: value`` lines of a ``/proc/cpuinfo`` text."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def vector_extension(flags: str) -> str:
    """The widest x86 vector extension among ``flags`` (a cpuinfo ``flags`` line): avx512, avx2, avx, sse4.2."""
    have = set(flags.split())
    for name, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("avx", "avx"), ("sse4.2", "sse4_2")):
        if flag in have:
            return name
    return "none of avx512/avx2/avx/sse4.2"


def _versions() -> str:
    found = []
    for name in LIBRARIES:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{name} absent")
    return ", ".join(found)


def describe(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """One line: CPU model (family/model), widest vector extension, cores, load, Python and library versions."""
    try:
        fields = cpu_fields(cpuinfo.read_text(errors="replace"))
    except OSError:
        fields = {}
    model = fields.get("model name") or platform.processor() or platform.machine()
    generation = f" (family {fields['cpu family']} model {fields['model']})" if "cpu family" in fields and "model" in fields else ""
    vectors = vector_extension(fields["flags"]) if "flags" in fields else "vector extensions unknown"
    load = f", load {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    return (f"host: {model}{generation}, {vectors}, {os.cpu_count()} cores{load}; "
            f"Python {platform.python_version()}, {_versions()}")


if __name__ == "__main__":
    print(describe())

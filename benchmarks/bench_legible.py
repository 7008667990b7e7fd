"""The end-to-end benchmark again with writers whose marks stay legible: a diagnostic, not the benchmark.

The same matches, damage and glyphs as ``bench_end_to_end.py`` (same seeds,
same random draws), but each page's writer writes bolder (glyph threshold
``WriterStyle.weight`` 50-99 instead of 50-149) and crosses dice out with a
thin pen (X stroke at most 0.35 mm instead of 0.3-0.6 mm, which hides a small
digit under it). The difference from the benchmark's figures is what thin
strokes and thick crosses cost (benchmarks/README.md). Until handwriting
version 2 (``digitise.sheet.handwriting.full_strength``) the thin pens of the
benchmark itself broke a pale glyph into dots, and this diagnostic was how
much that cost.

    .venv/bin/python benchmarks/bench_legible.py --matches 24 --skip-speed --work /tmp/e2e-legible

Takes every option of ``bench_end_to_end.py``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from digitise.sheet import synth
from digitise.sheet.handwriting import WriterStyle

#: Widest X stroke, mm (the benchmark draws 0.3-0.6).
LEGIBLE_X_MM = 0.35

_drawn_style = synth.random_style


def legible_style(rng: np.random.Generator, *, mess: float = 0.5) -> WriterStyle:
    """The benchmark's writer (the same random draws), with whole strokes and a thin X."""
    style = _drawn_style(rng, mess=mess)
    # 50-149 halved into 50-99: the same writers in the same order, thinner ones thickened.
    weight = 50 + (style.weight - 50) // 2
    return replace(style, weight=weight, stroke_mm=min(style.stroke_mm, LEGIBLE_X_MM))


if __name__ == "__main__":
    # The renderer runs in forked workers: they inherit this writer.
    synth.random_style = legible_style
    import bench_end_to_end

    raise SystemExit(bench_end_to_end.main(sys.argv[1:]))

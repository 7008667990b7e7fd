"""The end-to-end benchmark again with legible marks, or without its hardest glyphs: a diagnostic, not the benchmark.

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

``--without-hard-glyphs`` also leaves out of the held-out glyphs the
five the reader takes for another digit even clean and alone (:data:`HARD_GLYPHS`, pictured in
``benchmarks/hard-glyphs.png``); ``--benchmark-writers`` keeps the
benchmark's own writers, so that option's effect can be had alone. Every
other random draw stays the same (a glyph is still one draw among those
left). Takes every option of ``bench_end_to_end.py``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from digitise.sheet import glyphs, synth
from digitise.sheet.handwriting import WriterStyle

#: Widest X stroke, mm (the benchmark draws 0.3-0.6).
LEGIBLE_X_MM = 0.35

_drawn_style = synth.random_style
_loaded_glyphs = glyphs.load_digit_glyphs

#: Held-out (``GlyphSubset.TEST``) glyphs of 1-6 the shipped glyph classifier, reading each clean and
#: alone among 1-6, takes for another digit (the same rule finds four among the glyphs it was trained
#: on), by digit and index among that digit's test glyphs. By eye, the three "2"s look like a "3"
#: (25), a "1" with a foot (40) and a "9" (94): a person may read them wrong too. The "5" (0, read
#: "3") and the looped "6" (76, read "2") a person reads right: those are the reader's own misses.
HARD_GLYPHS: dict[int, frozenset[int]] = {2: frozenset({25, 40, 94}), 5: frozenset({0}), 6: frozenset({76})}


def legible_style(rng: np.random.Generator, *, mess: float = 0.5) -> WriterStyle:
    """The benchmark's writer (the same random draws), with whole strokes and a thin X."""
    style = _drawn_style(rng, mess=mess)
    # 50-149 halved into 50-99: the same writers in the same order, thinner ones thickened.
    weight = 50 + (style.weight - 50) // 2
    return replace(style, weight=weight, stroke_mm=min(style.stroke_mm, LEGIBLE_X_MM))


def clear_glyphs(source: str | Path | None = None,
                 subset: glyphs.GlyphSubset = glyphs.GlyphSubset.ALL) -> dict[int, list[np.ndarray]]:
    """:func:`glyphs.load_digit_glyphs`, the :data:`HARD_GLYPHS` ones left out of the held-out glyphs."""
    loaded = _loaded_glyphs(source, subset)
    if subset is not glyphs.GlyphSubset.TEST:
        return loaded
    return {digit: [g for i, g in enumerate(drawn) if i not in HARD_GLYPHS.get(digit, frozenset())]
            for digit, drawn in loaded.items()}


def main(argv: list[str]) -> int:
    """Set the writer and glyphs up as asked, then run ``bench_end_to_end.py`` with the other options."""
    # The renderer runs in forked workers: they inherit what is set here.
    if "--benchmark-writers" in argv:
        argv.remove("--benchmark-writers")
    else:
        synth.random_style = legible_style
    if "--without-hard-glyphs" in argv:
        argv.remove("--without-hard-glyphs")
        glyphs.load_digit_glyphs = clear_glyphs
    import bench_end_to_end

    result: int = bench_end_to_end.main(argv)
    return result


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The end-to-end benchmark written in hands unlike MNIST's: does the tool still err only where it flags?

The readers learned handwriting from one source (MNIST's digits, through
``digits.png``), and the benchmark writes with held-out glyphs of the same
source. Real notes are written in other hands. This diagnostic renders the
benchmark's matches (same seeds, damage, writers and random draws) with
digits drawn from type and stroke fonts instead: OpenCV's Hershey stroke
fonts (script, plain, serif) and the TrueType faces on the machine (DejaVu,
Liberation: sans, serif, italic, condensed), each glyph bent by its own
elastic distortion, rotation, slant and stroke weight, so no two are alike.
They are a hand the models never saw, not a human one: print-like digits
(a "1" with a flag and a foot, a closed "4") that MNIST writers seldom
make.

What it measures is the promise users judge the tool by: a game it outputs
is right or flagged. Accuracy may drop on such a hand; silent errors
(wrong and not flagged) should not rise with it.

```sh
.venv/bin/python benchmarks/bench_other_hands.py --matches 24 --levels medium --skip-speed --seed-start 9200 --work /tmp/e2e-hands
```

``--faces liberation`` draws the hand from the Liberation faces alone and
``--faces training`` from the others (Hershey, DejaVu): a reader trained on
one is measured on the other. Every other option is ``bench_end_to_end.py``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from digitise.sheet import glyphs
from digitise.sheet.fonthand import PER_DIGIT, font_hand_glyphs

#: Which fonts draw the hand (``--faces``): see :data:`digitise.sheet.fonthand.FACE_SETS`.
FACES = "all"


def other_hand_glyphs(per_digit: int = PER_DIGIT) -> dict[int, list[np.ndarray]]:
    """The benchmark's hand: :func:`font_hand_glyphs` of the set :data:`FACES`."""
    return font_hand_glyphs(per_digit, faces=FACES)


def _hands(source: str | Path | None = None,
           subset: glyphs.GlyphSubset = glyphs.GlyphSubset.ALL) -> dict[int, list[np.ndarray]]:
    """Stands in for :func:`glyphs.load_digit_glyphs` where the benchmark asks for the held-out glyphs."""
    if subset is glyphs.GlyphSubset.TEST:
        return other_hand_glyphs()
    return _loaded(source, subset)


_loaded = glyphs.load_digit_glyphs


def main(argv: list[str]) -> int:
    """With ``--sheet FILE.png``: a sheet of the glyphs to look at. Else: the benchmark, in these hands."""
    global FACES
    if "--faces" in argv:
        at = argv.index("--faces")
        FACES = argv[at + 1]
        del argv[at:at + 2]
    if "--sheet" in argv:
        target = Path(argv[argv.index("--sheet") + 1])
        drawn = other_hand_glyphs()
        rows = [np.hstack(drawn[d][:30]) for d in range(10)]
        cv2.imwrite(str(target), 255 - cv2.resize(np.vstack(rows), None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST))
        return 0
    # The renderer runs in forked workers: they inherit what is set here.
    glyphs.load_digit_glyphs = _hands
    import bench_end_to_end

    result: int = bench_end_to_end.main(argv)
    return result


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The end-to-end benchmark written with MNIST's 1,200 held-out digits a class instead of ``digits.png``'s 100.

The benchmark writes every digit with one of ``digits.png``'s 100 held-out
(``GlyphSubset.TEST``) glyphs of its class, so each of them recurs about once
in every hundred marks of that digit: the five the reader takes for another
digit even clean and alone (``bench_legible.HARD_GLYPHS``) are 0.8 % of all
marks and start most of its first errors. This runs the same matches, damage
and random draws with the TEST split of the glyph folder that
``digitise train --mnist`` learns from (:func:`~digitise.training.mnist.mnist_training_glyphs`:
1,200 digits a class that no model was trained on, none a near copy of a
glyph of ``digits.png``), a twelve times wider sample of the same source's
hands. A second view of the same figures, not a replacement of the
benchmark. Takes every option of ``bench_end_to_end.py``, and:

    --mnist DIR    MNIST's idx files (scripts/fetch-mnist; default ../mnist-data)

    .venv/bin/python benchmarks/bench_unseen_glyphs.py --matches 48 --skip-speed --seed-start 9000 --work /tmp/e2e-u9000

The glyph folder is written once into ``WORK/glyphs`` (about a minute).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from digitise.errors import DigitiseError
from digitise.sheet import glyphs
from digitise.training.mnist import mnist_training_glyphs

_loaded_glyphs = glyphs.load_digit_glyphs
#: Set by :func:`main`: the glyph folder whose TEST split the pages are written with.
_FOLDER: list[Path] = []


def unseen_glyphs(source: str | Path | None = None,
                  subset: glyphs.GlyphSubset = glyphs.GlyphSubset.ALL) -> dict[int, list[np.ndarray]]:
    """:func:`glyphs.load_digit_glyphs`, the default source's held-out glyphs taken from the MNIST folder."""
    if source is None and subset is glyphs.GlyphSubset.TEST and _FOLDER:
        return _loaded_glyphs(_FOLDER[0], subset)
    return _loaded_glyphs(source, subset)


def main(argv: list[str]) -> int:
    """Write the glyph folder if needed, point the renderer at it, then run ``bench_end_to_end.py``."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--mnist", type=Path, default=ROOT.parent / "mnist-data")
    parser.add_argument("--work", type=Path, default=Path("/tmp/digitise-bench-unseen"))
    own, rest = parser.parse_known_args(argv)
    folder = own.work / "glyphs"
    if not (folder / "done").is_file():
        try:
            mnist_training_glyphs(folder, own.mnist)
        except DigitiseError as error:
            print(f"bench_unseen_glyphs: {error}", file=sys.stderr)
            return 2
        (folder / "done").write_text("mnist_training_glyphs\n", encoding="utf-8")
    # The renderer runs in forked workers: they inherit what is set here.
    _FOLDER.append(folder)
    glyphs.load_digit_glyphs = unseen_glyphs
    import bench_end_to_end

    result: int = bench_end_to_end.main([*rest, "--work", str(own.work)])
    return result


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

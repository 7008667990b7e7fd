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

#: Glyphs drawn per digit (the held-out set has 100 a digit too).
PER_DIGIT = 100
#: Seed of the glyph drawing: the same glyphs on every run.
SEED = 20261129
#: The glyph box of ``digits.png``: 20 x 20, the digit's longer side about 14-16 px in it.
BOX, SIDE = 20, 15
#: Where the TrueType faces are looked for (Debian's fonts-dejavu-core and fonts-liberation).
FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/liberation"))
HERSHEY = (cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_SCRIPT_COMPLEX, cv2.FONT_HERSHEY_SIMPLEX,
           cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_PLAIN)


#: Which fonts draw the hand: ``all``, ``liberation`` (the Liberation faces only, kept apart from a
#: reader trained on the others) or ``training`` (the Hershey fonts and DejaVu faces).
FACES = "all"


def _faces() -> list[Path]:
    """The TrueType faces found, upright and italic, regular weights (no mono, no extra light)."""
    found = []
    folders = {"all": FONT_DIRS, "liberation": FONT_DIRS[1:], "training": FONT_DIRS[:1]}[FACES]
    for folder in folders:
        for path in sorted(folder.glob("*.ttf")) if folder.is_dir() else ():
            if "Mono" in path.name or "ExtraLight" in path.name:
                continue
            found.append(path)
    return found


def _draw_hershey(digit: int, font: int, rng: np.random.Generator) -> np.ndarray:
    """``digit`` in a Hershey stroke font, white on black, about 80 px tall, a random pen."""
    canvas = np.zeros((160, 160), np.uint8)
    thickness = int(rng.integers(4, 11))
    cv2.putText(canvas, str(digit), (35, 120), font, 3.0, 255, thickness, cv2.LINE_AA)
    return canvas


def _draw_truetype(digit: int, face: Path, rng: np.random.Generator) -> np.ndarray:
    """``digit`` in a TrueType face, white on black, about 80 px tall, sometimes stroked bolder."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (160, 160), 0)
    font = ImageFont.truetype(str(face), 96)
    stroke = int(rng.integers(0, 4))
    ImageDraw.Draw(image).text((40, 10), str(digit), fill=255, font=font, stroke_width=stroke, stroke_fill=255)
    return np.asarray(image, np.uint8).copy()


def _bend(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A hand's variation: rotation, slant, squeeze and an elastic wobble (Simard et al.)."""
    h, w = image.shape
    angle = float(rng.uniform(-12, 12))
    shear = float(rng.uniform(-0.35, 0.2))
    squeeze = float(rng.uniform(0.75, 1.15))
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    m = m @ np.array([[squeeze, shear, -shear * h / 2 + (1 - squeeze) * w / 2], [0, 1, 0], [0, 0, 1]])
    image = cv2.warpAffine(image, m, (w, h), flags=cv2.INTER_LINEAR)
    # Smooth random displacement: coarse noise blown up, a few pixels at this size.
    strength = float(rng.uniform(2.0, 6.0))
    field = [cv2.resize(rng.normal(0, strength, (5, 5)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
             for _ in range(2)]
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    return cv2.remap(image, xs + field[0], ys + field[1], cv2.INTER_LINEAR)


def _in_box(image: np.ndarray) -> np.ndarray | None:
    """The ink scaled into a ``digits.png`` glyph box (longer side :data:`SIDE`, centred by its mass)."""
    ys, xs = np.nonzero(image > 40)
    if len(xs) == 0:
        return None
    crop = image[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    scale = SIDE / max(crop.shape)
    small = cv2.resize(crop, (max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale))),
                       interpolation=cv2.INTER_AREA)
    box = np.zeros((BOX, BOX), np.uint8)
    moments = cv2.moments(small)
    cx = moments["m10"] / moments["m00"] if moments["m00"] else small.shape[1] / 2
    cy = moments["m01"] / moments["m00"] if moments["m00"] else small.shape[0] / 2
    x0 = int(np.clip(round(BOX / 2 - cx), 0, BOX - small.shape[1]))
    y0 = int(np.clip(round(BOX / 2 - cy), 0, BOX - small.shape[0]))
    box[y0:y0 + small.shape[0], x0:x0 + small.shape[1]] = small
    return box


def other_hand_glyphs(per_digit: int = PER_DIGIT, seed: int = SEED) -> dict[int, list[np.ndarray]]:
    """``per_digit`` glyphs of each digit 0-9 from the fonts, each bent its own way; the same every run."""
    rng = np.random.default_rng(seed)
    faces = _faces()
    hershey = HERSHEY if FACES != "liberation" else ()
    sources: list[tuple[str, object]] = [("hershey", f) for f in hershey] + [("ttf", f) for f in faces]
    drawn: dict[int, list[np.ndarray]] = {}
    for digit in range(10):
        drawn[digit] = []
        while len(drawn[digit]) < per_digit:
            kind, source = sources[int(rng.integers(len(sources)))]
            image = (_draw_hershey(digit, source, rng) if kind == "hershey"  # type: ignore[arg-type]
                     else _draw_truetype(digit, source, rng))  # type: ignore[arg-type]
            glyph = _in_box(_bend(image, rng))
            if glyph is not None:
                drawn[digit].append(glyph)
    return drawn


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

"""Digits in hands unlike MNIST's, drawn from fonts: to measure the reader on them, and to train it.

The readers learned handwriting from MNIST's digits (``digits.png``), and a
hand unlike those (a "1" with a flag and a foot, a closed "4") read much
worse (``benchmarks/bench_other_hands.py``). Here digits are drawn from
OpenCV's Hershey stroke fonts and the machine's DejaVu and Liberation
TrueType faces, each glyph bent by its own rotation, slant, squeeze, stroke
weight and elastic wobble, and boxed as ``digits.png``'s are. The faces come
in two sets kept apart: ``training`` (Hershey, DejaVu), which a reader may
learn from, and ``liberation``, which measures it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from digitise.errors import InputError
from digitise.fileio import make_folder
from digitise.sheet.glyphs import write_digit_glyphs

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


#: The sets of fonts a hand is drawn from: ``liberation`` (the Liberation faces, kept apart from a reader
#: trained on the others), ``training`` (the Hershey fonts and DejaVu faces), ``all``.
FACE_SETS = ("all", "liberation", "training")


def _faces(faces: str) -> list[Path]:
    """The TrueType faces of the set ``faces``, upright and italic, regular weights (no mono, no extra light)."""
    found = []
    folders = {"all": FONT_DIRS, "liberation": FONT_DIRS[1:], "training": FONT_DIRS[:1]}[faces]
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


def font_hand_glyphs(per_digit: int = PER_DIGIT, seed: int = SEED, faces: str = "all") -> dict[int, list[np.ndarray]]:
    """``per_digit`` glyphs of each digit 0-9 from the fonts of the set ``faces``, each bent its own way; the same
    every run. Raises :class:`InputError` when the set has no font on this machine."""
    if faces not in FACE_SETS:
        raise InputError(f"unknown font set {faces!r} ({', '.join(FACE_SETS)})")
    rng = np.random.default_rng(seed)
    hershey = HERSHEY if faces != "liberation" else ()
    sources: list[tuple[str, object]] = [("hershey", f) for f in hershey] + [("ttf", f) for f in _faces(faces)]
    if not sources:
        raise InputError(f"no font of the set {faces!r} on this machine (Debian: fonts-liberation)")
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




def write_mixed_glyphs(folder: Path, mnist: Mapping[int, Sequence[np.ndarray]], fonts: Mapping[int, Sequence[np.ndarray]],
                       *, overwrite: bool = False) -> Path:
    """A glyph folder (``<digit>_<n>.png``) of MNIST's glyphs and font glyphs, ordered for the splits.

    ``load_digit_glyphs`` takes the first four fifths of a digit's glyphs as
    TRAIN and ``digitise train --cellnet`` the last tenth of those for its
    validation matches. With as many of each (a multiple of 50 a digit; 500
    with ``digits.png`` whole), TRAIN is MNIST's training glyphs (400) and as
    many font glyphs, validation a tenth of each, and TEST MNIST's held-out
    glyphs (100) and as many font glyphs.
    """
    make_folder(folder)
    for digit in range(10):
        m, f = list(mnist.get(digit, ())), list(fonts.get(digit, ()))
        if len(m) != len(f) or not m or len(m) % 50:
            raise InputError(f"expected as many MNIST as font glyphs of the digit {digit}, a multiple of 50, "
                             f"got {len(m)} and {len(f)}")
        train = len(m) * 4 // 5
        fit = train - train // 10
        write_digit_glyphs(folder, digit, m[:fit] + f[:fit] + m[fit:train] + f[fit:train] + m[train:] + f[train:],
                           overwrite=overwrite)
    return folder

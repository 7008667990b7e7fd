"""Scan damage for synthetic sheets: what a scanner, a phone or a photocopier does to a page.

Each level is a fixed set of ranges; a page draws its own values from them
with the page's seeded generator (so a page is reproducible byte for byte).
The ranges, per level (``p`` is the chance a page gets the effect at all):

================  =======  ==========  ==========  ==========  =========
range             none     light       medium      heavy       photocopy
================  =======  ==========  ==========  ==========  =========
dpi               300      200-400     150-300     150-250     200-300
rotation          0        ±1.0°       ±3.0°       ±6.0°       ±2.0°
shear             0        0           ±1.0°       ±2.0°       ±0.5°
perspective       0        0           0-2 %       2-5 %       0
margin (photo)    0        0           1-4 %       2-6 %       0
blur sigma (px)   0        0-0.6       0.3-1.0     0.7-1.6     0.3-0.8
noise sigma       0        0-3         2-6         5-10        2-5
light gradient    0        0-6 %       5-15 %      10-30 %     0-8 %
vignette          0        0           0-8 %       5-15 %      0
shadow            never    never       p .3,       p .7,       never
                                       10-25 %     20-40 %
paper tint        0        0-4 %       2-8 %       5-14 %      0
JPEG quality      none     p .3,       p .6,       p .9,       none
                           85-95       65-90       40-70
show-through      0        0-3 %       2-6 %       4-10 %      0
writer mess       0.3      0.45        0.6         0.85        0.55
digit spill       0        p .04       p .07       p .12       p .06
================  =======  ==========  ==========  ==========  =========

* **dpi**: the page is drawn directly at this resolution (steps of 25 dpi).
* **rotation/shear**: degrees; **perspective**: each page corner moves by up to
  this share of the page's size (a phone held not quite flat); medium and
  heavy pages then sit on a darker "table" with a margin, as in a photo.
* **blur**: Gaussian sigma in pixels at the page's dpi; **noise**: sigma in
  grey levels (0-255), per colour channel.
* **light**: depth of a smooth brightness gradient across the page (plus
  vignetting for photos); **shadow**: chance of a soft-edged shadow and its
  depth; **tint**: yellowing of the paper; **JPEG**: chance and quality of a
  JPEG round trip; **show-through**: how strongly the mirrored ink of the
  other side shows, blurred.
* **photocopy**: the marker-less path: no ArUco markers, darker lines
  (grey 0.3 instead of 0.55), higher contrast, grey toner, and black speckle
  (2-8 specks per 10 cm²); the output is grey (B = G = R).
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np


class Degrade(enum.Enum):
    """How damaged a synthetic page looks."""

    NONE = "none"
    LIGHT = "light"
    MEDIUM = "medium"
    HEAVY = "heavy"
    PHOTOCOPY = "photocopy"


@dataclass(frozen=True, slots=True)
class DamageRanges:
    """The ranges a level draws from (see the module docstring for units)."""

    dpi: tuple[int, int]
    rotation_deg: float
    shear_deg: float
    perspective: tuple[float, float]
    #: Background margin around the page (share of its size): 0 for a flatbed scan.
    margin: tuple[float, float]
    blur: tuple[float, float]
    noise: tuple[float, float]
    light: tuple[float, float]
    shadow_chance: float
    shadow: tuple[float, float]
    tint: tuple[float, float]
    jpeg_chance: float
    jpeg_quality: tuple[int, int]
    show_through: tuple[float, float]
    #: Vignetting depth of a phone's lens.
    vignette: tuple[float, float] = (0.0, 0.0)
    #: Dark background (a table under a photo) rather than a scanner's white lid.
    photo: bool = False
    markers: bool = True
    line_grey: float | None = None
    #: Black specks per 10 cm² (photocopies).
    speckle: tuple[float, float] = (0.0, 0.0)
    grey_output: bool = False
    #: How untidy the writers are (0-1).
    mess: float = 0.5
    #: Chance that a cell's digits spill a little over a line.
    spill: float = 0.05


LEVELS: dict[Degrade, DamageRanges] = {
    Degrade.NONE: DamageRanges(
        dpi=(300, 300), rotation_deg=0.0, shear_deg=0.0, perspective=(0.0, 0.0), margin=(0.0, 0.0),
        blur=(0.0, 0.0), noise=(0.0, 0.0), light=(0.0, 0.0), shadow_chance=0.0, shadow=(0.0, 0.0),
        tint=(0.0, 0.0), jpeg_chance=0.0, jpeg_quality=(95, 95), show_through=(0.0, 0.0), mess=0.3, spill=0.0,
    ),
    Degrade.LIGHT: DamageRanges(
        dpi=(200, 400), rotation_deg=1.0, shear_deg=0.0, perspective=(0.0, 0.0), margin=(0.0, 0.0),
        blur=(0.0, 0.6), noise=(0.0, 3.0), light=(0.0, 0.06), shadow_chance=0.0, shadow=(0.0, 0.0),
        tint=(0.0, 0.04), jpeg_chance=0.3, jpeg_quality=(85, 95), show_through=(0.0, 0.03), mess=0.45,
        spill=0.04,
    ),
    Degrade.MEDIUM: DamageRanges(
        dpi=(150, 300), rotation_deg=3.0, shear_deg=1.0, perspective=(0.0, 0.02), margin=(0.01, 0.04),
        blur=(0.3, 1.0), noise=(2.0, 6.0), light=(0.05, 0.15), shadow_chance=0.3, shadow=(0.10, 0.25),
        tint=(0.02, 0.08), jpeg_chance=0.6, jpeg_quality=(65, 90), show_through=(0.02, 0.06),
        vignette=(0.0, 0.08), photo=True, mess=0.6, spill=0.07,
    ),
    Degrade.HEAVY: DamageRanges(
        dpi=(150, 250), rotation_deg=6.0, shear_deg=2.0, perspective=(0.02, 0.05), margin=(0.02, 0.06),
        blur=(0.7, 1.6), noise=(5.0, 10.0), light=(0.10, 0.30), shadow_chance=0.7, shadow=(0.20, 0.40),
        tint=(0.05, 0.14), jpeg_chance=0.9, jpeg_quality=(40, 70), show_through=(0.04, 0.10),
        vignette=(0.05, 0.15), photo=True, mess=0.85, spill=0.12,
    ),
    Degrade.PHOTOCOPY: DamageRanges(
        dpi=(200, 300), rotation_deg=2.0, shear_deg=0.5, perspective=(0.0, 0.0), margin=(0.0, 0.0),
        blur=(0.3, 0.8), noise=(2.0, 5.0), light=(0.0, 0.08), shadow_chance=0.0, shadow=(0.0, 0.0),
        tint=(0.0, 0.0), jpeg_chance=0.0, jpeg_quality=(95, 95), show_through=(0.0, 0.0), markers=False,
        line_grey=0.3, speckle=(2.0, 8.0), grey_output=True, mess=0.55, spill=0.06,
    ),
}

DPI_STEP = 25


def pick_dpi(ranges: DamageRanges, rng: np.random.Generator) -> int:
    """A resolution from the level's range, in steps of 25 dpi (so blank pages can be cached)."""
    lo, hi = ranges.dpi
    steps = (hi - lo) // DPI_STEP
    return lo + DPI_STEP * int(rng.integers(steps + 1)) if steps else lo


def _uniform(rng: np.random.Generator, span: tuple[float, float]) -> float:
    lo, hi = span
    return float(rng.uniform(lo, hi)) if hi > lo else float(lo)


def page_homography(ranges: DamageRanges, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """The 3x3 map from the upright page (px) to the damaged image (px, same size)."""
    w, h = size
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64)
    centre = np.array([w / 2, h / 2])
    angle = math.radians(float(rng.uniform(-ranges.rotation_deg, ranges.rotation_deg)))
    shear = math.tan(math.radians(float(rng.uniform(-ranges.shear_deg, ranges.shear_deg))))
    c, s = math.cos(angle), math.sin(angle)
    lin = np.array([[c, -s], [s, c]]) @ np.array([[1.0, shear], [0.0, 1.0]])
    dst = (src - centre) @ lin.T + centre
    amount = _uniform(rng, ranges.perspective)
    if amount:
        dst += rng.uniform(-1, 1, size=(4, 2)) * amount * np.array([w, h])
    margin = _uniform(rng, ranges.margin)
    lo, hi = dst.min(axis=0), dst.max(axis=0)
    span = hi - lo
    room = np.array([w, h]) * (1 - 2 * margin)
    # Shrink to fit only when the damaged page would leave the frame (scans keep their scale).
    k = min(1.0, float(room[0] / span[0]), float(room[1] / span[1])) if (margin or (span > [w, h]).any()) else 1.0
    dst = (dst - (lo + hi) / 2) * k
    free = np.maximum(np.array([w, h]) - span * k, 0) / 2
    dst += centre + rng.uniform(-1, 1, size=2) * free * 0.6
    matrix = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
    normalised: np.ndarray = matrix / matrix[2, 2]
    return normalised


#: Noise is cropped from one fixed field big enough for a 400 dpi page.
_FIELD_SHAPE = (4096 + 1024, 5120 + 1024)


@functools.lru_cache(maxsize=1)
def _noise_field() -> np.ndarray:
    """A fixed field of Gaussian noise, sigma 32 around 128 (uint8); pages take crops at random offsets."""
    tile = np.random.default_rng(20250101).normal(128, 32, size=(1024, 1024))
    tile = np.clip(np.round(tile), 0, 255).astype(np.uint8)
    rows, cols = _FIELD_SHAPE
    return np.ascontiguousarray(np.tile(tile, (rows // 1024, cols // 1024)))


def _add_noise(image: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``image`` plus Gaussian noise of ``sigma`` grey levels (a crop of the fixed field)."""
    rows, cols = image.shape[:2]
    field = _noise_field()
    if rows > _FIELD_SHAPE[0] - 1024 or cols > _FIELD_SHAPE[1] - 1024:
        reps = (rows // 1024 + 2, cols // 1024 + 2)
        field = np.tile(field[:1024, :1024], reps)
    oy, ox = int(rng.integers(1024)), int(rng.integers(1024))
    crop = field[oy:oy + rows, ox:ox + cols]
    k = sigma / 32
    return cv2.addWeighted(image, 1.0, crop, k, -128 * k)


def _light_field(ranges: DamageRanges, size: tuple[int, int], rng: np.random.Generator,
                 ghost: np.ndarray | None, show: float) -> np.ndarray:
    """Brightness gain (uint8, 255 = unchanged) at full size: gradient, vignette, shadow, show-through."""
    w, h = size
    gw, gh = max(w // 6, 8), max(h // 6, 8)
    ys, xs = np.mgrid[0:gh, 0:gw].astype(np.float32)
    xs /= gw - 1
    ys /= gh - 1
    gain: np.ndarray = np.ones((gh, gw), dtype=np.float32)
    depth = _uniform(rng, ranges.light)
    if depth:
        theta = float(rng.uniform(0, 2 * math.pi))
        ramp = (xs - 0.5) * math.cos(theta) + (ys - 0.5) * math.sin(theta)
        ramp = (ramp - ramp.min()) / max(float(ramp.max() - ramp.min()), 1e-6)
        gain *= 1 - depth * ramp
    vignette = _uniform(rng, ranges.vignette)
    if vignette:
        gain *= 1 - vignette * ((xs - 0.5) ** 2 + (ys - 0.5) ** 2) * 2
    if ranges.shadow_chance and rng.random() < ranges.shadow_chance:
        strength = _uniform(rng, ranges.shadow)
        theta = float(rng.uniform(0, 2 * math.pi))
        offset = float(rng.uniform(0.15, 0.45))
        softness = float(rng.uniform(0.02, 0.12))
        dist = (xs - 0.5) * math.cos(theta) + (ys - 0.5) * math.sin(theta) - offset + 0.5
        gain *= 1 - strength / (1 + np.exp(-(dist - 0.5) / softness))
    if ghost is not None and show:
        small = cv2.resize(ghost, (gw, gh), interpolation=cv2.INTER_LINEAR)
        mirrored = cv2.GaussianBlur(cv2.flip(small, 1).astype(np.float32) / 255, (0, 0), 1.2)
        gain *= 1 - show * mirrored
    small_u8 = np.clip(gain * 255 + 0.5, 0, 255).astype(np.uint8)
    return cv2.resize(small_u8, (w, h), interpolation=cv2.INTER_LINEAR)


def back_of_sheet(front: np.ndarray, show: float, seed: int = 5) -> np.ndarray:
    """The back of a sheet whose ``front`` (uint8, BGR or grey) shows through, as a two-sided scan has it.

    Mirrored, blurred (light spreads in the paper), ``show`` of the front's
    darkness on grainy paper (grey 238, noise sigma 2): a grey uint8 page.
    """
    grey = cv2.cvtColor(front, cv2.COLOR_BGR2GRAY) if front.ndim == 3 else front
    seen = cv2.GaussianBlur(255.0 - cv2.flip(grey, 1).astype(np.float32), (0, 0), 1.5)
    grain = np.random.default_rng(seed).normal(0.0, 2.0, seen.shape)
    back: np.ndarray = np.clip(238.0 - show * seen + grain, 0, 255).astype(np.uint8)
    return back


@dataclass(frozen=True, slots=True)
class Damaged:
    """A damaged page and how it was made."""

    image: np.ndarray
    #: Page px (upright render) -> image px.
    homography: np.ndarray
    #: The values drawn from the ranges, for the truth file.
    settings: dict[str, float | int | bool]


def damage_page(
    lines: np.ndarray, ink: np.ndarray, ink_colour: tuple[int, int, int], ranges: DamageRanges,
    rng: np.random.Generator, *, matrix: np.ndarray, px_per_mm: float,
) -> Damaged:
    """Compose paper, printed lines and ink, then apply the level's damage.

    ``lines`` is the blank page (uint8 grey, white paper) upright at the
    page's dpi; ``matrix`` (from :func:`page_homography`) maps it into the
    image. ``ink`` is the writer's ink coverage (uint8) already drawn in
    image coordinates. Works at the page's resolution with single-channel
    OpenCV operations where it can (one core renders several pages a second).
    """
    h, w = lines.shape
    settings: dict[str, float | int | bool] = {}
    identity = bool(np.allclose(matrix, np.eye(3), atol=1e-12))
    background = int(rng.integers(40, 120)) if ranges.photo else int(rng.integers(225, 256))
    if identity:
        grey = lines
    else:
        grey = cv2.warpPerspective(lines, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                                   borderValue=background)
    inked = ink
    blur = _uniform(rng, ranges.blur)
    if blur >= 0.05:
        grey = cv2.GaussianBlur(grey, (0, 0), blur)
        inked = cv2.GaussianBlur(inked, (0, 0), blur)
    show = _uniform(rng, ranges.show_through)
    if ranges.light[1] or ranges.shadow_chance or show or ranges.vignette[1]:
        gain = _light_field(ranges, (w, h), rng, inked if show else None, show)
        grey = cv2.multiply(grey, gain, scale=1 / 255)
    tint = _uniform(rng, ranges.tint)
    brightness = float(rng.uniform(0.9, 1.0)) if ranges.photo else 1.0
    paper = (brightness * (1 - tint), brightness * (1 - 0.45 * tint), brightness * (1 - 0.08 * tint))
    noise_sigma = _uniform(rng, ranges.noise)
    settings.update(blur=round(blur, 3), noise=round(noise_sigma, 3), tint=round(tint, 3),
                    show_through=round(show, 3))
    if ranges.grey_output:
        image = _photocopy(grey, inked, ink_colour, ranges, rng, noise_sigma, px_per_mm)
    else:
        if noise_sigma:
            # Sensor noise on the brightness; the ink then filters it like the paper's light.
            grey = _add_noise(grey, noise_sigma, rng)
        channels = []
        for c in range(3):
            # Ink filters the light: transmittance 1 - coverage * (1 - colour).
            k = 1.0 - ink_colour[c] / 255.0
            transmit = cv2.convertScaleAbs(inked, alpha=-k, beta=255)
            channels.append(cv2.multiply(grey, transmit, scale=paper[c] / 255))
        image = cv2.merge(channels)
    if ranges.jpeg_chance and rng.random() < ranges.jpeg_chance:
        quality = int(rng.integers(ranges.jpeg_quality[0], ranges.jpeg_quality[1] + 1))
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        decoded = cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            image = decoded
        settings["jpeg_quality"] = quality
    return Damaged(image, matrix, settings)


def _photocopy(grey: np.ndarray, inked: np.ndarray, ink_colour: tuple[int, int, int], ranges: DamageRanges,
               rng: np.random.Generator, noise_sigma: float, px_per_mm: float) -> np.ndarray:
    """Grey toner: ink by its luminance, a contrast curve, noise and black speckle."""
    h, w = grey.shape
    luminance = (0.114 * ink_colour[0] + 0.587 * ink_colour[1] + 0.299 * ink_colour[2]) / 255
    # Copiers render any pen dark.
    transmit = cv2.convertScaleAbs(inked, alpha=-(1 - luminance * 0.5), beta=255)
    image = cv2.multiply(grey, transmit, scale=1 / 255)
    if noise_sigma:
        image = _add_noise(image, noise_sigma, rng)
    gamma = float(rng.uniform(1.3, 2.0))
    toner = int(rng.integers(20, 60))
    levels = np.arange(256, dtype=np.float64) / 255
    lut = np.clip(toner + (255 - toner) * levels ** gamma + 0.5, 0, 255).astype(np.uint8)
    image = cv2.LUT(image, lut)
    density = _uniform(rng, ranges.speckle)
    count = int(density * (w / px_per_mm) * (h / px_per_mm) / 1000)
    xs = rng.uniform(0, w, count)
    ys = rng.uniform(0, h, count)
    radii = rng.uniform(0.05, 0.25, count) * px_per_mm
    shades = rng.integers(0, 90, count)
    for x, y, r, v in zip(xs, ys, radii, shades, strict=True):
        cv2.circle(image, (int(x * 16), int(y * 16)), max(int(r * 16), 8), int(v), -1, cv2.LINE_AA, 4)
    return cv2.merge([image, image, image])

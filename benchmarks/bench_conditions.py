"""How the way a page was captured changes the whole job: the same pages faded, shadowed, photographed...

Self-played matches (seeds 9200 up, lengths cycling 1, 3, 5 points, held-out
TEST glyphs, light damage, 300-dpi pages: see ``bench_end_to_end.py``) are
rendered once. Each condition below is then applied to every page, the same
way for every run (its noise from a fixed seed), and the pages go through
the real CLI (``digitise batch``). Every written ``.mat`` is compared turn by
turn with the truth (``bench_end_to_end.analyse_level``: right, silent,
flagged); a page the reader refuses loses its turns, counted as not right.

    .venv/bin/python benchmarks/bench_conditions.py --matches 4
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# A sibling script, not a package: found through sys.path above.
from bench_end_to_end import _pct, analyse_level, render, run_batch

Condition = Callable[[np.ndarray, np.random.Generator], np.ndarray]
#: Resolution the matches are rendered at (px per mm follows: blur is given in mm).
DPI = 300
PX_PER_MM = DPI / 25.4


def _levels(gain: float, lift: float) -> Condition:
    return lambda image, _: np.clip(image.astype(np.float32) * gain + lift, 0, 255).astype(np.uint8)


def _shadow_half(image: np.ndarray, _: np.random.Generator) -> np.ndarray:
    out = image.astype(np.float32)
    out[:, : out.shape[1] // 2] *= 0.45
    return out.astype(np.uint8)


def _light_falling_off(image: np.ndarray, _: np.random.Generator) -> np.ndarray:
    across = np.linspace(1.0, 0.4, image.shape[1], dtype=np.float32)[None, :, None]
    return (image.astype(np.float32) * across).astype(np.uint8)


def _on_a_table(image: np.ndarray, _: np.random.Generator) -> np.ndarray:
    """A phone photo: the page in perspective, three quarters of a frame whose rest is a dark table."""
    h, w = image.shape[:2]
    frame = (round(w * 1.35), round(h * 1.35))
    page = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    seen = np.float32([[w * 0.22, h * 0.12], [w * 1.15, h * 0.08], [w * 1.25, h * 1.25], [w * 0.10, h * 1.22]])
    return cv2.warpPerspective(image, cv2.getPerspectiveTransform(page, seen), frame, flags=cv2.INTER_AREA,
                               borderValue=(40, 45, 50))


def _at_an_angle(narrowing: float) -> Condition:
    """A phone held at an angle: the page's far edge ``narrowing`` times as wide as its near one."""
    def change(image: np.ndarray, _: np.random.Generator) -> np.ndarray:
        h, w = image.shape[:2]
        inset = w * (1.0 - narrowing) / 2
        page = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        seen = np.float32([[inset, h * 0.08], [w - inset, h * 0.08], [w, h], [0, h]])
        return cv2.warpPerspective(image, cv2.getPerspectiveTransform(page, seen), (w, h), flags=cv2.INTER_AREA,
                                   borderValue=(40, 45, 50))
    return change


def _curled(amplitude: float) -> Condition:
    """A page not lying flat: rows bowed by ``amplitude`` of the height, columns by half as much of the width."""
    def change(image: np.ndarray, _: np.random.Generator) -> np.ndarray:
        h, w = image.shape[:2]
        xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
        map_y = ys + np.float32(amplitude * h) * np.sin(np.float32(np.pi) * xs / w)
        map_x = xs + np.float32(amplitude * 0.5 * w) * np.sin(np.float32(np.pi) * ys / h)
        return cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderValue=(255, 255, 255))
    return change


def _moved(mm: float, degrees: float = 0.0) -> Condition:
    """Motion blur: the camera moved ``mm`` while the picture was taken, sideways or ``degrees`` from it."""
    def change(image: np.ndarray, _: np.random.Generator) -> np.ndarray:
        length = max(1, round(mm * PX_PER_MM))
        if degrees == 0.0:
            return cv2.blur(image, (length, 1))
        # A line of the motion's length at its angle, as a kernel (odd size, centred).
        size = length | 1
        kernel = np.zeros((size, size), np.float32)
        c, s, middle = np.cos(np.deg2rad(degrees)), np.sin(np.deg2rad(degrees)), size // 2
        half = (length - 1) / 2.0
        cv2.line(kernel, (round(middle - c * half), round(middle - s * half)),
                 (round(middle + c * half), round(middle + s * half)), 1.0, 1, cv2.LINE_8)
        return cv2.filter2D(image, -1, kernel / kernel.sum())
    return change


def _blurred(image: np.ndarray, _: np.random.Generator) -> np.ndarray:
    return cv2.GaussianBlur(image, (0, 0), 0.2 * PX_PER_MM)


def _grain(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = rng.normal(0.0, 25.0, image.shape).astype(np.float32)
    return np.clip(image.astype(np.float32) + noise, 0, 255).astype(np.uint8)


def _resolution(dpi: int) -> Condition:
    return lambda image, _: cv2.resize(image, None, fx=dpi / DPI, fy=dpi / DPI, interpolation=cv2.INTER_AREA)


#: (name, change to the page, JPEG quality it is saved at).
CONDITIONS: tuple[tuple[str, Condition, int], ...] = (
    ("as scanned", lambda image, _: image, 90),
    ("faded: contrast x0.3, towards white", _levels(0.3, 180.0), 90),
    ("very faded: contrast x0.2, towards white", _levels(0.2, 190.0), 90),
    ("dim: every level x0.5", _levels(0.5, 0.0), 90),
    ("a shadow over half the page (x0.45)", _shadow_half, 90),
    ("light falling off across the page (1 -> 0.4)", _light_falling_off, 90),
    ("photo on a table, in perspective", _on_a_table, 90),
    ("photo at an angle: far edge 70 % as wide", _at_an_angle(0.7), 90),
    ("photo at an angle: far edge 50 % as wide", _at_an_angle(0.5), 90),
    ("curled page: bowed by 1 % of its height", _curled(0.01), 90),
    ("curled page: bowed by 2 % of its height", _curled(0.02), 90),
    ("camera shake: moved 0.5 mm", _moved(0.5), 90),
    ("camera shake: moved 1 mm", _moved(1.0), 90),
    ("camera shake: moved 1.5 mm", _moved(1.5), 90),
    ("camera shake: moved 2 mm", _moved(2.0), 90),
    ("camera shake: moved 1 mm up the page", _moved(1.0, 90.0), 90),
    ("camera shake: moved 1 mm at 30 degrees", _moved(1.0, 30.0), 90),
    ("camera shake: moved 2 mm at 45 degrees", _moved(2.0, 45.0), 90),
    ("JPEG quality 15", lambda image, _: image, 15),
    ("blurred (0.2 mm)", _blurred, 90),
    ("grain (sigma 25 levels)", _grain, 90),
    ("upside down", lambda image, _: cv2.rotate(image, cv2.ROTATE_180), 90),
    ("150 dpi", _resolution(150), 90),
    ("120 dpi", _resolution(120), 90),
    ("100 dpi (refused: under 4 px per mm)", _resolution(100), 90),
)


def apply(condition: Condition, quality: int, source: Path, target: Path, seed: int) -> None:
    """Every page of ``source`` (a rendered folder) changed and saved as JPEG into ``target``, truth beside it."""
    for match in sorted(p for p in source.iterdir() if p.is_dir() and not p.name.startswith(".")):
        out = target / match.name
        out.mkdir(parents=True, exist_ok=True)
        for k, page in enumerate(sorted(match.iterdir())):
            image = cv2.imread(str(page), cv2.IMREAD_COLOR)
            changed = condition(image, np.random.default_rng(seed * 1000 + k))
            cv2.imwrite(str(out / f"{page.stem}.jpg"), changed, [cv2.IMWRITE_JPEG_QUALITY, quality])
        shutil.copytree(source / f".{match.name}.truth", target / f".{match.name}.truth", dirs_exist_ok=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--seed-start", type=int, default=9200)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--work", type=Path, default=Path("/tmp/digitise-bench-conditions"))
    parser.add_argument("--only", action="append", default=[], help="run only conditions whose name contains this")
    args = parser.parse_args(argv)
    rendered = args.work / "rendered" / "pages"
    pages = render(list(range(args.matches)), args.seed_start, "light", rendered, DPI, "png", args.jobs)
    print(f"{len(pages)} matches, {sum(pages.values())} pages (light damage, {DPI} dpi) in {rendered}", file=sys.stderr)
    rows = []
    for number, (name, condition, quality) in enumerate(CONDITIONS):
        if args.only and not any(part in name for part in args.only):
            continue
        folder = args.work / f"c{number:02d}"
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "truth").parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(rendered.parent / "truth", folder / "truth")
        apply(condition, quality, rendered, folder / "pages", number)
        seconds, code, stderr = run_batch(folder / "pages", folder / "out", args.jobs, None)
        if code not in (0, 1, 3):
            print(f"{name}: batch exit {code}\n{stderr[-2000:]}", file=sys.stderr)
        figures = analyse_level(name, folder / "pages", folder / "out", seconds, pages, gnubg=False)
        summary = json.loads((folder / "out" / "summary.json").read_text(encoding="utf-8"))
        refused = sum(len(job["page_errors"]) for job in summary["jobs"])
        refused += sum(job["pages"] for job in summary["jobs"] if job["status"] == "failed")
        rows.append((name, figures, refused))
        print(f"{name}: right {_pct(figures.right, figures.turns)}, silent {figures.silent}, "
              f"flagged {_pct(figures.flagged_own, figures.turns)}, pages refused {refused}", file=sys.stderr)
    total = sum(pages.values())
    print("\n| condition | pages refused | turns right, no human | silent errors | flagged | boards read right (top reading) |")
    print("|---|---|---|---|---|---|")
    for name, f, refused in rows:
        print(f"| {name} | {refused} of {total} | {_pct(f.right, f.turns)} | {_pct(f.silent, f.turns)} ({f.silent}) "
              f"| {_pct(f.flagged_own, f.turns)} | {_pct(f.boards_read_right, f.boards)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: reading synthetic pages (``digitise read``): page finding, cells, marks, speed.

Renders self-played matches as filled pages with the held-out ``TEST``
glyphs (never seen in training) at each damage level, writes them to PNG
files, reads them back through the whole pipeline and compares with the
truth files:

* page found and fitted: every cell corner of every board within 1 mm of
  where the truth homography puts it;
* written cells found: the cells holding ink that reach the cell reader
  (missing ones would be reported as certainly empty);
* cell reading (needs the shipped glyph model): the top candidate equals the
  written digits exactly, over every cell of every board that holds a turn
  (empty cells included; an unlisted cell reads as empty); and the truth
  among the top 3;
* arrow and X: the board's arrow / crossed probability on the right side of
  0.5, over every board with a turn;
* speed: one 300-dpi page (``--dpi``), file to readings, per step.

    taskset -c 0 .venv/bin/python benchmarks/bench_read.py --matches 6
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from digitise.game.selfplay import SelfPlayOptions, play_match
from digitise.notation.marks import CELL_NAMES
from digitise.sheet.geometry import load_template
from digitise.sheet.glyphs import DEFAULT_DIGITS, GlyphSubset, load_digit_glyphs
from digitise.sheet.handwriting import GlyphBank
from digitise.sheet.synth import encode_image, render_match_pages
from digitise.vision.images import load_pages
from digitise.vision.page import project
from digitise.vision.read import analyse_page

LEVELS = ("light", "medium", "heavy", "photocopy")


def _reader() -> Any | None:
    try:
        from digitise.vision.cells import default_reader

        return default_reader()
    except Exception as exc:  # noqa: BLE001 - the model may not be shipped yet
        print(f"(no cell reader: {type(exc).__name__}: {exc}; reading figures skipped)")
        return None


class _Recorder:
    """Stand-in when the model is missing: every inked cell reads as "1"."""

    def analyse_many(self, cells: Any) -> list[Any]:
        from digitise.notation.readings import CellReading
        from digitise.vision.cells import CellAnalysis

        return [CellAnalysis((CellReading((1,), 1.0),), 0.0, 0.0, 0.0) for _ in cells]


def _pages(level: str, matches: int, folder: Path, bank: GlyphBank, dpi: int | None) -> list[tuple[Path, dict[str, Any]]]:
    template = load_template("a4")
    out = []
    for k in range(matches):
        match = play_match(500 + k, SelfPlayOptions(length=3, players=("Ann", "Kato")))
        for page in render_match_pages(match, template=template, seed=900 + k, degrade=level, glyphs=bank, dpi=dpi):
            stem = folder / f"{level}-{k:02d}-{page.truth['page']}"
            path = stem.with_suffix(".png")
            path.write_bytes(encode_image(page.image, "png", dpi=page.truth["dpi"]))
            out.append((path, page.truth))
    return out


def _evaluate(level: str, pages: list[tuple[Path, dict[str, Any]]], reader: Any | None) -> dict[str, Any]:
    template = load_template("a4")
    stats: Counter[str] = Counter()
    for path, truth in pages:
        (image,) = load_pages(path)
        stats["pages"] += 1
        try:
            reading, analysis = analyse_page(image, template, reader or _Recorder(), header=False)  # type: ignore[arg-type]
        except Exception as exc:  # noqa: BLE001 - a miss is a figure, not a crash
            print(f"  {path.name}: not found: {exc}")
            continue
        h = np.array(truth["mm_to_px"])
        scale = truth["dpi"] / 25.4
        worst = 0.0
        for board in analysis.boards:
            for name, rect in template.board(board.index).cells.items():
                # Truth pixels have (0, 0) at a pixel's corner; OpenCV's at its centre.
                expected = project(h, np.array(rect.corners)) - 0.5
                worst = max(worst, float(np.linalg.norm(board.cell_quad(name) - expected, axis=1).max()) / scale)
        stats["fitted"] += worst < 1.0
        stats[f"method_{analysis.fit.method}"] += 1
        seen = {(c.board, c.name) for c in analysis.cells}
        by_index = {b.index: b for b in reading.boards}
        for board in truth["boards"]:
            written = {name: tuple(d) for name, d in board["cells"].items()}
            marked = set(written) | ({"centre"} if board["arrow"] or board["crossed"] else set())
            stats["written"] += len(marked)
            stats["written_found"] += sum((board["index"], n) in seen for n in marked)
            got = by_index[board["index"]]
            for name in CELL_NAMES:
                truth_digits = written.get(name, ())
                candidates = got.cells.get(name, ())
                top = candidates[0].digits if candidates else ()
                top3 = [c.digits for c in candidates[:3]] or [()]
                stats["cells"] += 1
                stats["top1"] += top == truth_digits
                stats["top3"] += truth_digits in top3 or (not truth_digits and not candidates)
                if truth_digits:
                    stats["written_cells"] += 1
                    stats["written_top1"] += top == truth_digits
            stats["boards"] += 1
            stats["arrow_ok"] += (got.arrow >= 0.5) == bool(board["arrow"])
            stats["cross_ok"] += (got.crossed >= 0.5) == bool(board["crossed"])
    return dict(stats)


def _speed(folder: Path, bank: GlyphBank, reader: Any | None, dpi: int, repeat: int) -> dict[str, float]:
    template = load_template("a4")
    match = play_match(777, SelfPlayOptions(length=3, players=("Ann", "Kato")))
    page = render_match_pages(match, template=template, seed=4242, degrade="light", glyphs=bank, dpi=dpi)[0]
    path = folder / "speed.png"
    path.write_bytes(encode_image(page.image, "png", dpi=dpi))
    jpg = folder / "speed.jpg"
    jpg.write_bytes(encode_image(page.image, "jpg", dpi=dpi))
    used = reader or _Recorder()
    analyse_page(load_pages(path)[0], template, used, header=False)  # type: ignore[arg-type, arg-type]
    steps: dict[str, list[float]] = {}
    for _ in range(repeat):
        for source, key in ((path, "png"), (jpg, "jpg")):
            t0 = time.perf_counter()
            (image,) = load_pages(source)
            t1 = time.perf_counter()
            _, analysis = analyse_page(image, template, used, header=key == "png")  # type: ignore[arg-type]
            t2 = time.perf_counter()
            steps.setdefault(f"{key} decode", []).append(t1 - t0)
            header = analysis.timings.get("header", 0.0)
            steps.setdefault(f"{key} file to readings (no header)", []).append(t2 - t0 - header)
            if key == "png":
                for step, seconds in analysis.timings.items():
                    steps.setdefault(step, []).append(seconds)
    return {k: statistics.median(v) * 1000 for k, v in steps.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=6, help="self-played 3-point matches per level")
    parser.add_argument("--levels", default=",".join(LEVELS))
    parser.add_argument("--dpi", type=int, default=300, help="resolution of the speed page")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--glyphs", type=Path, default=DEFAULT_DIGITS)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    bank = GlyphBank(load_digit_glyphs(args.glyphs, GlyphSubset.TEST))
    reader = _reader()
    figures: dict[str, Any] = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                               "load": os.getloadavg()[0], "model": reader is not None, "levels": {}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for level in args.levels.split(","):
            pages = _pages(level, args.matches, folder, bank, None)
            stats = _evaluate(level, pages, reader)
            figures["levels"][level] = stats
            def pct(a: str, b: str, stats: dict[str, Any] = stats) -> float:
                return 100.0 * stats.get(a, 0) / max(stats.get(b, 0), 1)
            line = (f"{level:10} pages {stats.get('pages', 0):3}  fitted {pct('fitted', 'pages'):6.2f}%  "
                    f"written cells found {pct('written_found', 'written'):6.2f}%")
            if reader is not None:
                line += (f"  top-1 {pct('top1', 'cells'):6.2f}%  top-3 {pct('top3', 'cells'):6.2f}%  "
                         f"written top-1 {pct('written_top1', 'written_cells'):6.2f}%  "
                         f"arrow {pct('arrow_ok', 'boards'):6.2f}%  X {pct('cross_ok', 'boards'):6.2f}%")
            print(line, flush=True)
        speed = _speed(folder, bank, reader, args.dpi, args.repeat)
        figures["speed_ms"] = speed
        print(f"speed, {args.dpi}-dpi page, median of {args.repeat} (ms):")
        for step, ms in speed.items():
            print(f"  {step:38} {ms:7.1f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    cv2.setNumThreads(1)
    main()

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
  written digits exactly (in any order in point squares and the centre, as
  the solver reads them; in order in result squares), over every cell of every board that holds a turn
  (empty cells included; an unlisted cell reads as empty); and the truth
  among the top 3;
* the same per cell kind (centre strip, point and off squares, result
  squares), over all cells and over the written ones (top-1 and top-3);
* arrow and X: the board's arrow / crossed probability on the right side of
  0.5, over every board with a turn;
* header: the digit fields (match length, page; needs the model) and the
  text fields (tesseract, all pages of a level in one run) read exactly;
* speed: one 300-dpi page (``--dpi``), file to readings, CPU time per step
  (tesseract's included); and per page when a whole match is read at once.

    taskset -c 0 .venv/bin/python benchmarks/bench_read.py --matches 6
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import cv2
import numpy as np

# A sibling script, not a package: its folder is on sys.path when it runs.
from machine import describe as describe_host

from digitise.game.selfplay import SelfPlayOptions, play_match
from digitise.notation.marks import CELL_NAMES
from digitise.notation.template import load_template
from digitise.sheet.glyphs import DEFAULT_DIGITS, GlyphSubset, load_digit_glyphs
from digitise.sheet.handwriting import GlyphBank
from digitise.sheet.synth import encode_image, render_match_pages
from digitise.vision.header import NUMBER_FIELDS, ocr_pages
from digitise.vision.images import load_pages
from digitise.vision.page import project
from digitise.vision.read import analyse_page, read_pages

LEVELS = ("light", "medium", "heavy", "photocopy")
#: Cell kinds reported apart (see ``_kind``).
KINDS = ("centre", "point", "result")


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


def _kind(name: str) -> str:
    """The benchmark's cell kinds: the centre strip, the result squares, the point and off squares."""
    if name == "centre":
        return "centre"
    return "result" if name.endswith("res") else "point"


def _key(name: str) -> Any:
    """How a cell's digits are compared: in order in result squares, as a multiset elsewhere."""
    if name.endswith("res"):
        return tuple
    return lambda digits: tuple(sorted(digits))


def _evaluate(level: str, pages: list[tuple[Path, dict[str, Any]]], reader: Any | None) -> dict[str, Any]:
    template = load_template("a4")
    stats: Counter[str] = Counter()
    # Header text is read once for the level, as read_pages does: (truth header, number fields read, text cut out).
    headers: list[tuple[dict[str, Any], dict[str, Any], Any]] = []
    for path, truth in pages:
        (image,) = load_pages(path)
        stats["pages"] += 1
        try:
            reading, analysis = analyse_page(image, template, reader or _Recorder(), header=True,  # type: ignore[arg-type]
                                             defer_text=True)
        except Exception as exc:  # noqa: BLE001 - a miss is a figure, not a crash
            print(f"  {path.name}: not found: {exc}")
            continue
        headers.append((truth.get("header", {}), dict(reading.header), analysis.pending_text))
        h = np.array(truth["mm_to_px"])
        scale = truth["dpi"] / 25.4
        worst, worst_board = 0.0, 0
        for board in analysis.boards:
            for name, rect in template.board(board.index).cells.items():
                # Truth pixels have (0, 0) at a pixel's corner; OpenCV's at its centre.
                expected = project(h, np.array(rect.corners)) - 0.5
                miss = float(np.linalg.norm(board.cell_quad(name) - expected, axis=1).max()) / scale
                if miss > worst:
                    worst, worst_board = miss, board.index
        stats["fitted"] += worst < 1.0
        if worst >= 1.0:
            # Which page, which board and by how much: what to look at next.
            print(f"  {path.name}: not fitted: board {worst_board} off by {worst:.2f} mm ({analysis.fit.method}, "
                  f"{truth['dpi']} dpi)")
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
                # Point squares and the centre are compared as multisets (the solver reads them so);
                # result squares as numbers.
                key = _key(name)
                truth_digits = key(written.get(name, ()))
                candidates = got.cells.get(name, ())
                top = key(candidates[0].digits) if candidates else ()
                top3 = [key(c.digits) for c in candidates[:3]] or [()]
                stats["cells"] += 1
                stats["top1"] += top == truth_digits
                stats["top3"] += truth_digits in top3 or (not truth_digits and not candidates)
                kind = _kind(name)
                stats[f"{kind}_cells"] += 1
                stats[f"{kind}_top1"] += top == truth_digits
                if truth_digits:
                    stats["written_cells"] += 1
                    stats["written_top1"] += top == truth_digits
                    stats[f"{kind}_written"] += 1
                    stats[f"{kind}_written_top1"] += top == truth_digits
                    stats[f"{kind}_written_top3"] += truth_digits in top3
            stats["boards"] += 1
            stats["arrow_ok"] += (got.arrow >= 0.5) == bool(board["arrow"])
            stats["cross_ok"] += (got.crossed >= 0.5) == bool(board["crossed"])
    # Header fields: the text ones by tesseract (exact text), the digit ones by the model (exact digits).
    texts = ocr_pages([pending for _, _, pending in headers])
    for (want, got_fields, _), text in zip(headers, texts, strict=True):
        got_fields.update(text)
        for name, value in want.items():
            kind = "number" if name in NUMBER_FIELDS else "text"
            if kind == "number" and reader is None:
                continue
            stats[f"header_{kind}"] += 1
            stats[f"header_{kind}_ok"] += got_fields.get(name, {}).get("value") == str(value)
    return dict(stats)


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (tesseract runs as a child)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _speed(folder: Path, bank: GlyphBank, reader: Any | None, dpi: int, repeat: int) -> dict[str, float]:
    """CPU ms per step for one page, and per page for a whole match read at once (header included)."""
    template = load_template("a4")
    match = play_match(777, SelfPlayOptions(length=3, players=("Ann", "Kato")))
    rendered = render_match_pages(match, template=template, seed=4242, degrade="light", glyphs=bank, dpi=dpi)
    files: dict[str, list[Path]] = {"png": [], "jpg": []}
    for k, page in enumerate(rendered):
        for key, paths in files.items():
            path = folder / f"speed-{k:02d}.{key}"
            path.write_bytes(encode_image(page.image, key, dpi=dpi))
            paths.append(path)
    used = reader or _Recorder()
    analyse_page(load_pages(files["png"][0])[0], template, used, header=False)  # type: ignore[arg-type]
    steps: dict[str, list[float]] = {}
    for _ in range(repeat):
        for key, paths in files.items():
            t0 = cpu_seconds()
            (image,) = load_pages(paths[0])
            t1 = cpu_seconds()
            _, analysis = analyse_page(image, template, used, header=key == "png", clock=cpu_seconds)  # type: ignore[arg-type]
            t2 = cpu_seconds()
            steps.setdefault(f"{key} decode", []).append(t1 - t0)
            header = analysis.timings.get("header", 0.0)
            steps.setdefault(f"{key} file to readings (no header)", []).append(t2 - t0 - header)
            if key == "png":
                for step, seconds in analysis.timings.items():
                    steps.setdefault(step, []).append(seconds)
    # A match read at once: tesseract starts once for all the pages' header text.
    for key, paths in files.items():
        t0 = cpu_seconds()
        read_pages(paths, template, used, header=True)  # type: ignore[arg-type]
        steps[f"{key} match of {len(paths)} pages, per page (header)"] = [(cpu_seconds() - t0) / len(paths)]
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
    figures: dict[str, Any] = {"machine": describe_host(),
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
                         f"arrow {pct('arrow_ok', 'boards'):6.2f}%  X {pct('cross_ok', 'boards'):6.2f}%  "
                         f"header digits {pct('header_number_ok', 'header_number'):6.2f}%")
            line += f"  header text {pct('header_text_ok', 'header_text'):6.2f}% of {stats.get('header_text', 0)}"
            print(line, flush=True)
            if reader is not None:
                for kind in KINDS:
                    print(f"  {kind:8} top-1 {pct(f'{kind}_top1', f'{kind}_cells'):6.2f}% of {stats.get(f'{kind}_cells', 0):5}"
                          f"  written top-1 {pct(f'{kind}_written_top1', f'{kind}_written'):6.2f}%"
                          f"  written top-3 {pct(f'{kind}_written_top3', f'{kind}_written'):6.2f}%"
                          f" of {stats.get(f'{kind}_written', 0):4}", flush=True)
        speed = _speed(folder, bank, reader, args.dpi, args.repeat)
        figures["speed_ms"] = speed
        print(figures["machine"])
        print(f"speed, {args.dpi}-dpi page, CPU ms (this process and tesseract), median of {args.repeat}:")
        for step, ms in speed.items():
            print(f"  {step:38} {ms:7.1f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    cv2.setNumThreads(1)
    main()

"""Cell by cell: what the point reader gets from a page placed by its markers and from the same page placed by a
fitted layout (``digitise layout`` + ``--template``, the lines path), and what it reads from each.

Rendered pages of digitise's own note (``bench_end_to_end.py``'s renders: the page JPEG, and beside it the
renderer's truth, which holds the page's true mm -> px map and what was written where) are located twice, by
their markers with the ``a4`` template and by their lines with a layout file. For every written point or off
square: how far each path's corners lie from the true corners (px), the cut's size, how far apart the two
paths' cell inks are, and which path reads the square right (the shipped reader, no adaptation to the writer).
Then the same squares are cut in mixed ways (one path's corners with the other's geometry, dots, closed edges)
so that what costs the lines path its reads shows up as the variant that loses them.

    .venv/bin/python benchmarks/lines_cut.py --pages /tmp/bph-medium36/optdigits/a4-medium/pages \\
        --layout /tmp/a4-fitted.json --matches 4

``--layout`` is made from one of the pages with ``digitise layout PAGE -o FILE`` when missing. ``--print NAME``
reads the pages of another print of ``bench_prints.py`` (no markers) instead: by their lines as ``scan`` finds
them (or by ``--layout``), their corners against the truth and what the reader reads (variants without markers).

The reads above are the reader's first (``scan`` then learns the writer's hand from the match's sure turns and
reads the rest again, or keeps the first reading when that contradicts a sure turn: see
:mod:`digitise.adaptation`). ``--outputs A B`` compares two batch outputs of the same pages after that, match by
match: written point and off squares misread, boards not read right, and whether the learned hand was kept.

    .venv/bin/python benchmarks/lines_cut.py --pages /tmp/bph-medium36/optdigits/a4-medium/pages \
        --outputs /tmp/bph-medium36/optdigits/a4-medium/out /tmp/a4-by-layout-out
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digitise.notation.template import BoardGeometry, Rect, Template, load_template, template_names
from digitise.vision import cells
from digitise.vision.analyse import cell_kind
from digitise.vision.cut import cell_ink
from digitise.vision.grid import BoardFit
from digitise.vision.images import iter_pages
from digitise.vision.locate import locate
from digitise.vision.page import project


@dataclass(frozen=True, slots=True)
class Placed:
    """One page located one way: its boards' fits and the template they are of."""

    boards: dict[int, BoardFit]
    template: Template
    method: str

    @property
    def geometry(self) -> dict[int, BoardGeometry]:
        """The template's boards by index."""
        return {b.index: b for b in self.template.boards}


def place(page: Any, template: Template | list[Template]) -> Placed:
    """``page`` located with ``template`` (markers, or its lines for a layout file; several: as ``scan`` does)."""
    fit, boards, _, _, chosen = locate(page, template)
    return Placed({b.index: b for b in boards}, chosen, fit.method)


def as_truth(placed: Placed, truth: dict[str, Any], own: Template) -> Placed:
    """``placed`` with its boards numbered as the truth's (``own``'s): each is the one nearest the true board."""
    to_px = np.asarray(truth["mm_to_px"], np.float64)
    boards, geometry = {}, placed.geometry
    for board in own.boards:
        centre = project(to_px, np.array([[c.x + c.w / 2, c.y + c.h / 2] for c in board.cells.values()])).mean(axis=0)
        index = min(placed.boards, key=lambda i: float(np.linalg.norm(
            placed.boards[i].crossings.reshape(-1, 2).mean(axis=0) - centre)))
        boards[board.index] = (placed.boards[index], replace(geometry[index], index=board.index))
    template = replace(placed.template, boards=tuple(g for _, g in boards.values()))
    return Placed({i: b for i, (b, _) in boards.items()}, template, placed.method)


def true_quad(truth: dict[str, Any], own: BoardGeometry, name: str) -> np.ndarray:
    """Where the renderer put cell ``name`` of our own note (image px, TL TR BR BL)."""
    r = own.cells[name]
    corners = np.array([[r.x, r.y], [r.x + r.w, r.y], [r.x + r.w, r.y + r.h], [r.x, r.y + r.h]])
    return project(np.asarray(truth["mm_to_px"], np.float64), corners)


def top(candidates: Any) -> tuple[int, ...]:
    """The most likely digits of a reading, sorted (point squares: the order does not matter)."""
    return tuple(sorted(candidates[0].digits)) if candidates else ()


def moved(board: BoardGeometry, like: BoardGeometry) -> BoardGeometry:
    """``board`` with ``like``'s locating dots, placed at the same spots relative to the nearest cell."""
    dots = []
    for dx, dy in like.dots:
        name = min(like.cells, key=lambda n: abs(like.cells[n].x + like.cells[n].w / 2 - dx)
                   + abs(like.cells[n].y + like.cells[n].h / 2 - dy) + (1e6 if n == "centre" else 0.0))
        a, b = like.cells[name], board.cells[name]
        dots.append((b.x + (dx - a.x) / a.w * b.w, b.y + (dy - a.y) / a.h * b.h))
    return replace(board, dots=tuple(dots))


def sized(board: BoardGeometry, like: BoardGeometry) -> BoardGeometry:
    """``board`` with every cell of ``like``'s size (its corners stay)."""
    return replace(board, cells=MappingProxyType({n: Rect(r.x, r.y, like.cells[n].w, like.cells[n].h)
                                                   for n, r in board.cells.items()}))


Variant = Callable[[np.ndarray, Placed, Placed, int, str, bool], np.ndarray]

#: name -> how a square is cut: (image, markers' placing, lines' placing, board, cell, lines closed) -> ink.
VARIANTS: dict[str, Variant] = {
    "markers": lambda im, m, l, i, n, c: cell_ink(im, m.boards[i].cell_quad(n), m.geometry[i], n),
    "lines": lambda im, m, l, i, n, c: cell_ink(im, l.boards[i].cell_quad(n), l.geometry[i], n, closed=c),
    "lines+dots": lambda im, m, l, i, n, c: cell_ink(
        im, l.boards[i].cell_quad(n), moved(l.geometry[i], m.geometry[i]), n, closed=c),
    "lines+open": lambda im, m, l, i, n, c: cell_ink(im, l.boards[i].cell_quad(n), l.geometry[i], n),
    "lines+own size": lambda im, m, l, i, n, c: cell_ink(
        im, l.boards[i].cell_quad(n), sized(l.geometry[i], m.geometry[i]), n, closed=c),
    "lines corners, markers geometry": lambda im, m, l, i, n, c: cell_ink(
        im, l.boards[i].cell_quad(n), m.geometry[i], n),
    "markers corners, lines geometry": lambda im, m, l, i, n, c: cell_ink(
        im, m.boards[i].cell_quad(n), l.geometry[i], n, closed=c),
}


def compare_outputs(pages: Path, outputs: list[Path]) -> None:
    """Per match of ``pages`` (a render with truth) batch ``outputs`` read: squares misread, boards not read right,
    and the writer's hand learned (A) or not (-); then the totals."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_end_to_end as e2e

    matches = sorted(set.intersection(*({p.name.removesuffix(".report.json") for p in out.glob("*.report.json")}
                                         for out in outputs)))
    totals: Counter[tuple[int, str]] = Counter()
    for match in matches:
        truths = e2e.board_truths(pages, match)
        row = []
        for k, out in enumerate(outputs):
            saved = e2e.saved_boards(out, match)
            squares = boards = 0
            for page, by_index in truths.items():
                for index, truth in by_index.items():
                    reading = saved.get((page, index))
                    boards += not e2e.board_read_right(reading, truth)
                    cells_read = (reading or {}).get("cells", {})
                    squares += sum(sorted(e2e._top(cells_read.get(name, []))) != sorted(want)
                                   for name, want in truth["cells"].items()
                                   if want and name != "centre" and not name.endswith("res"))
            adaptation = json.loads((out / f"{match}.report.json").read_text(encoding="utf-8")).get("adaptation", {})
            learned = "-" if adaptation.get("skipped") else "A"
            totals[(k, "squares")] += squares
            totals[(k, "boards")] += boards
            row.append(f"{squares:4d} squares {boards:4d} boards {learned}")
        print(f"{match}: " + "  |  ".join(row))
    print("total: " + "  |  ".join(f"{totals[(k, 'squares')]:4d} squares {totals[(k, 'boards')]:4d} boards"
                                    for k in range(len(outputs))))


def main(argv: list[str] | None = None) -> int:
    """Compare the two paths on the first ``--matches`` matches' pages; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, required=True, help="a render's pages folder (a4, with truth)")
    parser.add_argument("--layout", type=Path, help="layout file (made from the first page if missing)")
    parser.add_argument("--matches", type=int, default=2)
    parser.add_argument("--max-pages", type=int, default=0, help="pages a match at most (0: all)")
    parser.add_argument("--variants", default=";".join(VARIANTS), help="variants, separated by ;")
    parser.add_argument("--show", type=int, default=0, help="list this many squares read right one way only")
    parser.add_argument("--print", dest="print_name", help="pages of this other print (bench_prints.py's), no markers")
    parser.add_argument("--outputs", type=Path, nargs="+", help="instead: batch outputs of --pages to compare")
    args = parser.parse_args(argv)
    if args.outputs:
        compare_outputs(args.pages, args.outputs)
        return 0
    if args.layout is None and args.print_name is None:
        parser.error("--layout is needed (or --outputs, or --print)")
    matches = sorted(p.name for p in args.pages.iterdir() if p.is_dir() and not p.name.startswith("."))[:args.matches]
    if args.layout is not None and not args.layout.exists():
        from digitise.pipeline.layout import layout_to_file

        layout_to_file(args.pages / matches[0] / "page-001.jpg", args.layout)
    fitted: Template | list[Template]
    if args.print_name is None:
        own = load_template("a4")
    else:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_prints import print_of

        own = print_of(args.print_name)[0]
    fitted = load_template(args.layout) if args.layout is not None else [load_template(n) for n in template_names()]
    closed = True
    names = [v for v in args.variants.split(";") if v and (args.print_name is None or "markers" not in v
                                                           and "own size" not in v)]
    reader = cells.default_reader()
    right: Counter[str] = Counter()
    offsets: dict[str, list[float]] = {"markers": [], "lines": []}
    signed: dict[str, list[np.ndarray]] = {"markers": [], "lines": []}
    sizes: Counter[tuple[str, tuple[int, int]]] = Counter()
    differ: list[float] = []
    squares = 0
    only: list[str] = []
    farthest: list[tuple[float, str]] = []
    for match in matches:
        pages = sorted((args.pages / match).glob("page-*.jpg"))
        for path in pages[:args.max_pages or None]:
            page = next(iter(iter_pages(path)))
            number = int(path.stem.split("-")[1])
            truth = json.loads((args.pages / f".{match}.truth" / f"page-{number:03d}.truth.json").read_text())
            by_lines = place(page, fitted)
            by_markers = by_lines if args.print_name is not None else place(page, own)
            if args.print_name is not None:
                by_lines = by_markers = as_truth(by_lines, truth, own)
            closed = bool(by_lines.template.style.get("closed_edges", 0.0))
            jobs: list[tuple[str, str, tuple[int, ...], np.ndarray]] = []
            for board in truth["boards"]:
                index = board["index"]
                for name, want in board["cells"].items():
                    if name.endswith("res") or name == "centre" or not want:
                        continue
                    squares += 1
                    real = true_quad(truth, {b.index: b for b in own.boards}[index], name)
                    for key, placed in (("markers", by_markers), ("lines", by_lines)):
                        off = placed.boards[index].cell_quad(name) - real
                        offsets[key].append(float(np.abs(off).max()))
                        signed[key].append(off)
                        farthest.append((float(np.abs(off).max()), f"{key}: {match} p{number} b{index} {name}"))
                    label = f"{match} p{number} b{index} {name} {want}"
                    for variant in names:
                        ink = VARIANTS[variant](page.image, by_markers, by_lines, index, name, closed)
                        jobs.append((variant, label, tuple(sorted(want)), ink))
                    a, b = jobs[-len(names)][3], jobs[-len(names) + 1][3] if len(names) > 1 else jobs[-1][3]
                    sizes[("markers", a.shape)] += 1
                    sizes[("lines", b.shape)] += 1
                    if a.shape == b.shape:
                        differ.append(float(np.abs(a - b).mean()))
            results = reader.analyse_many([(ink, cell_kind("B1")) for _, _, _, ink in jobs])
            got: dict[str, dict[str, bool]] = {}
            for (variant, label, want, _), result in zip(jobs, results, strict=True):
                ok = top(result.candidates) == want
                right[variant] += ok
                got.setdefault(label, {})[variant] = ok
            for label, oks in got.items():
                if len(set(oks.values())) > 1 and len(only) < args.show:
                    only.append(f"  {label}: " + ", ".join(f"{v} {'right' if ok else 'wrong'}" for v, ok in oks.items()))
        print(f"{match}: {squares} squares so far", file=sys.stderr)
    print(f"written point/off squares: {squares} ({len(matches)} matches of {args.pages})")
    for key, values in offsets.items():
        if key == "markers" and args.print_name is not None:
            continue
        arr = np.array(values)
        print(f"corners from the truth, {key}: mean {arr.mean():.2f} px, 95th pct {np.percentile(arr, 95):.2f}, "
              f"max {arr.max():.2f}")
        mean = np.mean(signed[key], axis=0)
        print("  mean offset (x, y) px of TL TR BR BL: " + "  ".join(f"{x:+.2f},{y:+.2f}" for x, y in mean))
    if args.print_name is None:
        print("cut sizes:", dict(sizes.most_common(6)))
    if differ and args.print_name is None:
        print(f"mean |ink markers - ink lines| over same-size cuts: {np.mean(differ):.4f}")
    for variant in names:
        print(f"{variant:36s} misread {squares - right[variant]:4d} of {squares} "
              f"({100 * (squares - right[variant]) / max(squares, 1):.2f} %)")
    if args.show:
        print("farthest corners: " + "; ".join(f"{label} {px:.1f} px" for px, label in sorted(farthest)[::-1][:3]))
    if only:
        print("read right one way only:")
        print("\n".join(only))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

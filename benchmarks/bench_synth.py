"""Benchmark: synthetic pages rendered per second (``digitise synth``'s drawing and damage).

Renders a self-played 3-point match (seed 111, 39 boards, 5 pages) N times
at the given damage level, in memory (the page images and truth, without
writing files), after one warm-up run so the blank-page cache and the noise
field are built once, as in a long training-data run. Then times writing the
same pages to disk as PNG and JPEG.

    taskset -c 0 .venv/bin/python benchmarks/bench_synth.py --degrade medium --repeat 6
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2

# A sibling script, not a package: its folder is on sys.path when it runs.
from machine import describe as describe_host

from digitise.game.selfplay import SelfPlayOptions, play_match
from digitise.notation.template import load_template
from digitise.sheet.glyphs import DEFAULT_DIGITS, GlyphSubset, load_digit_glyphs
from digitise.sheet.handwriting import GlyphBank
from digitise.sheet.synth import encode_image, render_match_pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degrade", default="medium")
    parser.add_argument("--paper", default="a4")
    parser.add_argument("--repeat", type=int, default=6, help="renders of the 5-page match to time")
    parser.add_argument("--glyphs", type=Path, default=DEFAULT_DIGITS)
    args = parser.parse_args()

    template = load_template(args.paper)
    bank = GlyphBank(load_digit_glyphs(args.glyphs, GlyphSubset.TEST))
    match = play_match(111, SelfPlayOptions(length=3, players=("Ann", "Kato")))
    render_match_pages(match, template=template, seed=10_000, degrade=args.degrade, glyphs=bank)  # warm-up

    pages = 0
    dpis: list[int] = []
    start = time.perf_counter()
    for seed in range(args.repeat):
        rendered = render_match_pages(match, template=template, seed=seed, degrade=args.degrade, glyphs=bank)
        pages += len(rendered)
        dpis += [p.truth["dpi"] for p in rendered]
    elapsed = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        timings = {}
        for fmt in ("png", "jpg"):
            t0 = time.perf_counter()
            for k, page in enumerate(rendered):
                (Path(tmp) / f"{k}.{fmt}").write_bytes(encode_image(page.image, fmt, dpi=page.truth["dpi"]))
            timings[fmt] = (time.perf_counter() - t0) / len(rendered)

    print(f"{describe_host()}, cv2 threads {cv2.getNumThreads()}")
    print(f"level {args.degrade}, paper {args.paper}: {pages} pages in {elapsed:.2f} s = "
          f"{pages / elapsed:.2f} pages/s (mean {sum(dpis) / len(dpis):.0f} dpi, "
          f"{min(dpis)}-{max(dpis)})")
    print(f"encoding one page: PNG {timings['png'] * 1000:.0f} ms, JPEG {timings['jpg'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()

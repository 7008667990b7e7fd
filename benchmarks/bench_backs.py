"""How pages are told from their mirror images and from the backs of sheets in a two-sided scan.

Every page file given is located three ways, as ``digitise read`` locates
it (``vision.read.locate`` on the page as loaded, levelled when washed out):
as it is, which must be read; flipped left to right, a mirror-image photo,
which must be refused as mirrored; and as the back of its sheet
(``sheet.damage.back_of_sheet``), which must be refused, best as the back
of a sheet. Counts each outcome.

    .venv/bin/python benchmarks/bench_backs.py '/tmp/e2e-pc2/photocopy/pages/*/*.jpg' --show 0.15 --show 0.25
"""

from __future__ import annotations

import argparse
import glob
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from digitise.errors import PageError
from digitise.sheet.damage import back_of_sheet
from digitise.vision.images import PageImage, iter_pages, load_pages
from digitise.vision.read import MIRRORED, SHOW_THROUGH, locate, resolve_templates


def _outcome(page: PageImage) -> str:
    try:
        return "read (" + locate(page, resolve_templates(None))[0].method + ")"
    except PageError as error:
        if MIRRORED in error.message:
            return "refused: mirrored"
        if SHOW_THROUGH in error.message:
            return "refused: the back of a sheet"
        return "refused: " + error.message.rsplit(": ", 1)[-1][:60]


def _page(args: tuple[str, tuple[float, ...]]) -> list[tuple[str, str]]:
    path, shows = args
    rows = []
    for page in iter_pages(path):
        if not isinstance(page, PageImage):
            rows.append(("as it is", "unreadable file"))
            continue
        rows.append(("as it is", _outcome(page)))
        rows.append(("mirrored", _outcome(replace(page, image=np.ascontiguousarray(cv2.flip(page.image, 1))))))
        with tempfile.TemporaryDirectory() as folder:
            for show in shows:
                # Through a file, so the back is loaded (and levelled, being washed out) as a scan of it would be.
                back_file = Path(folder) / "back.png"
                cv2.imwrite(str(back_file), back_of_sheet(page.image, show))
                (back,) = load_pages(back_file)
                assert isinstance(back, PageImage)
                rows.append((f"back, {show:.0%} showing through", _outcome(back)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("patterns", nargs="+", help="page files (glob patterns)")
    parser.add_argument("--show", type=float, action="append", help="share of the front's darkness on its back")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    files = sorted({f for pattern in args.patterns for f in glob.glob(pattern) if not f.endswith(".json")})
    shows = tuple(args.show or (0.15, 0.25))
    with ProcessPoolExecutor(args.jobs) as pool:
        counts = Counter(row for rows in pool.map(_page, [(f, shows) for f in files]) for row in rows)
    print(f"{len(files)} files")
    for (kind, outcome), n in sorted(counts.items()):
        print(f"  {kind}: {outcome}: {n}")


if __name__ == "__main__":
    main()

"""The memory a ``batch -j 2`` of large pages holds at once, with the page memory its workers share.

Two matches of one large colour page each (a sample page scaled up to
``--megapixels``, JPEG) are converted with two workers, once with the
batch's own page memory (half the machine's) and once with ``--share-gb``
(less than two pages' peaks: the second page waits for the first). The
summed resident memory of the batch's processes is sampled every 20 ms;
its peak and the wall time are printed.

    .venv/bin/python benchmarks/bench_page_memory.py --megapixels 200 --share-gb 3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def pages(folder: Path, megapixels: float) -> Path:
    """Two one-page matches: a sample page scaled to ``megapixels``."""
    import cv2

    image = cv2.imread(str(ROOT / "samples" / "alice-bruno" / "light" / "page-001.jpg"))
    factor = (megapixels * 1e6 / (image.shape[0] * image.shape[1])) ** 0.5
    big = cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_LINEAR)
    scans = folder / "scans"
    for name in ("m1", "m2"):
        (scans / name).mkdir(parents=True)
        cv2.imwrite(str(scans / name / "page-001.jpg"), big, [cv2.IMWRITE_JPEG_QUALITY, 80])
    return scans


def peak_while(run: threading.Thread) -> int:
    """The most resident memory this process and its descendants held together while ``run`` ran."""
    me = psutil.Process()
    peak = 0
    while run.is_alive():
        total = 0
        for process in (me, *me.children(recursive=True)):
            try:
                total += process.memory_info().rss
            except psutil.Error:
                continue
        peak = max(peak, total)
        time.sleep(0.02)
    return peak


def convert(scans: Path, out: Path, share: int | None) -> tuple[float, int, list[str]]:
    from digitise.pipeline import PAGES_LOCK_NAME, ScanOptions, batch, batch_page_memory

    options = ScanOptions(adapt=False, page_memory=(out / PAGES_LOCK_NAME, share or batch_page_memory()))
    out.mkdir()
    statuses: list[str] = []
    start = time.perf_counter()
    thread = threading.Thread(target=lambda: statuses.extend(r.status for r in batch(scans, out, options,
                                                                                      jobs=2).results))
    thread.start()
    peak = peak_while(thread)
    thread.join()
    return time.perf_counter() - start, peak, statuses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megapixels", type=float, default=200.0)
    parser.add_argument("--share-gb", type=float, default=3.0)
    args = parser.parse_args()
    from digitise.pipeline import batch_page_memory

    work = Path(tempfile.mkdtemp(prefix="bench-page-memory-"))
    try:
        scans = pages(work, args.megapixels)
        for label, share in (("own", None), ("capped", int(args.share_gb * 1e9))):
            seconds, peak, statuses = convert(scans, work / f"out-{label}", share)
            memory = (share or batch_page_memory()) / 1e9
            print(f"{label:7} page memory {memory:5.1f} GB: {seconds:6.1f} s, peak of the batch's processes "
                  f"{peak / 1e9:5.2f} GB ({', '.join(statuses)})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

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


def _tree_rss(root: int) -> int:
    """Resident bytes of process ``root`` and all its descendants, from /proc (Linux)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21]) * page
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += [child for child, parent in parents.items() if parent == pid]
    return total


def peak_while(run: threading.Thread) -> int:
    """The most resident memory this process and its descendants held together while ``run`` ran."""
    peak = 0
    while run.is_alive():
        peak = max(peak, _tree_rss(os.getpid()))
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

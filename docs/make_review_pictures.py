"""Take the screenshots of docs/review.md: the review page in Chromium on a sample match (deterministic data).

    .venv/bin/python docs/make_review_pictures.py        (or scripts/make-docs-pictures)

The sample match samples/alice-bruno.mat is drawn at medium scan damage by ``digitise synth`` (seed 2, as
the bundled sample), converted by ``digitise scan``, and its review page opened in headless Chromium
through Playwright, as the review page's tests do: the first flagged turn as the page opens, then with a
square's name pointed at. Needs ../shared/data/digits.png, chromium and Playwright.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digitise.review.server import ReviewServer
from digitise.review.session import ReviewSession

PICTURES = ROOT / "docs" / "pictures"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def digitise(*args: str) -> None:
    """Run the digitise command line, as a user would (exit 1: turns flagged, what is wanted here)."""
    done = subprocess.run([sys.executable, "-m", "digitise.cli", *args], check=False, cwd=ROOT, capture_output=True,
                          text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"make_review_pictures: digitise {args[0]} failed: {done.stderr}")


def _save(source: Path, name: str) -> None:
    """The screenshot at 1200 px wide, in 256 colours (a page of flat colours loses nothing to see)."""
    from PIL import Image

    image = cv2.imread(str(source), cv2.IMREAD_COLOR)
    if image is None:
        raise SystemExit(f"make_review_pictures: no screenshot {source}")
    width = 1200
    image = cv2.resize(image, (width, round(image.shape[0] * width / image.shape[1])), interpolation=cv2.INTER_AREA)
    picture = Image.fromarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB)).quantize(256, dither=Image.Dither.NONE)
    picture.save(PICTURES / name, optimize=True)


def main() -> None:
    """Scan the sample, serve its review page and keep two pictures of it."""
    from playwright.sync_api import sync_playwright

    PICTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        digitise("synth", "samples/alice-bruno.mat", "-o", str(folder / "pages"), "--degrade", "medium", "--seed", "2",
                 "--dpi", "150", "--format", "jpg")
        pages = sorted(str(p) for p in (folder / "pages").glob("page-*.jpg"))
        report = folder / "alice-bruno.report.json"
        digitise("scan", *pages, "-o", str(folder / "alice-bruno.mat"), "--report", str(report))
        server = ReviewServer(ReviewSession(report), "127.0.0.1", 0)
        server.start_in_thread()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page(viewport={"width": 1500, "height": 980})
                page.goto(server.url)
                page.wait_for_selector("li.candidate")
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(folder / "turn.png"))
                page.locator("table.cells th[data-cell]").first.hover()
                page.wait_for_selector("#cell-mark:not([hidden])")
                page.locator("#readings-legend").scroll_into_view_if_needed()
                page.screenshot(path=str(folder / "legend.png"), full_page=True)
                browser.close()
        finally:
            server.shutdown()
            server.server_close()
        _save(folder / "turn.png", "review-turn.png")
        _save(folder / "legend.png", "review-legend.png")


if __name__ == "__main__":
    main()

"""The end-to-end benchmark written in real hands the readers never trained on, one writer a match.

``bench_end_to_end.py`` writes every match with one bank of MNIST's held-out
glyphs (``digits.png``'s ``GlyphSubset.TEST``): every page mixes a hundred
writers' digits. A real note is one writer's: few shapes of each digit, the
same habits all along. This renders the same matches (seeds, damage, writer
styles and random draws) with digits of hand sources no reader learned from
(``../shared/data/hands``, see :mod:`digitise.sheet.hands`): each match draws
its own writer (:func:`~digitise.sheet.hands.writer_glyphs` seeded by the
match's seed), a few exemplars of each digit, then goes through ``digitise
batch`` as the benchmark does. What it measures is the tool's promise in a
hand it never saw: a game it outputs is right or flagged.

    --hand usps|semeion|optdigits|mnist   the source (mnist: digits.png's held-out glyphs, one writer a match)
    --per-digit N                         exemplars of each digit a writer has (3)
    --hands DIR                           the hand sources (default ../shared/data/hands)
    --work DIR                            work folder; a hand's renders go to DIR/<hand> (DIR/<hand>-N with
                                          --per-digit N) and are reused
    --sheet FILE.png                      instead: a sheet of ten writers' glyphs (digits by row)
    --crops FILE.png                      instead: digits cut from the rendered pages (run the benchmark first)

Every other option is ``bench_end_to_end.py``'s (``--batch-args=--no-adapt`` passes options to the CLI).

```sh
.venv/bin/python benchmarks/bench_hands.py --hand usps --matches 12 --levels medium --skip-speed --seed-start 9200
```
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from digitise.notation.template import apply_homography, load_template
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.sheet.hands import HandSource, load_hand, writer_glyphs

#: The hand sources: name -> its files in the hands folder (mnist: ``digits.png``'s held-out glyphs).
HANDS: dict[str, tuple[str, ...]] = {
    "usps": ("usps_train.npz", "usps_test.npz"),
    "semeion": ("semeion.npz",),
    "optdigits": ("optdigits_orig_tra.npz",),
    "mnist": (),
}
HANDS_DIR = ROOT.parent / "shared" / "data" / "hands"
PER_DIGIT = 3
#: Set by :func:`main` before the render forks its workers: the source and exemplars a writer has.
_SOURCE: list[tuple[HandSource, int]] = []


def hand_source(hand: str, folder: Path = HANDS_DIR) -> HandSource:
    """The source ``hand`` (a key of :data:`HANDS`)."""
    if hand == "mnist":
        held_out = load_digit_glyphs(None, GlyphSubset.TEST)
        glyphs = [g for d in range(10) for g in held_out[d]]
        labels = np.array([d for d in range(10) for _ in held_out[d]], np.int64)
        return HandSource("mnist", tuple(glyphs), labels, None)
    return load_hand([folder / name for name in HANDS[hand]])


def missing_files(hand: str, folder: Path = HANDS_DIR) -> str | None:
    """Why ``hand`` cannot be drawn from ``folder`` (its files are not there), or None."""
    if hand != "mnist" and not all((folder / name).is_file() for name in HANDS[hand]):
        return f"the {hand} files {HANDS[hand]} are not in {folder}"
    return None


def write_with(source: HandSource, per_digit: int = PER_DIGIT) -> None:
    """Have every match :func:`bench_end_to_end.render` draws from now on written by its own writer of ``source``.

    The renderer runs in forked workers: they inherit what is set here.
    """
    import bench_end_to_end

    _SOURCE[:] = [(source, per_digit)]
    bench_end_to_end.match_glyphs = match_writer


def match_writer(index: int, seed_start: int) -> dict[int, list[np.ndarray]]:
    """The index-th match's writer: its glyphs, drawn with the match's seed."""
    source, per_digit = _SOURCE[0]
    return writer_glyphs(source, np.random.default_rng(seed_start + index), per_digit)


def glyph_sheet(source: HandSource, target: Path, per_digit: int, writers: int = 10) -> None:
    """Ten writers' exemplars side by side (a row per digit), dark on light, twice the size."""
    drawn = [writer_glyphs(source, np.random.default_rng(seed), per_digit) for seed in range(writers)]
    box = source.glyphs[0].shape
    rows = []
    for digit in range(10):
        cells = []
        for hand in drawn:
            got = hand[digit] + [np.zeros(box, np.uint8)] * (per_digit - len(hand[digit]))
            cells.append(np.pad(np.hstack(got), ((1, 1), (1, 3)), constant_values=90))
        rows.append(np.hstack(cells))
    sheet = 255 - np.vstack(rows)
    cv2.imwrite(str(target), cv2.resize(sheet, None, fx=2, fy=2, interpolation=cv2.INTER_NEAREST))


def page_crops(render_dir: Path, target: Path, count: int = 30, size: int = 96) -> int:
    """Up to ``count`` written squares cut from the rendered pages of ``render_dir`` into one sheet; how many."""
    template = load_template("a4")
    crops: list[np.ndarray] = []
    for truth_file in sorted(render_dir.glob(".*.truth/page-*.truth.json")):
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        page = render_dir / truth_file.parent.name[1:-len(".truth")] / f"{truth_file.name.split('.')[0]}.jpg"
        image = cv2.imread(str(page), cv2.IMREAD_GRAYSCALE)
        if image is None:
            continue
        matrix = np.asarray(truth["mm_to_px"], np.float64)
        for board in truth["boards"]:
            for name, digits in board["cells"].items():
                rect = template.board(board["index"]).cells[name].inset(-1.0)
                if not digits or len(crops) >= count or rect.w > 2 * rect.h:  # not the long centre strip
                    continue
                corners = apply_homography(matrix, list(rect.corners))
                x0, y0 = np.floor(corners.min(axis=0)).astype(int)
                x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
                cut = image[max(y0, 0):y1, max(x0, 0):x1]
                if cut.size:
                    scale = size / max(cut.shape)
                    cut = cv2.resize(cut, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
                    crops.append(np.pad(cut, ((2, size + 2 - cut.shape[0]), (2, size + 2 - cut.shape[1])),
                                        constant_values=128))
        if len(crops) >= count:
            break
    if crops:
        crops += [np.full_like(crops[0], 128)] * (-len(crops) % 10)
        cv2.imwrite(str(target), np.vstack([np.hstack(crops[i:i + 10]) for i in range(0, len(crops), 10)]))
    return len(crops)


def main(argv: list[str]) -> int:
    """The benchmark in one hand (or, with ``--sheet`` / ``--crops``, pictures of it)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--hand", choices=sorted(HANDS), required=True)
    parser.add_argument("--per-digit", type=int, default=PER_DIGIT)
    parser.add_argument("--hands", type=Path, default=HANDS_DIR)
    parser.add_argument("--work", type=Path, default=Path("/tmp/digitise-bench-hands"))
    parser.add_argument("--sheet", type=Path)
    parser.add_argument("--crops", type=Path)
    own, rest = parser.parse_known_args(argv)
    work = own.work / (own.hand if own.per_digit == PER_DIGIT else f"{own.hand}-{own.per_digit}")
    if own.crops is not None:
        level = next((p.parent.name for p in sorted(work.glob("*/pages")) if p.parent.name != "speed"), None)
        found = page_crops(work / level / "pages", own.crops) if level else 0
        print(f"bench_hands: {found} cells cut into {own.crops}", file=sys.stderr)
        return 0 if found else 1
    missing = missing_files(own.hand, own.hands)
    if missing is not None:
        print(f"bench_hands: {missing}", file=sys.stderr)
        return 2
    source = hand_source(own.hand, own.hands)
    if own.sheet is not None:
        glyph_sheet(source, own.sheet, own.per_digit)
        return 0
    write_with(source, own.per_digit)
    import bench_end_to_end

    result: int = bench_end_to_end.main([*rest, "--work", str(work)])
    return result


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Training cells for the whole-cell reader: exactly what the reader sees, labelled from the truth.

Self-played matches (seeds below 9000 only: 9000 up are the benchmarks'
held-out matches) are rendered as filled, damaged pages with TRAIN glyphs
(:func:`digitise.sheet.synth.render_match_pages`), passed through JPEG as
scans are, and read back by the real page code (:func:`analyse_page`, with
an analyser that only records what it is handed). Every point, off and
centre cell cut from a page is labelled from the page's truth: the count of
each dice value written there, and whether the centre's digits are crossed,
the centre holds an arrow, or the cell holds letters (a names board). A cell
cut but empty in the truth (residue, a stroke spilled over from a
neighbour) is labelled empty.

numpy and OpenCV only: no torch here.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from digitise.errors import PageError
from digitise.game.selfplay import SelfPlayOptions, play_match
from digitise.notation.encode import encode_match
from digitise.notation.marks import BOARDS_PER_PAGE, BoardMarks
from digitise.notation.readings import CellReading
from digitise.notation.template import load_template
from digitise.sheet.damage import Degrade
from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs
from digitise.sheet.handwriting import GlyphBank
from digitise.sheet.synth import encode_image, header_fields, render_match_pages, render_page
from digitise.training.train import split_validation
from digitise.vision.cellnet import MAX_COUNT, VALUES, prepare
from digitise.vision.cells import CellAnalysis
from digitise.vision.images import PageImage
from digitise.vision.read import analyse_page

#: Seeds the training may use (9000 up are the benchmarks' held-out matches).
SEED_LIMIT = 9000
LEVELS = ("light", "medium", "medium", "heavy", "photocopy")
LEVEL_NAMES = ("light", "medium", "heavy", "photocopy")
LENGTHS = (1, 3, 3, 5, 7)


@dataclass(frozen=True, slots=True)
class CellSamples:
    """Labelled model inputs of one kind (point squares or the centre strip)."""

    #: N x H x W uint8 (ink x 255, to keep tens of thousands in memory).
    inputs: np.ndarray
    #: N x len(VALUES): how many times each value is written (0..MAX_COUNT).
    counts: np.ndarray
    #: N x 3: letters, crossed, arrow (0/1).
    marks: np.ndarray
    #: N: the damage level of the page (index into LEVELS' names, for figures).
    levels: np.ndarray

    def __len__(self) -> int:
        return len(self.inputs)


class _Recorder:
    """A cell analyser that reads nothing: analyse_page then hands back every cell it cut."""

    def analyse_many(self, cells: Sequence[tuple[np.ndarray, Any]]) -> list[Any]:
        return [CellAnalysis((CellReading((), 1.0),), 0.0, 0.0, 0.0) for _ in cells]


def label(board: Mapping[str, Any], name: str) -> tuple[np.ndarray, np.ndarray]:
    """Counts per value and (letters, crossed, arrow) of cell ``name`` from a truth board."""
    counts = np.zeros(len(VALUES), np.int64)
    for d in board["cells"].get(name, ()):
        if d in VALUES:
            counts[VALUES.index(d)] += 1
    counts = np.minimum(counts, MAX_COUNT)
    # A names board writes nothing but the names, which run on over the neighbouring squares.
    letters = bool(board.get("letters")) and name not in board["cells"]
    centre = name == "centre"
    marks = np.array([letters, centre and bool(board["crossed"]), centre and bool(board["arrow"])], np.int64)
    return counts, marks


#: Which boards a match renders when only some are wanted (:func:`match_cells`). Centres: unplayable
#: dice, a double's arrow. Multi: squares of two or more digits (a bear-off's off square, a doublet's
#: landing point), which the reader gets wrong three to ten times as often as a single digit.
BOARD_SELECTIONS: dict[str, Callable[[BoardMarks], bool]] = {
    "centre": lambda marks: "centre" in marks.cells or marks.arrow or marks.crossed,
    "multi": lambda marks: any(len(digits) >= 2 for name, digits in marks.cells.items() if name != "centre"),
}


def match_cells(args: tuple[int, str, bool, str, str | None]) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Render one match, read its pages back, label every point/off/centre cell cut: (kind, input, counts, marks).

    With ``only`` (the last of ``args``) only some of the match's boards are
    rendered, eight a page: ``"centre"``, those with a written centre;
    ``"multi"``, those with a point or off square holding two digits or more.
    """
    seed, level, names, subset_key, only = args
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"training seeds must be below {SEED_LIMIT} (the benchmarks' matches), got {seed}")
    bank = _bank(subset_key)
    template = load_template("a4" if seed % 4 else "letter")
    match = play_match(seed, SelfPlayOptions(length=LENGTHS[seed % len(LENGTHS)], players=("Ann", "Kato")))
    if only is not None:
        # Only the boards that hold the rare cells, eight a page: a match has few of them, and a page
        # costs the same to render and read however full.
        if only not in BOARD_SELECTIONS:
            raise ValueError(f"unknown board selection {only!r}")
        chosen = [b for b in encode_match(match) if BOARD_SELECTIONS[only](b.marks)]
        header = header_fields(match)
        pages = [render_page(list(enumerate(chosen[k:k + BOARDS_PER_PAGE], 1)), page=k // BOARDS_PER_PAGE + 1,
                             header=header, template=template, seed=seed, degrade=Degrade(level), bank=bank)
                 for k in range(0, len(chosen), BOARDS_PER_PAGE)]
    else:
        pages = render_match_pages(match, template=template, seed=seed, degrade=level, glyphs=bank,
                                   names_boards=names)
    out: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
    for page in pages:
        # Through JPEG, as scans come (the benchmarks' pages are JPEG too).
        data = encode_image(page.image, "jpg", dpi=page.truth["dpi"])
        image = np.asarray(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED))
        try:
            _, analysis = analyse_page(PageImage(f"seed{seed}", page.number, image, float(page.truth["dpi"])),
                                       template, _Recorder(), header=False)
        except PageError:  # a page the locator misses gives no cells (none did in the shipped data)
            continue
        boards = {b["index"]: b for b in page.truth["boards"]}
        for cell in analysis.cells:
            if cell.name in ("Bres", "Wres") or cell.board not in boards:
                continue
            counts, marks = label(boards[cell.board], cell.name)
            centre = cell.name == "centre"
            x = prepare(cell.ink, centre)
            out.append(("centre" if centre else "point", np.round(x * 255).astype(np.uint8), counts, marks))
    return out


_BANKS: dict[str, GlyphBank] = {}


def _bank(key: str) -> GlyphBank:
    """The glyph bank of a part of the TRAIN glyphs: ``fit`` (first 90 %) or ``val`` (last 10 %)."""
    cache_key = f"{key}:{_GLYPHS_SOURCE}"
    if cache_key not in _BANKS:
        fit, val = split_validation(load_digit_glyphs(_GLYPHS_SOURCE, GlyphSubset.TRAIN))
        _BANKS[cache_key] = GlyphBank(fit if key == "fit" else val)
    return _BANKS[cache_key]


_GLYPHS_SOURCE: Any = None


def _init(source: Any) -> None:
    global _GLYPHS_SOURCE
    _GLYPHS_SOURCE = source


def generate(seeds: Sequence[int], subset_key: str, *, only: str | None = None, glyphs: Any = None, jobs: int = 2,
             progress: Any = None) -> dict[str, CellSamples]:
    """Labelled cells of the matches of ``seeds`` (deterministic whatever ``jobs``), by kind.

    ``subset_key``: ``fit`` or ``val``, which part of the TRAIN glyphs writes
    them. The damage level and whether names boards are written follow from
    the seed; ``only`` (which boards): see :func:`match_cells`.
    """
    tasks = [(int(s), LEVELS[int(s) % len(LEVELS)], int(s) % 7 == 0, subset_key, only) for s in seeds]
    parts: list[list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]] = []
    if jobs > 1:
        # forkserver, not fork: a process that has started torch's or onnxruntime's threads can
        # deadlock its forked children (as the batch avoids too).
        with multiprocessing.get_context("forkserver").Pool(jobs, initializer=_init, initargs=(glyphs,)) as pool:
            for k, part in enumerate(pool.imap(match_cells, tasks, chunksize=1)):
                parts.append(part)
                if progress is not None:
                    progress(k + 1, len(tasks))
    else:
        _init(glyphs)
        for k, task in enumerate(tasks):
            parts.append(match_cells(task))
            if progress is not None:
                progress(k + 1, len(tasks))
    out: dict[str, CellSamples] = {}
    for kind in ("point", "centre"):
        rows = [(x, c, m, LEVEL_NAMES.index(task[1])) for part, task in zip(parts, tasks, strict=True)
                for k, x, c, m in part if k == kind]
        shape = rows[0][0].shape if rows else (1, 1)
        out[kind] = CellSamples(
            np.stack([r[0] for r in rows]) if rows else np.zeros((0, *shape), np.uint8),
            np.stack([r[1] for r in rows]) if rows else np.zeros((0, len(VALUES)), np.int64),
            np.stack([r[2] for r in rows]) if rows else np.zeros((0, 3), np.int64),
            np.array([r[3] for r in rows], np.int64),
        )
    return out



"""Draw the pictures of docs/notation.md and write their captions into it (deterministic).

    .venv/bin/python docs/make_pictures.py        (or scripts/make-docs-pictures)

The filled boards are drawn by ``digitise synth`` from the sample match
``samples/alice-bruno.mat`` (clean, no scan damage, 200 dpi, the held-out
handwritten digits of ``../shared/data/digits.png``). Boards are picked by
what they show (an opening move, a hit, a dance, a double, a bear-off, a
drop) and each is captioned with the ``.mat`` lines it becomes, taken from
the sample's own ``.mat``. The blank corner of the note comes from
``digitise template``. Pictures go to ``docs/pictures/``; the captions
replace the block between the ``boards`` markers of ``docs/notation.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from digitise.game.position import Side
from digitise.game.record import ActionKind, GameRecord, MatchRecord
from digitise.notation.mat import format_mat, read_mat_strict
from digitise.notation.template import load_template

MATCH = ROOT / "samples" / "alice-bruno.mat"
PICTURES = ROOT / "docs" / "pictures"
NOTATION = ROOT / "docs" / "notation.md"
DPI = 200
#: Paper kept around a board's cells in its picture (mm): the point numbers and the board's index.
AROUND_MM = 4.0
START, END = "<!-- boards: made by docs/make_pictures.py -->", "<!-- end of boards -->"


def digitise(*args: str) -> None:
    """Run the digitise command line, as a user would."""
    subprocess.run([sys.executable, "-m", "digitise.cli", *args], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def action_lines(game: GameRecord) -> list[int]:
    """The number of the .mat line each action of ``game`` is written on (gnubg's two columns)."""
    numbers, number, left_open = [], 0, False
    for action in game.actions:
        if action.kind is ActionKind.RESIGN:
            numbers.append(number)
            continue
        if action.player is Side.BOTTOM:
            number, left_open = number + 1, True
        elif not left_open:
            number += 1
        else:
            left_open = False
        numbers.append(number)
    return numbers


def mat_lines(match: MatchRecord) -> dict[tuple[int, int], str]:
    """The numbered move lines of the .mat, by (game, line number)."""
    lines: dict[tuple[int, int], str] = {}
    game = 0
    for line in format_mat(match).splitlines():
        if line.startswith(" Game "):
            game = int(line.split()[1])
        elif line[:3].strip().isdigit() and line[3:4] == ")":
            lines[(game, int(line[:3]))] = line.rstrip()
    return lines


def _board_picture(page: np.ndarray, mm_to_px: np.ndarray, template: Any, index: int) -> np.ndarray:
    cells = template.board(index).cells
    x0 = min(r.x for r in cells.values()) - AROUND_MM
    y0 = min(r.y for r in cells.values()) - AROUND_MM
    x1 = max(r.right for r in cells.values()) + AROUND_MM
    y1 = max(r.bottom for r in cells.values()) + AROUND_MM
    corners = cv2.perspectiveTransform(np.array([[[x0, y0], [x1, y1]]], np.float64), mm_to_px)[0]
    (a, b), (c, d) = np.round(corners).astype(int)
    return page[b:d, a:c]


def _read(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    if image is None:
        raise SystemExit(f"make_pictures: cannot read {path}")
    return image


def _save(name: str, image: np.ndarray) -> str:
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    ok, data = cv2.imencode(".png", grey, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    assert ok
    (PICTURES / name).write_bytes(data.tobytes())
    return f"pictures/{name}"


#: What each picked board shows: a caption's heading, and the test a board (truth, its actions) must pass.
Picker = Callable[[dict[str, Any], list[Any], list[str]], bool]
PICKS: tuple[tuple[str, str, Picker], ...] = (
    ("opening", "The opening move",
     lambda board, actions, lines: board["game"] == 1 and 0 in board["actions"]),
    ("hit", "A hit (nothing marks it: replay shows it)",
     lambda board, actions, lines: any(a.kind is ActionKind.MOVE and a.play is not None and "*" in line
                                        for a, line in zip(actions, lines, strict=True))),
    ("bar", "Entering from the bar",
     lambda board, actions, lines: any("25/" in line for line in lines)),
    ("double", "A double, taken",
     lambda board, actions, lines: bool(board["arrow"]) and any(a.kind is ActionKind.TAKE for a in actions)),
    ("dance", "A dance: dice that cannot be played, crossed out",
     lambda board, actions, lines: bool(board["crossed"]) and list(board["cells"]) == ["centre"]),
    ("drop", "A redouble, dropped: the points won in the result square",
     lambda board, actions, lines: any(a.kind is ActionKind.DROP for a in actions)),
    ("bear-off", "Bearing off",
     lambda board, actions, lines: any(name in ("Woff", "Boff") for name in board["cells"])),
)


def main() -> None:
    """Draw every picture and rewrite the captions block of docs/notation.md."""
    PICTURES.mkdir(parents=True, exist_ok=True)
    template = load_template("a4")
    match = read_mat_strict(MATCH)
    numbered = mat_lines(match)
    with tempfile.TemporaryDirectory() as work:
        pages_dir = Path(work) / "pages"
        digitise("synth", str(MATCH), "-o", str(pages_dir), "--degrade", "none", "--seed", "1", "--dpi", str(DPI),
                 "--format", "png")
        blank = Path(work) / "blank.png"
        digitise("template", "--paper", "a4", "-o", str(blank), "--dpi", str(DPI))
        blank_image = _read(blank)
        s = DPI / 25.4
        # The top-left corner of the blank note: header, legend, board 1 with its point numbers.
        first = template.board(1)
        right = first.cells["Boff"].right + 2
        bottom = first.cells["W1"].bottom + 4
        _save("blank-corner.png", blank_image[0:round(bottom * s), 0:round(right * s)])
        pages = sorted(pages_dir.glob("page-*.png"))
        truths = [json.loads(p.with_suffix("").with_suffix(".truth.json").read_text()) for p in pages]
        images = [_read(p) for p in pages]
        # The whole first page, small: what a filled note looks like.
        page1 = images[0]
        width = 1400
        small = cv2.resize(page1, (width, round(page1.shape[0] * width / page1.shape[1])), interpolation=cv2.INTER_AREA)
        _save("filled-page.png", small)
        sections = [START, ""]
        taken: set[tuple[int, int]] = set()
        for key, heading, wanted in PICKS:
            found = None
            for truth, image in zip(truths, images, strict=True):
                for board in truth["boards"]:
                    game = match.games[board["game"] - 1]
                    numbers = action_lines(game)
                    actions = [game.actions[i] for i in board["actions"]]
                    lines = [numbered.get((board["game"], numbers[i]), "") for i in board["actions"]]
                    place = (truth["page"], board["index"])
                    if place not in taken and actions and wanted(board, actions, lines):
                        found = (truth, image, board, game, numbers)
                        break
                if found:
                    break
            if found is None:
                raise SystemExit(f"make_pictures: no board of {MATCH.name} shows {key}")
            truth, image, board, game, numbers = found
            taken.add((truth["page"], board["index"]))
            picture = _board_picture(image, np.array(truth["mm_to_px"]), template, board["index"])
            path = _save(f"board-{key}.png", picture)
            line_numbers = sorted({numbers[i] for i in board["actions"]})
            text = "\n".join(numbered[(board["game"], n)] for n in line_numbers)
            who = [("White" if game.actions[i].player is Side.BOTTOM else "Black") + "'s "
                   + game.actions[i].kind.value for i in board["actions"]]
            written = ", ".join(f"\"{''.join(map(str, digits))}\" in `{name}`" for name, digits in board["cells"].items())
            marks = [m for m, on in (("crossed out", board["crossed"]), ("an arrow", board["arrow"])) if on]
            sections += [
                f"### {heading}",
                "",
                f"![{heading}: game {board['game']}, page {truth['page']}, board {board['index']}]({path})",
                "",
                f"Game {board['game']}, page {truth['page']}, board {board['index']}: "
                f"{' and '.join(who)}. Written: {written or 'nothing in the squares'}"
                f"{'; ' + ' and '.join(marks) if marks else ''}. "
                "The `.mat` line" + ("s" if len(line_numbers) > 1 else "") + " it becomes:",
                "",
                "```",
                text,
                "```",
                "",
            ]
        sections.append(END)
    document = NOTATION.read_text(encoding="utf-8")
    head, _, rest = document.partition(START)
    _, _, tail = rest.partition(END)
    NOTATION.write_text(head + "\n".join(sections) + tail, encoding="utf-8")


if __name__ == "__main__":
    main()

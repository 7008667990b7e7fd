"""A backgammon position drawn as a small SVG diagram, laid out like the note.

The layout follows the recording note (NOTATION.md): the bottom player (White)
has its home board at the bottom right, the top player (Black) at the top
right, the bar between the 7 and 6 points, the off trays on the right. The
points carry the numbers of one chosen player (the mover, whose numbering a
typed move uses), so a reviewer can read a play straight off the picture.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from digitise.game.position import BAR, OFF, Position, Side

#: Geometry, in SVG user units.
POINT_W = 22
POINT_H = 100
BAR_W = 26
TRAY_W = 30
MARGIN = 16
GAP = 26
RADIUS = 10
STACK = 5

_WIDTH = MARGIN * 2 + POINT_W * 12 + BAR_W + TRAY_W
_HEIGHT = MARGIN * 2 + POINT_H * 2 + GAP + 14
_FILL = {Side.BOTTOM: "#f6f1e3", Side.TOP: "#2b2b2b"}
_INK = {Side.BOTTOM: "#2b2b2b", Side.TOP: "#f6f1e3"}


def _bottom_point(side: Side, point: int) -> int:
    """``side``'s point ``point`` in the bottom player's numbering."""
    return point if side is Side.BOTTOM else 25 - point


def _point_x(bottom_point: int) -> float:
    """Left edge of the column of a point given in the bottom player's numbering."""
    # Bottom row: 12..1 left to right; top row: 13..24 left to right.
    column = 12 - bottom_point if bottom_point <= 12 else bottom_point - 13
    x = MARGIN + column * POINT_W
    return x + BAR_W if column >= 6 else x


def _stack(cx: float, base_y: float, direction: int, count: int, side: Side, css: str) -> list[str]:
    """Checkers piled from ``base_y`` towards the centre; a count on the last when over five."""
    parts = []
    for i in range(min(count, STACK)):
        cy = base_y + direction * (RADIUS + 2 * RADIUS * i)
        parts.append(
            f'<circle class="checker {css}" cx="{cx:g}" cy="{cy:g}" r="{RADIUS - 0.5:g}" '
            f'fill="{_FILL[side]}" stroke="#555" stroke-width="1"/>'
        )
    if count > STACK:
        cy = base_y + direction * (RADIUS + 2 * RADIUS * (STACK - 1))
        parts.append(
            f'<text x="{cx:g}" y="{cy + 4:g}" text-anchor="middle" font-size="11" '
            f'font-weight="bold" fill="{_INK[side]}">{count}</text>'
        )
    return parts


def board_svg(
    position: Position,
    mover: Side,
    *,
    numbers_for: Side | None = None,
    highlight: Iterable[int] = (),
    title: str | None = None,
) -> str:
    """The SVG of ``position``, in which ``mover``'s checkers are ``position.mine``.

    ``numbers_for`` chooses whose point numbers label the points (the mover's
    by default); ``highlight`` marks points (in the mover's numbering, 0 for
    off) such as the landing squares of a play; ``title`` is a caption.
    """
    numbering = numbers_for or mover
    owner_of = {mover: position.mine, mover.opponent: position.theirs}
    marked = {_bottom_point(mover, p) for p in highlight if 1 <= p <= 24}
    off_marked = OFF in set(highlight)
    parts = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" class="board" viewBox="0 0 {_WIDTH} {_HEIGHT}" '
        f'width="{_WIDTH}" height="{_HEIGHT}" role="img">'),
    ]
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    board_right = MARGIN + 12 * POINT_W + BAR_W
    parts.append(
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{board_right - MARGIN}" height="{2 * POINT_H + GAP}" '
        'fill="#d9c59a" stroke="#5a4632" stroke-width="2"/>'
    )
    bar_x = MARGIN + 6 * POINT_W
    parts.append(
        f'<rect class="bar" x="{bar_x}" y="{MARGIN}" width="{BAR_W}" height="{2 * POINT_H + GAP}" fill="#8a6a45"/>'
    )
    tray_x = board_right + 4
    for y in (MARGIN, MARGIN + POINT_H + GAP):
        parts.append(
            f'<rect class="tray" x="{tray_x}" y="{y}" width="{TRAY_W - 6}" height="{POINT_H}" '
            'fill="#efe6cf" stroke="#5a4632"/>'
        )
    top_y, bottom_y = MARGIN, MARGIN + 2 * POINT_H + GAP
    for bp in range(1, 25):
        x = _point_x(bp)
        on_top = bp >= 13
        base, tip = (top_y, top_y + POINT_H) if on_top else (bottom_y, bottom_y - POINT_H)
        colour = "#a4452c" if bp % 2 else "#f3ead2"
        stroke = ' stroke="#e0a400" stroke-width="3"' if bp in marked else ""
        css = "point marked" if bp in marked else "point"
        parts.append(
            f'<polygon class="{css}" data-point="{bp}" points="{x},{base} {x + POINT_W},{base} '
            f'{x + POINT_W / 2:g},{tip}" fill="{colour}"{stroke}/>'
        )
        label = bp if numbering is Side.BOTTOM else 25 - bp
        label_y = top_y - 4 if on_top else bottom_y + 12
        parts.append(
            f'<text x="{x + POINT_W / 2:g}" y="{label_y}" text-anchor="middle" font-size="9" '
            f'fill="#444">{label}</text>'
        )
    for side, checkers in owner_of.items():
        css = side.value
        for p in range(1, 25):
            if checkers[p]:
                bp = _bottom_point(side, p)
                cx = _point_x(bp) + POINT_W / 2
                base, direction = (top_y, 1) if bp >= 13 else (bottom_y, -1)
                parts.extend(_stack(cx, base, direction, checkers[p], side, css))
        if checkers[BAR]:
            # A player's bar checkers wait beside the row where they enter.
            cx = bar_x + BAR_W / 2
            if side is Side.BOTTOM:
                parts.extend(_stack(cx, top_y + POINT_H, -1, checkers[BAR], side, css + " on-bar"))
            else:
                parts.extend(_stack(cx, bottom_y - POINT_H, 1, checkers[BAR], side, css + " on-bar"))
        if checkers[OFF]:
            tray_top = MARGIN + POINT_H + GAP if side is Side.BOTTOM else MARGIN
            height = min(checkers[OFF], 15) * 6
            y = tray_top + POINT_H - height - 2 if side is Side.BOTTOM else tray_top + 2
            stroke = "#e0a400" if off_marked and side is mover else "#555"
            parts.append(
                f'<rect class="off {css}" x="{tray_x + 3}" y="{y}" width="{TRAY_W - 12}" height="{height}" '
                f'fill="{_FILL[side]}" stroke="{stroke}"/>'
            )
            parts.append(
                f'<text x="{tray_x + (TRAY_W - 6) / 2:g}" y="{tray_top + POINT_H / 2 + 4:g}" '
                f'text-anchor="middle" font-size="10" fill="#222">{checkers[OFF]}</text>'
            )
    pips = {mover: position.pip_count[0], mover.opponent: position.pip_count[1]}
    parts.append(
        f'<text x="{MARGIN}" y="{_HEIGHT - 2}" font-size="9" fill="#333">'
        f"pips: bottom {pips[Side.BOTTOM]}, top {pips[Side.TOP]}; "
        f"{escape(mover.value)} on roll; numbers: {escape(numbering.value)}'s</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts)

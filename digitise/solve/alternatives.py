"""The alternatives a report shows for a board: the other decisions the search weighed, ranked, each with the
marks-and-rules comparison that put it below the one taken."""

from __future__ import annotations

import math

from digitise.solve.nodes import Node, Summary
from digitise.solve.paths import decisions

#: A difference (nats) worth a word among a candidate's reasons: less than twice as likely is not.
NOTEWORTHY = math.log(2.0)


def _times(nats: float) -> str:
    """A likelihood ratio for people: 2.5x, 40x, over 1000x."""
    ratio = math.exp(min(abs(nats), 50.0))
    if ratio >= 1000.0:
        return "over 1000x"
    return f"{ratio:.0f}x" if ratio >= 10.0 else f"{ratio:.1f}x"


def _compared(mine: tuple[float, float, float], mine_final: float,
              other: tuple[float, float, float], other_final: float, moves: bool) -> tuple[str, ...]:
    """How one explanation of a board compares with another, biggest difference first.

    The final scores' difference splits into the board's own fit of the marks,
    the roll's prior and the way its unplayed dice are written, the play
    prior, and the rest: how well the later boards fit what each leads to.
    Rolls and plays are compared only between two ``moves``: a blank board
    or a double has neither.
    """
    (local_m, fit_m, prior_m), (local_o, fit_o, prior_o) = mine, other
    board = (local_m + prior_m) - (local_o + prior_o)
    total = mine_final - other_final
    terms = [
        (fit_m - fit_o, "marks fit {} better", "marks fit {} worse"),
        (total - board, "later boards fit {} better", "later boards fit {} worse"),
    ]
    rest = (local_m - fit_m + prior_m) - (local_o - fit_o + prior_o)
    if moves:
        terms += [((local_m - fit_m) - (local_o - fit_o), "roll as written {} likelier", "roll as written {} less likely"),
                  (prior_m - prior_o, "{} likelier play", "weaker play ({} less likely)")]
    else:
        # A move against a blank board or a double: the move's roll and play odds have no counterpart,
        # but they are part of the difference (the factors said multiply out to the odds).
        terms.append((rest, "{} likelier on the other odds", "{} less likely on the other odds"))
    said = sorted((t for t in terms if abs(t[0]) >= NOTEWORTHY), key=lambda t: -abs(t[0]))
    if said:
        return tuple((better if d > 0 else worse).format(_times(d)) for d, better, worse in said)
    if abs(total) >= NOTEWORTHY:
        return (f"{_times(total)} likelier overall" if total > 0 else f"{_times(total)} less likely overall",)
    return ("about as likely on every count",)


def alternatives(node: Node, limit: int = 4) -> list[tuple[Summary, float]]:
    """The best decisions for ``node``'s board, with probabilities among them."""
    return _ranked(decisions(node), limit)


def _ranked(weighed: dict[Summary, float], limit: int) -> list[tuple[Summary, float]]:
    """The ``limit`` best of :func:`decisions`, their final scores made probabilities among them."""
    ranked = sorted(weighed.items(), key=lambda kv: -kv[1])[:limit]
    top = ranked[0][1] if ranked else 0.0
    weights = [math.exp(max(v - top, -60.0)) for _, v in ranked]
    total = sum(weights) or 1.0
    return [(k, w / total) for (k, _), w in zip(ranked, weights, strict=True)]


def weighed_alternatives(node: Node, limit: int = 4) -> list[tuple[Summary, float, tuple[str, ...]]]:
    """:func:`alternatives` with each one's reasons: how it compares with the decision taken.

    The decision taken is compared with the best other one, both as
    :func:`decisions` weighs them (a drop recorded two ways is one). A
    decision whose parts were not kept (none in a finished search) gets no reasons.
    """
    parent = node.parent
    if parent is None:
        return []
    weighed = decisions(node)
    ranked = _ranked(weighed, limit)
    mine = parent.parts.get(node.summary)
    mine_final = weighed.get(node.summary, node.best)
    others = [(k, v) for k, v in weighed.items() if k != node.summary and k in parent.parts]
    rival = max(others, key=lambda kv: kv[1]) if others else None
    out: list[tuple[Summary, float, tuple[str, ...]]] = []
    for summary, p in ranked:
        parts = parent.parts.get(summary)
        if mine is None or parts is None:
            reasons: tuple[str, ...] = ()
        elif summary == node.summary:
            reasons = () if rival is None else _compared(mine, mine_final, parent.parts[rival[0]], rival[1],
                                                         "move" in summary and "move" in rival[0])
        else:
            reasons = _compared(parts, weighed[summary], mine, mine_final,
                                "move" in summary and "move" in node.summary)
        out.append((summary, p, reasons))
    return out

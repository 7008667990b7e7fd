"""Reading a finished search: the best path, the rivals each board's decision beat, the decisions told apart and how
sure each is, and whether a misread the explanation overrules is doubtful."""

from __future__ import annotations

import math
from collections.abc import Iterator

from digitise.solve.nodes import Node, Summary

#: Below this fit of the marks (board score less the roll's and its writing's priors) the explanation
#: overrules the reader (its best reading was at least ~12 times likelier than what was taken as
#: written): the board is flagged and its game rests on it.
LOOSE_FIT = -2.5
#: ... unless the board's decision is this sure against every rival the search weighed: the solver
#: then took the misread into account, and the turn is neither flagged for it nor the rest of its
#: game left resting on it (see :func:`misread_doubt`).
MISREAD_SURE = 0.9995


def best_path(final: Node) -> list[Node]:
    """The decisions of the best explanation, first board first (the root excluded)."""
    path: list[Node] = []
    node: Node | None = final
    while node is not None and node.parent is not None:
        path.append(node)
        node = node.parent
    path.reverse()
    return path


def rivals(node: Node, within: float) -> list[Node | None]:
    """Where the alternatives to ``node``'s decision within ``within`` of it lead.

    A kept alternative gives its node; one merged into a kept state gives that
    state's node; one dropped from the beam gives ``None`` (unknown).
    """
    parent = node.parent
    if parent is None:
        return []
    return [leads_to(parent, summary) for summary, value in parent.kids.items()
            if summary != node.summary and value >= node.best - within]


def leads_to(parent: Node, summary: Summary) -> Node | None:
    """Where decision ``summary`` of ``parent``'s next board leads: its kept node, the kept state it was
    merged into, or ``None`` when it was dropped from the beam."""
    return next((c for c in parent.children if c.summary == summary), None) or parent.merged.get(summary)


def best_line(node: Node) -> Iterator[Node]:
    """``node`` and its best kept descendants, one per board, as far as they were kept (as they are followed:
    a line that meets the path again can run on with it to the end of the match)."""
    yield node
    while node.children:
        node = max(node.children, key=lambda c: c.best)
        yield node


def misread_doubt(node: Node) -> bool:
    """Whether ``node``'s board is explained only against the reader (a loose fit) and not surely so."""
    return node.fit < LOOSE_FIT and confidence(node) < MISREAD_SURE


def _answered_by_drop(summary: Summary) -> bool:
    """Whether a decision on the board after a double begins by dropping it (the end of the readings does too)."""
    return bool(summary) and (summary[0] == "drop" or (summary[0] == "final" and "drop" in summary))


def decisions(node: Node) -> dict[Summary, float]:
    """The decisions of ``node``'s board with their best final scores, a drop recorded two ways counted once.

    A double dropped is recorded the same (``Doubles``, ``Drops``, ``Wins``)
    whether the doubler's result square says so (``(..., "double", side,
    "drop")``) or the board after it does (the double left unanswered, then
    dropped). Weighed apart, a result square the reader was unsure of made
    the drop look doubtful when only the square was. So when ``node`` is one
    of the two, the other's ways of dropping count as ``node``'s; an
    unanswered double's other continuations (a take) stay its rival.
    """
    parent = node.parent
    if parent is None:
        return {}
    out = dict(parent.kids)
    summary = node.summary
    if len(summary) == 4 and summary[1] == "double" and summary[3] == "drop":
        unanswered = summary[:3]
        pending = next((c for c in parent.children if c.summary == unanswered), None)
        if pending is not None and unanswered in out:
            dropped = [v for k, v in pending.kids.items() if _answered_by_drop(k)]
            rest = [v for k, v in pending.kids.items() if not _answered_by_drop(k)]
            if dropped:
                out[summary] = max(out.get(summary, node.best), *dropped)
                if rest:
                    out[unanswered] = max(rest)
                else:
                    del out[unanswered]
    elif len(summary) == 3 and summary[1] == "double" and node.kids:
        # The answer on ``node``'s own line: its best continuation (the path goes through it).
        followed = max(node.kids.items(), key=lambda kv: kv[1])[0]
        by_square = (*summary, "drop")
        if _answered_by_drop(followed) and by_square in out:
            out[summary] = max(out.get(summary, node.best), out.pop(by_square))
    return out


def confidence(node: Node) -> float:
    """How much better ``node``'s decision is than the best other decision of its board, in [0, 1].

    Decisions that record the same (:func:`decisions`) are one decision here.
    """
    parent = node.parent
    if parent is None:
        return 1.0
    weighed = decisions(node)
    mine = weighed.get(node.summary, node.best)
    others = [v for k, v in weighed.items() if k != node.summary]
    if not others:
        return 1.0
    return surety(mine, max(others))


def surety(mine: float, other: float) -> float:
    """How sure a decision scoring ``mine`` (log) is against the best other scoring ``other``, in [0, 1]: the
    logistic of the margin, clamped so that no margin overflows."""
    return 1.0 / (1.0 + math.exp(min(max(other - mine, -50.0), 50.0)))

"""The match length: weighing the headers read against the games the boards record."""

from __future__ import annotations

from collections.abc import Sequence

from digitise.game.match import MAX_MATCH_LENGTH
from digitise.solve.evidence import BoardEvidence
from digitise.solve.explain import best_explanation
from digitise.solve.nodes import Cache, Forced, Node
from digitise.solve.paths import best_path
from digitise.solve.prior import PlayPrior
from digitise.solve.reasons import Reason
from digitise.solve.search import FOREIGN

#: What the report says, and the CLI prints, when the match's length or names had to be made up.
LENGTH_UNKNOWN = Reason.LENGTH_UNKNOWN.text
#: A length the headers give with less confidence than this in all (summed over pages), or with less
#: than this share of it against other lengths read, is written with a note, and each other length read
#: is tried against the games (:data:`LENGTHS_WEIGHED`): a wrong length changes the match's end and its
#: Crawford game, and only the boards after a misread end show it.
LENGTH_SURE = 0.5
LENGTH_AGREED = 0.6
LENGTH_UNSURE = Reason.LENGTH_UNSURE.text
#: At most this many of the lengths read (most voted first, the vote's own among them) are solved when unsure.
LENGTHS_WEIGHED = 3
#: How much better (log) the games must fit another length read to overrule the vote: a board set
#: aside (``search.FOREIGN``). A longer match is the looser one (a later end, another Crawford game),
#: so it can fit a little better by chance alone: a stray mark in the Crawford game taken for a double.
LENGTH_EVIDENCE = -FOREIGN
LENGTH_FROM_GAMES = Reason.LENGTH_FROM_GAMES.text
#: A length the games outrun: boards with writing after the match was won, which a longer match explains.
LENGTH_OVERRUN = Reason.LENGTH_OVERRUN.text
#: Longer lengths tried, at most, when the games outrun the match.
OVERRUN_TRIED = 3


def after_the_end(node: Node) -> bool:
    """Whether ``node`` reads its board after the match was won."""
    return node.parent is not None and node.parent.state.match.is_over


def boards_after_the_end(path: Sequence[Node]) -> int:
    """How many boards with writing ``path`` reads after its match was won."""
    return sum(1 for node in path if node.board is not None and after_the_end(node) and node.summary != ("blank",))


def length_played(evidence: list[BoardEvidence], forced: dict[int, Forced], prior: PlayPrior, cache: Cache,
                  score: float, length: int, read: Sequence[int]) -> int | None:
    """The match length the games recorded fit when they outrun ``length``, or ``None`` when none fits better.

    The boards are explained once with no match end (unlimited); the score
    the games reach says which lengths end the match at its last game (or,
    when the last game is unfinished, which lengths it has not reached yet).
    At most :data:`OVERRUN_TRIED` of those are solved (lengths the headers
    read first, then odd ones, as matches are, shortest first), and the best
    must explain the boards better than ``score`` by a board set aside
    (:data:`LENGTH_EVIDENCE`).
    """
    path = best_path(best_explanation(evidence, 0, forced, prior, cache=cache))
    if not path:
        return None
    scores = [(0, 0)]
    for node in path:
        pair = (node.state.match.score.bottom, node.state.match.score.top)
        if pair != scores[-1]:
            scores.append(pair)
    last = path[-1].state
    reached = max(scores[-1])
    if last.on_roll is None and last.pending is None and len(scores) > 1:
        # The last game was finished: the match ended with it.
        lengths = list(range(max(max(scores[-2]), length) + 1, reached + 1))
    else:
        # Any longer length fits as well: the headers' other readings, else the shortest odd one.
        shortest = max(reached, length) + 1
        lengths = [n for n in read if n >= shortest] or [shortest + 1 - shortest % 2]
    lengths = sorted({n for n in lengths if 0 < n <= MAX_MATCH_LENGTH},
                     key=lambda n: (n not in read, n % 2 == 0, n))[:OVERRUN_TRIED]
    best: tuple[float, int] | None = None
    for other in lengths:
        trial = best_explanation(evidence, other, forced, prior, cache=cache).score
        if trial > score + LENGTH_EVIDENCE and (best is None or trial > best[0]):
            best = (trial, other)
    return None if best is None else best[1]

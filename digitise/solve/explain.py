"""The best explanation of a match: the plain search, then the repairing and the wider one."""

from __future__ import annotations

import math

from digitise.solve.evidence import BoardEvidence
from digitise.solve.nodes import Cache, Forced, Node, State
from digitise.solve.paths import best_path
from digitise.solve.prior import PlayPrior
from digitise.solve.search import GAME_DOES_NOT_END, Searcher, troubled

#: The beam's margin (``search.MARGIN`` is 6) for searching again readings whose last game does not end.
UNFINISHED_MARGIN = 9.0


def best_explanation(evidence: list[BoardEvidence], length: int, forced: dict[int, Forced], prior: PlayPrior,
                     start: State | None = None, cache: Cache | None = None, bound: float = -math.inf) -> Node:
    """The best explanation: the plain search, and where it explains boards badly, the repairing one.

    The repairing search (see :meth:`Searcher.run`) finds plays the marks do
    not spell out, but its wider boards can also crowd the truth out of the
    beam on a badly read match; whichever explains the whole match better is
    kept. With a ``bound``, a search whose every explanation falls below it
    stops early and scores ``-inf``.
    """
    cache = cache if cache is not None else Cache()
    _, final = Searcher(evidence, length, forced, repair=False, prior=prior, start=start, cache=cache,
                        bound=bound).run()
    # A plain search that fell below the bound may still be beaten by the repairing one.
    if final.score == -math.inf or any(node.board is not None and troubled(node) for node in best_path(final)):
        _, again = Searcher(evidence, length, forced, repair=True, prior=prior, start=start, cache=cache,
                            bound=bound).run()
        if again.score > final.score:
            final = again
    if GAME_DOES_NOT_END in final.tags and final.score > -math.inf and start is None:
        # Readings that stop in the middle of a game: pages missing at the end, or an early misread whose
        # true line fell out of the beam before the last boards told the two apart. Not for a stretch of a
        # match (``start``: a stranger page weighed), which ends mid-game by design.
        _, wider = Searcher(evidence, length, forced, repair=True, prior=prior, start=start, cache=cache,
                            bound=bound, margin=UNFINISHED_MARGIN).run()
        if wider.score > final.score:
            final = wider
    return final

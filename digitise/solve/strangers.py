"""Pages that do not continue the match (a page from another match in the pile), left out whole."""

from __future__ import annotations

from digitise.solve.evidence import BoardEvidence
from digitise.solve.explain import best_explanation
from digitise.solve.nodes import Cache, Forced, Node
from digitise.solve.paths import best_path
from digitise.solve.prior import PlayPrior
from digitise.solve.reasons import Reason
from digitise.solve.search import FOREIGN, troubled

#: The cost of setting a whole page aside as belonging to another match.
STRANGER_PAGE = -25.0
STRANGER_REASON = Reason.PAGE_LEFT_OUT.text
#: Pages tried as strangers, at most, per match.
STRANGER_TRIES = 2
#: Boards after a suspect page that weigh whether it belongs to the match: enough that a search
#: which explains a stranger page passably (every legal play of the leaders' boards) still pays
#: for the wrong position it leaves behind.
STRANGER_WINDOW = 24


def leave_out_strangers(final: Node, evidence: list[BoardEvidence], sheets: list[int], forced: dict[int, Forced],
                        length: int, prior: PlayPrior, cache: Cache,
                        protected: frozenset[int] = frozenset()) -> tuple[Node, list[int]]:
    """The best explanation and the boards it reads, once pages of another match are left out.

    A page of another match slipped into the pile leaves every later board of
    its game explained from the wrong position: the sheet where the trouble
    starts is tried without, at most :data:`STRANGER_TRIES` sheets. The
    ``protected`` sheets (numbered in step with the pile, see
    :func:`page_sequence`) are this match's own and never tried: the page
    after a missing one reads as badly as a stranger.
    """
    kept = list(range(len(evidence)))
    tried: set[int] = set()
    while len(tried) < STRANGER_TRIES:
        path = best_path(final)
        suspect = _stranger_sheet([sheets[i] for i in kept], path, tried | protected)
        if suspect is None:
            break
        tried.add(suspect)
        others = [i for i in kept if sheets[i] != suspect or i in forced]
        if len(others) == len(kept) or not others:
            continue
        # As costly as setting each written board of the page aside one by one (FOREIGN), and more.
        written = sum(1 for i in kept if sheets[i] == suspect and evidence[i].listed)
        cost = STRANGER_PAGE + FOREIGN * written
        # Weighed first on a stretch (the page and two after it, from the state before it), which
        # costs a fraction of searching the match again: most suspects are real pages badly read.
        if not _better_without(kept, others, path, evidence, forced, length, prior, cost, cache):
            continue
        trial = best_explanation([evidence[i] for i in others], length, _reindexed(forced, others), prior, cache=cache)
        if trial.score + cost > final.score:
            final, kept = trial, others
    return final, kept


def _reindexed(forced: dict[int, Forced], boards: list[int]) -> dict[int, Forced]:
    """``forced`` for the list ``boards`` (indices into the full list) as a list of its own."""
    index = {old: new for new, old in enumerate(boards)}
    return {index[i]: spec for i, spec in forced.items() if i in index}


def _better_without(kept: list[int], others: list[int], path: list[Node], evidence: list[BoardEvidence],
                    forced: dict[int, Forced], length: int, prior: PlayPrior, cost: float, cache: Cache) -> bool:
    """Whether the boards around a suspect page read better without it (by more than ``cost``).

    ``kept`` are the boards now read, ``others`` the same without the page;
    ``path`` is the current best explanation of ``kept``.
    """
    remaining = set(others)
    gone = [j for j, i in enumerate(kept) if i not in remaining]
    first, last = gone[0], gone[-1]
    end = min(last + 1 + STRANGER_WINDOW, len(kept))
    stretch = kept[first:end]
    start = path[first - 1].state if first > 0 else None
    # The current explanation's share of the stretch: no better than the best one, which is
    # all the comparison needs (the full search without the page has the last word).
    with_page = path[end - 1].score - (path[first - 1].score if first > 0 else 0.0)
    rest = [i for i in stretch if i in remaining]
    if not rest:
        return with_page < cost
    without = best_explanation([evidence[i] for i in rest], length, _reindexed(forced, rest), prior, start, cache,
                               bound=with_page - cost)
    return without.score + cost > with_page


def _stranger_sheet(sheets: list[int], path: list[Node], tried: set[int]) -> int | None:
    """The first sheet where the best explanation fits two or more boards badly (not yet tried), if any."""
    troubles: dict[int, int] = {}
    for node in path:
        if node.board is not None and troubled(node):
            sheet = sheets[node.board]
            troubles[sheet] = troubles.get(sheet, 0) + 1
            if troubles[sheet] >= 2 and sheet not in tried:
                return sheet
    return None

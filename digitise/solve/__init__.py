"""The solver: from readings of a note's boards to a complete, legal, scored match.

:func:`solve` searches the whole match at once (see :mod:`digitise.solve.search`):
who is on roll (alternation, the closed-out skip, the opening roll by either
player), the roll and play of every move board (candidate rolls come from the
written digits, candidate plays are the legal plays of those rolls, each
scored by how well its marks agree with the readings), doubles and their
answers (a take when the doubler rolls next, a drop when a new game starts or
the doubler's result square says so), resignations (result squares), game
ends, scores and the Crawford game. Where the marks fit several plays of a
roll, GNU Backgammon's judgement of the plays tips the balance
(:mod:`digitise.solve.prior`: players rarely blunder). A page whose boards
continue nothing (a page of another match in the pile) is left out whole
when the match explains far better without it. The match is always legal, so that GNU
Backgammon replays it: every play is one of ``legal_plays`` (an illegal move
recorded is written as the nearest legal play), a double only where
``MatchState.may_double`` allows it (an arrow elsewhere is explained
otherwise), a resignation worth the cube times 1, 2 or 3 (or that capped at
what the winner needed); what the marks say otherwise is flagged. Every turn gets a confidence and, when in
doubt, reasons for a person to review it.

The report
----------
:attr:`SolveResult.solved` holds it as typed values (:mod:`digitise.solve.report_types`: ``Report``,
``Game``, ``Turn``, ``Candidate``, ``Skipped``, ``Summary``; reasons and notes as
:class:`~digitise.solve.reasons.Flag`); :attr:`SolveResult.report` is its JSON object, made from them,
described by the schema generated from the same types (``docs/report.schema.json``) and read back by
``Report.from_json``. In JSON:
``{"games": [...], "skipped": [...], "summary": {...}}``. Each game is
``{"number", "turns", "winner": "top"|"bottom"|null, "points"}`` (``points``
as won, not capped; ``null`` for a game the readings do not finish). Each turn:

* ``page``, ``board``: where it is written (a take or drop: its double's board);
* ``player``, ``action`` (move, double, take, drop, resign), ``dice`` ([high,
  low] or null), ``move`` (``.mat`` notation, "" for none), ``points`` (resign);
* ``confidence`` in [0, 1]: the best complete explanation against the best one
  that decided this board otherwise (1 / (1 + e^-margin)); ``flagged`` and
  ``reasons`` ("low confidence", "no legal play explains the marks", "the
  marks fit only if a cell was misread", "illegal
  move recorded" with "the marks show ...; written as the nearest legal play
  ...", "blank board inside a game", "unreadable centre" (with low confidence), "arrow where no
  double is allowed", "result square reads N, not a legal value ...", "game
  does not end", "correction does not fit", "N later turns rest on this board, and it is
  not sure enough for that" (sure by the review bar, but the turns expected wrong because of it reach
  :data:`REVIEW_EXPECTED_WRONG`), "the game's end was not recorded
  ...", "the page numbers jump from N to M before this page: a page
  missing?", "the board does not continue this game ..." and "the page does
  not continue this match ...: left out" in ``skipped``); ``reason_codes``: beside
  ``reasons``, one stable code each (``"low-confidence"``, ``"page-gap"``, ...:
  :class:`~digitise.solve.reasons.Reason` lists them all, with what to do
  about each); a program keys on the codes, a person reads the texts;
* ``follows``: ``{"page", "board"}`` of an earlier flagged board this turn's
  position rests on (it is not flagged itself: correcting that board
  re-decodes it), else null;
* ``candidates``: the best few decisions for the board with probabilities
  among them (``action``, ``player``, ``dice``, ``move``, ``result`` when
  they carry one, ``answer``: "take" or "drop", for a double the answer given
  on its own board, for anything else the answer to the double of the board
  before) and ``reasons``: how each compares with the decision
  taken, and that one with the best other, biggest factor first ("marks fit
  3.2x better/worse", "later boards fit 12x better/worse", between two moves
  "roll as written 2.0x likelier/less likely" and "4.1x likelier play" /
  "weaker play (4.1x less likely)", between a move and something else "2.0x
  likelier/less likely on the other odds"; "Nx likelier/less likely overall"
  when no one part reaches 2x, "about as likely on every count" when the
  whole does not);
* ``position_before`` / ``position_after``: GNU Backgammon position IDs, both
  seen by the turn's player (the player on roll in the ID).

``skipped`` lists boards that record no turn but are flagged (a blank board
inside a game): ``page``, ``board``, ``flagged``, ``reasons`` and ``reason_codes``. ``summary``: boards, games, turns, flagged (turns and boards
set aside), set_aside (boards in ``skipped`` that are flagged), mean_confidence.
``notes``: doubts about the whole match (a name or the length made up, a
gap in the page numbers written: a page missing, or pages out of order), with
``note_codes`` beside them as ``reason_codes`` beside ``reasons`` (a scan's own
notes are also in ``scan_notes``, with ``scan_note_codes``).
``prior``: what weighed the plays (GNU Backgammon's net and its version, or
nothing): the same readings solve differently with and without it.

Corrections
-----------
``corrections`` maps a board, ``(page, board)`` with both numbers as printed
(1-based; ``board`` is 1..8), to what that board records. The solver treats
each as a hard constraint and re-decodes everything else around it. A
correction is a string of ``;``-separated parts:

* a move in ``.mat`` notation, optionally preceded by the player:
  ``"52: 13/8 13/11"``, ``"top 64: 25/21 13/7*"``, ``"63:"`` (the roll could
  not be played); ``bar``/``25`` and ``off``/``0`` as in ``.mat`` files;
* ``double`` (the board is a double; take or drop is then inferred), or
  ``double; drop`` / ``double; take`` to say how it was answered when the
  arrow board itself carries the result;
* ``bottom wins N`` / ``top wins N``: a resignation (or drop) worth N ends the
  game on this board; ``resign N`` when the winner follows from who is on roll;
* ``blank``: the board records nothing.

So ``{(2, 5): "61: 13/7 8/7", (3, 1): "double", (4, 8): "43: 6/2 6/3; top wins 2"}``.
In JSON (the review page's corrections file) the same is
``{"2:5": "61: 13/7 8/7", ...}``; :func:`parse_corrections` reads that form.
"""

from digitise.solve.correction_text import parse_correction, parse_corrections
from digitise.solve.header import DEFAULT_PLAYERS
from digitise.solve.length import LENGTH_AGREED, LENGTH_SURE
from digitise.solve.page_order import (
    EXTRA_REASON,
    GAP_REASON,
    ORDER_ALONE_SURE,
    ORDER_REASON,
    ORDER_SURE,
    extra_pages,
    page_gaps,
)
from digitise.solve.reasons import Flag, Reason
from digitise.solve.report import REVIEW_EXPECTED_WRONG, report_to_json
from digitise.solve.report_types import Report
from digitise.solve.result import SolveResult
from digitise.solve.solver import NO_GAME, NO_TURNS, REVIEW_BELOW, solve
from digitise.solve.strangers import STRANGER_REASON

__all__ = [
    "DEFAULT_PLAYERS",
    "EXTRA_REASON",
    "GAP_REASON",
    "LENGTH_AGREED",
    "LENGTH_SURE",
    "NO_GAME",
    "NO_TURNS",
    "ORDER_ALONE_SURE",
    "ORDER_REASON",
    "ORDER_SURE",
    "REVIEW_BELOW",
    "REVIEW_EXPECTED_WRONG",
    "STRANGER_REASON",
    "Flag",
    "Reason",
    "Report",
    "SolveResult",
    "extra_pages",
    "page_gaps",
    "parse_correction",
    "parse_corrections",
    "report_to_json",
    "solve",
]

"""JellyFish ``.mat`` match files: read what GNU Backgammon, JellyFish, Backgammon
Galaxy and Backgammon Studio write, and write exactly GNU Backgammon's layout.

The reader is tolerant in the way python-chess reads PGN: it collects every
problem (line number and reason) and keeps going, skipping a bad line and
carrying on with the next one, so one smudged move does not lose a match.
Every play is replayed from the starting position with :mod:`digitise.game.rules`,
so the record carries real engine :class:`~digitise.game.rules.Play` objects
(steps, hits, resulting position), whatever shorthand the file used.

Conventions of the record (:mod:`digitise.game.record`):

* the left column is ``Side.BOTTOM``, the right column ``Side.TOP``;
* a roll that cannot be played (a dance), or a roll thrown and then conceded,
  is a ``MOVE`` with ``play=None``; a move no legal play matches is also kept as
  ``play=None``, with a problem;
* ``DOUBLE`` carries the offered cube value in ``cube``; ``RESIGN`` is taken by
  the loser and carries the points in ``points`` (a ``Wins N`` that ends a game
  still in progress is such a resignation);
* ``GameRecord.points`` is what the file's ``Wins N`` line says (which may be
  capped at what the winner needed in the last game), else the replayed value.

The writer copies GNU Backgammon 1.07's own export byte for byte (checked by
re-exporting with gnubg): column 33 for the right player, one step per die
sorted by source, ``*`` on hits, 25 for the bar, 0 for off, its spacing
around ``Wins`` lines, and no timestamps.
"""

from __future__ import annotations

from digitise.notation.mat_names import MAX_NAME_BYTES, holds_name, players_problem, writable_name
from digitise.notation.mat_read import (
    MAX_MAT_BYTES,
    MatProblem,
    MatReadResult,
    outcome_of_file,
    parse_mat,
    parse_steps,
    read_mat,
    read_mat_strict,
)
from digitise.notation.mat_write import CLOSED_OUT_ROLL, format_mat, with_closed_out_dances, write_mat

# The public names of the three modules, importable from here as before the split.
__all__ = [
    "CLOSED_OUT_ROLL",
    "MAX_MAT_BYTES",
    "MAX_NAME_BYTES",
    "MatProblem",
    "MatReadResult",
    "format_mat",
    "holds_name",
    "outcome_of_file",
    "parse_mat",
    "parse_steps",
    "players_problem",
    "read_mat",
    "read_mat_strict",
    "with_closed_out_dances",
    "writable_name",
    "write_mat",
]

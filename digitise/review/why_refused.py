"""Why a correction is refused, in the words a person needs: a typed play that is not legal in the position
before its turn, and a match that no legal reading fits with the corrections."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from digitise.errors import short
from digitise.game.position import Position
from digitise.game.rules import ALL_ROLLS, legal_plays, play_from_moves
from digitise.review.board_parts import named_side, no_double_because
from digitise.review.refusals import CorrectionRefused
from digitise.solve.correction_text import parse_correction
from digitise.solve.reasons import Reason
from digitise.solve.report_types import Report
from digitise.solve.reviewed import OnBoard, turns_by_board

Place = tuple[int, int]

#: Reasons that say nothing of why a correction was refused: the refusal itself, and the doubt it leaves.
_NOT_WHY = frozenset({Reason.CORRECTION_MISFIT.code, Reason.LOW_CONFIDENCE.code})


def illegal_play(text: str, turn: OnBoard | None, players: Sequence[str] | None) -> None:
    """Refuse (:class:`CorrectionRefused`) a typed move that is not a legal play in the position before ``turn``.

    Checked against the turn now on that board, when it is the same
    player's move: the clear message a person needs ("not a legal play of
    64 here; legal plays include ..."). The solver checks the rest.
    """
    forced = parse_correction(text)
    if forced.roll is None or forced.moves is None or turn is None or not turn.position_before:
        return
    if turn.action != "move" or (forced.player is not None and forced.player.value != turn.player):
        return
    try:
        position = Position.from_position_id(turn.position_before)
    except ValueError:
        return
    roll, moves = forced.roll, list(forced.moves)
    plays = legal_plays(position, roll)
    who = named_side(players, turn.player)
    if not moves:
        if plays:
            examples = ", ".join(sorted(str(p) for p in plays)[:3])
            raise CorrectionRefused(f"{roll} can be played by {who} here (e.g. {examples}): type the play")
        return
    if play_from_moves(position, roll, moves) is None:
        shown = short(text.split(":", 1)[1].split(";")[0].strip())
        # The moves may be right and the dice mistyped: the rolls they are a play of say so.
        fits = [other for other in ALL_ROLLS if other != roll and play_from_moves(position, other, moves)]
        if not plays:
            hint = f"{roll} cannot be played at all here: leave the play empty ('{roll}:')"
        else:
            # The plays nearest what was typed first (a slip of one point shows its fix at the top).
            near = sorted((str(p) for p in plays),
                          key=lambda p: (-difflib.SequenceMatcher(None, p, shown).ratio(), p))
            hint = "legal plays include " + ", ".join(near[:4])
        if fits:
            hint = f"it is a play of {' or '.join(map(str, fits))}: are the dice right? Else {hint}"
        raise CorrectionRefused(f"{shown} is not a legal play of {roll} for {who} here; {hint}")


def misfit(now: Report, solved: Report, updated: Mapping[Place, str], bad: Sequence[Place], changed: Place | None,
           undone: Place | None, players: Sequence[str] | None, length: int | None) -> CorrectionRefused:
    """Why the match ``now`` cannot take corrections ``updated``: ``solved`` with them left the boards ``bad``
    unhonoured. ``changed`` is the board just corrected, ``undone`` the one whose correction was withdrawn;
    ``players`` and ``length`` the match's as the page shows them."""
    refused = [on for on in turns_by_board(solved) if (on.page, on.board) in bad]
    places = sorted(bad, key=lambda place: (place != changed, place))
    named = "; ".join(f"page {p} board {b} as {short(updated[(p, b)])!r}" for p, b in places)
    ended = [on for on in refused if any(flag.reason is Reason.AFTER_THE_END for flag in on.reasons)]
    if ended:
        return CorrectionRefused(f"page {ended[0].page} board {ended[0].board} comes after the end "
                                 "of the match: it cannot hold a turn; nothing was changed")
    if changed is not None and changed not in bad:
        # The change just made is honoured, an earlier correction no longer is: name both, as the
        # earlier one may be the wrong one.
        clash = "; ".join(f"page {p} board {b} ({short(updated[(p, b)])!r})" for p, b in bad)
        return CorrectionRefused(
            f"no legal match reads page {changed[0]} board {changed[1]} as {short(updated[changed])!r} "
            f"together with the earlier correction of {clash}: if that one is wrong, undo it first; "
            "nothing was changed")
    if undone is not None:
        # A later correction was made on the position this one gave: it goes first.
        later = ", ".join(f"page {p} board {b}" for p, b in sorted(bad))
        return CorrectionRefused(
            f"no legal match reads {named} without the correction of page {undone[0]} board "
            f"{undone[1]}, which {'it rests' if len(bad) == 1 else 'they rest'} on: undo {later} first; "
            "nothing was changed")
    # What the solver found wrong there ("arrow where no double is allowed"), when it says.
    why: dict[Place, list[str]] = {}
    for on in refused:
        for flag in on.reasons:
            if flag.code not in _NOT_WHY and flag.text not in why.setdefault((on.page, on.board), []):
                why[(on.page, on.board)].append(flag.text)
    for p, b in places:
        rule = no_double_because(now, (p, b), updated[(p, b)], players, length)
        if rule is not None:
            why[(p, b)] = [rule]  # the solver's own words ("arrow where no double ...") add nothing
    explained = "; ".join(f"page {p} board {b} as {short(updated[(p, b)])!r}"
                          + (f" ({'; '.join(why[(p, b)])})" if why.get((p, b)) else "")
                          for p, b in places)
    return CorrectionRefused(
        f"no legal match reads {explained} together with the rest of the note; nothing was changed")

"""One test per rule of backgammon, on small hand-made positions."""

from __future__ import annotations

import pytest

from digitise.game.position import BAR, OFF, Position
from digitise.game.rules import (
    ALL_ROLLS,
    GameValue,
    Play,
    Roll,
    Step,
    game_value,
    is_closed_out,
    legal_plays,
    play_from_moves,
)
from tests.game.boards import START, points, position

# The opponent's home board fully made: my entry points 19..24 are their 6..1.
CLOSED = {6: 3, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2, 24: 2}
# An opponent with nothing in my home board or on my 7..11, for bear-off positions.
AWAY = {6: 5, 8: 3, 13: 7}


def results(plays: tuple[Play, ...]) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    return {(p.result.mine, p.result.theirs) for p in plays}


def mine_after(plays: tuple[Play, ...]) -> list[dict[int, int]]:
    return sorted((points(p.result.mine) for p in plays), key=lambda d: sorted(d.items()))


def texts(plays: tuple[Play, ...]) -> set[str]:
    return {str(p) for p in plays}


# --- Roll ------------------------------------------------------------------------------------


def test_roll_keeps_high_die_first_and_doubles_give_four_dice() -> None:
    assert Roll(2, 5) == Roll(5, 2)
    assert (Roll(2, 5).high, Roll(2, 5).low) == (5, 2)
    assert Roll(5, 2).dice == (5, 2)
    assert Roll(3, 3).dice == (3, 3, 3, 3)
    assert Roll(3, 3).is_double and not Roll(4, 3).is_double
    assert str(Roll(1, 6)) == "61"


@pytest.mark.parametrize("dice", [(0, 3), (7, 1), (3, -1)])
def test_roll_rejects_dice_outside_one_to_six(dice: tuple[int, int]) -> None:
    with pytest.raises(ValueError):
        Roll(*dice)


def test_all_rolls_are_the_21_distinct_rolls() -> None:
    assert len(ALL_ROLLS) == 21 == len(set(ALL_ROLLS))
    assert sum(r.is_double for r in ALL_ROLLS) == 6


# --- Entering from the bar -------------------------------------------------------------------


def test_a_checker_on_the_bar_enters_before_anything_else_moves() -> None:
    pos = position({BAR: 1, 13: 5, 8: 4, 6: 5}, START)
    plays = legal_plays(pos, Roll(6, 2))
    assert plays
    for play in plays:
        assert play.steps[0].source == BAR
        assert play.result.mine[BAR] == 0
    # 6 enters on my 19 (their 6 point, made): only the 2 can enter, then the 6 is free.
    assert all(play.steps[0].die == 2 and play.steps[0].destination == 23 for play in plays)


def test_two_on_the_bar_use_both_dice_to_enter() -> None:
    pos = position({BAR: 2, 13: 5, 8: 3, 6: 5}, START)
    [play] = legal_plays(pos, Roll(4, 3))
    assert str(play) == "25/22 25/21"
    assert points(play.result.mine) == {22: 1, 21: 1, 13: 5, 8: 3, 6: 5}


def test_nothing_else_moves_while_a_checker_stays_on_the_bar() -> None:
    # Two on the bar, only the 4 enters (their 6 point is made): the 6 is lost, no other checker moves.
    pos = position({BAR: 2, 13: 5, 8: 3, 6: 5}, START)
    [play] = legal_plays(pos, Roll(6, 4))
    assert play.dice_used == (4,)
    assert str(play) == "25/21"
    assert play.result.mine[BAR] == 1


def test_bar_entry_blocked_for_both_dice_is_a_dance() -> None:
    pos = position({BAR: 1, 13: 5, 8: 4, 6: 5}, {6: 3, 5: 2, 4: 2, 3: 2, 13: 4, 24: 2})
    # My 19, 20, 21, 22 are made; 6-5, 6-4, 5-3, 4-3 ... all blocked.
    for roll in (Roll(6, 5), Roll(4, 3), Roll(5, 5), Roll(6, 3)):
        assert legal_plays(pos, roll) == ()


def test_the_dance_against_a_closed_board_for_every_roll() -> None:
    pos = position({BAR: 1, 13: 5, 8: 4, 6: 5}, CLOSED)
    assert is_closed_out(pos)
    assert all(legal_plays(pos, roll) == () for roll in ALL_ROLLS)


# --- Landing and hitting ---------------------------------------------------------------------


def test_never_land_on_two_or_more_opposing_checkers() -> None:
    start = Position.initial()
    # From my 24 a 5 lands on their 6 point (5 checkers): 55 never moves the back checkers.
    for play in legal_plays(start, Roll(5, 5)):
        assert all(step.source != 24 for step in play.steps)
    # 6-5 is still playable as 24/13 because 18 (their 7) is open.
    assert "24/18 18/13" in texts(legal_plays(start, Roll(6, 5)))
    for roll in ALL_ROLLS:
        for play in legal_plays(start, roll):
            theirs = list(start.theirs)
            for step in play.steps:  # steps are kept in an order they can be played in
                if step.destination:
                    assert theirs[25 - step.destination] < 2, (roll, str(play))
                    if step.hit:
                        theirs[25 - step.destination] = 0


def test_hitting_a_blot_sends_it_to_the_opponents_bar() -> None:
    # Their blot on their 20 point is my 5 point.
    pos = position({6: 5, 8: 3, 13: 5, 24: 2}, {20: 1, 6: 5, 8: 3, 13: 5, 24: 1})
    play = play_from_moves(pos, Roll(1, 3), [(6, 5), (8, 5)])
    assert play is not None
    assert sorted(s.hit for s in play.steps) == [False, True]  # only the first checker to land hits
    assert play.result.theirs[BAR] == 1 and play.result.theirs[20] == 0
    assert play.result.mine[5] == 2
    assert str(play) == "8/5* 6/5"


def test_hitting_in_passing_marks_only_the_step_that_hits() -> None:
    pos = position({6: 5, 8: 3, 13: 5, 24: 2}, {20: 1, 6: 5, 8: 3, 13: 5, 24: 1})
    play = play_from_moves(pos, Roll(2, 1), [(6, 3)])
    assert play is not None
    by_text = {str(s) for s in play.steps}
    assert by_text in ({"6/5*", "5/3"}, {"6/4", "4/3"})
    # Both ways lead to the same checkers of mine but different opponents: two plays.
    plays = [p for p in legal_plays(pos, Roll(2, 1)) if p.result.mine == play.result.mine]
    assert sorted(p.result.theirs[BAR] for p in plays) == [0, 1]
    assert {str(p) for p in plays} == {"6/5* 5/3", "6/4 4/3"}


def test_moves_are_read_in_any_order_and_the_hit_marks_choose_between_alike_plays() -> None:
    """Writers differ in the order of steps; ``6/5* 5/3`` against ``6/4 4/3`` is told by the marks."""
    apart = play_from_moves(Position.initial(), Roll(6, 4), [(18, 14), (24, 18)])
    assert apart is not None and str(apart) == "24/18 18/14"
    assert play_from_moves(Position.initial(), Roll(6, 4), [(18, 14)]) is None  # no checker on 18
    assert play_from_moves(Position.initial(), Roll(6, 4), [(14, 18)]) is None  # backwards
    pos = position({6: 5, 8: 3, 13: 5, 24: 2}, {20: 1, 6: 5, 8: 3, 13: 5, 24: 1})
    hit = play_from_moves(pos, Roll(2, 1), [(6, 3)], hits={5})
    quiet = play_from_moves(pos, Roll(2, 1), [(6, 3)], hits=set())
    assert hit is not None and quiet is not None
    assert (str(hit), str(quiet)) == ("6/5* 5/3", "6/4 4/3")


# --- Doublets --------------------------------------------------------------------------------


def test_doubles_give_four_steps() -> None:
    plays = legal_plays(Position.initial(), Roll(6, 6))
    assert plays and all(p.dice_used == (6, 6, 6, 6) for p in plays)
    assert "24/18 24/18 13/7 13/7" in texts(plays)
    assert len(plays) == 11


def test_doubles_play_fewer_steps_when_blocked() -> None:
    # Back checkers on 24 and 22; my 18 and 19 are their points; home checkers cannot move 2.
    pos = position({24: 1, 22: 1, 2: 7, 1: 6}, {7: 3, 6: 3, 9: 2, 8: 2, 13: 5})
    [play] = legal_plays(pos, Roll(2, 2))
    assert play.dice_used == (2, 2, 2)
    assert str(play) == "24/22 22/20 22/20"
    [play] = legal_plays(pos, Roll(3, 3))
    assert str(play) == "24/21"


def test_doubles_stop_when_the_last_checker_is_borne_off() -> None:
    [play] = legal_plays(position({2: 1, 1: 1}, AWAY), Roll(1, 1))
    assert play.dice_used == (1, 1, 1)
    assert play.result.mine[OFF] == 15


# --- Playing as many dice as possible --------------------------------------------------------


def test_both_dice_must_be_played_when_some_order_allows_it() -> None:
    # My 7 is blocked, so the 6 cannot go first; 13/8/2 plays both dice and is the only play.
    pos = position({13: 1, 1: 14}, {18: 2, 6: 5, 8: 4, 13: 4})
    [play] = legal_plays(pos, Roll(6, 5))
    assert play.dice_used == (5, 6)
    assert str(play) == "13/8 8/2"


def test_all_step_orders_are_considered() -> None:
    pos = position({13: 1, 1: 14}, {18: 2, 6: 5, 8: 4, 13: 4})
    # 5 then 6 works, 6 then 5 does not: the order the dice are listed in does not matter.
    assert results(legal_plays(pos, Roll(6, 5))) == results(legal_plays(pos, Roll(5, 6)))


def test_only_one_die_playable_must_be_the_higher_when_it_can() -> None:
    # One checker free on 13; my 3 is blocked so 13/7/3 and 13/9/3 are impossible.
    pos = position({13: 1, 1: 14}, {22: 2, 6: 5, 8: 4, 11: 4})
    plays = legal_plays(pos, Roll(6, 4))
    assert [str(p) for p in plays] == ["13/7"]
    assert plays[0].dice_used == (6,)


def test_only_one_die_playable_is_the_lower_when_the_higher_cannot_be() -> None:
    # My 7 and 3 are blocked: 13/7 impossible, 13/9 possible but 9/3 is not.
    pos = position({13: 1, 1: 14}, {18: 2, 22: 2, 6: 5, 8: 4, 11: 2})
    plays = legal_plays(pos, Roll(6, 4))
    assert [str(p) for p in plays] == ["13/9"]
    assert plays[0].dice_used == (4,)


# --- Bearing off -----------------------------------------------------------------------------


def test_bear_off_only_with_all_fifteen_home() -> None:
    pos = position({8: 1, 5: 14}, AWAY)
    plays = legal_plays(pos, Roll(5, 3))
    for play in plays:
        offs = [i for i, s in enumerate(play.steps) if s.destination == OFF]
        # A checker goes off only after the 8 has come home, i.e. never as the first step.
        assert all(i > 0 and play.steps[0].source == 8 for i in offs)
    # 8/5 5/0 and 8/3 3/0 meet; 5/2 8/3 and 8/3 5/2 meet; 5/0 first is never allowed.
    assert mine_after(plays) == sorted([{5: 14}, {5: 13, 3: 1, 2: 1}], key=lambda d: sorted(d.items()))
    assert [p.result.mine[OFF] for p in plays if p.result.mine[5] == 14] == [1]


def test_bear_off_with_exact_die() -> None:
    plays = legal_plays(position({4: 1, 2: 1}, AWAY), Roll(4, 2))
    # 4/2 first leaves a 4 to bear off the checker now highest on the 2 point.
    assert texts(plays) == {"4/0 2/0", "4/2 2/0"}
    [won] = [p for p in plays if str(p) == "4/0 2/0"]
    assert game_value(won.result) is GameValue.GAMMON


def test_higher_die_bears_off_from_the_highest_point_only() -> None:
    pos = position({5: 1, 3: 2}, AWAY)
    plays = legal_plays(pos, Roll(6, 4))
    # 6 takes the 5 off, then the 4 (higher than the 3 point, now the highest) takes a 3 off;
    # or 5/1 with the 4, then the 6 takes a 3 off. The 4 may never take a 3 off while the 5 is there.
    assert mine_after(plays) == sorted([{3: 1}, {3: 1, 1: 1}], key=lambda d: sorted(d.items()))
    assert texts(plays) == {"5/0 3/0", "5/1 3/0"}


def test_a_higher_die_never_bears_off_below_a_checker_above_the_die() -> None:
    # A 5 cannot take the 2 off while the 6 point is occupied.
    plays = legal_plays(position({6: 1, 2: 1}, AWAY), Roll(5, 1))
    assert mine_after(plays) == sorted([{1: 2}, {2: 1}], key=lambda d: sorted(d.items()))
    assert all((s.source, s.destination) != (2, OFF) or s.die == 2 for p in plays for s in p.steps)


def test_a_higher_die_bears_off_from_whichever_point_is_highest_at_that_moment() -> None:
    # The 6 point is empty: a 6 bears off from the 5, or from the 4 once 5/4 has been played.
    plays = legal_plays(position({5: 1, 2: 3}, AWAY), Roll(6, 1))
    assert texts(plays) == {"5/0 2/1", "5/4 4/0"}


def test_bear_off_with_doubles_past_the_last_checker() -> None:
    [play] = legal_plays(position({5: 1, 3: 2}, AWAY), Roll(6, 6))
    assert play.dice_used == (6, 6, 6)
    assert str(play) == "5/0 3/0 3/0"


# --- Deduplication ---------------------------------------------------------------------------


def test_plays_are_deduplicated_by_resulting_position() -> None:
    plays = legal_plays(Position.initial(), Roll(2, 1))
    assert len(plays) == len(results(plays)) == 15
    # 13/11 6/5 and 6/5 13/11 are one play.
    assert sum(1 for p in plays if str(p) == "13/11 6/5") == 1


def test_every_play_of_the_opening_uses_both_dice() -> None:
    for roll in ALL_ROLLS:
        plays = legal_plays(Position.initial(), roll)
        assert {len(p.steps) for p in plays} == {len(roll.dice)}


# --- Play text (gnubg layout) ----------------------------------------------------------------


def test_play_text_has_one_step_per_die_highest_source_first() -> None:
    plays = legal_plays(Position.initial(), Roll(3, 1))
    assert "8/5 6/5" in texts(plays)
    assert "24/23 13/10" in texts(plays)
    assert "24/21 21/20" in texts(plays)  # no compression into 24/20
    play = play_from_moves(Position.initial(), Roll(6, 6), [(24, 18), (24, 18), (13, 7), (13, 7)])
    assert play is not None and str(play) == "24/18 24/18 13/7 13/7"


def test_play_text_uses_25_for_the_bar_and_0_for_off() -> None:
    [enter] = legal_plays(position({BAR: 2, 13: 5, 8: 3, 6: 5}, START), Roll(4, 3))
    assert str(enter) == "25/22 25/21"
    off = legal_plays(position({6: 1, 1: 1}, AWAY), Roll(6, 1))
    assert texts(off) == {"6/0 1/0", "6/5 5/0"}


def test_play_text_puts_the_hit_mark_where_gnubg_does() -> None:
    # gnubg 1.07 exports "31: 6/5* 8/5" (imported) as "8/5* 6/5": the mark goes on the first
    # step written that lands on the hit point, whichever checker got there first.
    pos = position({6: 5, 8: 3, 13: 5, 24: 2}, {20: 1, 6: 5, 8: 3, 13: 5, 24: 1})
    result = play_from_moves(pos, Roll(3, 1), [(6, 5), (8, 5)])
    assert result is not None
    low_first = Play((Step(6, 5, 1, hit=True), Step(8, 5, 3)), result.result)
    assert str(low_first) == "8/5* 6/5"
    passing = Play((Step(6, 5, 1, hit=True), Step(5, 3, 2)), result.result)
    assert str(passing) == "6/5* 5/3"


def test_step_text() -> None:
    assert str(Step(13, 8, 5)) == "13/8"
    assert str(Step(BAR, 20, 5, hit=True)) == "25/20*"
    assert str(Step(3, OFF, 6)) == "3/0"


# --- play_from_moves -------------------------------------------------------------------------


def test_play_from_moves_accepts_compressed_moves_and_rejects_illegal_ones() -> None:
    start = Position.initial()
    play = play_from_moves(start, Roll(6, 5), [(24, 13)])
    assert play is not None and str(play) == "24/18 18/13"
    assert play_from_moves(start, Roll(5, 4), [(13, 8), (13, 10)]) is None  # wrong die
    assert play_from_moves(start, Roll(5, 4), [(13, 8)]) is None  # one die of two
    assert play_from_moves(start, Roll(5, 4), [(12, 7), (6, 2)]) is None  # no checker on 12
    assert play_from_moves(start, Roll(5, 4), [(8, 9)]) is None  # backwards


# --- Game end --------------------------------------------------------------------------------


def test_game_value_single_gammon_backgammon() -> None:
    won: dict[int, int] = {}
    assert game_value(position(won, {6: 15})) is GameValue.GAMMON
    assert game_value(position(won, {6: 13})) is GameValue.SINGLE  # two off
    assert game_value(position(won, {6: 14, 20: 1})) is GameValue.BACKGAMMON  # in my home
    assert game_value(position(won, {6: 14, 19: 1})) is GameValue.BACKGAMMON
    assert game_value(position(won, {6: 14, 18: 1})) is GameValue.GAMMON  # my 7: not home
    assert game_value(position(won, {6: 14, BAR: 1})) is GameValue.BACKGAMMON
    assert game_value(Position.initial()) is None
    assert int(GameValue.SINGLE) * 2 == 2 and int(GameValue.BACKGAMMON) * 4 == 12


def test_game_value_is_none_until_all_fifteen_are_off() -> None:
    assert game_value(position({1: 1}, {6: 15})) is None


def test_is_closed_out() -> None:
    assert is_closed_out(position({BAR: 1, 6: 14}, CLOSED))
    open_one = {6: 3, 5: 2, 4: 2, 3: 2, 2: 2, 24: 4}
    assert not is_closed_out(position({BAR: 1, 6: 14}, open_one))
    assert not is_closed_out(position({6: 15}, CLOSED))  # closed board, nobody on the bar

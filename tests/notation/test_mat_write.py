"""Writing `.mat` files: gnubg's layout, golden files, and write-then-read round trips."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from digitise.errors import MatFormatError, OutputError
from digitise.game.match import Score
from digitise.game.position import CHECKERS, OFF, Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Play, Roll, game_value, is_closed_out, legal_plays
from digitise.notation.mat import (
    CLOSED_OUT_ROLL,
    format_mat,
    holds_name,
    parse_mat,
    players_problem,
    read_mat,
    with_closed_out_dances,
    writable_name,
    write_mat,
)
from tests.conftest import real_matches
from tests.notation.test_mat_read import read_real

GOLDEN = Path(__file__).parent / "golden"


def greedy_game(seed: int) -> GameRecord:
    """A whole game by a seeded greedy player who likes hitting and closing its board.

    Seed 252 gives a short game with eight closed-out dances and a backgammon.
    """
    rng = random.Random(seed)
    boards = {Side.BOTTOM: Position.initial().mine, Side.TOP: Position.initial().mine}
    side = Side.BOTTOM if rng.random() < 0.5 else Side.TOP
    actions: list[Action] = []
    while True:
        position = Position(boards[side], boards[side.opponent])
        roll = Roll(rng.randint(1, 6), rng.randint(1, 6))
        plays = legal_plays(position, roll)
        if not plays:
            actions.append(Action(side, ActionKind.MOVE, roll=roll))
        else:
            def merit(play: Play) -> tuple[float, str]:
                mine = play.result.mine
                made = sum(1 for p in range(1, 7) if mine[p] >= 2)
                blots = sum(1 for p in range(1, 25) if mine[p] == 1)
                hits = sum(s.hit for s in play.steps)
                score = mine[OFF] * 4 + hits * 10 + made * 8 - blots - play.result.pip_count[0] / 40 \
                    + play.result.theirs[25] * 5
                return score, str(play)

            play = max(plays, key=merit)
            actions.append(Action(side, ActionKind.MOVE, roll=roll, play=play))
            boards[side], boards[side.opponent] = play.result.mine, play.result.theirs
            if boards[side][OFF] == CHECKERS:
                value = game_value(Position(boards[side], boards[side.opponent]))
                assert value is not None
                return GameRecord(1, Score(), tuple(actions), side, int(value))
        side = side.opponent


def closed_out_match() -> MatchRecord:
    return MatchRecord(3, ("White", "Black"), (greedy_game(252),),
                       (("Event", "digitise golden: closed out, bear-off"), ("EventDate", "2026.11.22")))


def without_closed_out_dances(match: MatchRecord) -> MatchRecord:
    """The match as a recording note holds it: no turn for a player closed out on the bar."""
    games = []
    for game in match.games:
        boards = {Side.BOTTOM: Position.initial().mine, Side.TOP: Position.initial().mine}
        kept = []
        for action in game.actions:
            if action.kind is ActionKind.MOVE and action.play is None and is_closed_out(
                    Position(boards[action.player], boards[action.player.opponent])):
                continue
            kept.append(action)
            if action.play is not None:
                boards[action.player] = action.play.result.mine
                boards[action.player.opponent] = action.play.result.theirs
        games.append(replace(game, actions=tuple(kept)))
    return replace(match, games=tuple(games))


def body(text: str) -> list[str]:
    """The lines that describe games (metadata lines are the writer's own business)."""
    return [line for line in text.split("\n") if not line.startswith(";")]


# ----------------------------------------------------------------------------------------------
# (c) golden files


def test_golden_hand_written_match_reads_and_writes_back_byte_for_byte() -> None:
    text = (GOLDEN / "club_match.mat").read_text()
    result = parse_mat(text)
    assert result.problems == ()
    match = result.match
    assert match.metadata == (("Event", "Club night"), ("Round", "1"), ("EventDate", "2026.11.21"))
    assert [(g.winner, g.points) for g in match.games] == [
        (Side.TOP, 2), (Side.TOP, 1), (Side.BOTTOM, 2), (None, None)]
    assert [g.score for g in match.games] == [Score(0, 0), Score(0, 2), Score(0, 3), Score(2, 3)]
    assert format_mat(match) == text


def test_golden_hand_written_match_is_what_it_says() -> None:
    games = read_mat(GOLDEN / "club_match.mat").match.games
    first = games[0].actions
    # 61: 13/7* hits, then the right player dances twice against the 4, 5, 6 points.
    assert first[2].play is not None and [s.hit for s in first[2].play.steps] == [True, False]
    assert [a.play for a in first[3:6:2]] == [None, None]
    assert [(a.player, a.kind, a.cube) for a in first if a.kind is not ActionKind.MOVE] == [
        (Side.BOTTOM, ActionKind.DOUBLE, 2), (Side.TOP, ActionKind.TAKE, None),
        (Side.TOP, ActionKind.DOUBLE, 4), (Side.BOTTOM, ActionKind.DROP, None)]
    second = games[1].actions
    assert second[0].player is Side.TOP  # the right-hand player opens
    assert second[-2:] == (Action(Side.BOTTOM, ActionKind.MOVE, roll=Roll(2, 1)),
                           Action(Side.BOTTOM, ActionKind.RESIGN, points=1))
    assert games[2].actions[-1] == Action(Side.TOP, ActionKind.RESIGN, points=2)


@pytest.mark.parametrize("dialect", ["club_match_studio.mat", "club_match_galaxy.mat"])
def test_other_writers_dialects_of_the_golden_match(dialect: str) -> None:
    ours = read_mat(GOLDEN / "club_match.mat")
    theirs = read_mat(GOLDEN / dialect)
    assert theirs.problems == ()
    assert theirs.match.games == ours.match.games
    assert body(format_mat(theirs.match)) == body((GOLDEN / "club_match.mat").read_text())


def test_golden_closed_out_game_with_backgammon() -> None:
    match = closed_out_match()
    game = match.games[0]
    # The point of this golden: consecutive dances against a closed board, bear-off, backgammon.
    boards = {Side.BOTTOM: Position.initial().mine, Side.TOP: Position.initial().mine}
    closed = 0
    for action in game.actions:
        position = Position(boards[action.player], boards[action.player.opponent])
        closed += is_closed_out(position)
        if action.play is not None:
            boards[action.player], boards[action.player.opponent] = action.play.result.mine, \
                action.play.result.theirs
    assert closed >= 3
    assert (game.winner, game.points) == (Side.BOTTOM, 3)
    text = (GOLDEN / "closed_out_backgammon.mat").read_text()
    assert format_mat(match) == text
    result = parse_mat(text)
    assert result.problems == ()
    assert result.match == match


# ----------------------------------------------------------------------------------------------
# gnubg's layout, line by line


def line_of(match: MatchRecord, start: str) -> str:
    return next(line for line in format_mat(match).split("\n") if line.startswith(start))


def one_game(*actions: Action, winner: Side | None = None, points: int | None = None) -> MatchRecord:
    return MatchRecord(7, ("Alice", "Bob"), (GameRecord(1, Score(), actions, winner, points),))


def play_of(position: Position, roll: Roll, text: str) -> Play:
    return next(p for p in legal_plays(position, roll) if str(p) == text)


def test_layout_columns_and_score_line() -> None:
    start = Position.initial()
    p31 = play_of(start, Roll(3, 1), "8/5 6/5")
    match = one_game(Action(Side.BOTTOM, ActionKind.MOVE, Roll(3, 1), p31),
                     Action(Side.TOP, ActionKind.MOVE, Roll(6, 6), play_of(p31.result.swap(), Roll(6, 6),
                                                                          "24/18 24/18 13/7 13/7")))
    text = format_mat(match)
    assert text.startswith(" 7 point match\n\n Game 1\n Alice : 0                      Bob : 0\n")
    line = line_of(match, "  1)")
    assert line == "  1) 31: 8/5 6/5                 66: 24/18 24/18 13/7 13/7"
    assert line.index("66:") == 33 and text.endswith("\n") and "\r" not in text


def test_layout_long_left_entry_keeps_a_space_before_the_right_column() -> None:
    # An entry longer than gnubg's 27 characters pushes the right column out, never into it.
    mine = [0] * 26
    mine[25], mine[6] = 2, 13
    theirs = [0] * 26
    theirs[1], theirs[2], theirs[13] = 1, 1, 13
    position = Position(tuple(mine), tuple(theirs))
    play = play_of(position, Roll(1, 1), "25/24* 25/24 24/23* 24/23")
    match = one_game(Action(Side.BOTTOM, ActionKind.MOVE, Roll(1, 1), play),
                     Action(Side.TOP, ActionKind.MOVE, Roll(2, 1)))
    assert line_of(match, "  1)") == "  1) 11: 25/24* 25/24 24/23* 24/23 21: "


def test_layout_results_in_each_column() -> None:
    double, take, drop = (Action(Side.BOTTOM, ActionKind.DOUBLE, cube=2), Action(Side.TOP, ActionKind.TAKE),
                          Action(Side.TOP, ActionKind.DROP))
    dropped = one_game(double, drop, winner=Side.BOTTOM, points=1)
    assert format_mat(dropped).split("\n")[4:7] == ["  1)  Doubles => 2                Drops",
                                                     "      Wins 1 point", ""]
    conceded = one_game(double, take, Action(Side.TOP, ActionKind.RESIGN, points=6), winner=Side.BOTTOM,
                        points=6)
    assert format_mat(conceded).split("\n")[5] == "      Wins 6 points"
    left_drop = one_game(Action(Side.TOP, ActionKind.DOUBLE, cube=2), Action(Side.BOTTOM, ActionKind.DROP),
                         winner=Side.TOP, points=1)
    assert line_of(left_drop, "  2)") == "  2)  Drops                       Wins 1 point "
    assert all(len(line) >= 18 for line in format_mat(conceded).split("\n") if "Wins" in line)


def test_writer_is_deterministic_and_refuses_to_overwrite(tmp_path: Path) -> None:
    match = closed_out_match()
    path = write_mat(match, tmp_path / "m.mat")
    assert path.read_bytes() == format_mat(closed_out_match()).encode()
    with pytest.raises(OutputError):
        write_mat(match, path)
    write_mat(match, path, overwrite=True)
    assert read_mat(path).match == match


def test_unrecorded_closed_out_turns_are_written_as_dances() -> None:
    full = closed_out_match()
    sheet = without_closed_out_dances(full)
    removed = len(full.games[0].actions) - len(sheet.games[0].actions)
    assert removed >= 3
    filled = with_closed_out_dances(sheet)
    assert len(filled.games[0].actions) == len(full.games[0].actions)
    for ours, back in zip(full.games[0].actions, filled.games[0].actions, strict=True):
        assert (back.player, back.kind, back.play) == (ours.player, ours.kind, ours.play)
        assert back.roll in (ours.roll, CLOSED_OUT_ROLL)
    assert format_mat(sheet) == format_mat(filled)
    again = parse_mat(format_mat(sheet))
    assert again.problems == ()
    assert again.match == filled
    assert with_closed_out_dances(full) is full


def test_a_player_moving_twice_when_not_closed_out_is_refused() -> None:
    match = read_mat(GOLDEN / "club_match.mat").match
    first = match.games[0]
    # Drop the right player's 62 at the start: the left player then moves twice.
    broken = replace(match, games=(replace(first, actions=first.actions[:1] + first.actions[2:]),))
    with pytest.raises(MatFormatError, match="acts twice in a row"):
        format_mat(broken)


@pytest.mark.parametrize("name", ["", "  ", "Al: ice", "Al\nice", "Al\tice", "Al\x00"])
def test_writer_refuses_names_gnubg_cannot_read(name: str) -> None:
    # The writer holds names to the same rule as the CLI's --players check and the header vote.
    assert not (name.strip() and holds_name(name))
    with pytest.raises(MatFormatError, match="cannot be written"):
        format_mat(MatchRecord(1, (name, "Bob"), ()))


# ----------------------------------------------------------------------------------------------
# (b) write, then read: the same match


@pytest.mark.parametrize("path", real_matches(), ids=lambda p: p.name)
def test_real_match_round_trips(path: Path) -> None:
    match = read_real(path).match
    again = parse_mat(format_mat(match))
    assert again.problems == ()
    assert again.match == match  # dice, plays (steps and hits), cube actions, winners, points, metadata
    for ours, back in zip(match.games, again.match.games, strict=True):
        for a, b in zip(ours.actions, back.actions, strict=True):
            if a.play is not None:
                assert b.play is not None and b.play.result == a.play.result


def test_metadata_lines_come_first_with_gnubgs_date_form() -> None:
    match = MatchRecord(5, ("Alice", "Bob"), (), (("Event", 'Club "open" night'), ("Round", "2"),
                                                  ("EventDate", "2026-11-5")))
    assert format_mat(match) == ('; [Event "Club \'open\' night"]\n; [Round "2"]\n; [EventDate "2026.11.05"]\n'
                                 "\n 5 point match\n\n")


def test_missing_points_fall_back_to_the_resignation() -> None:
    match = one_game(Action(Side.BOTTOM, ActionKind.RESIGN, points=2), winner=Side.TOP)
    assert format_mat(match).split("\n")[4] == " " * 34 + "Wins 2 points"


def test_a_missing_turn_is_written_as_a_dance_only_when_asked() -> None:
    """A board the solver found missing leaves one player moving twice: strict refuses, fill_gaps writes."""
    from digitise.errors import MatFormatError
    from digitise.game import Action, ActionKind, GameRecord, MatchRecord, Position, Roll, Score, Side
    from digitise.game.rules import play_from_moves

    first = play_from_moves(Position.initial(), Roll(3, 1), [(8, 5), (6, 5)])
    after = first.result.swap().swap()  # still the bottom player's view
    second = play_from_moves(after, Roll(6, 5), [(24, 13)])
    assert first is not None and second is not None
    game = GameRecord(1, Score(), (Action(Side.BOTTOM, ActionKind.MOVE, Roll(3, 1), first),
                                   Action(Side.BOTTOM, ActionKind.MOVE, Roll(6, 5), second)))
    match = MatchRecord(3, ("Alice", "Bruno"), (game,))
    with pytest.raises(MatFormatError, match="acts twice in a row"):
        format_mat(match)
    text = format_mat(match, fill_gaps=True)
    lines = [line for line in text.splitlines() if line.strip().startswith(("1)", "2)"))]
    # The top player's missing turn is a dance line in the right column, then the bottom player goes on.
    assert lines[0].startswith("  1) 31: 8/5 6/5") and lines[0][33:].strip().endswith(":")
    assert lines[1].startswith("  2) 65: 24/18 18/13")


@pytest.mark.parametrize(("name", "written"), [("Me:", "Me"), ("Ann:Lee", "Ann Lee"), ("  Kato \t Hideo\n", "Kato Hideo"),
                                               (":", ""), ("Mei", "Mei"),
                                               # GNU Backgammon keeps 31 bytes: an OCR'd line of text is cut there.
                                               ("Christopher Alexander Montgomery", ("Christopher Alexander"
                                                                                   " Montgomer")),
                                               ("Zoë " * 8, "Zoë Zoë Zoë Zoë Zoë Zoë Z")])
def test_writable_name_drops_what_a_mat_cannot_hold(name: str, written: str) -> None:
    assert writable_name(name) == written


def test_a_name_gnubg_would_cut_is_refused_with_what_to_do() -> None:
    assert players_problem(("A" * 31, "Bruno")) is None
    problem = players_problem(("A" * 32, "Bruno"))
    assert problem is not None and problem.startswith("GNU Backgammon cuts a name to 31 bytes")
    # Bytes, not letters: sixteen "é" are 32 bytes.
    assert players_problem(("é" * 16, "Bruno")) is not None and players_problem(("é" * 15, "Bruno")) is None


def test_a_long_name_is_cut_between_letters_as_gnubg_keeps_it() -> None:
    """GNU Backgammon keeps 31 bytes of a name; cut by it inside a letter, the file cannot be imported."""
    line = line_of(replace(one_game(), players=("a" * 30 + "é", "Bob")), " a")
    assert line.startswith(" " + "a" * 30 + " : 0") and "é" not in line and line.endswith("Bob : 0")


@pytest.mark.parametrize("length", [-1, 65])
def test_a_match_length_gnubg_refuses_is_not_written(length: int) -> None:
    match = MatchRecord(length, ("Alice", "Bruno"), ())
    with pytest.raises(MatFormatError, match=f"a {length}-point match cannot be written"):
        format_mat(match)

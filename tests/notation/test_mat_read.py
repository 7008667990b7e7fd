"""Reading `.mat` files: the real matches of ../shared, every writer's dialect, and bad input."""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from digitise.errors import MatFormatError
from digitise.game.position import OFF, Position, Side
from digitise.game.record import ActionKind, GameRecord, MatchRecord
from digitise.game.rules import Roll, legal_plays
from digitise.notation.mat import MatProblem, MatReadResult, parse_mat, parse_steps, read_mat, read_mat_strict
from tests.conftest import MATCHES_BAD, real_matches

GOLDEN = Path(__file__).parent / "golden"


@functools.cache
def read_real(path: Path) -> MatReadResult:
    """Each real match is read once per test session (reading replays ~200 plays a file)."""
    return read_mat(path)


def replay(game: GameRecord) -> list[tuple[Side, Position]]:
    """Replays a game independently of the reader: asserts that every play is legal for its roll
    and returns (mover, position before) for every move."""
    boards = {Side.BOTTOM: Position.initial().mine, Side.TOP: Position.initial().mine}
    seen = []
    for index, action in enumerate(game.actions):
        if action.kind is not ActionKind.MOVE:
            continue
        assert action.roll is not None
        before = Position(boards[action.player], boards[action.player.opponent])
        seen.append((action.player, before))
        legal = legal_plays(before, action.roll)
        if action.play is None:
            following = game.actions[index + 1:]
            conceded = bool(following) and following[0].kind is ActionKind.RESIGN \
                and following[0].player is action.player
            assert not legal or conceded, f"game {game.number}: roll {action.roll} without a play"
            continue
        assert action.play.steps, "an empty play must be None"
        results = {(p.result.mine, p.result.theirs) for p in legal}
        assert (action.play.result.mine, action.play.result.theirs) in results
        assert not Counter(s.die for s in action.play.steps) - Counter(action.roll.dice)
        boards[action.player] = action.play.result.mine
        boards[action.player.opponent] = action.play.result.theirs
    return seen


# ----------------------------------------------------------------------------------------------
# (a) the real matches


@pytest.mark.parametrize("path", real_matches(), ids=lambda p: p.name)
def test_real_match_reads_cleanly_and_every_play_is_legal(path: Path) -> None:
    result = read_real(path)
    assert result.problems == ()
    match = result.match
    text = path.read_bytes().decode("utf-8-sig")
    # Independent counts straight from the text.
    assert len(match.games) == len(re.findall(r"^\s*Game \d+", text, re.MULTILINE))
    assert match.length == int(re.search(r"^\s*(\d+) point match", text, re.MULTILINE).group(1))  # type: ignore[union-attr]
    rolls = sum(1 for g in match.games for a in g.actions if a.kind is ActionKind.MOVE)
    assert rolls == len(re.findall(r"(?<![\d/])[1-6][1-6]:", text))
    assert sum(1 for g in match.games for a in g.actions if a.kind is ActionKind.DOUBLE) == text.count("Doubles =>")
    assert sum(1 for g in match.games for a in g.actions if a.kind is ActionKind.DROP) == text.count("Drops")
    assert all(name for name in match.players)
    score = match.games[0].score
    for game in match.games:
        assert game.score == score, f"game {game.number}"
        replay(game)
        if game.winner is not None:
            assert game.points is not None and game.points > 0
            score = score.add(game.winner, game.points)


def test_real_matches_cover_every_dialect() -> None:
    paths = real_matches()
    if not paths:
        pytest.skip("../shared/data/matches not found")
    kinds = {a.kind for p in paths for g in read_real(p).match.games for a in g.actions}
    assert kinds == set(ActionKind)
    resigned = [g for p in paths for g in read_real(p).match.games
                if any(a.kind is ActionKind.RESIGN for a in g.actions)]
    assert len(resigned) >= 25
    borne_off = [g for p in paths for g in read_real(p).match.games
                 if g.actions and g.actions[-1].play is not None and g.actions[-1].play.result.mine[OFF] == 15]
    assert borne_off and all(g.winner is g.actions[-1].player for g in borne_off)


def test_galaxy_losses_line_is_the_losers_resignation(matches_dir: Path) -> None:
    # " 34) 61: 4/0 1/0                  Losses 4 point" then "      Wins 4 point":
    # the right player resigns a gammon (cube 2), the left wins 4.
    game = read_real(matches_dir / "galaxy_10315440_5pt.mat").match.games[2]
    assert game.actions[-1].kind is ActionKind.RESIGN
    assert game.actions[-1].player is Side.TOP and game.actions[-1].points == 4
    assert (game.winner, game.points) == (Side.BOTTOM, 4)


def test_capped_last_game_keeps_the_written_points(matches_dir: Path) -> None:
    # 3-point match at 0-0, cube 2: a gammon resigned is worth 4, written "Wins 3 point and the match".
    match = read_real(matches_dir / "galaxy_5654328_3pt.mat").match
    last = match.games[-1]
    assert (last.winner, last.points) == (Side.BOTTOM, 3)
    assert last.actions[-1].kind is ActionKind.RESIGN and last.actions[-1].points == 3


def test_crlf_low_high_dice_file(matches_dir: Path) -> None:
    path = matches_dir / "gibbon_7point.mat"
    assert b"\r\n" in path.read_bytes()
    match = read_real(path).match
    assert match.players == ("JoeBlack", "SnowWhite") or all(match.players)
    first = match.games[0].actions[0]
    assert first.roll is not None and first.roll.high >= first.roll.low


# ----------------------------------------------------------------------------------------------
# Dialects, one feature at a time

HEADER = " 3 point match\n\n Game 1\n Alice : 0                      Bob : 0\n"


def moves(result: MatReadResult) -> list[str]:
    return [f"{a.player.value[0]}:{a.roll}:{a.play}" for g in result.match.games for a in g.actions
            if a.kind is ActionKind.MOVE]


def test_compressed_paths_repeat_counts_bar_and_off_words_are_the_same_plays() -> None:
    plain = parse_mat(HEADER + "  1) 66: 24/18 24/18 13/7 13/7   64: 24/18 18/14\n")
    compact = parse_mat(HEADER + "  1) 66: 24/18(2) 13/7(2)        64: 24/14\n")
    chained = parse_mat(HEADER + "  1) 66: 24/18(2) 13/7(2)        64: 24/18/14\n")
    assert plain.problems == compact.problems == chained.problems == ()
    assert moves(plain) == moves(compact) == moves(chained)
    opening = HEADER + "  1) 31: 8/5 6/5                 62: 24/18 13/11\n"
    bar = parse_mat(opening + "  2) 61: 13/7* 8/7               43: bar/21 24/21\n")
    num = parse_mat(opening + "  2) 61: 13/7 8/7                43: 25/21 24/21\n")
    assert bar.problems == num.problems == ()
    assert moves(bar) == moves(num)
    assert moves(bar)[2:] == ["b:61:13/7* 8/7", "t:43:25/21 24/21"]


def test_low_high_dice_and_any_step_order() -> None:
    a = parse_mat(HEADER + "  1) 13: 6/5 8/5                 24: 6/4 8/4\n")
    b = parse_mat(HEADER + "  1) 31: 8/5 6/5                 42: 8/4 6/4\n")
    assert a.problems == b.problems == ()
    assert moves(a) == moves(b)


def test_hit_marks_pick_between_plays_that_end_alike() -> None:
    # 64 from 24 after the opponent's blot landed on our 20: 24/20*/14 hits, 24/18/14 does not.
    text = HEADER + "  1) 21: 13/11 6/5               21: 6/5 6/4\n  2) 64: 24/20*/14\n"
    hit = parse_mat(text)
    assert hit.problems == ()
    last = hit.match.games[0].actions[-1]
    assert last.play is not None and any(s.hit for s in last.play.steps)
    quiet = parse_mat(text.replace("24/20*/14", "24/18/14"))
    last = quiet.match.games[0].actions[-1]
    assert last.play is not None and not any(s.hit for s in last.play.steps)


def test_right_player_opens_and_studio_columns() -> None:
    text = (" 5 point match\n\n Game 1\n Alice : 0                             Bob : 0\n"
            "  1)                                    31: 8/5 6/5\n"
            "  2) 64: 24/18 13/9                     Doubles => 2\n"
            "  3)  Takes                            62: 13/7 13/11\n")
    result = parse_mat(text)
    assert result.problems == ()
    sides = [(a.player, a.kind) for a in result.match.games[0].actions]
    assert sides == [(Side.TOP, ActionKind.MOVE), (Side.BOTTOM, ActionKind.MOVE), (Side.TOP, ActionKind.DOUBLE),
                     (Side.BOTTOM, ActionKind.TAKE), (Side.TOP, ActionKind.MOVE)]
    assert result.match.games[0].winner is None


def test_bom_crlf_and_tabs() -> None:
    text = "\ufeff 3 point match\r\n\r\n Game 1\r\n Alice : 0\t\t\t\tBob : 0\r\n" \
        "  1) 31: 8/5 6/5\t\t\t42: 8/4 6/4\r\n"
    result = parse_mat(text)
    assert result.problems == ()
    assert result.match.players == ("Alice", "Bob")
    assert moves(result) == ["b:31:8/5 6/5", "t:42:8/4 6/4"]


def test_names_with_spaces_and_metadata() -> None:
    text = ('; [Event "Club night"]\n; [Round "Final 2"]\n; [EventDate "2026.11.21"]\n\n 0 point match\n\n'
            " Game 1\n Lucky Lux : 0                  Diablo del Dados : 0\n  1) 31: 8/5 6/5\n")
    result = parse_mat(text)
    assert result.problems == ()
    assert result.match.players == ("Lucky Lux", "Diablo del Dados")
    assert result.match.length == 0
    assert result.match.metadata == (("Event", "Club night"), ("Round", "Final 2"), ("EventDate", "2026.11.21"))


def test_dance_roll_then_resign_and_question_marks() -> None:
    # The right player is hit, dances twice (gnubg's "65: ", Studio's "Cannot Move"), rolls 63
    # and concedes (Studio's "????", then "Wins" numbered in the left column).
    text = (HEADER + "  1) 31: 8/5 6/5                 62: 24/18 13/11\n"
            "  2) 61: 13/7* 8/7               65: \n"
            "  3) 42: 8/4 6/4                 54: Cannot Move\n"
            "  4) 21: 24/22 24/23             63: ????\n"
            "  5)  Wins 1 point\n")
    result = parse_mat(text)
    assert result.problems == ()
    game = result.match.games[0]
    top_moves = [a for a in game.actions if a.player is Side.TOP and a.kind is ActionKind.MOVE]
    assert [a.play is None for a in top_moves] == [False, True, True, True]
    assert game.actions[-1] == game.actions[-1].__class__(Side.TOP, ActionKind.RESIGN, points=1)
    assert (game.winner, game.points) == (Side.BOTTOM, 1)


def test_drop_by_the_right_player_then_lone_wins_line() -> None:
    text = HEADER + "  1) 31: 8/5 6/5                 42: 8/4 6/4\n  2)  Doubles => 2                Drops\n" \
        "      Wins 1 point\n\n Game 2\n Alice : 1                      Bob : 0\n  1) 21: 13/11 6/5\n"
    result = parse_mat(text)
    assert result.problems == ()
    first, second = result.match.games
    assert [a.kind for a in first.actions][-2:] == [ActionKind.DOUBLE, ActionKind.DROP]
    assert (first.winner, first.points) == (Side.BOTTOM, 1)
    assert second.score.bottom == 1


# ----------------------------------------------------------------------------------------------
# (e) malformed input: problems with line numbers, never a crash


def reasons(result: MatReadResult) -> list[tuple[int, str]]:
    return [(p.line, p.reason) for p in result.problems]


def test_illegal_move_is_reported_and_kept_and_the_game_goes_on() -> None:
    text = HEADER + "  1) 54: 13/8 13/10               42: 8/4 6/4\n  2) 31: 8/5 6/5                 21: 13/11 6/5\n"
    result = parse_mat(text)
    assert [(p.line) for p in result.problems] == [5]
    assert "not a legal play" in result.problems[0].reason
    actions = result.match.games[0].actions
    assert actions[0].play is None and actions[0].roll == Roll(5, 4)
    assert all(a.play is not None for a in actions[1:])


def test_bad_dice_unreadable_play_and_junk_lines() -> None:
    text = HEADER + ("  1) 72: 13/6 8/7                42: 8/4 6/4\n"
                     "  2) 31: 8/5 6/x                 21: 13/11 6/5\n"
                     "  this line means nothing\n"
                     "  3) 65: 24/13                   43: 24/20 13/10\n")
    result = parse_mat(text)
    found = reasons(result)
    assert (5, "bad dice '72'") in found
    assert any(line == 6 and "cannot read the play" in why for line, why in found)
    assert any(line == 7 and "unrecognised" in why for line, why in found)
    # The rest is still read.
    assert moves(result)[-2:] == ["b:65:24/18 18/13", "t:43:24/20 13/10"]


def test_garbage_game_resyncs_at_the_next_game() -> None:
    text = (HEADER + "  1) 31: 8/5 6/5  Doubles Doubles Takes Drops\n  2) ???\n\n"
            " Game 2\n Alice : 0                      Bob : 0\n  1) 21: 13/11 6/5               43: 24/20 13/10\n")
    result = parse_mat(text)
    assert result.problems
    assert [p.line for p in result.problems] == [3, 5, 6]
    assert result.problems[0].reason == "game 1 has no result"
    assert len(result.match.games) == 2
    assert moves(result)[-2:] == ["b:21:13/11 6/5", "t:43:24/20* 13/10"]  # the hit is found, not written


def test_truncated_file() -> None:
    text = (GOLDEN / "club_match.mat").read_text()
    cut = text[: text.index("  5) 52: 13/11 13/8") + 14]
    result = parse_mat(cut)
    assert result.problems and result.problems[0].line == cut.count("\n") + 1
    assert len(result.match.games) == 1


@pytest.mark.parametrize("junk", [b"\x00\x01\x02PK\x03\x04" * 50, bytes(range(256)) * 4])
def test_binary_junk(tmp_path: Path, junk: bytes) -> None:
    path = tmp_path / "junk.mat"
    path.write_bytes(junk)
    result = read_mat(path)
    assert result.match.games == ()
    assert result.problems
    with pytest.raises(MatFormatError) as info:
        read_mat_strict(path)
    assert str(path) in str(info.value)


def test_empty_and_no_match(tmp_path: Path) -> None:
    assert reasons(parse_mat("")) == [(0, "no match found (no 'N point match' line and no 'Game N')")]
    path = tmp_path / "notes.mat"
    path.write_text("my shopping list\n")
    with pytest.raises(MatFormatError) as info:
        read_mat_strict(path)
    assert info.value.message == f"{path}: no match found (no 'N point match' line and no 'Game N')"
    assert read_mat(path).problems[1] == MatProblem(1, "unrecognised line before the first game: 'my shopping list'")


def test_not_utf8_is_read_as_latin1_with_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "latin1.mat"
    path.write_bytes(HEADER.replace("Alice", "Ren\xe9e").encode("latin-1") + b"  1) 31: 8/5 6/5\n")
    result = read_mat(path)
    assert result.match.players[0] == "Ren\xe9e"
    assert result.problems == (MatProblem(4, "not UTF-8 (read as Latin-1)"),)
    with pytest.raises(MatFormatError):
        read_mat_strict(path)


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(MatFormatError) as info:
        read_mat(tmp_path / "absent.mat")
    assert "absent.mat" in info.value.message


def test_strict_reader_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.mat"
    path.write_text(HEADER + "  1) 54: 13/8 13/10\n")
    with pytest.raises(MatFormatError) as info:
        read_mat_strict(path)
    assert info.value.where == "line 5"
    assert info.value.message.startswith(f"{path}: line 5: ")
    good = tmp_path / "good.mat"
    good.write_text(HEADER + "  1) 54: 13/8 13/9\n")
    assert isinstance(read_mat_strict(good), MatchRecord)


def test_cube_and_turn_errors() -> None:
    text = HEADER + ("  1) 31: 8/5 6/5                  Takes\n"
                     "  2)  Doubles => 4                Takes\n"
                     "  3)  Doubles => 4\n")
    found = reasons(parse_mat(text))
    assert (5, "take without a double by the opponent") in found
    assert (6, "double to 4 with the cube at 1") in found
    assert any(line == 7 and "does not own the cube" in why for line, why in found)


def test_double_in_crawford_game_is_reported() -> None:
    text = (" 3 point match\n\n Game 1\n Alice : 2                      Bob : 0\n"
            "  1) 31: 8/5 6/5                  Doubles => 2\n  2)  Takes\n")
    assert (5, "double in the Crawford game") in reasons(parse_mat(text))


def test_wrong_wins_and_score_lines() -> None:
    text = (HEADER + "  1) 31: 8/5 6/5                 42: 8/4 6/4\n  2)  Doubles => 2                Drops\n"
            "                                  Wins 1 point\n\n"
            " Game 2\n Alice : 0                      Bob : 5\n  1) 21: 13/11 6/5\n")
    found = reasons(parse_mat(text))
    assert (7, "'Wins' in the right column, but the left player won") in found
    assert (10, "score 0-5 in the file, 1-0 by the results so far") in found


# ----------------------------------------------------------------------------------------------
# matches-bad: real files other programs misread


@pytest.mark.parametrize("name, line, reason", [
    ("galaxy_8320876_16pt.mat", 17, "empty first player name"),
    ("galaxy_3755271_3pt.mat", 17, "empty second player name"),
    ("galaxy_8600770_16pt.mat", 18, "resignation before the first roll (GNU Backgammon cannot import it)"),
    ("galaxy_1988690_5pt.mat", 72, "resignation worth 4 with the cube at 1"),
    ("bgstudio_Minchy_Llabba_13pt_2023_02_24_19_44_27.mat", 220, "resignation worth 4016 with the cube at 4"),
    ("galaxy_1100068_3pt.mat", 75, "'Wins' in the left column, but the right player won"),
])
def test_bad_real_files_report_their_problem(name: str, line: int, reason: str) -> None:
    path = MATCHES_BAD / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    result = read_real(path)
    assert MatProblem(line, reason) in result.problems
    assert result.match.games
    with pytest.raises(MatFormatError):
        read_mat_strict(path)


# ----------------------------------------------------------------------------------------------
# Fuzz: whatever is done to a good file, the reader answers with problems, never an exception

_GOOD = (GOLDEN / "club_match.mat").read_text()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_GOOD)), st.integers(0, 12),
                          st.text(alphabet=" \t\n\r0123456789/:*()?=>abDTWLgo", max_size=8)),
                max_size=6))
def test_reader_never_crashes_on_damaged_text(edits: list[tuple[int, int, str]]) -> None:
    text = _GOOD
    for at, cut, insert in edits:
        text = text[:at] + insert + text[at + cut:]
    result = parse_mat(text)
    assert isinstance(result.match, MatchRecord)
    lines = text.count("\n") + text.count("\r") + 1
    assert all(0 <= p.line <= lines and p.reason for p in result.problems)
    if text == _GOOD:
        assert result.problems == ()


def test_a_match_longer_than_gnubg_plays_is_a_problem(tmp_path: Path) -> None:
    text = HEADER.replace(" 3 point match", " 99 point match") + "  1) 31: 8/5 6/5\n"
    assert reasons(parse_mat(text)) == [(1, "a 99 point match: GNU Backgammon plays at most 64 points")]
    assert parse_mat(text.replace(" 99 point", " 64 point")).problems == ()
    path = tmp_path / "long.mat"
    path.write_text(text)
    with pytest.raises(MatFormatError) as info:
        read_mat_strict(path)
    assert info.value.message == f"{path}: line 1: a 99 point match: GNU Backgammon plays at most 64 points"


def test_parse_steps_is_the_one_reader_of_written_plays() -> None:
    assert parse_steps("24/18/14 bar/22* 6/off") == ([(24, 18), (18, 14), (25, 22), (6, 0)], {22})
    assert parse_steps("13/9(2), 8/4*/2*") == ([(13, 9), (13, 9), (8, 4), (4, 2)], {4, 2})
    assert parse_steps("  ") == ([], set())
    for bad, reason in (("8-4", "cannot read '8-4'"), ("4/8", "moves backwards: 4 to 8"), ("30/20", "not 0"),
                        ("13/9(0)", "repeats a step 0 times"), ("off/3", "cannot read"), ("6/bar", "backwards")):
        with pytest.raises(ValueError, match=re.escape(reason)):
            parse_steps(bad)


def test_a_play_written_out_of_order_is_read() -> None:
    text = HEADER + "  1) 64: 18/14 24/18\n"
    result = parse_mat(text)
    assert result.problems == ()
    assert str(result.match.games[0].actions[0].play) == "24/18 18/14"


def test_a_file_too_large_for_a_match_is_refused_and_long_lines_are_not_quoted_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from digitise.notation import mat, mat_read

    big = tmp_path / "big.mat"
    big.write_text(" 1 point match\n\n Game 1\n A : 0    B : 0\n" + "x" * 5000 + "\n", encoding="utf-8")
    problems = mat.read_mat(big).problems
    assert problems and all(len(p.reason) <= 160 for p in problems)
    monkeypatch.setattr(mat_read, "MAX_MAT_BYTES", 1000)
    with pytest.raises(MatFormatError, match="too large for a match file"):
        mat.read_mat(big)


def test_a_game_after_the_match_was_won_is_a_problem(matches_dir: Path) -> None:
    """GNU Backgammon stops at the game that wins the match: a game after it (a misread length) is said."""
    from dataclasses import replace

    from digitise.notation.mat import format_mat

    match = next(m for m in (read_real(p).match for p in real_matches()) if len(m.games) >= 2 and m.games[0].points)
    first = match.games[0]
    assert first.points is not None and first.winner is not None
    short = replace(match, length=first.points, games=match.games[:2])
    problems = parse_mat(format_mat(short), "m.mat").problems
    won = (first.points, 0) if first.winner.value == "bottom" else (0, first.points)
    assert f"game 2 comes after the match was won ({won[0]}-{won[1]} in a {first.points}-point match)" in [
        p.reason for p in problems]

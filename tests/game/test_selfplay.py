"""Self-play: legal, seeded matches with the events asked for."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from digitise.game.match import MatchState
from digitise.game.position import Position
from digitise.game.record import ActionKind, MatchRecord
from digitise.game.rules import is_closed_out, legal_plays
from digitise.game.selfplay import SelfPlayOptions, play_match, play_match_events, play_match_with


def _replay(match: MatchRecord) -> None:
    """Every move is one of the legal plays of its roll; dances have no legal play; the score adds up."""
    state = MatchState(match.length)
    for game in match.games:
        assert game.score == state.score
        pos = Position.initial()  # seen by the bottom player
        for action in game.actions:
            if action.kind is not ActionKind.MOVE:
                continue
            mine = pos if action.player.value == "bottom" else pos.swap()
            assert action.roll is not None
            plays = legal_plays(mine, action.roll)
            if action.play is None:
                assert not plays or is_closed_out(mine)
                continue
            assert any(p.result == action.play.result for p in plays)
            after = action.play.result
            pos = after if action.player.value == "bottom" else after.swap()
        assert game.winner is not None and game.points is not None and game.points >= 1
        state = state.after_game(game.winner, game.points)
    assert state.is_over


@pytest.mark.parametrize("seed", [0, 1, 2, 111, 212])
def test_matches_are_legal_and_complete(seed: int) -> None:
    _replay(play_match(seed))


def test_same_seed_same_match() -> None:
    assert play_match(42) == play_match(42)
    assert play_match(42) != play_match(43)


def test_players_length_and_metadata() -> None:
    options = SelfPlayOptions(length=5, players=("Ann", "Kato"), metadata=(("Event", "Test"),))
    match = play_match(3, options)
    assert match.length == 5 and match.players == ("Ann", "Kato") and match.metadata == (("Event", "Test"),)
    _replay(match)


def test_forced_cube_and_resignation() -> None:
    options = SelfPlayOptions(force=frozenset({"double", "take", "drop", "resign"}))
    match, events = play_match_events(212, options)
    assert {"double", "take", "drop", "resign"} <= events
    kinds = [a.kind for g in match.games for a in g.actions]
    assert ActionKind.TAKE in kinds and ActionKind.DROP in kinds and ActionKind.RESIGN in kinds
    _replay(match)


def test_play_match_with_finds_every_event() -> None:
    seed, _ = play_match_with({"dance", "closed_out"}, start=100)
    assert seed == 111
    assert {"dance", "closed_out"} <= play_match_events(seed)[1]
    with pytest.raises(ValueError, match="unknown events"):
        play_match_with({"gammon"})
    with pytest.raises(ValueError, match="no match"):
        play_match_with({"closed_out"}, start=0, tries=1)


def test_gnubg_reads_self_play_cleanly(tmp_path: Path, gnubg_check: Path) -> None:
    from digitise.notation.mat import format_mat

    paths = []
    for seed, force in ((212, {"double", "take", "drop", "resign"}), (111, set())):
        match = play_match(seed, SelfPlayOptions(players=("Ann", "Kato"), force=frozenset(force)))
        path = tmp_path / f"selfplay-{seed}.mat"
        path.write_text(format_mat(match), encoding="utf-8")
        paths.append(str(path))
    result = subprocess.run([str(gnubg_check), *paths], check=False, capture_output=True, text=True, timeout=300,
                            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin:/usr/games"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 OK" in result.stdout

"""GNU Backgammon itself reads what the writer produces, and says it back the same way.

Every file goes through ONE gnubg process (tests/gnubg_driver.py): the golden
files, the writer's version of every real match, and two files gnubg must
complain about (so that "no warning" is known to mean something).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from digitise.game.position import Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.notation.mat import format_mat, parse_mat
from tests.conftest import real_matches
from tests.gnubg_driver import GnubgImport, import_mats
from tests.notation.test_mat_read import read_real
from tests.notation.test_mat_write import closed_out_match, without_closed_out_dances

pytestmark = pytest.mark.gnubg

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_FILES = ("club_match.mat", "closed_out_backgammon.mat")
NEGATIVE = {
    "illegal.mat": " 3 point match\n\n Game 1\n Alice : 0                      Bob : 0\n"
                   "  1) 31: 17/14 6/5                42: 8/4 6/4 \n",
    "losses.mat": " 3 point match\n\n Game 1\n Alice : 0                      Bob : 0\n"
                  "  1) 31: 8/5 6/5                  Losses 1 point\n\n      Wins 1 point\n",
    # An empty first name kills gnubg 1.07: the driver must carry on with the next files.
    "crash.mat": " 3 point match\n\n Game 1\n  : 0                      Bob : 0\n  1) 31: 8/5 6/5\n",
}


@pytest.fixture(scope="module")
def gnubg_batch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GnubgImport]:
    """gnubg's reading of every file of this module, from a single gnubg run."""
    from tests.conftest import GNUBG

    if GNUBG is None:
        pytest.skip("GNU Backgammon is not installed (apt-get install gnubg)")
    work = tmp_path_factory.mktemp("gnubg_mat")
    paths: dict[str, Path] = {f"golden/{name}": GOLDEN / name for name in GOLDEN_FILES}
    for name, text in NEGATIVE.items():
        paths[f"negative/{name}"] = work / name
        (work / name).write_text(text)
    sheet = work / "closed_out_unrecorded.mat"
    sheet.write_text(format_mat(without_closed_out_dances(closed_out_match())))
    paths["sheet/closed_out_unrecorded.mat"] = sheet
    for real in real_matches():
        ours = work / real.name
        ours.write_text(format_mat(read_real(real).match))
        paths[f"real/{real.name}"] = ours
    results = import_mats(list(paths.values()), gnubg=GNUBG)
    return dict(zip(paths, results, strict=True))


def trimmed(text: str) -> list[str]:
    """Game lines only (from the length line on); gnubg leaves out the final newline after an
    unfinished game."""
    lines = [line for line in text.rstrip("\n").split("\n") if not line.startswith(";")]
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_gnubg_reads_golden_file_and_exports_it_identically(gnubg_batch: dict[str, GnubgImport],
                                                             name: str) -> None:
    result = gnubg_batch[f"golden/{name}"]
    assert result.ok, result.warnings
    assert result.export is not None
    assert trimmed(result.export) == trimmed((GOLDEN / name).read_text())


def test_gnubg_reads_unrecorded_closed_out_turns_as_dances(gnubg_batch: dict[str, GnubgImport]) -> None:
    # gnubg alternates the players whatever the columns say: the filled-in dances keep it in step.
    result = gnubg_batch["sheet/closed_out_unrecorded.mat"]
    assert result.ok, result.warnings
    assert result.export is not None
    back = parse_mat(result.export)
    assert back.problems == ()
    game = back.match.games[0]
    assert [a.play for a in game.actions] == [a.play for a in closed_out_match().games[0].actions]
    assert (game.winner, game.points) == (Side.BOTTOM, 3)


def test_gnubg_understood_the_golden_match(gnubg_batch: dict[str, GnubgImport]) -> None:
    match = gnubg_batch["golden/club_match.mat"].match
    assert match is not None
    info = match["match-info"]
    assert (info["X"]["name"], info["O"]["name"], info["match-length"]) == ("Alice", "Bob", 5)
    results = [(g["info"].get("winner"), g["info"].get("points-won"), g["info"].get("resigned"))
               for g in match["games"]]
    assert results[:3] == [("O", 2, False), ("O", 1, True), ("X", 2, True)]
    assert results[3][0] is None


def test_driver_reports_what_gnubg_complains_about(gnubg_batch: dict[str, GnubgImport]) -> None:
    illegal = gnubg_batch["negative/illegal.mat"]
    assert not illegal.ok
    assert any("Invalid move" in w for w in illegal.warnings)
    losses = gnubg_batch["negative/losses.mat"]
    assert any(w.startswith("Unrecognised move") for w in losses.warnings)
    crash = gnubg_batch["negative/crash.mat"]
    assert crash.match is None and crash.error is not None and not crash.ok


def capped(game: GameRecord, length: int, points: int | None) -> int | None:
    """Points as far as the match goes: writers cap the deciding game, gnubg does not."""
    if points is None or game.winner is None or not length:
        return points
    return min(points, length - game.score.of(game.winner))


def comparable(match: MatchRecord) -> list[tuple[object, ...]]:
    games: list[tuple[object, ...]] = []
    for game in match.games:
        actions = tuple(
            Action(a.player, a.kind, a.roll, a.play, a.cube, capped(game, match.length, a.points))
            if a.kind is ActionKind.RESIGN else a
            for a in game.actions)
        games.append((game.number, game.score, actions, game.winner, capped(game, match.length, game.points)))
    return games


@pytest.mark.parametrize("path", real_matches(), ids=lambda p: p.name)
def test_gnubg_reads_the_writers_version_of_every_real_match(gnubg_batch: dict[str, GnubgImport],
                                                             path: Path) -> None:
    result = gnubg_batch[f"real/{path.name}"]
    assert result.ok, result.warnings
    assert result.export is not None
    ours = read_real(path).match
    back = parse_mat(result.export)
    assert back.problems == ()
    assert back.match.players == ours.players and back.match.length == ours.length
    # Same games: dice, plays (their steps and hits), cube actions, resignations, winners, points.
    assert comparable(back.match) == comparable(ours)
    written = format_mat(ours)
    differing = [(a, b) for a, b in zip(trimmed(written), trimmed(result.export), strict=False) if a != b]
    # gnubg re-exports our text line for line; only a capped "Wins N" of a deciding game may differ.
    assert all("Wins" in a and "Wins" in b for a, b in differing), differing
    assert len(trimmed(written)) == len(trimmed(result.export))


def test_gnubg_sees_the_same_results(gnubg_batch: dict[str, GnubgImport]) -> None:
    if not real_matches():
        pytest.skip("../shared/data/matches not found")
    checked = 0
    for path in real_matches():
        match = gnubg_batch[f"real/{path.name}"].match
        assert match is not None
        ours = read_real(path).match
        assert len(match["games"]) == len(ours.games)
        for game, theirs in zip(ours.games, match["games"], strict=True):
            winner = {"X": Side.BOTTOM, "O": Side.TOP}.get(theirs["info"].get("winner"))
            assert winner is game.winner
            assert capped(game, ours.length, theirs["info"].get("points-won")) == capped(
                game, ours.length, game.points)
            checked += 1
    assert checked >= len(real_matches())

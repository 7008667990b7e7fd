"""The whole job on the bundled samples: real JPEG/PDF pages through the real reader, solver and writer.

Each written ``.mat`` is compared turn by turn with the match the pages were
drawn from (:func:`digitise.solve.compare.compare`): a turn may be flagged
for review, but never silently wrong. GNU Backgammon must import what we
write without a word. ``digitise batch`` must survive a folder of the usual
rubbish, and a page from another match in the middle must be flagged.

The scans are shared by module-scoped fixtures so the file stays well under a
minute on two cores.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from digitise.cli import cli
from digitise.errors import ExitCode
from digitise.game.record import MatchRecord
from digitise.notation.mat import read_mat_strict
from digitise.solve.compare import Comparison, compare
from digitise.solve.report_types import Game, Report, Turn
from digitise.vision.classifier import DEFAULT_MODEL

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


def _pages(match: str, level: str) -> list[Path]:
    folder = SAMPLES / match / level
    pdf = folder / "pages.pdf"
    return [pdf] if pdf.exists() else sorted(folder.glob("page-*.jpg"))


@dataclass(frozen=True)
class Scanned:
    """One ``digitise scan`` run: its exit code, output lines and files."""

    exit_code: int
    stdout: str
    stderr: str
    mat: Path
    report: Path

    def report_doc(self) -> dict[str, Any]:
        return json.loads(self.report.read_text(encoding="utf-8"))

    def compared_with(self, truth: Path) -> Comparison:
        return compared(truth, self.mat, self.report_doc())


#: A turn no board records (a dance the writer filled in), as :func:`aligned_report` puts it in: on page 0.
PLACEHOLDER = Turn(page=0, board=0, player="bottom", action="move", dice=None, move="", points=None, confidence=1.0,
                   flagged=False, reasons=(), candidates=(), follows=None, position_before=None, position_after=None)


def inserted(turn: Turn) -> bool:
    """Whether ``turn`` is one :func:`aligned_report` put in: no board records it."""
    return turn.page == PLACEHOLDER.page


def aligned_report(solved: MatchRecord, report: Report) -> Report:
    """The report's turns lined up with the actions of the ``.mat`` as read back.

    The ``.mat`` holds entries the report does not (a closed-out player's
    dances, which no board records, and dances filled in for missing boards);
    :func:`compare` indexes the report's turns by action, so those get a
    placeholder (:func:`inserted`), flagged when it stands for a missing board.
    """
    games = []
    for g, game in enumerate(solved.games):
        turns = list(report.games[g].turns) if g < len(report.games) else []
        out: list[Turn] = []
        for action in game.actions:
            dice = (action.roll.high, action.roll.low) if action.roll is not None else None
            if turns and (turns[0].player, turns[0].action, turns[0].dice) == (
                    action.player.value, action.kind.value, dice):
                out.append(turns.pop(0))
            else:
                # A dance the writer filled in: a closed-out player's (no board records it), or the turn
                # of a board the solver found missing, which the next board's flag ("a board seems to be
                # missing before this one") covers.
                missing = bool(turns) and turns[0].flagged and any("missing" in r.text for r in turns[0].reasons)
                out.append(replace(PLACEHOLDER, player=action.player.value, dice=dice, flagged=missing))
        games.append(replace(report.games[g], turns=tuple(out)) if g < len(report.games)
                     else Game(g + 1, tuple(out), None, None))
    return replace(report, games=tuple(games))


def compared(truth: Path, mat: Path, report: Mapping[str, Any]) -> Comparison:
    """:func:`compare` of the written ``.mat`` with the truth, flags taken from the report (its JSON)."""
    solved = read_mat_strict(mat)
    return compare(read_mat_strict(truth), solved, aligned_report(solved, Report.from_json(report)))


def scan_cli(pages: list[Path], out_dir: Path, name: str = "match") -> Scanned:
    out_dir.mkdir(parents=True, exist_ok=True)
    mat, report = out_dir / f"{name}.mat", out_dir / f"{name}.report.json"
    result = CliRunner().invoke(cli, ["scan", *map(str, pages), "-o", str(mat), "--report", str(report)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Scanned(result.exit_code, result.stdout, result.stderr, mat, report)


@pytest.fixture(scope="module")
def model() -> Path:
    if not DEFAULT_MODEL.is_file():
        pytest.skip(f"the glyph model is not built yet ({DEFAULT_MODEL}; `digitise train`)")
    return DEFAULT_MODEL


@pytest.fixture(scope="module")
def scans(model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scanned]:
    """The three sample renderings the tests look at, each scanned once."""
    out = tmp_path_factory.mktemp("scans")
    return {
        "alice-bruno/light": scan_cli(_pages("alice-bruno", "light"), out / "ab-light"),
        "chen-dana/light": scan_cli(_pages("chen-dana", "light"), out / "cd-light"),
        # One multi-page PDF, as a scanner delivers it.
        "chen-dana/medium": scan_cli(_pages("chen-dana", "medium"), out / "cd-medium"),
    }


@pytest.mark.parametrize("which", ["alice-bruno/light", "chen-dana/light", "chen-dana/medium"])
def test_scan_sample_every_turn_right_or_flagged(scans: dict[str, Scanned], which: str) -> None:
    scanned = scans[which]
    assert scanned.exit_code in (int(ExitCode.OK), int(ExitCode.FLAGGED)), scanned.stderr
    assert scanned.stderr == ""  # no page skipped, no warning
    match = which.split("/")[0]
    got = scanned.compared_with(SAMPLES / f"{match}.mat")
    assert got.silent == 0, got.differences  # wrong and not flagged: the one thing never allowed
    # No turn of the truth silently lost: each one missing is replaced by a (flagged) wrong one.
    assert got.turns - got.right <= got.wrong, got.differences
    assert got.results_wrong == 0 or got.flagged > 0, got.differences
    # The exit code says whether a person has to look.
    assert scanned.exit_code == int(ExitCode.FLAGGED if got.flagged else ExitCode.OK)
    summary = scanned.stdout.splitlines()[0]
    doc = scanned.report_doc()
    assert f"{doc['summary']['turns']} turns, {doc['summary']['flagged']} flagged for review" in summary
    # Chen-dana's two turns of Dana closed out on the bar are on no board: the summary says how they are written.
    closed = doc["closed_out"]
    assert closed == (2 if match == "chen-dana" else 0)
    assert summary.endswith(", 2 closed-out turns written as dances of 21") == bool(closed), summary
    if got.flagged:
        assert f"digitise review {scanned.report}" in scanned.stdout


def test_a_double_dropped_on_its_board_is_a_candidate_of_its_own(scans: dict[str, Scanned]) -> None:
    """Bruno's redouble is dropped on the arrow board (Bres holds the 2 he wins): its candidate says so,
    and picking it on the review page sends "double; drop", not the bare "double" the next board answers."""
    from digitise.review.changes import candidate_correction

    report = Report.from_json(scans["alice-bruno/light"].report_doc())
    dropped = [t for g in report.games for t in g.turns if t.action == "drop"]
    assert len(dropped) == 1
    board = (dropped[0].page, dropped[0].board)
    double = next(t for g in report.games for t in g.turns if t.action == "double" and (t.page, t.board) == board)
    top = double.candidates[0]
    assert (top.action, top.player, top.answer) == ("double", "top", "drop")
    assert candidate_correction(top) == "double; drop"
    # Any rival double the next board would answer sends the bare "double" (a choice apart).
    others = [c for c in double.candidates[1:] if c.action == "double" and c.answer is None]
    assert all(candidate_correction(c) == "double" for c in others)
    assert candidate_correction(top) not in {candidate_correction(c) for c in double.candidates[1:]}


def test_scan_sample_light_reads_nearly_everything(scans: dict[str, Scanned]) -> None:
    """Light damage, held-out glyphs: the reader and solver get (almost) every turn without help."""
    for which in ("alice-bruno/light", "chen-dana/light"):
        got = scans[which].compared_with(SAMPLES / f"{which.split('/')[0]}.mat")
        assert got.right >= 0.95 * got.turns, (which, got)


def test_gnubg_imports_the_written_matches(scans: dict[str, Scanned], gnubg: str) -> None:
    from tests.gnubg_driver import import_mats

    written = [s.mat for s in scans.values()]
    for result in import_mats(written, gnubg=gnubg, export=False):
        assert result.ok, (result.path, result.warnings, result.error)


def test_scan_is_deterministic(scans: dict[str, Scanned], tmp_path: Path) -> None:
    first = scans["chen-dana/light"]
    again = scan_cli(_pages("chen-dana", "light"), tmp_path)
    assert again.exit_code == first.exit_code
    assert again.mat.read_bytes() == first.mat.read_bytes()
    assert again.report.read_bytes() == first.report.read_bytes()
    readings = "match.report.readings.json"
    assert (again.mat.parent / readings).read_bytes() == (first.mat.parent / readings).read_bytes()


def test_page_from_another_match_is_flagged_not_fatal(model: Path, tmp_path: Path) -> None:
    ours = _pages("chen-dana", "light")
    stranger = _pages("alice-bruno", "light")[3]
    pages = [*ours[:2], stranger, *ours[2:]]
    scanned = scan_cli(pages, tmp_path)
    assert scanned.exit_code == int(ExitCode.FLAGGED), scanned.stderr
    assert scanned.mat.is_file() and scanned.report.is_file()
    read_mat_strict(scanned.mat)  # a valid match all the same
    doc = scanned.report_doc()
    assert doc["summary"]["flagged"] > 0
    # The summary line tells turns flagged from boards set aside (it once gave "8 flagged" of a 1-turn match).
    set_aside = sum(1 for s in doc["skipped"] if s["flagged"])
    assert doc["summary"]["set_aside"] == set_aside
    flagged_turns = sum(1 for g in doc["games"] for t in g["turns"] if t["flagged"])
    assert flagged_turns + set_aside == doc["summary"]["flagged"]
    aside = f", {set_aside} board{'' if set_aside == 1 else 's'} set aside" if set_aside else ""
    assert f"{doc['summary']['turns']} turns, {flagged_turns} flagged for review{aside}" in scanned.stdout
    # Every turn of the real match is still right or flagged; the stranger's boards never pass silently.
    got = scanned.compared_with(SAMPLES / "chen-dana.mat")
    assert got.silent == 0, got.differences


def test_a_missing_page_is_named_and_what_follows_it_flagged(model: Path, tmp_path: Path) -> None:
    """Without its page 3, the sample's next page reads as a new game as if nothing were amiss: only the
    written page numbers (2, then 4) tell. The note names the gap, and no turn after it passes silently."""
    pages = [page for page in _pages("alice-bruno", "medium") if page.name != "page-003.jpg"]
    assert len(pages) == 7
    scanned = scan_cli(pages, tmp_path)
    assert scanned.exit_code == int(ExitCode.FLAGGED), scanned.stderr
    assert ("page numbers written jump from 2 to 4 between pages 2 and 3 of the pile "
            "(page-002.jpg, page-004.jpg): page 3 missing?") in scanned.stderr
    doc = scanned.report_doc()
    after = [t for g in doc["games"] for t in g["turns"] if t["page"] == 3]
    assert after and after[0]["flagged"]
    assert "the page numbers jump from 2 to 4 before this page: a page missing?" in after[0]["reasons"]
    turns = [t for g in doc["games"] for t in g["turns"]]
    assert all(t["flagged"] or t["follows"] for t in turns[turns.index(after[0]):])
    got = scanned.compared_with(SAMPLES / "alice-bruno.mat")
    assert got.silent == 0, got.differences


# --------------------------------------------------------------------------- batch


def _batch(input_dir: Path, output_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "digitise.cli", "batch", str(input_dir), "-o", str(output_dir),
                           "--jobs", "2", *extra], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def _jobs(output_dir: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads((output_dir / "summary.json").read_text(encoding="utf-8"))
    return {job["name"]: job for job in doc["jobs"]}


def test_batch_converts_the_good_and_lists_the_bad(model: Path, tmp_path: Path) -> None:
    scans_dir, out = tmp_path / "scans", tmp_path / "out"
    (scans_dir / "chen-dana").mkdir(parents=True)
    for page in _pages("chen-dana", "light"):
        shutil.copyfile(page, scans_dir / "chen-dana" / page.name)
    (scans_dir / "paperwork").mkdir()
    (scans_dir / "paperwork" / "invoice.txt").write_text("not a page\n")
    (scans_dir / "paperwork" / "notes.docx").write_bytes(b"PK\x03\x04")
    (scans_dir / "empty").mkdir()
    jpeg = _pages("alice-bruno", "light")[0].read_bytes()
    (scans_dir / "cut-short.jpg").write_bytes(jpeg[: len(jpeg) // 3])
    (scans_dir / "readme.txt").write_text("scans of the club night\n")

    first = _batch(scans_dir, out)
    assert first.returncode == int(ExitCode.BAD_INPUT), first.stderr
    assert "Traceback" not in first.stderr
    jobs = _jobs(out)
    assert set(jobs) == {"chen-dana", "paperwork", "empty", "cut-short"}
    assert jobs["chen-dana"]["status"] in ("done", "flagged")
    assert jobs["chen-dana"]["pages"] == 5
    # A file beside the matches that is no picture is no failed match: left out, and named.
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["left_out"] == ["readme.txt"]
    assert (f"digitise: note: left out 1 file at the top of {scans_dir} that is no picture or PDF: readme.txt"
            in first.stderr.splitlines())
    for name, reason in [("paperwork", "no image or PDF inside"), ("empty", "no image or PDF inside"),
                         ("cut-short", "the JPEG is truncated")]:
        assert jobs[name]["status"] == "failed", name
        assert reason in jobs[name]["reason"], (name, jobs[name]["reason"])
        assert f"digitise: failed: {jobs[name]['reason']}" in first.stderr
    mat = out / "chen-dana.mat"
    written = mat.read_bytes()
    got = compared(SAMPLES / "chen-dana.mat", mat, json.loads((out / "chen-dana.report.json").read_text(encoding="utf-8")))
    assert got.silent == 0, got.differences
    # Only the match's own outputs and the summary: nothing half-written is left behind.
    assert sorted(p.name for p in out.iterdir()) == [
        "chen-dana.mat", "chen-dana.report.json", "chen-dana.report.readings.json", "summary.csv", "summary.json"]

    again = _batch(scans_dir, out)
    assert again.returncode == int(ExitCode.BAD_INPUT)
    assert _jobs(out)["chen-dana"]["status"] == "skipped"
    assert mat.read_bytes() == written

    forced = _batch(scans_dir, out, "--force")
    assert forced.returncode == int(ExitCode.BAD_INPUT)
    assert _jobs(out)["chen-dana"]["status"] == jobs["chen-dana"]["status"]
    assert mat.read_bytes() == written  # redone, and deterministic

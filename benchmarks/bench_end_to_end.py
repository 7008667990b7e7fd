"""End to end on synthetic sheets no test or training used: accuracy per turn, silent errors, speed.

Matches: self-play (``digitise.game.selfplay.play_match``) from seeds 9000 up
(samples, tests and training use seeds below 1000), match lengths cycling
1, 3, 5 points. Handwriting: the held-out ``GlyphSubset.TEST`` digits, which
the classifier never trains on. Each match is rendered at each damage level
(medium, heavy; their own dpi ranges, pages stored as JPEG quality 92 on top of
the damage's own JPEG artefacts), converted by ``digitise batch`` (the real
CLI, 2 jobs), and each written ``.mat`` is compared turn by turn with the truth
(:func:`digitise.solve.compare.compare`). Every ``.mat`` is imported into GNU
Backgammon (``tests/gnubg_driver.py``) and must import without a message.

Speed: a separate set of medium pages rendered at 300 dpi and stored as PNG,
converted by ``digitise batch --jobs 1`` pinned to one core (``taskset -c 0``)
and by ``--jobs 2`` on both; pages per second of wall time, process start-up
and model loading included.

For wrong turns it says where the error comes from: the *reader* (the board's
most likely reading differs from what was written) or the *solver* (the board
was read right, the solved turn is still wrong).

    .venv/bin/python benchmarks/bench_end_to_end.py --matches 24
    .venv/bin/python benchmarks/bench_end_to_end.py --real --matches 12 --skip-speed --work /tmp/e2e-real

``--real`` renders the real (human) matches of ``../shared/data/matches``
instead: how the whole job does on human play. They are not held out (tests
read them, and the solver's play prior was weighed on them), so this is a
second figure, not the benchmark's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.intervals import describe
from benchmarks.machine import describe as describe_host
from digitise.game.position import Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchRecord
from digitise.game.selfplay import SelfPlayOptions, play_match
from digitise.notation.mat import format_mat, read_mat, read_mat_strict
from digitise.solve.compare import compare, game_turns
from digitise.solve.report_types import Report
from tests.conftest import real_matches
from tests.test_end_to_end import aligned_report, inserted

SEED_START = 9000
LENGTHS = (1, 3, 5)
NAMES = (("Ines", "Omar"), ("Petra", "Yusuf"), ("Karl", "Mei"), ("Sofia", "Tomas"), ("Lena", "Ravi"))
LEVEL_SEED = {"light": 1, "medium": 2, "heavy": 3, "photocopy": 4}


def bench_match(index: int, seed_start: int = SEED_START) -> tuple[str, MatchRecord]:
    """The index-th benchmark match: its name and record."""
    seed = seed_start + index
    options = SelfPlayOptions(length=LENGTHS[index % len(LENGTHS)], players=NAMES[index % len(NAMES)],
                              metadata=(("Event", "digitise benchmark"), ("Round", str(index + 1))))
    return f"m{seed}", play_match(seed, options)


def default_match_glyphs(index: int, seed_start: int) -> dict[int, list[np.ndarray]]:
    """The benchmark's glyphs for every match: the held-out ``GlyphSubset.TEST`` digits, one bank for all."""
    from digitise.sheet.glyphs import GlyphSubset, load_digit_glyphs

    return load_digit_glyphs(None, GlyphSubset.TEST)


#: The glyphs the index-th match is written with, ``(index, seed_start) -> digit -> glyphs``. A benchmark
#: of other hands sets its own before :func:`render` (the workers are forked: they inherit it).
match_glyphs = default_match_glyphs


def default_match_print() -> tuple[Any, Any]:
    """The print every match is written on: digitise's own A4 note (no other print's text)."""
    from digitise.notation.template import load_template

    return load_template("a4"), None


#: The print the matches are written on, ``() -> (template, other print's text or None)``. A benchmark of
#: other prints sets its own before :func:`render`, as :data:`match_glyphs`.
match_print = default_match_print


def _render_one(args: tuple[int, int, str, str, int | None, str, str | None]) -> tuple[str, int]:
    """Render one match into ``folder/<name>/`` (pages only) and ``folder/../truth/<name>.mat``.

    The match is the index-th self-played one, or the real match at path ``real`` when given.
    """
    index, seed_start, level, folder, dpi, fmt, real = args
    from digitise.sheet.handwriting import GlyphBank
    from digitise.sheet.synth import encode_image, render_match_pages

    if real is not None:
        name, match = f"real{index:02d}", read_mat_strict(Path(real))
    else:
        name, match = bench_match(index, seed_start)
    out = Path(folder) / name
    truth = Path(folder).parent / "truth" / f"{name}.mat"
    if out.is_dir() and any(out.iterdir()):
        return name, len(list(out.iterdir()))
    truth.parent.mkdir(parents=True, exist_ok=True)
    truth.write_text(format_mat(match), encoding="utf-8")
    # Render the match as read back, so the truth files' action indices are the .mat's.
    match = read_mat_strict(truth)
    bank = GlyphBank(match_glyphs(index, seed_start))
    template, other_print = match_print()
    pages = render_match_pages(match, template=template, seed=(seed_start + index) * 10 + LEVEL_SEED[level],
                               degrade=level, glyphs=bank, name=name, dpi=dpi, other_print=other_print)
    staging = out.with_name(f".{name}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for page in pages:
        stem = f"page-{page.number:03d}"
        (staging / f"{stem}.{fmt}").write_bytes(encode_image(page.image, fmt, dpi=page.truth["dpi"]))
        (staging.parent / f".{name}.truth").mkdir(exist_ok=True)
        (staging.parent / f".{name}.truth" / f"{stem}.truth.json").write_text(json.dumps(page.truth), encoding="utf-8")
    staging.rename(out)
    return name, len(pages)


def render(indices: Sequence[int], seed_start: int, level: str, folder: Path, dpi: int | None, fmt: str,
           jobs: int, real: Sequence[Path] = ()) -> dict[str, int]:
    """Render every match (skipping ones already there); pages per match. With ``real``, the
    index-th match is ``real[index]`` instead of a self-played one."""
    from digitise.sheet.handwriting import HANDWRITING_VERSION

    folder.mkdir(parents=True, exist_ok=True)
    # Pages drawn by another version of the handwriting are other pages: never reused as these.
    stamp = folder / ".handwriting"
    drawn = stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else None
    if drawn != str(HANDWRITING_VERSION):
        for child in folder.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        stamp.write_text(f"{HANDWRITING_VERSION}\n", encoding="utf-8")
    tasks = [(i, seed_start, level, str(folder), dpi, fmt, str(real[i]) if real else None) for i in indices]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(_render_one, tasks))


def run_batch(input_dir: Path, output_dir: Path, jobs: int, cpus: str | None,
              extra: Sequence[str] = ()) -> tuple[float, int, str]:
    """``digitise batch`` (the real CLI) with the options ``extra`` too, timed; (seconds, exit code, stderr)."""
    shutil.rmtree(output_dir, ignore_errors=True)
    command = [sys.executable, "-m", "digitise.cli", "batch", str(input_dir), "-o", str(output_dir), "--jobs", str(jobs),
               *extra]
    if cpus is not None and shutil.which("taskset"):
        command = ["taskset", "-c", cpus, *command]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done.returncode, done.stderr


@dataclass(frozen=True)
class MatchFigures:
    """One match's counts, to pair the same match across two runs (a print and ours, say)."""

    turns: int
    right: int = 0
    #: Turns flagged themselves.
    flagged: int = 0
    silent: int = 0
    #: Boards written, and those whose most likely reading is what was written (none for a failed match).
    boards: int = 0
    boards_right: int = 0


@dataclass
class LevelFigures:
    """Per-turn figures of one damage level, summed over its matches."""

    level: str
    matches: int = 0
    pages: int = 0
    turns: int = 0
    right: int = 0
    #: Truth turns whose .mat line (player, dice, play as written) is right: a misread does not cascade into these.
    lines_right: int = 0
    wrong: int = 0
    silent: int = 0
    flagged: int = 0
    #: Turns flagged themselves (the review list); ``flagged`` also counts turns following a flagged board.
    flagged_own: int = 0
    flagged_right: int = 0
    results_wrong: int = 0
    failed: list[str] = field(default_factory=list)
    #: Truth turns of matches that failed outright (no .mat written).
    lost: int = 0
    #: Written .mat files that digitise's own strict reader rejects.
    invalid_mat: list[str] = field(default_factory=list)
    gnubg_bad: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Wrong solved turns whose board the reader got wrong / right (top reading v what was written).
    wrong_reader: int = 0
    wrong_solver: int = 0
    #: Wrong solved turns whose position before was already wrong (an earlier error carried on).
    wrong_cascade: int = 0
    #: Per kind of first error (the cells misread on its board, or "solver"): [first errors, wrong turns
    #: with those carried on from them]. Carried-on turns count for the game's last first error.
    by_start: dict[str, list[int]] = field(default_factory=dict)
    #: Boards whose most likely reading equals what was written, of all boards.
    boards_read_right: int = 0
    boards: int = 0
    examples: list[str] = field(default_factory=list)
    #: Per written match: (turns, right, flagged themselves), for the intervals over matches.
    per_match: list[tuple[int, int, int]] = field(default_factory=list)
    #: Per match by name, failed ones too (their turns none right).
    by_match: dict[str, MatchFigures] = field(default_factory=dict)


def _top(cands: Sequence[Sequence[Any]]) -> list[int]:
    return list(cands[0][0]) if cands else []


def misread_kinds(reading: dict[str, Any] | None, truth: dict[str, Any]) -> str:
    """Which kinds of cell of a board the reader's top reading gets wrong ("point", "off", "centre",
    "result", "cross", "arrow", joined by "+"), or "" when it reads the board right."""
    if reading is None:
        return "board not read"
    cells = reading.get("cells", {})
    kinds: set[str] = set()
    for name in set(cells) | set(truth["cells"]):
        got, want = _top(cells.get(name, [])), list(truth["cells"].get(name, []))
        if (got != want) if name.endswith("res") else (sorted(got) != sorted(want)):
            kinds.add("centre" if name == "centre" else "result" if name.endswith("res")
                      else "off" if name.endswith("off") else "point")
    if (float(reading.get("crossed", 0.0)) >= 0.5) != bool(truth["crossed"]):
        kinds.add("cross")
    if (float(reading.get("arrow", 0.0)) >= 0.5) != bool(truth["arrow"]):
        kinds.add("arrow")
    return "+".join(sorted(kinds))


def board_read_right(reading: dict[str, Any] | None, truth: dict[str, Any]) -> bool:
    """True when the reader's most likely digits, cross and arrow match what was written on the board."""
    return reading is not None and misread_kinds(reading, truth) == ""


def analyse_level(level: str, render_dir: Path, out_dir: Path, seconds: float, pages: dict[str, int],
                  gnubg: bool) -> LevelFigures:
    """Compare every written .mat with its truth; attribute wrong turns to the reader or the solver."""
    figures = LevelFigures(level, matches=len(pages), pages=sum(pages.values()), seconds=seconds)
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    written: list[Path] = []
    for job in summary["jobs"]:
        name = job["name"]
        truth = read_mat_strict(render_dir.parent / "truth" / f"{name}.mat")
        truth_turns = sum(len(game_turns(g)) for g in truth.games)
        mat, report_path = out_dir / f"{name}.mat", out_dir / f"{name}.report.json"
        if job["status"] == "failed" or not mat.exists():
            figures.failed.append(f"{level}/{name}: {job['reason']}")
            # Nothing written, and said so (exit 3): not right, not silent, counted apart.
            figures.turns += truth_turns
            figures.lost += truth_turns
            figures.by_match[name] = MatchFigures(truth_turns)
            continue
        written.append(mat)
        read = read_mat(mat)
        if not read.ok:
            # Our own reader refuses what was written: a writer bug, counted and shown, compared as read.
            figures.invalid_mat.append(f"{level}/{name}.mat: {'; '.join(map(str, read.problems[:2]))}")
        solved = read.match
        report = aligned_report(solved, Report.from_json(json.loads(report_path.read_text(encoding="utf-8"))))
        got = compare(truth, solved, report)
        figures.turns += got.turns
        figures.right += got.right
        figures.lines_right += got.lines_right
        figures.wrong += got.wrong
        figures.silent += got.silent
        figures.flagged += got.flagged
        own = sum(1 for g in report.games for t in g.turns if t.flagged)
        figures.flagged_own += own
        figures.per_match.append((got.turns, got.right, own))
        figures.results_wrong += got.results_wrong
        boards, boards_right = figures.boards, figures.boards_read_right
        _attribute(figures, name, render_dir, out_dir, truth, solved, report)
        figures.by_match[name] = MatchFigures(got.turns, got.right, own, got.silent, figures.boards - boards,
                                              figures.boards_read_right - boards_right)
        if got.silent and len(figures.examples) < 40:
            figures.examples.extend(f"    {level}/{name} compare: {d}" for d in got.differences[:2])
    if gnubg and written:
        from tests.gnubg_driver import find_gnubg, import_mats

        if find_gnubg() is not None:
            for result in import_mats(written, export=False):
                if not result.ok:
                    figures.gnubg_bad.append(f"{result.path.name}: {result.warnings or result.error}")
    return figures


def positions_before(game: GameRecord) -> list[str]:
    """The position ID before each action of ``game``, seen by the player acting (as the report gives it)."""
    pos = Position.initial()  # seen by the bottom player
    out = []
    for action in game.actions:
        mine = pos if action.player is Side.BOTTOM else pos.swap()
        out.append(mine.position_id())
        if action.kind is ActionKind.MOVE and action.play is not None and action.play.steps:
            after = action.play.result
            pos = after if action.player is Side.BOTTOM else after.swap()
    return out


def _action_key(action: Action) -> tuple[object, ...]:
    after = action.play.result if action.play is not None and action.play.steps else None
    return (action.player, action.kind, action.roll, after, action.cube)


def board_truths(render_dir: Path, name: str) -> dict[int, dict[int, dict[str, Any]]]:
    """What the renderer wrote on each board of match ``name``: page -> board index -> its truth."""
    truths: dict[int, dict[int, dict[str, Any]]] = {}
    for path in sorted((render_dir / f".{name}.truth").glob("page-*.truth.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        truths[doc["page"]] = {b["index"]: b for b in doc["boards"]}
    return truths


def saved_boards(out_dir: Path, name: str) -> dict[tuple[int, int], dict[str, Any]]:
    """The reader's saved output for match ``name``: (page, board index) -> its reading."""
    readings = json.loads((out_dir / f"{name}.report.readings.json").read_text(encoding="utf-8"))
    return {(page["page"], board["index"]): board for page in readings["pages"] for board in page["boards"]}


def board_record(written: dict[str, Any] | None, truth: MatchRecord) -> tuple[list[Action], set[str]]:
    """The true actions a written board records, and the positions (ids) before them; none when the
    board records nothing of the truth."""
    if written is None or not written["actions"] or written["game"] - 1 >= len(truth.games):
        return [], set()
    game = truth.games[written["game"] - 1]
    ids = positions_before(game)
    return ([game.actions[k] for k in written["actions"] if k < len(game.actions)],
            {ids[k] for k in written["actions"] if k < len(ids)})


def _attribute(figures: LevelFigures, name: str, render_dir: Path, out_dir: Path, truth: MatchRecord,
               solved: MatchRecord, report: Report) -> None:
    """Sort each solved turn that differs from what its board records into a reader or a solver error."""
    truths = board_truths(render_dir, name)
    read_boards = saved_boards(out_dir, name)
    read_ok: dict[tuple[int, int], bool] = {}
    for page_no, boards in truths.items():
        for index, board in boards.items():
            read_ok[(page_no, index)] = ok = board_read_right(read_boards.get((page_no, index)), board)
            figures.boards += 1
            figures.boards_read_right += ok
    for g, game in enumerate(solved.games):
        # The first error this game's carried-on turns come from (none yet: "unattributed").
        start = "unattributed"
        for i, action in enumerate(game.actions):
            turn = report.games[g].turns[i]
            if inserted(turn):
                continue
            key = (turn.page, turn.board)
            written = truths.get(key[0], {}).get(key[1])
            actions, before = board_record(written, truth)
            if _action_key(action) in {_action_key(a) for a in actions}:
                figures.flagged_right += turn.flagged
                continue
            if turn.position_before and turn.position_before not in before:
                # Solved from a wrong position: the consequence of an earlier error, not a new one.
                figures.wrong_cascade += 1
                figures.by_start.setdefault(start, [0, 0])[1] += 1
                continue
            by_reader = not read_ok.get(key, False)
            start = (misread_kinds(read_boards.get(key), written) if written is not None else "board not written") \
                if by_reader else "solver"
            counts = figures.by_start.setdefault(start, [0, 0])
            counts[0] += 1
            counts[1] += 1
            if by_reader:
                figures.wrong_reader += 1
            else:
                figures.wrong_solver += 1
            if len(figures.examples) < 40:
                flag = "flagged" if turn.flagged else "follows a flagged board" if turn.follows else "SILENT"
                cells = {n: c[0] for n, c in read_boards.get(key, {}).get("cells", {}).items() if c and c[0][0]}
                truth_cells = written["cells"] if written is not None else {}
                figures.examples.append(
                    f"{figures.level}/{name} page {key[0]} board {key[1]}: solved {turn.action} "
                    f"{list(turn.dice) if turn.dice else None} {turn.move!r} ({flag}; reasons "
                    f"{[reason.text for reason in turn.reasons[:2]]}); board read "
                    f"{'wrong' if by_reader else 'right'}: written {truth_cells}, top reading {cells}")


def children_cpu() -> float:
    """CPU seconds used so far by finished child processes (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def adopt_orphans() -> None:
    """Become the parent of descendants whose parent exits first (Linux only; else a no-op).

    ``batch --jobs 2`` runs its workers under a forkserver that outlives the
    batch process, so nobody waited for it and its CPU time (the workers',
    which it waits for) never reached :func:`children_cpu`.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def reap_orphans() -> None:
    """Wait for every adopted descendant (the forkserver), so its CPU time counts."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def speed(indices: Sequence[int], seed_start: int, work: Path, jobs: int,
          extra: Sequence[str] = ()) -> list[tuple[str, int, float, float, float]]:
    """Pages/s of ``digitise batch`` at 1 job on core 0 and 2 jobs on cores 0-1, 300-dpi PNG medium pages."""
    folder = work / "speed" / "pages"
    pages = render(indices, seed_start, "medium", folder, 300, "png", jobs)
    total = sum(pages.values())
    rows = []
    adopt_orphans()
    for n, cpus in ((1, "0"), (2, "0,1")):
        reap_orphans()
        cpu0 = children_cpu()
        seconds, code, stderr = run_batch(folder, work / "speed" / f"out-{n}", n, cpus, extra)
        reap_orphans()
        cpu = children_cpu() - cpu0
        if code not in (0, 1):
            print(f"batch --jobs {n} exit {code}: {stderr[-500:]}", file=sys.stderr)
        rows.append((f"--jobs {n} (taskset -c {cpus})", total, seconds, total / seconds, cpu))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=24, help="matches per damage level")
    parser.add_argument("--levels", default="medium,heavy")
    parser.add_argument("--seed-start", type=int, default=SEED_START)
    parser.add_argument("--speed-matches", type=int, default=6, help="matches rendered at 300 dpi PNG for speed")
    parser.add_argument("--work", type=Path, default=Path("/tmp/digitise-bench-e2e"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-gnubg", action="store_true")
    parser.add_argument("--skip-accuracy", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="analyse the last batch output again, do not rerun it")
    parser.add_argument("--batch-args", default="", metavar="ARGS",
                        help='more options for every "digitise batch" run, one string (--batch-args=--no-adapt)')
    parser.add_argument("--real", action="store_true",
                        help="render the real (human) matches of ../shared/data/matches instead of self-played ones "
                             "(the solver's prior was weighed on them: a figure for human play, not a held-out one)")
    args = parser.parse_args(argv)
    work: Path = args.work
    extra = shlex.split(args.batch_args)
    real = real_matches()[:args.matches] if args.real else []
    if args.real and not real:
        parser.error("--real: no matches in ../shared/data/matches")
    indices = list(range(len(real) if args.real else args.matches))
    all_figures: list[LevelFigures] = []
    if not args.skip_accuracy:
        for level in args.levels.split(","):
            render_dir = work / level / "pages"
            t0 = time.perf_counter()
            pages = render(indices, args.seed_start, level, render_dir, None, "jpg", args.jobs, real)
            print(f"{level}: rendered {len(pages)} matches, {sum(pages.values())} pages "
                  f"in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            out_dir = work / level / "out"
            timing = work / level / "batch-seconds.txt"
            if args.reuse and (out_dir / "summary.json").exists() and timing.exists():
                seconds, code = float(timing.read_text()), -1
            else:
                seconds, code, _ = run_batch(render_dir, out_dir, args.jobs, None, extra)
                timing.write_text(f"{seconds:.3f}\n")
            print(f"{level}: batch exit {code} in {seconds:.0f} s", file=sys.stderr)
            all_figures.append(analyse_level(level, render_dir, work / level / "out", seconds, pages,
                                             not args.no_gnubg))
        print_accuracy(all_figures)
    if not args.skip_speed:
        rows = speed(list(range(args.speed_matches)), args.seed_start + 500, work, args.jobs, extra)
        print(f"\n{describe_host()}")
        print("\n| run (300-dpi PNG, medium) | pages | wall s | pages/s | CPU s | pages per CPU-second |")
        print("|---|---|---|---|---|---|")
        for label, pages_n, seconds, rate, cpu in rows:
            print(f"| {label} | {pages_n} | {seconds:.1f} | {rate:.2f} | {cpu:.1f} | {pages_n / cpu:.2f} |")
    return 0


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.2f} %" if whole else "-"


def print_accuracy(all_figures: Sequence[LevelFigures]) -> None:
    print("\n| level | matches | pages | turns | right, no human | silent errors | flagged | flagged or following a flag | flagged but right "
          "| .mat lines right | games' results wrong | boards read right (top reading) | matches failed (turns lost) | invalid .mat "
          "| gnubg warnings "
          "| batch pages/s (2 jobs) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for f in all_figures:
        print(f"| {f.level} | {f.matches} | {f.pages} | {f.turns} | {_pct(f.right, f.turns)} ({f.right}) "
              f"| {_pct(f.silent, f.turns)} ({f.silent}) | {_pct(f.flagged_own, f.turns)} ({f.flagged_own}) | {_pct(f.flagged, f.turns)} ({f.flagged}) "
              f"| {f.flagged_right} | {_pct(f.lines_right, f.turns)} | {f.results_wrong} | {_pct(f.boards_read_right, f.boards)} "
              f"| {len(f.failed)} ({f.lost}) | {len(f.invalid_mat)} | {len(f.gnubg_bad)} | {f.pages / f.seconds:.2f} |")
    for f in all_figures:
        if f.per_match:
            turns = [m[0] for m in f.per_match]
            print(f"\n{f.level}, over the {len(f.per_match)} matches written: right, no human "
                  f"{describe([m[1] for m in f.per_match], turns)}; flagged {describe([m[2] for m in f.per_match], turns)}")
    for f in all_figures:
        print(f"\n{f.level}: solved turns that differ from their board's truth: first errors where the reader "
              f"misread the board {f.wrong_reader}, first errors on a board read right (solver) {f.wrong_solver}, "
              f"carried on from an earlier error {f.wrong_cascade}")
        if f.by_start:
            print(f"{f.level}: wrong turns by what started them (cells misread on the first error's board; "
                  "carried-on turns counted with their game's last first error):")
            for kind, (first, lost_turns) in sorted(f.by_start.items(), key=lambda kv: (-kv[1][1], kv[0])):
                print(f"  {kind}: {lost_turns} wrong turns from {first} first error{'' if first == 1 else 's'}")
        for line in f.failed + f.invalid_mat + f.gnubg_bad + f.examples:
            print(f"  {line}")


if __name__ == "__main__":
    raise SystemExit(main())

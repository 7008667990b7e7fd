"""Reading ``.mat`` files: every problem collected with its line, every play replayed by the rules.

The format and the record's conventions: :mod:`digitise.notation.mat`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from digitise.errors import MatFormatError, short
from digitise.fileio import why_unreadable
from digitise.game.match import MAX_MATCH_LENGTH, Score
from digitise.game.position import BAR, CHECKERS, OFF, Position, Side
from digitise.game.record import Action, ActionKind, GameRecord, MatchOutcome, MatchRecord, outcome
from digitise.game.rules import Play, Roll, game_value, legal_plays, net_checkers, play_from_moves


@dataclass(frozen=True, slots=True)
class MatProblem:
    """Something wrong in a ``.mat`` file: the 1-based line (0: the file as a whole) and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


@dataclass(frozen=True, slots=True)
class MatReadResult:
    """A match read from ``.mat`` text, with everything the reader had to skip or doubt."""

    match: MatchRecord
    problems: tuple[MatProblem, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when the file was read without any problem."""
        return not self.problems


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_METADATA = re.compile(r'^\s*;\s*\[\s*([^"\]]*?)\s+"(.*)"\s*\]\s*$')
_LENGTH = re.compile(r"^\s*(\d+)\s+points?\s+match\b", re.IGNORECASE)
_GAME = re.compile(r"^\s*Game\s+(\d+)\s*$", re.IGNORECASE)
_SCORE = re.compile(r"^\s*(?P<n1>.*?)\s*:\s*(?P<s1>\d+)\s+(?P<n2>.*?)\s*:\s*(?P<s2>\d+)\s*$")
#: A move line's number, ``" 12)"``: a line that starts so is a move line, not a name.
NUMBERED_LINE = re.compile(r"^\s*(\d+)\)")
#: Largest .mat read (bytes): the longest real match at hand is 18 kB; a 50 MB file took minutes and gigabytes.
MAX_MAT_BYTES = 10_000_000


# An entry starts with dice ("52:") or a cube/result word; what follows up to the next
# entry belongs to it. Two digits anywhere are accepted here so that bad dice ("72:")
# become a reported problem instead of unreadable text.
_ENTRY = re.compile(
    r"(?P<dice>(?<![\w/*])\d\d:)"
    r"|(?P<word>\b(?:Doubles|Takes|Drops|Wins|Losses|Beavers|Raccoons)\b)",
    re.IGNORECASE,
)
_DOUBLE = re.compile(r"^Doubles\s*=>\s*(\d+)$", re.IGNORECASE)
_WINS = re.compile(r"^Wins\s+(\d+)\s+points?(\s+and\s+the\s+match)?\.?$", re.IGNORECASE)
_LOSSES = re.compile(r"^Losses\s+(\d+)\s+points?\.?$", re.IGNORECASE)
_NO_PLAY = {"", "cannot move", "can't move", "no move", "????"}
# An entry starting this far right of the ")" is in the right-hand column. gnubg puts a
# left entry 1-2 characters after it, a right-only entry ~28; other writers are alike.
_RIGHT_GAP = 8
# On a line without a move number (a lone "Wins N points"), the same split by column.
_RIGHT_COLUMN = 20


class _ProblemLog:
    def __init__(self) -> None:
        self.items: list[MatProblem] = []

    def add(self, line: int, reason: str) -> None:
        # A reason quotes the line it is about: a line of a megabyte (a binary file) must not become the message.
        self.items.append(MatProblem(line, short(reason, 160)))


@dataclass(frozen=True, slots=True)
class _Entry:
    """One column of one line: who, where, and its text (dice and play, or a cube word)."""

    side: Side
    line: int
    text: str


def _is_binary(text: str) -> bool:
    if "\x00" in text:
        return True
    sample = text[:4096]
    if not sample:
        return False
    bad = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\r\n\f\v")
    return bad > max(2, len(sample) // 100)


def _split_entries(body: str, offset: int) -> tuple[list[tuple[int, str]], str]:
    """The entries of a line's body as (column, text), and any text before the first one."""
    starts = [m.start() for m in _ENTRY.finditer(body)]
    entries = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(body)
        entries.append((offset + start, body[start:end].strip()))
    lead = body[: starts[0]] if starts else body
    return entries, lead.strip()


def _line_entries(raw: str, number: int, log: _ProblemLog) -> list[_Entry]:
    """The entries of one line inside a game, each assigned to the left or right column."""
    line = raw.expandtabs(8)
    numbered = NUMBERED_LINE.match(line)
    if numbered:
        body_start = numbered.end()
        entries, lead = _split_entries(line[body_start:], body_start)
        if lead:
            log.add(number, f"unrecognised text {lead!r}")
        if len(entries) > 2:
            log.add(number, f"more than two entries on one line: {line.strip()!r}")
            return []
        if len(entries) == 2:
            return [_Entry(Side.BOTTOM, number, entries[0][1]), _Entry(Side.TOP, number, entries[1][1])]
        if len(entries) == 1:
            column, text = entries[0]
            side = Side.TOP if column - body_start >= _RIGHT_GAP else Side.BOTTOM
            return [_Entry(side, number, text)]
        return []
    entries, lead = _split_entries(line, 0)
    if lead:
        log.add(number, f"unrecognised line {line.strip()!r}")
        return []
    if len(entries) != 1:
        log.add(number, f"unnumbered line with {len(entries)} entries: {line.strip()!r}")
        return []
    column, text = entries[0]
    return [_Entry(Side.TOP if column >= _RIGHT_COLUMN else Side.BOTTOM, number, text)]


#: One written step: a path of points (``24/18/14``, ``bar/22*``, ``6/off``) and a repeat (``13/9(2)``).
# ASCII digits only (re.ASCII): "١٣/7" is no point a .mat file or gnubg reads.
_STEP = re.compile(r"^(bar|\d{1,2})((?:/(?:bar|off|\d{1,2})\*?)+)(?:\((\d)\))?$", re.IGNORECASE | re.ASCII)


def parse_steps(text: str) -> tuple[list[tuple[int, int]], set[int]]:
    """Checker movements of a play in ``.mat`` notation, and the points marked as hit.

    The one reader of written plays: ``.mat`` files, corrections typed on the
    review page, and the solver's corrections all come through here. Accepts
    what ``.mat`` files hold: ``24/18 13/9``, hits ``8/4*``, ``bar`` or ``25``,
    ``off`` or ``0``, paths ``24/18/14`` (one pair per step), repeats
    ``13/9(2)``; steps apart by spaces or commas. Raises ``ValueError`` with
    a message a person can act on.
    """
    moves: list[tuple[int, int]] = []
    hits: set[int] = set()
    for token in text.replace(",", " ").split():
        match = _STEP.match(token)
        if not match:
            raise ValueError(f"cannot read {token!r}: write steps like 24/18, 8/4*, bar/22, 6/off, 13/9(2)")
        parts = [match.group(1), *match.group(2).split("/")[1:]]
        numbers = []
        for part in parts:
            name = part.rstrip("*").lower()
            number = BAR if name == "bar" else OFF if name == "off" else int(name)
            if not OFF <= number <= BAR:
                raise ValueError(f"point {number} in {token!r} is not 0 (off) to 25 (bar)")
            numbers.append(number)
            if part.endswith("*") and number != OFF:
                hits.add(number)
        path = list(pairwise(numbers))
        for source, dest in path:
            if dest >= source:
                raise ValueError(f"{token!r} moves backwards: {source} to {dest}")
        count = int(match.group(3) or 1)
        if count < 1:
            raise ValueError(f"{token!r} repeats a step {count} times")
        moves.extend(path * count)
    return moves, hits


def _forced_result(position: Position, moves: list[tuple[int, int]]) -> Position | None:
    """Best-effort position after an illegal play, so one bad move does not spoil the game."""
    mine = net_checkers(position.mine, moves)
    if mine is None:
        return None
    theirs = list(position.theirs)
    for _, dest in moves:
        if 1 <= dest <= 24 and theirs[25 - dest] == 1:
            theirs[25 - dest] = 0
            theirs[BAR] += 1
    try:
        return Position(mine, tuple(theirs))
    except ValueError:
        return None


class _GameReader:
    """Replays one game's entries, building its actions and checking them against the rules."""

    def __init__(self, number: int, line: int, length: int, score: Score, crawford: bool,
                 log: _ProblemLog) -> None:
        self.number = number
        self.length = length
        self.line = line
        self.score = score
        self.crawford = crawford
        self.log = log
        self.boards: dict[Side, tuple[int, ...]] = {
            Side.BOTTOM: Position.initial().mine,
            Side.TOP: Position.initial().mine,
        }
        self.actions: list[Action] = []
        self.cube = 1
        self.owner: Side | None = None
        self.offered: tuple[Side, int] | None = None
        self.to_roll: Side | None = None
        self.winner: Side | None = None
        #: Points the game is worth by the board or the cube (None until it ends).
        self.value: int | None = None
        self.written_points: int | None = None
        self.unplayed: _Entry | None = None

    def position(self, side: Side) -> Position:
        return Position(self.boards[side], self.boards[side.opponent])

    def feed(self, entry: _Entry) -> None:
        text = entry.text
        word = text.split(None, 1)[0].lower()
        if word == "wins":
            self._wins(entry)
            return
        if self.winner is not None:
            self.log.add(entry.line, f"{text!r} after the end of game {self.number}")
            return
        if self.unplayed is not None and word != "losses":
            self._unplayed_roll_continues()
        if text[:2].isdecimal() and text[2:3] == ":":
            self._roll(entry)
        elif word == "doubles":
            self._double(entry)
        elif word == "takes":
            self._answer(entry, take=True)
        elif word == "drops":
            self._answer(entry, take=False)
        elif word == "losses":
            self._losses(entry)
        else:
            self.log.add(entry.line, f"unsupported entry {text!r}")

    # -- rolls and plays

    def _roll(self, entry: _Entry) -> None:
        side = entry.side
        dice, rest = entry.text[:2], entry.text[3:].strip()
        try:
            roll = Roll(int(dice[0]), int(dice[1]))
        except ValueError:
            self.log.add(entry.line, f"bad dice {dice!r}")
            return
        if self.offered is not None:
            self.log.add(entry.line, "roll while a double is pending (no take or drop written)")
            self.offered = None
        if self.to_roll is not None and side is not self.to_roll:
            self.log.add(entry.line, f"roll {roll} by the {side_column(side)} player out of turn")
        position = self.position(side)
        legal = legal_plays(position, roll)
        play: Play | None = None
        if rest.lower() in _NO_PLAY or rest.startswith("??"):
            if legal:
                # Roll then resign (Galaxy's "63:", Studio's "????"); checked when the next entry comes.
                self.unplayed = entry
        else:
            try:
                moves, hits = parse_steps(rest)
            except ValueError:
                self.log.add(entry.line, f"cannot read the play {rest!r} of roll {roll}")
            else:
                play = play_from_moves(position, roll, moves, hits, legal)
                if play is None:
                    reason = "no legal play" if not legal else "not a legal play"
                    self.log.add(entry.line, f"{roll}: {rest} is {reason} for the {side_column(side)} player")
                    forced = _forced_result(position, moves)
                    if forced is not None:
                        self._set_board(side, forced)
                else:
                    self._set_board(side, play.result)
        self.actions.append(Action(side, ActionKind.MOVE, roll=roll, play=play))
        self.to_roll = side.opponent
        if play is not None and self.boards[side][OFF] == CHECKERS:
            worth = game_value(self.position(side))
            self._end(side, int(worth or 1) * self.cube)

    def _set_board(self, side: Side, result: Position) -> None:
        self.boards[side] = result.mine
        self.boards[side.opponent] = result.theirs

    def _unplayed_roll_continues(self) -> None:
        entry = self.unplayed
        assert entry is not None
        self.unplayed = None
        self.log.add(entry.line, f"roll {entry.text[:2]} has no play written, but legal plays exist")

    # -- the cube

    def _double(self, entry: _Entry) -> None:
        side = entry.side
        m = _DOUBLE.match(entry.text)
        if not m:
            self.log.add(entry.line, f"cannot read {entry.text!r}")
            return
        value = int(m.group(1))
        if self.to_roll is not None and side is not self.to_roll:
            self.log.add(entry.line, f"double by the {side_column(side)} player out of turn")
        if self.offered is not None:
            self.log.add(entry.line, "double while another double is pending")
        if self.owner is side.opponent:
            self.log.add(entry.line, f"the {side_column(side)} player doubles but does not own the cube")
        if self.crawford:
            self.log.add(entry.line, "double in the Crawford game")
        if value != 2 * self.cube:
            self.log.add(entry.line, f"double to {value} with the cube at {self.cube}")
        self.offered = (side, value)
        self.actions.append(Action(side, ActionKind.DOUBLE, cube=value))
        self.to_roll = side

    def _answer(self, entry: _Entry, *, take: bool) -> None:
        side = entry.side
        word = "take" if take else "drop"
        if self.offered is None or self.offered[0] is side:
            self.log.add(entry.line, f"{word} without a double by the opponent")
            if take:
                return
        elif take:
            self.cube, self.owner = self.offered[1], side
        self.offered = None
        if take:
            self.actions.append(Action(side, ActionKind.TAKE))
            return
        self.actions.append(Action(side, ActionKind.DROP))
        self._end(side.opponent, self.cube)

    # -- results

    def _losses(self, entry: _Entry) -> None:
        m = _LOSSES.match(entry.text)
        if not m:
            self.log.add(entry.line, f"cannot read {entry.text!r}")
            return
        self._resign(entry.side, int(m.group(1)), entry.line)

    def _wins_match(self, winner: Side, points: int) -> bool:
        """True when ``points`` takes ``winner`` to the match length (writers cap the last game)."""
        return self.length > 0 and self.score.of(winner) + points >= self.length

    def _resign(self, loser: Side, points: int, line: int) -> None:
        self.unplayed = None
        self.offered = None
        capped = self._wins_match(loser.opponent, points) and 0 < points < 3 * self.cube
        if not any(a.kind is ActionKind.MOVE for a in self.actions):
            self.log.add(line, "resignation before the first roll (GNU Backgammon cannot import it)")
        if points not in (self.cube, 2 * self.cube, 3 * self.cube) and not capped:
            self.log.add(line, f"resignation worth {points} with the cube at {self.cube}")
        self.actions.append(Action(loser, ActionKind.RESIGN, points=points))
        self._end(loser.opponent, points)

    def _wins(self, entry: _Entry) -> None:
        m = _WINS.match(entry.text)
        if not m:
            self.log.add(entry.line, f"cannot read {entry.text!r}")
            return
        points = int(m.group(1))
        if self.written_points is not None:
            self.log.add(entry.line, "second result line for one game")
            return
        if self.winner is None:
            # A "Wins N" ending a game still in progress: the other player resigned.
            self._resign(entry.side.opponent, points, entry.line)
        elif entry.side is not self.winner:
            self.log.add(entry.line, f"'Wins' in the {side_column(entry.side)} column, but the "
                         f"{side_column(self.winner)} player won")
        elif self.value is not None and points != self.value and not (
                self._wins_match(entry.side, points) and points < self.value):
            self.log.add(entry.line, f"file says Wins {points}, the game is worth {self.value}")
        self.written_points = points

    def _end(self, winner: Side, points: int) -> None:
        self.winner = winner
        self.value = points
        self.to_roll = None

    def finish(self, final: bool) -> GameRecord:
        if self.unplayed is not None:
            self._unplayed_roll_continues()
        if self.winner is None and not final:
            self.log.add(self.line, f"game {self.number} has no result")
        points = self.written_points if self.written_points is not None else self.value
        return GameRecord(self.number, self.score, tuple(self.actions), self.winner, points)


def side_column(side: Side) -> str:
    """The column of ``side`` in a ``.mat`` file, in words: "left" (bottom) or "right" (top)."""
    return "left" if side is Side.BOTTOM else "right"


@dataclass
class _Block:
    """The lines of one ``Game N`` block."""

    number: int
    line: int
    lines: list[tuple[int, str]] = field(default_factory=list)


def _numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    yield from enumerate(_LINE_BREAK.split(text), 1)


def parse_mat(text: str, source: str = "<string>") -> MatReadResult:
    """Read ``.mat`` text into a match, collecting problems instead of stopping at the first.

    ``source`` names the text in nothing but the caller's own messages; line
    numbers in the problems are 1-based lines of ``text``.
    """
    del source  # kept for the API (callers name their text); problems carry line numbers only
    log = _ProblemLog()
    text = text.lstrip("\ufeff")
    if _is_binary(text):
        log.add(0, "not a text file")
        return MatReadResult(MatchRecord(0, ("", ""), ()), tuple(log.items))
    metadata: list[tuple[str, str]] = []
    length: int | None = None
    blocks: list[_Block] = []
    for number, raw in _numbered_lines(text):
        line = raw.rstrip()
        if not line.strip():
            continue
        game = _GAME.match(line)
        if game:
            blocks.append(_Block(int(game.group(1)), number))
            continue
        if line.lstrip().startswith(";"):
            meta = _METADATA.match(line)
            if meta and not blocks:
                metadata.append((meta.group(1), meta.group(2)))
            continue
        if blocks:
            blocks[-1].lines.append((number, line))
            continue
        m = _LENGTH.match(line)
        if m and length is None:
            length = int(m.group(1))
            if length > MAX_MATCH_LENGTH:
                log.add(number, f"a {length} point match: GNU Backgammon plays at most {MAX_MATCH_LENGTH} points")
        else:
            log.add(number, f"unrecognised line before the first game: {line.strip()!r}")
    if length is None and not blocks:
        log.add(0, "no match found (no 'N point match' line and no 'Game N')")
        return MatReadResult(MatchRecord(0, ("", ""), (), tuple(metadata)),
                             tuple(sorted(log.items, key=lambda p: p.line)))
    if length is None:
        log.add(blocks[0].line, "no 'N point match' line before the first game")
        length = 0
    players, games = _read_games(blocks, length, log)
    match = MatchRecord(length, players, tuple(games), tuple(metadata))
    return MatReadResult(match, tuple(sorted(log.items, key=lambda p: p.line)))


def _read_games(blocks: list[_Block], length: int, log: _ProblemLog) -> tuple[tuple[str, str], list[GameRecord]]:
    players: tuple[str, str] | None = None
    games: list[GameRecord] = []
    expected = Score()
    crawford_done = False
    for index, block in enumerate(blocks):
        if block.number != index + 1:
            log.add(block.line, f"game numbered {block.number}, expected {index + 1}")
        if length and max(expected.bottom, expected.top) >= length:
            # GNU Backgammon stops there: the games after it are lost, and a misread length goes unseen.
            log.add(block.line, f"game {block.number} comes after the match was won "
                    f"({expected.bottom}-{expected.top} in a {length}-point match)")
        lines = block.lines
        score = expected
        if lines and (m := _SCORE.match(lines[0][1])) and not NUMBERED_LINE.match(lines[0][1]):
            names = (m.group("n1"), m.group("n2"))
            score = Score(int(m.group("s1")), int(m.group("s2")))
            lines = lines[1:]
            if players is None:
                players = names
                for side, name in zip(("first", "second"), names, strict=True):
                    if not name:
                        log.add(block.line + 1, f"empty {side} player name")
            elif names != players:
                log.add(block.line + 1, f"player names {names[0]!r}, {names[1]!r} differ from "
                        f"game 1's {players[0]!r}, {players[1]!r}")
            if index and score != expected:
                log.add(block.line + 1, f"score {score.bottom}-{score.top} in the file, "
                        f"{expected.bottom}-{expected.top} by the results so far")
        else:
            log.add(block.line, f"game {block.number} has no 'name : score   name : score' line")
        crawford = False
        if length and not crawford_done and (score.bottom == length - 1) != (score.top == length - 1):
            crawford = crawford_done = True
        reader = _GameReader(block.number, block.line, length, score, crawford, log)
        for number, raw in lines:
            for entry in _line_entries(raw, number, log):
                reader.feed(entry)
        record = reader.finish(final=index == len(blocks) - 1)
        games.append(record)
        expected = score
        if record.winner is not None and record.points is not None:
            expected = score.add(record.winner, record.points)
    return players or ("", ""), games


def _decode(data: bytes) -> tuple[str, MatProblem | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return data.decode("latin-1"), MatProblem(line, "not UTF-8 (read as Latin-1)")


def read_mat(path: str | Path) -> MatReadResult:
    """Read a ``.mat`` file, collecting problems (see :func:`parse_mat`).

    Raises :class:`~digitise.errors.MatFormatError` only when the file cannot be
    opened at all.
    """
    target = Path(path)
    try:
        with target.open("rb") as handle:
            data = handle.read(MAX_MAT_BYTES + 1)
    except OSError as exc:
        raise MatFormatError(why_unreadable(exc), target) from exc
    if len(data) > MAX_MAT_BYTES:
        raise MatFormatError(f"too large for a match file (over {MAX_MAT_BYTES // 1_000_000} MB; a long match's "
                             "is a few hundred kilobytes)", target)
    text, problem = _decode(data)
    result = parse_mat(text, str(target))
    if problem is not None and not any(p.reason == "not a text file" for p in result.problems):
        return MatReadResult(result.match, tuple(sorted((problem, *result.problems), key=lambda p: p.line)))
    return result


def read_mat_strict(path: str | Path) -> MatchRecord:
    """Read a ``.mat`` file that must be clean: the first problem raises
    :class:`~digitise.errors.MatFormatError` naming the file and line."""
    result = read_mat(path)
    if result.problems:
        first = result.problems[0]
        raise MatFormatError(first.reason, path, f"line {first.line}" if first.line else None)
    return result.match


def outcome_of_file(path: str | Path) -> MatchOutcome | None:
    """How the match in the ``.mat`` file ``path`` ended (players, length, score, winner), or None when the
    file cannot be read as a match (gone, or not a .mat): for lists of results, which go on without it."""
    try:
        result = read_mat(path)
    except MatFormatError:
        return None
    if any(p.reason == "not a text file" for p in result.problems) or not result.match.games:
        return None
    return outcome(result.match)

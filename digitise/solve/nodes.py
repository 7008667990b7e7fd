"""What the search keeps: a match state between boards, the events that explain a board, the tree of
hypotheses (:class:`Node`) with its estimates settled best first, and the readings a reviewer forced and the
cache of legal plays the searches share."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from digitise.game.match import Cube, MatchState
from digitise.game.position import Position, Side
from digitise.game.rules import Play, Roll
from digitise.solve.reasons import Flag


@dataclass(frozen=True, slots=True)
class State:
    """Where a match stands between boards."""

    #: Seen by ``on_roll``; the initial position while a game has not begun.
    pos: Position
    #: ``None`` before a game's first roll: either player may open.
    on_roll: Side | None
    cube: Cube
    #: A double by this side waits for its take or drop.
    pending: Side | None
    match: MatchState
    #: Number of the game in progress or about to begin.
    game: int
    #: The answer a reviewer gave the pending double ("take" or "drop"), when one did: the next
    #: board is read with that answer only.
    answer: str | None = None

    @classmethod
    def start(cls, length: int) -> State:
        """Before the first game of a match of ``length`` points."""
        return cls(Position.initial(), None, Cube(), None, MatchState(length), 1)

    def after_game(self, winner: Side, points: int) -> State:
        """The state once ``winner`` has won ``points``: the next game about to begin."""
        return State(Position.initial(), None, Cube(), None, self.match.after_game(winner, points), self.game + 1)


# Events, in the order they happened; the record and the report are built from them.
@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened: ``kind`` is move, double, take, drop, resign, end, skip, blank or letters."""

    kind: str
    player: Side | None = None
    roll: Roll | None = None
    play: Play | None = None
    #: Seen by ``player`` before the action.
    before: Position | None = None
    #: Cube value offered (double) or points (resign, end).
    value: int | None = None
    illegal: bool = False


#: What a board was taken to be: the decision that confidences compare.
Summary = tuple[object, ...]


class PlayKey:
    """A play inside a decision: equal plays are those that lead to the same position."""

    __slots__ = ("play",)

    def __init__(self, play: Play | None) -> None:
        self.play = play

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PlayKey):
            return NotImplemented
        if self.play is None or other.play is None:
            return self.play is other.play
        return self.play.result == other.play.result

    def __hash__(self) -> int:
        return hash(self.play.result) if self.play is not None else 0

    def __str__(self) -> str:
        return str(self.play) if self.play is not None else ""


class Node:
    """A decision in the hypothesis tree: the board it explains and the state it leads to."""

    __slots__ = (
        "best",
        "board",
        "children",
        "events",
        "fit",
        "kids",
        "local",
        "merged",
        "parent",
        "parts",
        "score",
        "state",
        "summary",
        "tags",
    )

    def __init__(self, parent: Node | None, board: int | None, summary: Summary, events: tuple[Event, ...],
                 state: State, local: float, score: float, tags: tuple[Flag, ...], fit: float | None = None) -> None:
        self.parent = parent
        self.board = board
        self.summary = summary
        self.events = events
        self.state = state
        self.local = local
        #: How well the marks fit, without how likely the roll and its way of being written are.
        self.fit = local if fit is None else fit
        self.score = score
        #: Best final score of any explanation through this node.
        self.best = -math.inf
        #: Best final score per decision among this node's children.
        self.kids: dict[Summary, float] = {}
        self.tags = tags
        #: Children kept in the beam (the others live on only as scores in ``kids``).
        self.children: list[Node] = []
        #: Decisions merged into another kept node with the same state: decision -> that node.
        self.merged: dict[Summary, Node] = {}
        #: How each decision among the children explained its board: (board score, fit of the marks,
        #: play prior), so the report can say why one candidate lost to another.
        self.parts: dict[Summary, tuple[float, float, float]] = {}


def record_end(parent: Node, summary: Summary, score: float) -> None:
    """Record that an explanation through ``parent`` then ``summary`` ends at ``score``."""
    node = parent
    if score > node.kids.get(summary, -math.inf):
        node.kids[summary] = score
    while score > node.best:
        node.best = score
        up = node.parent
        if up is None:
            break
        if score > up.kids.get(node.summary, -math.inf):
            up.kids[node.summary] = score
        node = up


def first_recorded(ends: Iterable[tuple[Node, Summary]]) -> list[tuple[Node, dict[Summary, None]]]:
    """Each node's decisions in the order :func:`record_end`, called on ``ends`` in turn, first records them.

    A node's first end reaches every ancestor not yet reached, and a later one
    only raises what is recorded; so one climb per node finds the order.
    """
    heard: dict[int, tuple[Node, dict[Summary, None]]] = {}
    reached: set[int] = set()

    def hear(node: Node, summary: Summary) -> None:
        heard.setdefault(id(node), (node, {}))[1].setdefault(summary, None)

    for parent, summary in ends:
        hear(parent, summary)
        node = parent
        while id(node) not in reached:
            reached.add(id(node))
            up = node.parent
            if up is None:
                break
            hear(up, node.summary)
            node = up
    return list(heard.values())


@dataclass(frozen=True, slots=True)
class Forced:
    """A reviewer's correction of one board: what it records, as hard constraints.

    ``moves`` are (source, destination) pairs in the mover's numbering; an
    empty tuple with a roll means the roll could not be played. ``hits``: the
    points the correction marks as hit (``6/5* 5/3``), or None when it marks
    none, so the marks decide between plays that end alike but hit otherwise.
    """

    player: Side | None = None
    roll: Roll | None = None
    moves: tuple[tuple[int, int], ...] | None = None
    double: bool = False
    response: str | None = None  # "take" or "drop" after a double
    winner: Side | None = None
    points: int | None = None
    resign: bool = False
    blank: bool = False
    hits: frozenset[int] | None = None


@dataclass(slots=True)
class Option:
    """One way to explain a board: what it records, how well the marks fit it, and the state after."""

    summary: Summary
    local: float
    events: tuple[Event, ...]
    #: The state after the board, or how to make it: most options die unbuilt.
    state: State | Callable[[], State]
    tags: tuple[Flag, ...]
    #: How likely a player is to choose this (log, <= 0): kept apart from ``local``, which says
    #: how well the marks fit and decides what is flagged as unexplained.
    prior: float = 0.0
    #: The part of ``local`` that is no fit of the marks: a doublet's prior, the way its unplayed
    #: dice are written, a game conceded unplayed. The report judges the fit without it.
    writing: float = 0.0

    def built(self) -> tuple[tuple[Event, ...], State]:
        state = self.state() if callable(self.state) else self.state
        return self.events, state


class Cache:
    """Legal plays and the marks they write, by position: one per match, shared by its searches.

    The plain search, the repairing one and the stranger-page trials meet the
    same positions again and again.
    """

    __slots__ = ("moves", "plays")

    def __init__(self) -> None:
        self.plays: dict[tuple[Position, Roll], tuple[Play, ...]] = {}
        self.moves: dict[tuple[Position, Roll, Side], tuple[tuple[Play | None, dict[str, tuple[int, ...]]], ...]] = {}

"""How likely a player is to choose a play: GNU Backgammon's evaluation as a prior.

The marks on a board often fit two legal plays almost equally well (a "5"
that may be a "3", a digit that may sit in the neighbouring square). What
tips the balance in a person's reading of a scoresheet is that players choose
sensible plays: a play that throws away a tenth of a game is rarely what
was played. The prior is the equity a play gives up against the best play of
the same roll, as GNU Backgammon's neural net judges it at 0-ply (the
``gnubg-nn`` package, GNU Backgammon's own evaluator), times :data:`WEIGHT`.

It is a prior, not a verdict: the readings outweigh it whenever they are
clear, and no play is made less likely by it than :data:`FLOOR` (2 nats), so
a blunder that was recorded clearly is still read as recorded. Without ``gnubg-nn`` the prior
is flat (every play 0), so the solver still works, only less sure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version

from digitise.game.position import Position
from digitise.game.rules import Play, Roll

log = logging.getLogger(__name__)

#: Nats per unit of cubeless equity given up: a 0.1 blunder is about 2.7 times less likely than the best play.
WEIGHT = 10.0
#: No play is made less likely than this by the prior alone (a recorded blunder stays possible).
FLOOR = -2.0

_Evaluator = Callable[[Position, Roll], dict[str, float]]


def _gnubg_evaluator() -> _Evaluator | None:
    try:
        # imported here: an optional package (gnubg-nn, the `prior` extra)
        import gnubg_nn  # type: ignore[import-not-found]
    except ImportError:  # the prior is an aid; reading works without it
        log.warning("gnubg-nn is not installed: the solver weighs every legal play alike")
        return None

    def evaluate(pos: Position, roll: Roll) -> dict[str, float]:
        board = (pos.theirs[1:26], pos.mine[1:26])
        found = gnubg_nn.best_move(board, roll.high, roll.low, list=1)
        return {key: float(equity) for key, _steps, _probs, equity in found[1]}

    return evaluate


class PlayPrior:
    """Log-prior of each legal play of a roll, cached per (position, roll)."""

    def __init__(self, evaluator: _Evaluator | None = None, *, weight: float | None = None,
                 floor: float | None = None) -> None:
        # The module's constants are read here, not bound as defaults, so a benchmark can set them.
        weight = WEIGHT if weight is None else weight
        floor = FLOOR if floor is None else floor
        #: What weighs the plays, as the report records it (a solve differs with and without the net).
        self.source = "given evaluator"
        if evaluator is None and weight > 0.0:
            evaluator = _gnubg_evaluator()
            self.source = f"gnubg-nn {_version('gnubg-nn')}"
        self._evaluate = evaluator
        self.weight = weight
        self.floor = floor
        self._cache: dict[tuple[Position, Roll], tuple[dict[str, float], float]] = {}
        #: Positions the net could not rate (their plays are weighed alike): the first is logged as a warning.
        self.failures = 0

    @property
    def active(self) -> bool:
        """Whether plays are weighed at all (GNU Backgammon's net is there)."""
        return self._evaluate is not None and self.weight > 0.0

    @property
    def described(self) -> str:
        """What weighs the plays: the net and its version, or that nothing does."""
        if not self.active:
            why = " (gnubg-nn is not installed)" if self._evaluate is None and self.weight > 0.0 else ""
            return f"none: every legal play weighed alike{why}"
        return f"{self.source}, weight {self.weight:g} nats per unit of equity, floor {self.floor:g}"

    def log_prior(self, pos: Position, roll: Roll, play: Play | None) -> float:
        """The log-prior (<= 0) of ``play`` among the legal plays of ``roll`` from ``pos``."""
        if play is None or not play.steps or not self.active:
            return 0.0
        key = (pos, roll)
        found = self._cache.get(key)
        if found is None:
            assert self._evaluate is not None
            try:
                equities = self._evaluate(pos, roll)
            except Exception as exc:  # noqa: BLE001 - an odd position must not stop the solver
                # Said once aloud (a broken net would otherwise only weaken every solve, unseen).
                (log.debug if self.failures else log.warning)("gnubg-nn could not rate %s %s: %s", pos, roll, exc)
                self.failures += 1
                equities = {}
            found = (equities, max(equities.values(), default=0.0))
            if len(self._cache) > 50000:
                self._cache.clear()
            self._cache[key] = found
        equities, best = found
        if not equities:
            return 0.0
        equity = equities.get(play_key(play.result))
        if equity is None:
            return 0.0
        return max(self.weight * (equity - best), self.floor)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "(version unknown)"


def play_key(result: Position) -> str:
    """How an evaluator's equities name a play: GNU Backgammon's key of the position it leaves (``result``, from
    the mover's side). Needs ``gnubg-nn``."""
    # imported here: an optional package (gnubg-nn, the `prior` extra)
    import gnubg_nn

    return str(gnubg_nn.key_of_board((result.mine[1:26], result.theirs[1:26])))


_DEFAULT: PlayPrior | None = None


def default_prior() -> PlayPrior:
    """The prior on GNU Backgammon's net, made once per process (its cache serves every match)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = PlayPrior()
    return _DEFAULT

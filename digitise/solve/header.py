"""The match header: the player names and the match length read from the page headers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from digitise.game.match import MAX_MATCH_LENGTH
from digitise.notation.mat import writable_name
from digitise.notation.readings import Readings
from digitise.solve.reasons import Reason
from digitise.solve.roster import roster_name

DEFAULT_PLAYERS = ("Bottom", "Top")


PLAYERS_UNKNOWN = Reason.PLAYERS_UNKNOWN.text
PLAYERS_ALIKE = Reason.PLAYERS_ALIKE.text
PLAYERS_ONE = Reason.PLAYER_UNKNOWN.text
NOT_ON_ROSTER = Reason.NOT_ON_ROSTER.text


def read_header(readings: Readings, roster: Sequence[str] = ()) -> dict[str, Any]:
    """Match length and player names, when the page headers give them (with the length, how surely:
    ``length_support``, its summed confidence, ``length_share``, its share of all lengths read, and
    ``lengths``, every length read, most voted first).

    Every page's header votes, weighted by the reader's confidence: one
    misread header (a "3" read as "75") must not outvote the other pages.
    Lengths above ``MAX_MATCH_LENGTH`` are not matches GNU Backgammon can hold and are ignored.
    """
    votes: dict[str, dict[Any, float]] = {"length": {}, "bottom": {}, "top": {}}
    alike = False

    def field(header: Any, *keys: str) -> tuple[Any, float]:
        for key in keys:
            if key in header:
                value = header[key]
                if isinstance(value, dict):
                    return value.get("value"), _weight(value.get("confidence", 1.0))
                return value, 1.0
        return None, 0.0

    def vote_players(bottom: str, top: str, conf_bottom: float, conf_top: float) -> None:
        nonlocal alike
        pair = (writable_name(bottom), writable_name(top))
        if roster:
            pair = (_entrant(pair[0], roster), _entrant(pair[1], roster))
        # One name read twice is a misread header, not a match: it names neither side.
        if all(pair) and pair[0] == pair[1]:
            alike = True
            return
        # Each side votes on its own: a name misread on one page is outvoted by the other pages.
        for side, name, conf in zip(("bottom", "top"), pair, (conf_bottom, conf_top), strict=True):
            if name:
                votes[side][name] = votes[side].get(name, 0.0) + conf

    for page in readings.pages:
        raw, conf = field(page.header, "match_length", "length")
        try:
            length = int(str(raw).strip())
        except ValueError:
            length = -1
        if 0 <= length <= MAX_MATCH_LENGTH:
            votes["length"][length] = votes["length"].get(length, 0.0) + conf
        raw, conf = field(page.header, "players")
        if isinstance(raw, (list, tuple)) and len(raw) == 2 and all(raw):
            vote_players(str(raw[0]), str(raw[1]), conf, conf)
        bottom, conf_b = field(page.header, "player_bottom", "bottom")
        top, conf_t = field(page.header, "player_top", "top")
        if isinstance(bottom, str) or isinstance(top, str):
            vote_players(bottom if isinstance(bottom, str) else "", top if isinstance(top, str) else "", conf_b, conf_t)
    found: dict[str, Any] = {}
    ranked: dict[str, list[Any]] = {}
    for key, tally in votes.items():
        # Highest total confidence first; ties broken by value so the choice is deterministic. A vote
        # of no weight (a confidence that is no number) is no reading.
        ranked[key] = [value for value, weight in sorted(tally.items(), key=lambda kv: (-kv[1], str(kv[0])))
                       if weight > 0.0]
        if ranked[key]:
            found[key] = ranked[key][0]
    if "length" in found:
        support = votes["length"][found["length"]]
        found["length_support"] = round(support, 4)
        found["length_share"] = round(support / sum(votes["length"].values()), 4)
        found["lengths"] = ranked["length"]
    names = (found.get("bottom", DEFAULT_PLAYERS[0]), found.get("top", DEFAULT_PLAYERS[1]))
    if names[0] == names[1]:
        alike = alike or ("bottom" in found and "top" in found)
    elif "bottom" in found and "top" in found:
        found["players"] = names
    elif "bottom" in found or "top" in found:
        # Only one side's name was read: it is kept, a placeholder stands for the other.
        found["one_player"] = names
        found["missing"] = 1 if "bottom" in found else 0
    found["alike"] = alike
    return found


def _entrant(name: str, roster: Sequence[str]) -> str:
    """``name`` as the roster's entrant it spells, or as read when it spells none."""
    return (roster_name(name, roster) or name) if name else name


def _weight(confidence: object) -> float:
    """A header field's confidence as a vote's weight: what is not a number in [0, 1] weighs nothing."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        return 0.0
    value = float(confidence)
    return value if 0.0 <= value <= 1.0 else 0.0

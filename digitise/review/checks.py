"""What a session checks before it trusts a file: a .mat told from another file before it is replaced, and a
report's parts the page relies on, refused with their JSON path when of the wrong shape."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from digitise.errors import InputError
from digitise.game.match import MAX_MATCH_LENGTH
from digitise.notation.mat import holds_name
from digitise.solve.corrections import pages_from_json


def looks_like_mat(path: Path) -> bool:
    """Whether ``path`` is a match file (its first line says "N point match"): only such a file is replaced."""
    if not path.is_file():  # a pipe or a device would block the read, or never end
        return False
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    first = next((line for line in head.splitlines() if line.strip()), "")
    return path.is_file() and re.match(r"^\s*\d+\s+point\s+match\s*$", first, re.IGNORECASE) is not None


def _check_choice(entry: dict[str, Any], where: str, weight: str, bad: Any) -> None:
    """A turn or candidate's player, dice and ``weight`` (confidence or probability), as the page shows them."""
    player = entry.get("player")
    if player is not None and player not in ("bottom", "top"):
        raise bad(f"{where}.player", "not bottom or top")
    dice = entry.get("dice")
    if dice is not None and not (isinstance(dice, list) and len(dice) == 2
                                 and all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in dice)):
        raise bad(f"{where}.dice", "not two dice 1-6")
    value = entry.get(weight)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not math.isfinite(value) or not 0 <= value <= 1):
        raise bad(f"{where}.{weight}", "not a number from 0 to 1")


def check_report(doc: dict[str, Any], path: Path) -> None:
    """Refuse, with the JSON path, a report whose parts the page relies on have the wrong shape."""

    def bad(where: str, what: str) -> InputError:
        return InputError(f"not a digitise report: {what}", path, where)

    for g, game in enumerate(doc["games"]):
        if not isinstance(game, dict):
            raise bad(f"$.games[{g}]", "a game is not an object")
        turns = game.get("turns", [])
        if not isinstance(turns, list):
            raise bad(f"$.games[{g}].turns", "not a list")
        for t, turn in enumerate(turns):
            where = f"$.games[{g}].turns[{t}]"
            if not isinstance(turn, dict):
                raise bad(where, "a turn is not an object")
            for key in ("page", "board"):
                if isinstance(turn.get(key), bool) or not isinstance(turn.get(key), int):
                    raise bad(f"{where}.{key}", "not a whole number")
            if not isinstance(turn.get("candidates") or [], list):
                raise bad(f"{where}.candidates", "not a list")
            _check_choice(turn, where, "confidence", bad)
            for c, candidate in enumerate(turn.get("candidates") or []):
                if not isinstance(candidate, dict):
                    raise bad(f"{where}.candidates[{c}]", "a candidate is not an object")
                _check_choice(candidate, f"{where}.candidates[{c}]", "probability", bad)
    for key in ("skipped", "sources", "page_errors", "notes", "scan_notes"):
        if not isinstance(doc.get(key) or [], list):
            raise bad(f"$.{key}", "not a list")
    if any(not isinstance(s, str) for s in doc.get("scan_notes") or []):
        raise bad("$.scan_notes", "a note is not text")
    if any(not isinstance(s, str) for s in doc.get("sources") or []):
        raise bad("$.sources", "a source is not a file name")
    try:
        # As a corrections file's "pages" part, which the review copies them into.
        pages_from_json(doc.get("source_files") or [], "$.source_files", path)
    except InputError as exc:
        raise bad(exc.where or "$.source_files", exc.reason) from None
    if any(not isinstance(s, dict) for s in doc.get("skipped") or []):
        raise bad("$.skipped", "an entry is not an object")
    length = doc.get("length")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int)
                               or not 0 <= length <= MAX_MATCH_LENGTH):
        raise bad("$.length", f"not a match length (0-{MAX_MATCH_LENGTH})")
    players = doc.get("players")
    if players is not None and not (isinstance(players, list) and len(players) == 2
                                    and all(isinstance(n, str) and n for n in players)):
        raise bad("$.players", 'not two names ["BOTTOM", "TOP"]')

    if players is not None and not all(holds_name(n) for n in players):
        raise bad("$.players", "a .mat file cannot hold a name with a colon or control characters")
    if not isinstance(doc.get("summary") or {}, dict):
        raise bad("$.summary", "not an object")

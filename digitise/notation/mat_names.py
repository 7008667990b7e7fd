"""Player names a ``.mat`` file can hold, and as GNU Backgammon keeps them."""

from __future__ import annotations

from digitise.notation.mat_read import NUMBERED_LINE

#: Longest name GNU Backgammon keeps whole (it cuts the rest, with a warning; a name of 1,500 bytes stops its import).
MAX_NAME_BYTES = 31


def _name_character(ch: str) -> bool:
    # A colon ends the name on a score line; control characters break the line.
    return ch != ":" and ch.isprintable()


def holds_name(name: str) -> bool:
    """True when a ``.mat`` file can hold ``name`` as it is (no colon, no control characters)."""
    return all(_name_character(ch) for ch in name)


def players_problem(players: tuple[str, ...] | list[str]) -> str | None:
    """Why ``players`` (bottom, top) cannot name a match's players in a ``.mat`` file, or None when they can."""
    if len(players) != 2 or not all(name.strip() for name in players):
        return 'give two names: "BOTTOM,TOP"'
    if players[0].strip() == players[1].strip():
        return "the two players need different names"
    if not all(holds_name(name) for name in players):
        return "a .mat file cannot hold a name with a colon or control characters"
    if any(NUMBERED_LINE.match(name) for name in players):
        # " 12) : 0" would be read back as the twelfth move line, not as a name.
        return "a name cannot start like a move number (such as '12)')"
    long = next((name for name in players if len(name.strip().encode("utf-8")) > MAX_NAME_BYTES), None)
    if long is not None:
        return (f"GNU Backgammon cuts a name to {MAX_NAME_BYTES} bytes (letters outside A-Z take two or more): "
                f"shorten {long[:40]!r}")
    return None


def kept_name(name: str) -> str:
    """``name`` cut to what GNU Backgammon keeps (:data:`MAX_NAME_BYTES`), between letters.

    Cut by GNU Backgammon itself, a name can end inside a letter's bytes,
    which it then cannot show or save (its own export loses the space
    before the second name, and its Python module crashes).
    """
    while len(name.encode("utf-8")) > MAX_NAME_BYTES:
        name = name[:-1]
    return name


def writable_name(name: str) -> str:
    """``name`` as a ``.mat`` file can hold it (:func:`holds_name`), single spaces; empty when nothing is left.

    Names read off a page header by OCR pick up stray punctuation ("Mei" read "Me:"); one such
    character must not cost the match its file.
    """
    return kept_name(" ".join("".join(ch if _name_character(ch) else " " for ch in name).split())).rstrip()

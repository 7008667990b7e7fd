"""A tournament's entry list: a name read off a page header taken as the entrant it spells.

Handwritten names are read by OCR, a letter or two wrong as often as not
("Mei" read "Mel" or "Me;", "Ines" read "ines"). A tournament director has
the list of entrants; with it, each name read is matched to the entrant it
is nearest to, letter by letter, when it is near enough and no other entrant
is as near.
"""

from __future__ import annotations

from collections.abc import Sequence

from digitise.solve.evidence import edit_distance

#: Letters (or digits) a read name may differ by from an entrant's, as a share of the longer name
#: (at least one): OCR's slips, not another name ("Tomas" is not "Omar").
NEAR = 0.34


def _key(name: str) -> str:
    """``name`` as compared: letters and digits only, case folded (OCR gets case and marks wrong)."""
    return "".join(ch for ch in name.casefold() if ch.isalnum())


def roster_name(read: str, roster: Sequence[str]) -> str | None:
    """The entrant of ``roster`` that the name ``read`` spells; None when none is near enough, or two are.

    >>> roster_name("Mel", ["Karl", "Mei", "Lena"])
    'Mei'
    >>> roster_name("Forngs", ["Tomas", "Omar"]) is None
    True
    """
    if read in roster:
        return read
    key = _key(read)
    if not key:
        return None
    scored = sorted((edit_distance(key, _key(name)), name) for name in roster if _key(name))
    if not scored:
        return None
    best, name = scored[0]
    if best > max(1, round(NEAR * max(len(key), len(_key(name))))):
        return None
    if any(d == best for d, _ in scored[1:]):
        return None  # "Mer" between "Mei" and "Mel", "LASSE" between "Lasse" and "lasse": either could be meant
    return name
